// Reading the policy file: YAML mapped onto locus.v1.Policy, strictly. Every
// problem (YAML syntax, unknown or duplicate keys, wrong types, out-of-range
// values, contradictions, CPUs the host lacks) is collected and returned as
// one InvalidArgument status, one "file:line:column: message" per line
// (1-based, like compilers, so editors can jump to it). At most
// kMaxReportedErrors are listed (yaml_errors.h), then how many more there were.
#ifndef LOCUS_POLICY_POLICY_YAML_H_
#define LOCUS_POLICY_POLICY_YAML_H_

#include <cstddef>
#include <string>

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

// A policy is a page of YAML; anything much bigger is a mistake, or an
// attack on the reader (a sparse 1 GiB file, a link to /dev/zero).
inline constexpr size_t kMaxPolicyBytes = 1 << 20;

// The bytes of the policy file at `path`, read with the shared reader
// (common/file_read.h): never blocks (a FIFO is not opened for reading),
// never reads more than kMaxPolicyBytes + 1. NotFound only when nothing is
// at `path` (the caller's cue for the built-in default); FailedPrecondition
// when it is not a regular file (a directory, a FIFO, a device) or is a
// symbolic link that names nothing; OutOfRange when it is larger than
// kMaxPolicyBytes; other failures keep their errno meaning. Every message
// names the path.
absl::StatusOr<std::string> ReadPolicyFile(absl::string_view path);

// ReadPolicyFile, then ParsePolicyYaml. What every reader of the policy file
// uses (locusd's watcher reads and parses in two steps, the same ones).
absl::StatusOr<v1::Policy> LoadPolicyFile(absl::string_view path,
                                          const Topology* host = nullptr);

}  // namespace locus

#endif  // LOCUS_POLICY_POLICY_YAML_H_
