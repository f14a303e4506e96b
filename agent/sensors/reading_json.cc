#include "agent/sensors/reading_json.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/sensors/json_util.h"

namespace locus {
namespace {

constexpr const char* kVectorNames[kNumSoftirqVectors] = {
    "HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
    "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU",
};

const char* KindName(NumaFaultKind k) {
  switch (k) {
    case NumaFaultKind::kPagesExact:
      return "pages_exact";
    case NumaFaultKind::kKernelDecayed:
      return "kernel_decayed";
    case NumaFaultKind::kNone:
      break;
  }
  return "none";
}

std::string TaskJson(const TaskCounters& t, bool numa) {
  std::string out = absl::StrCat(
      "{\"tid\":", t.tid, ",\"pid\":", t.pid, ",\"comm\":", JsonString(t.comm),
      ",\"cpu\":", t.cpu, ",\"migrations\":", t.migrations,
      ",\"cross_node_migrations\":", t.cross_node_migrations,
      ",\"runtime_ns\":", JsonArray(t.runtime_ns),
      ",\"net_rx_softirq_ns\":", t.net_rx_softirq_ns,
      ",\"softirq_ns\":", t.softirq_ns);
  if (numa) {
    std::vector<std::string> nodes;
    for (const NumaNodeFaults& f : t.numa_faults) {
      nodes.push_back(absl::StrCat("{\"total\":", f.total, ",\"local\":",
                                   f.local, ",\"remote\":", f.remote, "}"));
    }
    absl::StrAppend(&out, ",\"numa_faults\":[", absl::StrJoin(nodes, ","),
                    "],\"numa_local\":", t.numa_local,
                    ",\"numa_remote\":", t.numa_remote);
  }
  out += "}";
  return out;
}

}  // namespace

std::string ReadingToJson(const SensorReading& r, uint64_t window_ns) {
  std::vector<std::string> tasks;
  for (const TaskCounters& t : r.tasks)
    tasks.push_back(TaskJson(t, r.numa_active));
  std::vector<std::string> cpus;
  for (const CpuCounters& c : r.cpus) {
    std::vector<std::string> vecs;
    for (int v = 0; v < kNumSoftirqVectors; ++v) {
      vecs.push_back(absl::StrCat("\"", kVectorNames[v],
                                  "\":{\"ns\":", c.softirq_ns[v],
                                  ",\"count\":", c.softirq_count[v], "}"));
    }
    cpus.push_back(absl::StrCat("{\"cpu\":", c.cpu, ",\"busy_ns\":", c.busy_ns,
                                ",\"switches\":", c.switches,
                                ",\"untimed_switches\":", c.untimed_switches,
                                ",\"softirq\":{", absl::StrJoin(vecs, ","),
                                "}}"));
  }
  std::vector<std::string> irqs;
  for (const IrqCounters& i : r.irqs) {
    irqs.push_back(absl::StrCat(
        "{\"irq\":", i.irq, ",\"count_per_cpu\":", JsonArray(i.count_per_cpu),
        ",\"ns_per_cpu\":", JsonArray(i.ns_per_cpu), "}"));
  }
  std::vector<std::string> drops;
  for (const auto& [name, n] : r.drops) {
    drops.push_back(absl::StrCat(JsonString(name), ":", n));
  }
  return absl::StrCat(
      "{\"window_ns\":", window_ns, ",\"counters\":\"cumulative over window\"",
      ",\"sources\":{\"sched\":", JsonString(r.sources.sched),
      ",\"numa\":", JsonString(r.sources.numa),
      ",\"softirq\":", JsonString(r.sources.softirq), "}",
      ",\"softirq_traced\":", r.softirq_traced,
      ",\"numa\":{\"active\":", r.numa_active ? "true" : "false",
      ",\"status\":", JsonString(r.numa_status),
      ",\"fault_kind\":", JsonString(KindName(r.numa_kind)), "}",
      ",\"tasks\":[", absl::StrJoin(tasks, ",\n"), "]", ",\"cpus\":[",
      absl::StrJoin(cpus, ",\n"), "]", ",\"irqs\":[",
      absl::StrJoin(irqs, ",\n"), "]", ",\"drops\":{",
      absl::StrJoin(drops, ","), "}}\n");
}

}  // namespace locus
