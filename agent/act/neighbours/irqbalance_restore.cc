// RestoreIrqbalanceBans (irqbalance_bans.h): at exit, `locusd --restore`
// and a start after a crash, the journaled bans given back.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/act/neighbours/irqbalance_bans.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "agent/act/neighbours/irqbalance_socket.h"

namespace locus {
namespace {

// One line per IRQ: "irq N: <text>".
void EachIrq(const std::set<int>& irqs, const std::string& text,
             std::vector<std::string>* out) {
  for (int irq : irqs) out->push_back(absl::StrCat("irq ", irq, ": ", text));
}

// Reads `pid`'s list, takes `ours` off it, and reads it back. The wait is
// stretched to what its sleep interval needs once "setup" says it (a
// client may have changed it since the start): the send may start a
// rescan that holds it that long (`irqbalance --interval=40` is legal, and
// outlasts a fixed wait).
absl::Status GiveBack(IrqbalanceOps& ops, const IrqbalanceInstance& instance,
                      const std::set<int>& ours, absl::Time deadline,
                      std::set<int>* given) {
  const auto read = [&]() -> absl::StatusOr<std::set<int>> {
    absl::StatusOr<std::string> reply = IrqbalanceRequestBlocking(
        ops, instance, kIrqbalanceSetupCommand, deadline - absl::Now());
    if (!reply.ok()) return reply.status();
    absl::StatusOr<IrqbalanceSetup> setup = ParseIrqbalanceSetup(*reply);
    if (!setup.ok()) return setup.status();
    deadline = std::max(
        deadline, absl::Now() + IrqbalanceExchangeWait(setup->sleep_seconds));
    return std::move(setup->banned_irqs);
  };
  absl::StatusOr<std::set<int>> list = read();
  if (!list.ok()) return list.status();
  std::set<int> kept;
  for (int irq : *list) {
    if (ours.count(irq)) {
      given->insert(irq);
    } else {
      kept.insert(irq);
    }
  }
  if (given->empty()) return absl::OkStatus();
  absl::StatusOr<std::string> command = FormatBanIrqs(kept);
  if (!command.ok()) return command.status();
  absl::StatusOr<std::string> sent = IrqbalanceRequestBlocking(
      ops, instance, *command, deadline - absl::Now());
  if (!sent.ok()) return sent.status();
  list = read();
  if (!list.ok()) return list.status();
  for (int irq : *given) {
    if (list->count(irq)) {
      return absl::InternalError(absl::StrCat(
          "irq ", irq, " is still on its ban list after it was sent without"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RestoreIrqbalanceBans(const std::map<int, int32_t>& bans,
                           IrqbalanceOps& ops, absl::Duration timeout,
                           std::vector<std::string>* messages,
                           std::vector<std::string>* errors,
                           std::map<int, int32_t>* kept) {
  if (bans.empty()) return;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::optional<IrqbalanceInstance>> found = ops.Find();
  // Neither counted nor spoken to: the bans go back to the root one.
  for (const std::string& refused : ops.LookAlikes()) {
    messages->push_back(refused);
  }
  std::set<int> ours;
  for (const auto& [irq, pid] : bans) {
    const bool same = found.ok() && found->has_value() && (*found)->pid == pid;
    if (same) {
      ours.insert(irq);
    } else if (found.ok()) {
      messages->push_back(absl::StrCat(
          "irq ", irq, ": ", IrqbalanceName(pid),
          ", which Locus had it banned in, is gone (an irqbalance started "
          "since has no runtime bans): nothing to give back"));
    } else {
      errors->push_back(absl::StrCat("irq ", irq, ": not given back to ",
                                     IrqbalanceName(pid), ": ",
                                     found.status().message()));
      (*kept)[irq] = pid;
    }
  }
  if (ours.empty()) return;
  const IrqbalanceInstance& instance = **found;
  const std::string who = IrqbalanceName(instance.pid);
  // Its first answer may wait out a rescan in progress, for up to the
  // interval its command line set: known before "setup" can say it.
  absl::Time deadline = start + timeout;
  if (instance.sleep_seconds > 0) {
    deadline = std::max(deadline,
                        start + IrqbalanceExchangeWait(instance.sleep_seconds));
  }
  std::set<int> given;
  absl::Status status = GiveBack(ops, instance, ours, deadline, &given);
  if (!status.ok()) {
    EachIrq(ours,
            absl::StrCat("not given back to ", who, ": ", status.message()),
            errors);
    for (int irq : ours) (*kept)[irq] = instance.pid;
    return;
  }
  std::set<int> absent;
  std::set_difference(ours.begin(), ours.end(), given.begin(), given.end(),
                      std::inserter(absent, absent.end()));
  EachIrq(given,
          absl::StrCat("given back to ", who, ", which balances it again"),
          messages);
  EachIrq(
      absent,
      absl::StrCat("no longer on ", who, "'s ban list: nothing to give back"),
      messages);
}

}  // namespace locus
