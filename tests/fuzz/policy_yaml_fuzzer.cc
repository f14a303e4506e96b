// The policy file: YAML onto locus.v1.Policy, without and with a host to
// check CPU lists against. Seeds cover the hostile cases too: invalid UTF-8,
// nesting thousands deep, thousands of errors, a 20 kB scalar quoted back.
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/utf8.h"
#include "fuzz_check.h"
#include "policy/policy_yaml.h"
#include "policy/validate.h"
#include "policy/yaml_errors.h"
#include "tests/common/snapshot_builder.h"

namespace {

// Accepted: passes the same checks any other source of a policy goes
// through. Refused: one "file:line:column: message" per line, at most
// kMaxReportedErrors of them and a count, valid UTF-8 (it goes into proto
// strings), never yaml-cpp's bare "bad file" (unless the input itself says
// it: a refused key is quoted back).
void Check(absl::string_view text,
           const absl::StatusOr<locus::v1::Policy>& policy,
           const locus::Topology* host) {
  if (policy.ok()) {
    LOCUS_FUZZ_CHECK(locus::ValidatePolicy(*policy).ok());
    if (host)
      LOCUS_FUZZ_CHECK(locus::ValidatePolicyForHost(*policy, *host).ok());
    return;
  }
  LOCUS_FUZZ_CHECK(absl::IsInvalidArgument(policy.status()));
  const absl::string_view message = policy.status().message();
  LOCUS_FUZZ_CHECK(locus::IsValidUtf8(message));
  LOCUS_FUZZ_CHECK(message.size() <= (locus::kMaxReportedErrors + 1) *
                                         (locus::kMaxErrorBytes + 64));
  LOCUS_FUZZ_CHECK(!absl::StrContains(message, "bad file") ||
                   absl::StrContains(text, "bad file"));
  for (absl::string_view line :
       absl::StrSplit(policy.status().message(), '\n')) {
    LOCUS_FUZZ_CHECK(absl::StartsWith(line, "fuzz.yaml:"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const locus::Topology* const host =
      new locus::Topology(locus::testing::MakeHost(2, 4).topology);
  absl::string_view text = locus::fuzz::AsText(data, size);
  Check(text, locus::ParsePolicyYaml(text, "fuzz.yaml"), nullptr);
  Check(text, locus::ParsePolicyYaml(text, "fuzz.yaml", host), host);
  return 0;
}
