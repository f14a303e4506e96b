#include "policy/validate.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/printable.h"
#include "policy/cpu_list.h"

namespace locus {
namespace {

// Linux limits: TASK_COMM_LEN and IFNAMSIZ are 16 including the NUL.
constexpr size_t kMaxCommLength = 15;
constexpr size_t kMaxIfnameLength = 15;

// Reports the field at `path` (named by its last part) when `value` is
// outside [lo, hi]; NaN is outside every range. True when inside.
template <typename T>
bool CheckRange(const PolicyErrorSink& sink, absl::string_view path, T value,
                T lo, T hi, absl::string_view why = "") {
  if (value >= lo && value <= hi) return true;
  absl::string_view name = path.substr(path.rfind('.') + 1);
  sink(path, absl::StrCat(name, " ", value, " is out of range [", lo, ", ", hi,
                          "]", why));
  return false;
}

void CheckIfname(absl::string_view path, const std::string& name,
                 const PolicyErrorSink& sink) {
  if (name.empty()) {
    sink(path, "network device name is empty");
  } else if (name.size() > kMaxIfnameLength) {
    sink(path,
         absl::StrCat("network device name \"", name, "\" is longer than ",
                      kMaxIfnameLength, " characters"));
  } else if (name.find_first_of("/: \t") != std::string::npos) {
    sink(path, absl::StrCat("\"", name,
                            "\" is not a network device name (no '/', ':' "
                            "or blanks)"));
  }
}

// Parses a cpulist field and, given a host, checks that its CPUs exist.
void CheckCpus(absl::string_view path, const std::string& text,
               const Topology* host, const PolicyErrorSink& sink) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text);
  if (!cpus.ok()) {
    sink(path,
         absl::StrCat("bad cpulist \"", text, "\": ", cpus.status().message()));
    return;
  }
  if (host == nullptr) return;
  std::vector<int> online;
  for (size_t cpu = 0; cpu < host->cpu_node.size(); ++cpu) {
    if (host->cpu_node[cpu] >= 0) online.push_back(static_cast<int>(cpu));
  }
  std::vector<int> missing;
  for (int cpu : *cpus) {
    if (cpu >= static_cast<int>(host->cpu_node.size()) ||
        host->cpu_node[cpu] < 0) {
      missing.push_back(cpu);
    }
  }
  if (!missing.empty()) {
    sink(path, absl::StrCat("CPU", missing.size() > 1 ? "s " : " ",
                            FormatCpuList(missing),
                            " not online on this host (online CPUs: ",
                            FormatCpuList(online), ")"));
  }
}

// A unit name as systemd spells it, of a kind that holds processes.
void CheckSystemdUnit(const std::string& unit, const PolicyErrorSink& sink) {
  if (unit.empty()) return;
  const bool name_ok =
      unit.size() <= 256 && std::all_of(unit.begin(), unit.end(), [](char c) {
        return absl::ascii_isalnum(c) || absl::StrContains(":-_.\\@", c);
      });
  if (!name_ok ||
      !(absl::EndsWith(unit, ".service") || absl::EndsWith(unit, ".scope"))) {
    sink("targets.systemd_unit",
         absl::StrCat("\"", absl::CHexEscape(unit),
                      "\" is not a systemd service or scope name (e.g. "
                      "nginx.service)"));
  } else if (absl::StartsWith(unit, "user@")) {
    // Whatever runs in a user's own service manager, that user started.
    sink("targets.systemd_unit",
         absl::StrCat("\"", unit,
                      "\" is a user's own service manager, which vouches "
                      "for nothing that user starts; name the system's unit "
                      "of the service (e.g. nginx.service)"));
  }
}

void CheckTargets(const v1::Targets& targets, const PolicyErrorSink& sink) {
  if (targets.comm().empty()) {
    sink("targets.comm", "name at least one process (e.g. [nginx])");
  }
  std::set<std::string> comms;
  for (int i = 0; i < targets.comm_size(); ++i) {
    const std::string& comm = targets.comm(i);
    std::string path = absl::StrCat("targets.comm[", i, "]");
    if (comm.empty()) {
      sink(path, "process name is empty");
    } else if (comm.size() > kMaxCommLength) {
      sink(path, absl::StrCat("process name \"", comm, "\" is longer than ",
                              kMaxCommLength,
                              " characters: the kernel's comm never matches"));
    } else if (!comms.insert(comm).second) {
      sink(path, absl::StrCat("process \"", comm, "\" is listed twice"));
    }
  }
  std::set<std::string> threaded;
  for (int i = 0; i < targets.thread_workers_size(); ++i) {
    const std::string& comm = targets.thread_workers(i);
    std::string path = absl::StrCat("targets.thread_workers[", i, "]");
    if (!comms.contains(comm)) {
      sink(path, absl::StrCat("\"", comm,
                              "\" is not in targets.comm: name a process "
                              "the policy selects (e.g. haproxy)"));
    } else if (!threaded.insert(comm).second) {
      sink(path, absl::StrCat("process \"", comm, "\" is listed twice"));
    }
  }
  CheckSystemdUnit(targets.systemd_unit(), sink);
}

void CheckSpill(const v1::Spill& spill, const PolicyErrorSink& sink) {
  // A spill that is off may hold anything (zeros when a policy leaves it
  // out of a hand-built message): it is not read.
  if (!spill.enabled()) return;
  CheckRange(sink, "placement.spill.wait_above", spill.wait_above(), 0.001, 1.0,
             " (share of each second a worker waits for a CPU)");
  // Below the calm band a node could never be calm: nothing would narrow.
  CheckRange(sink, "placement.spill.busy_above", spill.busy_above(), 0.5, 1.0,
             " (share of the time the node's CPUs are busy)");
  CheckRange<uint32_t>(sink, "placement.spill.sustain_s", spill.sustain_s(), 1,
                       3600);
  CheckRange<uint32_t>(sink, "placement.spill.dwell_s", spill.dwell_s(), 1,
                       86400);
}

void CheckPlacement(const v1::Placement& placement, const Topology* host,
                    const PolicyErrorSink& sink) {
  if (placement.strategy() == v1::Placement::STRATEGY_UNSPECIFIED) {
    sink("placement.strategy", "strategy must be spread or near_nic");
  }
  if (placement.pin_to() == v1::Placement::PIN_TO_UNSPECIFIED) {
    sink("placement.pin_to", "pin_to must be node or cpu");
  }
  CheckCpus("placement.cpus", placement.cpus(), host, sink);
  if (!placement.nic().empty()) {
    CheckIfname("placement.nic", placement.nic(), sink);
    if (placement.strategy() != v1::Placement::STRATEGY_NEAR_NIC) {
      sink("placement.nic",
           "nic is set but strategy is not near_nic (only near_nic uses it)");
    }
  }
  CheckRange(sink, "placement.node_capacity", placement.node_capacity(), 0.01,
             64.0, " (workers per CPU)");
  CheckSpill(placement.spill(), sink);
}

void CheckMemory(const v1::Policy& policy, const PolicyErrorSink& sink) {
  const v1::Memory& memory = policy.memory();
  CheckRange(sink, "memory.remote_threshold", memory.remote_threshold(), 0.01,
             1.0);
  CheckRange<uint64_t>(sink, "memory.min_faults", memory.min_faults(), 0,
                       1'000'000'000);
  CheckRange<uint32_t>(sink, "memory.budget_mb_per_s", memory.budget_mb_per_s(),
                       1, 100'000);
  CheckRange<uint32_t>(sink, "memory.reserve_free_pct",
                       memory.reserve_free_pct(), 0, 90);
  if (memory.enabled() && !policy.placement().enabled()) {
    sink("memory.enabled",
         "memory.enabled needs placement.enabled: memory follows the "
         "workers' home node, which placement chooses");
  }
}

void CheckIrqs(const v1::Irqs& irqs, const Topology* host,
               const PolicyErrorSink& sink) {
  std::set<std::string> devices;
  for (int i = 0; i < irqs.devices_size(); ++i) {
    std::string path = absl::StrCat("irqs.devices[", i, "]");
    CheckIfname(path, irqs.devices(i), sink);
    if (!irqs.devices(i).empty() && !devices.insert(irqs.devices(i)).second) {
      sink(path,
           absl::StrCat("device \"", irqs.devices(i), "\" is listed twice"));
    }
  }
  CheckCpus("irqs.cpus", irqs.cpus(), host, sink);
}

void CheckStability(const v1::Stability& stability,
                    const PolicyErrorSink& sink) {
  CheckRange(sink, "stability.min_gain", stability.min_gain(), 0.0, 0.99);
  CheckRange<uint32_t>(sink, "stability.dwell_s", stability.dwell_s(), 0,
                       86'400);
  CheckRange<uint32_t>(sink, "stability.max_moves_per_tick",
                       stability.max_moves_per_tick(), 1, 10'000);
  if (CheckRange<uint32_t>(sink, "stability.hold_down_s",
                           stability.hold_down_s(), 0, 604'800) &&
      stability.hold_down_s() < stability.dwell_s()) {
    sink("stability.hold_down_s",
         absl::StrCat("hold_down_s ", stability.hold_down_s(),
                      " is shorter than dwell_s ", stability.dwell_s(),
                      ": a reverted entity would move again sooner than a "
                      "moved one"));
  }
}

void CheckConnections(const v1::Connections& connections,
                      const PolicyErrorSink& sink) {
  CheckRange(sink, "connections.spill_above_busy",
             connections.spill_above_busy(), 0.1, 1.0,
             " (share of the time a node's workers are busy; 1: never spill)");
  std::set<uint32_t> ports;
  for (int i = 0; i < connections.ports_size(); ++i) {
    const uint32_t port = connections.ports(i);
    const std::string path = absl::StrCat("connections.ports[", i, "]");
    if (port == 0 || port > 65535) {
      sink(path, absl::StrCat("port ", port, " is out of range [1, 65535]"));
    } else if (!ports.insert(port).second) {
      sink(path, absl::StrCat("port ", port, " is listed twice"));
    }
  }
}

void CheckCoexist(const v1::Coexist& coexist, const PolicyErrorSink& sink) {
  if (coexist.irqbalance() == v1::Coexist::IRQBALANCE_MODE_UNSPECIFIED) {
    sink("coexist.irqbalance", "coexist.irqbalance must be ban or off");
  }
  if (coexist.numad() == v1::Coexist::NUMAD_MODE_UNSPECIFIED) {
    sink("coexist.numad", "coexist.numad must be exclude or off");
  }
}

}  // namespace

void CheckPolicy(const v1::Policy& policy, const Topology* host,
                 const PolicyErrorSink& sink) {
  if (policy.version() != 1) {
    sink("version", absl::StrCat("unsupported version ", policy.version(),
                                 " (this locusd reads version 1)"));
  }
  if (policy.mode() == v1::Policy::MODE_UNSPECIFIED) {
    sink("mode", "mode must be enforce or dry_run");
  }
  CheckTargets(policy.targets(), sink);
  CheckPlacement(policy.placement(), host, sink);
  CheckMemory(policy, sink);
  CheckIrqs(policy.irqs(), host, sink);
  CheckStability(policy.stability(), sink);
  CheckConnections(policy.connections(), sink);
  CheckCoexist(policy.coexist(), sink);
  CheckRange(sink, "experiment.latency_margin",
             policy.experiment().latency_margin(), 0.0, 10.0,
             " (a fraction: 0.1 = 10 %)");
}

namespace {

absl::Status Collect(const v1::Policy& policy, const Topology* host) {
  std::vector<std::string> errors;
  CheckPolicy(policy, host,
              [&errors](absl::string_view path, absl::string_view message) {
                errors.push_back(Printable(absl::StrCat(path, ": ", message)));
              });
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
}

}  // namespace

absl::Status ValidatePolicy(const v1::Policy& policy) {
  return Collect(policy, nullptr);
}

absl::Status ValidatePolicyForHost(const v1::Policy& policy,
                                   const Topology& host) {
  return Collect(policy, &host);
}

}  // namespace locus
