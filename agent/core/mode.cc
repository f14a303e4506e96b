#include "agent/core/mode.h"

#include "absl/strings/str_cat.h"

namespace locus {

absl::string_view ModeName(Mode mode) {
  switch (mode) {
    case v1::Policy::MODE_ENFORCE:
      return "enforce";
    case v1::Policy::MODE_DRY_RUN:
      return "dry_run";
    default:
      return "";
  }
}

std::optional<Mode> ParseModeName(absl::string_view name) {
  for (Mode mode : {v1::Policy::MODE_UNSPECIFIED, v1::Policy::MODE_ENFORCE,
                    v1::Policy::MODE_DRY_RUN}) {
    if (name == ModeName(mode)) return mode;
  }
  return std::nullopt;
}

Mode PolicyMode(const v1::Policy& policy) {
  return policy.mode() == v1::Policy::MODE_DRY_RUN ? v1::Policy::MODE_DRY_RUN
                                                   : v1::Policy::MODE_ENFORCE;
}

}  // namespace locus

namespace locus::v1 {

bool AbslParseFlag(absl::string_view text, Policy_Mode* mode,
                   std::string* error) {
  std::optional<Policy_Mode> parsed = ParseModeName(text);
  if (!parsed.has_value()) {
    *error = absl::StrCat("must be enforce or dry_run, not \"", text, "\"");
    return false;
  }
  *mode = *parsed;
  return true;
}

std::string AbslUnparseFlag(Policy_Mode mode) {
  return std::string(ModeName(mode));
}

}  // namespace locus::v1
