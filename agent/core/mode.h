// The agent's mode, and its one spelling: the policy's enum, written in lower
// case without its prefix ("enforce", "dry_run") in flags and logs, as in the
// policy file.
#ifndef LOCUS_AGENT_CORE_MODE_H_
#define LOCUS_AGENT_CORE_MODE_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "locus/v1/policy.pb.h"

namespace locus {

using Mode = v1::Policy::Mode;

// "enforce", "dry_run"; "" for MODE_UNSPECIFIED (no override: the policy's).
absl::string_view ModeName(Mode mode);

// The inverse of ModeName; nullopt for anything else.
std::optional<Mode> ParseModeName(absl::string_view name);

// The mode a policy asks for: enforce unless it says dry_run (a policy that
// names no mode acts, as the built-in default does).
Mode PolicyMode(const v1::Policy& policy);

}  // namespace locus

namespace locus::v1 {

// --mode=enforce|dry_run, or empty for the policy's. Found by absl's flag
// parsing through argument-dependent lookup, so they live in the enum's
// namespace.
bool AbslParseFlag(absl::string_view text, Policy_Mode* mode,
                   std::string* error);
std::string AbslUnparseFlag(Policy_Mode mode);

}  // namespace locus::v1

#endif  // LOCUS_AGENT_CORE_MODE_H_
