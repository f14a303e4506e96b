#include "agent/ctl/top_view.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/ctl/connections_format.h"
#include "agent/ctl/experiment_format.h"
#include "agent/ctl/format.h"
#include "agent/ctl/memory_format.h"
#include "common/printable.h"

namespace locus {
namespace ctl {
namespace {

std::string RoleName(v1::TaskRole role) {
  if (role == v1::TASK_ROLE_MASTER) return "master";
  if (role == v1::TASK_ROLE_WORKER) return "worker";
  if (role == v1::TASK_ROLE_WORKER_THREAD) return "thread";
  return "other";
}

// The title, the policy error if any, and the node table.
std::vector<std::string> Head(const v1::Metrics& m) {
  std::vector<std::string> lines;
  lines.push_back(absl::StrCat(
      "locus  tick ", m.tick(), "  mode ", ModeName(m.mode()), "  policy v",
      m.policy().version(), "  took ", FormatDurationNs(m.tick_duration_ns()),
      "  overruns ", m.overruns_total(), "  dropped ",
      m.drops().subscriber_dropped_total(), "    (q to quit)"));
  if (!m.policy().last_error().empty()) {
    lines.push_back(
        absl::StrCat("policy error: ", Printable(m.policy().last_error())));
  }
  if (m.has_experiment()) lines.push_back(ExperimentLine(m.experiment()));
  lines.push_back("");
  lines.push_back(absl::StrFormat("%-5s %-12s %6s %7s %7s %10s %10s %9s",
                                  "NODE", "CPUS", "BUSY", "WAIT", "LOCAL",
                                  "FAULTS-L", "FAULTS-R", "MIGRATED"));
  for (const v1::NodeMetrics& n : m.nodes()) {
    // Busy from every task (/proc/stat) where it was read; the targets'
    // run-queue wait in ms per second.
    const double busy = n.cpu_busy_all() >= 0 ? n.cpu_busy_all() : n.cpu_busy();
    lines.push_back(absl::StrFormat(
        "%-5d %-12s %6s %7s %7s %10d %10d %9d", n.node(),
        CpuListOrDash(n.cpus()), FormatPercent(busy),
        absl::StrFormat("%.0fms", 1000 * n.runqueue_wait_s()),
        FormatLocalShare(n.faults_local(), n.faults_remote()), n.faults_local(),
        n.faults_remote(), n.pages_migrated()));
  }
  lines.push_back("");
  return lines;
}

// The IRQ table and this tick's actions and reverts: few lines, shown below
// the threads, which get the rows that remain.
std::vector<std::string> Tail(const v1::Metrics& m) {
  std::vector<std::string> tail = ConnectionLines(m.connections(), false);
  if (!tail.empty()) tail.push_back("");
  if (m.irqs_size() > 0) {
    tail.push_back(absl::StrFormat("%-5s %-20s %-7s %-10s %-10s %10s", "IRQ",
                                   "NAME", "DEVNODE", "CPUS", "EFFECTIVE",
                                   "COUNT"));
    for (const v1::IrqMetrics& i : m.irqs()) {
      tail.push_back(absl::StrFormat(
          "%-5d %-20s %-7d %-10s %-10s %10d%s", i.irq(), Printable(i.name()),
          i.device_node(), CpuListOrDash(i.cpus()),
          CpuListOrDash(i.effective_cpus()), i.count(),
          i.kernel_managed() ? " managed" : ""));
    }
    tail.push_back("");
  }
  for (const v1::Action& a : m.actions()) {
    tail.push_back(absl::StrCat("action ", FormatAction(a)));
  }
  for (const v1::Revert& r : m.reverts()) {
    tail.push_back(absl::StrCat("revert ", FormatAction(r.action()), ": ",
                                Printable(r.reason())));
  }
  return tail;
}

std::string TaskLine(const v1::TaskMetrics& t,
                     const v1::MemoryTiering& tiering) {
  // AT-HOME: share of its CPU time on its home node's CPUs this tick.
  const std::string home = t.home_time_ratio() >= 0
                               ? FormatPercent(t.home_time_ratio())
                               : std::string("-");
  // MEM@HOME: share of its top-tier memory on its home node; LOWER: its
  // memory on a lower tier, the kernel's to move.
  const double at_home =
      TopTierAtHome(t.resident_bytes(), tiering, t.home_node());
  const uint64_t lower = LowerTierBytes(t.resident_bytes(), tiering);
  return absl::StrFormat(
      "%-7d %-7d %-15s %-6s %4d %4d %7s %8s %9s %6s %9d %9d %6d %6d%s%s",
      t.pid(), t.tid(), Printable(t.comm()), RoleName(t.role()), t.node(),
      t.cpu(), home, at_home >= 0 ? FormatPercent(at_home) : "-",
      lower > 0 ? FormatBytes(lower) : "-",
      FormatLocalShare(t.faults_local(), t.faults_remote()), t.faults_local(),
      t.faults_remote(), t.migrations(), t.cross_node_migrations(),
      t.held_down() ? " held" : "",
      t.spill_node() >= 0 ? absl::StrCat(" widened to node ", t.spill_node())
                          : "");
}

// The thread table: the header, then as many threads as `room` allows (at
// least one), the worst first, and a line saying how many did not fit.
void AddTasks(const v1::Metrics& m, int room, std::vector<std::string>& lines) {
  std::vector<const v1::TaskMetrics*> tasks;
  for (const v1::TaskMetrics& t : m.tasks()) tasks.push_back(&t);
  std::stable_sort(tasks.begin(), tasks.end(), [](auto* a, auto* b) {
    return a->faults_remote() > b->faults_remote();
  });
  int shown = 0;
  for (const v1::TaskMetrics* t : tasks) {
    if (shown >= std::max(room, 1)) break;
    lines.push_back(TaskLine(*t, m.memory_tiering()));
    ++shown;
  }
  if (shown < static_cast<int>(tasks.size())) {
    lines.push_back(
        absl::StrCat("... ", tasks.size() - shown, " more threads"));
  } else {
    lines.push_back("");
  }
}

}  // namespace

std::vector<std::string> RenderTop(const v1::Metrics& m, int rows, int cols) {
  std::vector<std::string> lines = Head(m);
  std::vector<std::string> tail = Tail(m);
  lines.push_back(absl::StrFormat(
      "%-7s %-7s %-15s %-6s %4s %4s %7s %8s %9s %6s %9s %9s %6s %6s", "PID",
      "TID", "COMM", "ROLE", "NODE", "CPU", "AT-HOME", "MEM@HOME", "LOWER",
      "LOCAL", "FAULTS-L", "FAULTS-R", "MIGR", "XNODE"));
  int room =
      rows - static_cast<int>(lines.size()) - static_cast<int>(tail.size()) - 1;
  AddTasks(m, room, lines);
  for (std::string& line : tail) {
    if (static_cast<int>(lines.size()) >= rows) break;
    lines.push_back(std::move(line));
  }
  if (static_cast<int>(lines.size()) > rows) lines.resize(rows);
  if (cols > 0) {
    for (std::string& line : lines) {
      if (static_cast<int>(line.size()) > cols) line.resize(cols);
    }
  }
  return lines;
}

}  // namespace ctl
}  // namespace locus
