// The policy file: YAML onto locus.v1.Policy, without and with a host to
// check CPU lists against.
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "fuzz_check.h"
#include "policy/policy_yaml.h"
#include "policy/validate.h"
#include "tests/common/snapshot_builder.h"

namespace {

// Accepted: passes the same checks any other source of a policy goes
// through. Refused: one "file:line:column: message" per line.
void Check(const absl::StatusOr<locus::v1::Policy>& policy,
           const locus::Topology* host) {
  if (policy.ok()) {
    LOCUS_FUZZ_CHECK(locus::ValidatePolicy(*policy).ok());
    if (host)
      LOCUS_FUZZ_CHECK(locus::ValidatePolicyForHost(*policy, *host).ok());
    return;
  }
  LOCUS_FUZZ_CHECK(absl::IsInvalidArgument(policy.status()));
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
  Check(locus::ParsePolicyYaml(text, "fuzz.yaml"), nullptr);
  Check(locus::ParsePolicyYaml(text, "fuzz.yaml", host), host);
  return 0;
}
