#include "agent/ctl/format.h"

#include <google/protobuf/util/json_util.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/ctl/connections_format.h"
#include "agent/ctl/experiment_format.h"
#include "agent/ctl/memory_format.h"
#include "agent/ctl/tiers_format.h"
#include "common/printable.h"
#include "policy/cpu_list.h"

namespace locus {
namespace ctl {
namespace {

// Every string the agent sends is shown through Printable: most quote a
// comm, a path or a reason read from the host, which any local user may
// name with a newline or an escape sequence (common/printable.h). P() is
// that, short. A policy error is one line per problem: each line is shown
// on its own, indented, so that none can pass for a line of this report.
std::string P(const std::string& text) { return Printable(text); }
std::string Lines(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(&out, out.empty() ? "" : "\n    ", Printable(line));
  }
  return out;
}

std::string FormatTime(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S",
                          absl::FromUnixSeconds(t.seconds()),
                          absl::LocalTimeZone());
}

// The sensors table of status and probe: one line per sensor, its source
// and whether it runs, then why (or what is missing).
std::string FormatSensors(
    const google::protobuf::RepeatedPtrField<v1::SensorSource>& sensors) {
  if (sensors.empty()) return "";
  std::string out = "sensors:\n";
  for (const v1::SensorSource& s : sensors) {
    absl::StrAppend(
        &out,
        absl::StrFormat("  %-14s %-10s %-4s %s\n", P(s.sensor()), P(s.source()),
                        s.ok() ? "ok" : "DOWN", P(s.detail())));
  }
  return out;
}

std::string OutcomeName(v1::ActionOutcome outcome) {
  switch (outcome) {
    case v1::ACTION_OUTCOME_APPLIED:
      return "applied";
    case v1::ACTION_OUTCOME_DRY_RUN:
      return "dry-run";
    case v1::ACTION_OUTCOME_TASK_GONE:
      return "task gone";
    case v1::ACTION_OUTCOME_FORBIDDEN:
      return "cpuset forbids";
    case v1::ACTION_OUTCOME_IRQ_GONE:
      return "irq gone";
    case v1::ACTION_OUTCOME_KERNEL_MANAGED:
      return "kernel-managed irq";
    case v1::ACTION_OUTCOME_FAILED:
      return "failed";
    case v1::ACTION_OUTCOME_REFUSED:
      return "refused (journal)";
    case v1::ACTION_OUTCOME_UNCHANGED:
      return "unchanged";
    default:
      return "";
  }
}

// " (runtime override; policy says enforce)": why the mode is what it is.
// Nothing from a daemon that does not say.
std::string ModeSourceNote(const v1::AgentStatus& s) {
  std::string policy =
      s.policy_mode() == v1::AGENT_MODE_UNSPECIFIED
          ? ""
          : absl::StrCat("; policy says ", ModeName(s.policy_mode()));
  switch (s.mode_source()) {
    case v1::MODE_SOURCE_POLICY:
      return " (policy)";
    case v1::MODE_SOURCE_FLAG:
      return absl::StrCat(" (--mode flag", policy, ")");
    case v1::MODE_SOURCE_RUNTIME:
      return absl::StrCat(" (runtime override", policy, ")");
    default:
      return "";
  }
}

}  // namespace

std::string CpuListOrDash(std::vector<int> cpus) {
  return cpus.empty() ? "-" : FormatCpuList(std::move(cpus));
}

std::string FormatPercent(double fraction) {
  return absl::StrFormat("%.0f%%", fraction * 100);
}

std::string FormatDurationNs(uint64_t ns) {
  return absl::FormatDuration(absl::Nanoseconds(static_cast<int64_t>(ns)));
}

std::string ModeName(v1::AgentMode mode) {
  if (mode == v1::AGENT_MODE_ENFORCE) return "enforce";
  if (mode == v1::AGENT_MODE_DRY_RUN) return "dry_run";
  return "unknown";
}

std::string FormatLocalShare(uint64_t local, uint64_t remote) {
  if (local + remote == 0) return "-";
  return FormatPercent(static_cast<double>(local) /
                       static_cast<double>(local + remote));
}

std::string FormatAction(const v1::Action& action) {
  std::string what;
  switch (action.op_case()) {
    case v1::Action::kPinThread: {
      const v1::PinThread& p = action.pin_thread();
      what = absl::StrCat(
          "pin tid ", p.tid(), " (pid ", p.pid(), ") to ",
          p.node() >= 0 ? absl::StrCat("node ", p.node(), " ") : "", "cpus ",
          CpuListOrDash(p.cpus()));
      break;
    }
    case v1::Action::kMigratePages: {
      const v1::MigratePages& m = action.migrate_pages();
      what = absl::StrCat(
          "migrate pid ", m.pid(), " pages ",
          m.from_node() >= 0 ? absl::StrCat("from node ", m.from_node(), " ")
                             : "",
          "to node ", m.to_node(), " (up to ", m.max_bytes() >> 20, " MiB");
      if (m.moved_bytes() != 0) {
        absl::StrAppend(&what, ", moved ", m.moved_bytes() >> 20, " MiB");
      }
      if (m.leave_nodes_size() != 0) {
        absl::StrAppend(&what, ", leaving node",
                        m.leave_nodes_size() == 1 ? " " : "s ",
                        absl::StrJoin(m.leave_nodes(), ","));
      }
      what += ")";
      break;
    }
    case v1::Action::kSetIrqAffinity: {
      const v1::SetIrqAffinity& s = action.set_irq_affinity();
      what =
          absl::StrCat("irq ", s.irq(), " to cpus ", CpuListOrDash(s.cpus()));
      break;
    }
    default:
      what = "no action";
  }
  std::string line = what;
  if (!action.reason().empty())
    absl::StrAppend(&line, ": ", P(action.reason()));
  std::string outcome = OutcomeName(action.outcome());
  if (!outcome.empty()) absl::StrAppend(&line, " [", outcome, "]");
  if (!action.error().empty())
    absl::StrAppend(&line, " (", P(action.error()), ")");
  return line;
}

std::string FormatMetrics(const v1::Metrics& m) {
  std::string line = absl::StrCat("tick ", m.tick());
  if (m.has_time()) {
    absl::StrAppend(
        &line, " ",
        absl::FormatTime("%H:%M:%S", absl::FromUnixSeconds(m.time().seconds()),
                         absl::LocalTimeZone()));
  }
  absl::StrAppend(&line, " ", ModeName(m.mode()));
  for (const v1::NodeMetrics& n : m.nodes()) {
    absl::StrAppend(
        &line, "  node ", n.node(), " busy ", FormatPercent(n.cpu_busy()),
        " local ", FormatLocalShare(n.faults_local(), n.faults_remote()),
        " migrated ", n.pages_migrated(), " wait ",
        absl::StrFormat("%.0f", 1000 * n.runqueue_wait_s()), "ms/s");
  }
  absl::StrAppend(&line, "  tasks ", m.tasks_size(), " irqs ", m.irqs_size(),
                  " actions ", m.actions_size(), " reverts ", m.reverts_size(),
                  "  took ", FormatDurationNs(m.tick_duration_ns()), " (cpu ",
                  FormatDurationNs(m.tick_cpu_ns()), ") overruns ",
                  m.overruns_total());
  if (m.drops().sensor_events_dropped_total() != 0) {
    absl::StrAppend(&line, " sensor drops ",
                    m.drops().sensor_events_dropped_total());
  }
  if (m.drops().subscriber_dropped() != 0) {
    absl::StrAppend(&line, "  dropped ", m.drops().subscriber_dropped(),
                    " (this client read too slowly)");
  }
  line += "\n";
  if (m.has_experiment()) {
    absl::StrAppend(&line, "  ", ExperimentLine(m.experiment()), "\n");
  }
  for (const v1::Action& a : m.actions()) {
    absl::StrAppend(&line, "  action ", FormatAction(a), "\n");
  }
  for (const v1::Revert& r : m.reverts()) {
    absl::StrAppend(&line, "  revert ", FormatAction(r.action()), ": ",
                    P(r.reason()), "; held down until tick ",
                    r.hold_down_until_tick(), "\n");
  }
  for (const v1::ExternalChange& c : m.external_changes()) {
    absl::StrAppend(&line, "  external ",
                    c.irq() >= 0 && c.tid() == 0
                        ? absl::StrCat("irq ", c.irq())
                        : absl::StrCat("tid ", c.tid()),
                    ": ", P(c.what()), c.detail().empty() ? "" : " (",
                    P(c.detail()), c.detail().empty() ? "" : ")", "\n");
  }
  if (!m.policy().last_error().empty()) {
    absl::StrAppend(&line, "  policy error: ", Lines(m.policy().last_error()),
                    "\n");
  }
  for (const std::string& c : ConnectionLines(m.connections(), false)) {
    absl::StrAppend(&line, "  ", c, "\n");
  }
  return line;
}

namespace {

// "irqbalance (pid 812, socket ...): banned by Locus 38,39; ..." per
// neighbour (policy coexist).
std::string IntList(const google::protobuf::RepeatedField<int32_t>& ids) {
  if (ids.empty()) return "none";
  return absl::StrJoin(ids, ",");
}

std::string NeighbourLine(const v1::Neighbour& n) {
  std::string out = P(n.name());
  if (n.mode().empty()) {  // told nothing: what it does here
    if (n.pid() != 0) absl::StrAppend(&out, " (pid ", n.pid(), ")");
    return absl::StrCat(out, ": ", P(n.note()));
  }
  if (!n.running()) return out + ": not running";
  absl::StrAppend(&out, " (pid ", n.pid());
  if (!n.socket().empty()) absl::StrAppend(&out, ", socket ", P(n.socket()));
  absl::StrAppend(&out, ")");
  if (n.mode() == "off") return out + ": coexist off, told nothing";
  if (n.name() == "irqbalance") {
    absl::StrAppend(&out, ": IRQs banned by Locus ", IntList(n.irqs_banned()),
                    ", by others (kept) ", IntList(n.irqs_banned_by_others()));
    if (!n.irqs_pending().empty()) {
      absl::StrAppend(&out, ", waiting for ", IntList(n.irqs_pending()));
    }
  } else {
    absl::StrAppend(&out, ": workers excluded by Locus ",
                    IntList(n.pids_excluded()));
  }
  if (n.restarts() != 0) {
    absl::StrAppend(&out, "; restarted ", n.restarts(), " time(s), told again");
  }
  if (!n.problem().empty())
    absl::StrAppend(&out, "; PROBLEM: ", P(n.problem()));
  return out;
}

}  // namespace

std::string FormatStatus(const v1::AgentStatus& s) {
  std::string out =
      absl::StrCat("locusd ", s.version().empty() ? "" : P(s.version()) + " ",
                   "mode ", ModeName(s.mode()), ModeSourceNote(s), ", started ",
                   FormatTime(s.started()), "\n");
  absl::StrAppend(&out, "tick ", s.tick(), " every ",
                  FormatDurationNs(s.tick_period_ns()), ", ",
                  s.overruns_total(), " overruns\n");
  const v1::PolicyState& p = s.policy();
  absl::StrAppend(&out, "policy ",
                  p.path().empty() ? "(built-in)" : P(p.path()), " version ",
                  p.version(), ", loaded ", FormatTime(p.loaded()), "\n");
  if (!p.last_error().empty()) {
    absl::StrAppend(&out, "policy last error: ", Lines(p.last_error()), "\n");
  }
  absl::StrAppend(&out, s.numa_nodes(), " NUMA node(s); ", s.targets(),
                  " target process(es), ", s.threads(), " thread(s); ",
                  s.managed_irqs(), " managed IRQ(s); ", s.journal_entries(),
                  " journal entr(ies); ", s.held_down(), " held down; ",
                  s.subscribers(), " subscriber(s)\n");
  if (!s.journal_error().empty()) {
    absl::StrAppend(&out, "NOT ACTING: ", P(s.journal_error()), "\n");
  }
  if (s.actions_forbidden_total() != 0) {
    absl::StrAppend(&out, s.actions_forbidden_total(),
                    " action(s) forbidden by a cpuset since start (the plan "
                    "missed a constraint: see the log)\n");
  }
  for (const std::string& line : ConnectionLines(s.connections(), true)) {
    absl::StrAppend(&out, line, "\n");
  }
  for (const v1::Neighbour& n : s.neighbours()) {
    absl::StrAppend(&out, NeighbourLine(n), "\n");
    // Whether or not the real one runs: a user's process of that name.
    for (const std::string& refused : n.look_alikes()) {
      absl::StrAppend(&out, "  look-alike: ", P(refused), "\n");
    }
  }
  out += TiersForStatus(s.memory_tiering());
  out += WorkerMemoryForStatus(s.memory_tiering(), s.worker_memory());
  return out + FormatSensors(s.sensors());
}

std::string FormatExplain(const v1::ExplainResponse& e) {
  std::string out = absl::StrCat(P(e.subject()), "\n");
  if (e.has_task()) {
    const v1::TaskMetrics& t = e.task();
    absl::StrAppend(
        &out, "  now: node ", t.node(), " cpu ", t.cpu(), " allowed ",
        CpuListOrDash(t.allowed_cpus()), ", local faults ",
        FormatLocalShare(t.faults_local(), t.faults_remote()), ", migrations ",
        t.migrations(), " (", t.cross_node_migrations(), " cross-node)",
        t.held_down() ? ", held down" : "", "\n");
    absl::StrAppend(
        &out, "  memory: ",
        MemoryByNode(t.resident_bytes(), e.memory_tiering(), t.home_node()),
        "\n");
  }
  if (e.has_irq()) {
    const v1::IrqMetrics& i = e.irq();
    absl::StrAppend(&out, "  now: cpus ", CpuListOrDash(i.cpus()),
                    " effective ", CpuListOrDash(i.effective_cpus()),
                    ", device node ", i.device_node(), ", ", i.count(),
                    " per tick", i.kernel_managed() ? ", kernel-managed" : "",
                    i.held_down() ? ", held down" : "", "\n");
  }
  if (e.decisions_size() == 0) {
    out +=
        "  no decisions recorded: it is where the policy wants it, or no move "
        "would gain min_gain\n";
  }
  for (const v1::Decision& d : e.decisions()) {
    // A decision is an action (with an optional note), or only a note that
    // tells the whole story ("... → pin ...: applied").
    std::string what =
        d.has_action()
            ? absl::StrCat(FormatAction(d.action()),
                           d.note().empty() ? "" : " — ", P(d.note()))
        : d.note().empty() ? "no action"
                           : P(d.note());
    absl::StrAppend(&out, "  tick ", d.tick(), ": ", what, "\n");
  }
  for (const v1::Revert& r : e.reverts()) {
    absl::StrAppend(&out, "  tick ", r.tick(), ": reverted ",
                    FormatAction(r.action()), ": ", P(r.reason()),
                    "; held down until tick ", r.hold_down_until_tick(), "\n");
  }
  return out;
}

std::string FormatProbe(const v1::ProbeReport& r) {
  std::string out = absl::StrCat("kernel ", P(r.kernel()), "\n");
  for (const v1::ProbeFeature& f : r.features()) {
    absl::StrAppend(&out, absl::StrFormat("  %-24s %-11s %s\n", P(f.name()),
                                          f.forced_off()  ? "forced off"
                                          : f.available() ? "yes"
                                                          : "no",
                                          P(f.detail())));
  }
  return out + FormatSensors(r.sensors()) + TiersForProbe(r.memory_tiering());
}

absl::StatusOr<std::string> ToJsonLine(
    const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  auto status =
      google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("JSON: ", std::string(status.message())));
  }
  return out;
}

}  // namespace ctl
}  // namespace locus
