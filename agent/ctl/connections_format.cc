#include "agent/ctl/connections_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/ctl/format.h"
#include "common/printable.h"

namespace locus::ctl {
namespace {

std::string GroupLine(const v1::ConnectionGroup& g) {
  std::string line = absl::StrCat("connections ", Printable(g.group()), ": ");
  if (g.steered()) {
    absl::StrAppend(&line, "steered",
                    g.migrates() ? " (queued requests migrate on close)" : "");
  } else {
    line += "not steered";
  }
  absl::StrAppend(&line, ", ", g.sockets(), " socket(s)");
  if (!g.problem().empty())
    absl::StrAppend(&line, "; ", Printable(g.problem()));
  return line;
}

std::string NodeLine(const v1::NodeConnections& n, bool totals) {
  const uint64_t local = totals ? n.local_total() : n.local();
  const uint64_t spilled = totals ? n.spilled_total() : n.spilled();
  const uint64_t fell_back = totals ? n.fell_back_total() : n.fell_back();
  const uint64_t migrated = totals ? n.migrated_total() : n.migrated();
  const uint64_t all = local + spilled + fell_back;
  std::string line = n.node() < 0 ? std::string("  CPUs of no node: ")
                                  : absl::StrCat("  node ", n.node(), ": ");
  if (n.node() >= 0) absl::StrAppend(&line, n.workers(), " worker(s), ");
  // One decimal: 99.5% and 100% differ for steering.
  absl::StrAppend(
      &line, all == 0 ? "-" : absl::StrFormat("%.1f%%", 100.0 * local / all),
      " local (", local, " local, ", spilled, " spilled, ", fell_back,
      " fell back");
  if (migrated != 0) absl::StrAppend(&line, ", ", migrated, " migrated");
  const uint64_t control = totals ? n.control_total() : n.control();
  if (control != 0)
    absl::StrAppend(&line, ", ", control, " to the experiment's control arm");
  line += ")";
  if (n.spill_permille() != 0) {
    absl::StrAppend(&line, ", spilling ",
                    FormatPercent(n.spill_permille() / 1000.0));
  }
  return line;
}

}  // namespace

std::vector<std::string> ConnectionLines(const ConnectionGroups& groups,
                                         bool totals) {
  std::vector<std::string> lines;
  for (const v1::ConnectionGroup& g : groups) {
    lines.push_back(GroupLine(g));
    for (const v1::NodeConnections& n : g.nodes()) {
      lines.push_back(NodeLine(n, totals));
    }
  }
  return lines;
}

}  // namespace locus::ctl
