// A plan's actions by kind, its reasons and notes as one text, and whether
// a note says something, for
// tests' expectations and failure messages.
#ifndef LOCUS_TESTS_POLICY_PLAN_VIEW_H_
#define LOCUS_TESTS_POLICY_PLAN_VIEW_H_

#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "policy/plan.h"

namespace locus::testing {

template <typename Op>
std::vector<Op> ActionsOf(const Plan& plan) {
  std::vector<Op> out;
  for (const Action& a : plan.actions) {
    if (auto* op = std::get_if<Op>(&a.op)) out.push_back(*op);
  }
  return out;
}
inline std::vector<PinThread> Pins(const Plan& plan) {
  return ActionsOf<PinThread>(plan);
}
inline std::vector<MigratePages> Migrations(const Plan& plan) {
  return ActionsOf<MigratePages>(plan);
}
inline std::vector<SetIrqAffinity> Irqs(const Plan& plan) {
  return ActionsOf<SetIrqAffinity>(plan);
}

inline std::string Reasons(const Plan& plan) {
  std::vector<std::string> lines;
  for (const Action& a : plan.actions) lines.push_back(a.reason);
  for (const std::string& n : plan.notes) lines.push_back("note: " + n);
  return absl::StrJoin(lines, "\n");
}

inline bool HasNote(const Plan& plan, absl::string_view text) {
  for (const std::string& n : plan.notes) {
    if (absl::StrContains(n, text)) return true;
  }
  return false;
}

}  // namespace locus::testing

#endif  // LOCUS_TESTS_POLICY_PLAN_VIEW_H_
