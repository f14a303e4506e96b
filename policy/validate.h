// Semantic checks on a Policy: ranges, contradictions between fields, and
// (given the host's topology) CPU lists naming CPUs that do not exist. Shared
// by the YAML reader, which turns field paths into file:line:column, and by
// anything that receives a Policy some other way.
#ifndef LOCUS_POLICY_VALIDATE_H_
#define LOCUS_POLICY_VALIDATE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "locus/v1/policy.pb.h"
#include "policy/snapshot.h"

namespace locus {

// Receives one problem: the dotted field path it is about (e.g.
// "stability.hold_down_s", "targets.comm[1]") and a message.
using PolicyErrorSink =
    std::function<void(absl::string_view path, absl::string_view message)>;

// Reports every problem found to `sink`; `host` may be null (no host checks).
void CheckPolicy(const v1::Policy& policy, const Topology* host,
                 const PolicyErrorSink& sink);

// All problems as one InvalidArgument status, one "path: message" per line.
absl::Status ValidatePolicy(const v1::Policy& policy);
absl::Status ValidatePolicyForHost(const v1::Policy& policy,
                                   const Topology& host);

}  // namespace locus

#endif  // LOCUS_POLICY_VALIDATE_H_
