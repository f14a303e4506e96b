// Minimal JSON text helpers for locusd's one-shot outputs (no JSON library is
// among the project's dependencies).
#ifndef LOCUS_AGENT_SENSORS_JSON_UTIL_H_
#define LOCUS_AGENT_SENSORS_JSON_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace locus {

// A quoted, escaped JSON string.
std::string JsonString(absl::string_view s);
// [1,2,3]
std::string JsonArray(absl::Span<const uint64_t> v);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_JSON_UTIL_H_
