// Reading the policy file: YAML mapped onto locus.v1.Policy, strictly. Every
// problem (YAML syntax, unknown or duplicate keys, wrong types, out-of-range
// values, contradictions, CPUs the host lacks) is collected and returned as
// one InvalidArgument status, one "file:line:column: message" per line
// (1-based, like compilers, so editors can jump to it).
#ifndef LOCUS_POLICY_POLICY_YAML_H_
#define LOCUS_POLICY_POLICY_YAML_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "locus/v1/policy.pb.h"
#include "policy/snapshot.h"

namespace locus {

// Parses `text` on top of DefaultPolicy(): keys the file leaves out keep their
// default; a list in the file replaces the default list. `filename` is only
// used in messages. With `host`, CPU lists are also checked against it.
absl::StatusOr<v1::Policy> ParsePolicyYaml(absl::string_view text,
                                           absl::string_view filename,
                                           const Topology* host = nullptr);

// The same on top of `base` instead of the default (an empty base shows
// whether a file spells out every field).
absl::StatusOr<v1::Policy> ParsePolicyYamlOver(const v1::Policy& base,
                                               absl::string_view text,
                                               absl::string_view filename,
                                               const Topology* host = nullptr);

// Reads and parses the file at `path`. A missing file is NotFound; other read
// failures keep their errno meaning.
absl::StatusOr<v1::Policy> LoadPolicyFile(absl::string_view path,
                                          const Topology* host = nullptr);

}  // namespace locus

#endif  // LOCUS_POLICY_POLICY_YAML_H_
