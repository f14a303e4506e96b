#include "policy/engine.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/printable.h"
#include "policy/cpu_list.h"
#include "policy/tiers.h"

namespace locus::decide_internal {
namespace {

std::vector<int> IndexOfId(const Topology& topology) {
  std::vector<int> index_of_id;
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    int id = topology.nodes[i].id;
    if (id < 0) continue;
    if (id >= static_cast<int>(index_of_id.size())) {
      index_of_id.resize(id + 1, -1);
    }
    index_of_id[id] = static_cast<int>(i);
  }
  return index_of_id;
}

std::vector<int> CpuIndex(const Context& ctx) {
  const std::vector<int>& cpu_node = ctx.snapshot.topology.cpu_node;
  std::vector<int> cpu_index(cpu_node.size(), -1);
  for (size_t cpu = 0; cpu < cpu_node.size(); ++cpu) {
    cpu_index[cpu] = ctx.NodeIndexOfId(cpu_node[cpu]);
  }
  return cpu_index;
}

// Per node index, its CPUs that the policy's cpulist `text` allows. A policy
// that reached Decide was validated; a bad list means "all".
std::vector<std::vector<int>> UsableCpus(const Context& ctx,
                                         const std::string& text) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text);
  absl::flat_hash_set<int> allowed;
  if (cpus.ok()) allowed.insert(cpus->begin(), cpus->end());
  std::vector<std::vector<int>> usable(ctx.nodes);
  for (int i = 0; i < ctx.nodes; ++i) {
    for (int cpu : ctx.snapshot.topology.nodes[i].cpus) {
      // The node's list and cpu_node must agree; a CPU they disagree on is
      // not used (a snapshot torn by hotplug must not index out of range).
      if (ctx.NodeOfCpu(cpu) != i) continue;
      if (allowed.empty() || allowed.contains(cpu)) usable[i].push_back(cpu);
    }
  }
  return usable;
}

}  // namespace

std::string Pct(double share) { return absl::StrFormat("%.0f%%", 100 * share); }

// The comm is escaped here, where the reason is made: a reason reaches
// explain, logs, the metrics stream and journald, and any local user names
// their own process.
std::string WorkerName(const Target& target) {
  if (target.process != 0) {
    return absl::StrCat("worker thread ", target.pid, " (",
                        Printable(target.comm), " ", target.process, ")");
  }
  return absl::StrCat("worker ", target.pid, " (", Printable(target.comm), ")");
}

std::string MiB(uint64_t bytes) {
  // Two calls: the format must be a constant for StrFormat's check.
  if (bytes < 10 * kMiB) return absl::StrFormat("%.1f MiB", bytes / kMiB);
  return absl::StrFormat("%.0f MiB", bytes / kMiB);
}

std::string Ms(uint64_t ns) { return absl::StrFormat("%.1f ms", ns / 1e6); }

Context::Context(const Snapshot& snapshot, const v1::Policy& policy,
                 const History& history)
    : snapshot(snapshot),
      policy(policy),
      history(history),
      nodes(static_cast<int>(snapshot.topology.nodes.size())),
      dwell_ns(uint64_t{policy.stability().dwell_s()} * kNsPerSec),
      hold_ns(uint64_t{policy.stability().hold_down_s()} * kNsPerSec),
      min_gain(policy.stability().min_gain()),
      index_of_id(IndexOfId(snapshot.topology)),
      cpu_index(CpuIndex(*this)),
      worker_cpus(UsableCpus(*this, policy.placement().cpus())),
      irq_cpus(UsableCpus(*this, policy.irqs().cpus())),
      lower_tier(LowerTierNodes(snapshot.topology)),
      lower_tier_ids(LowerTierIds(snapshot.topology)) {}

int Context::NodeOfCpu(int cpu) const {
  return cpu >= 0 && cpu < static_cast<int>(cpu_index.size()) ? cpu_index[cpu]
                                                              : -1;
}

int Context::NodeIndexOfId(int id) const {
  return id >= 0 && id < static_cast<int>(index_of_id.size()) ? index_of_id[id]
                                                              : -1;
}

int Context::Distance(int from, int to) const {
  if (from < 0) return 0;
  const std::vector<int>& d = snapshot.topology.nodes[from].distances;
  return to < static_cast<int>(d.size()) ? d[to] : (from == to ? 10 : 20);
}

int Context::CommonNode(const std::vector<int>& cpus) const {
  int node = -1;
  for (int cpu : cpus) {
    int n = NodeOfCpu(cpu);
    if (n < 0 || (node >= 0 && n != node)) return -1;
    node = n;
  }
  return node;
}

int Context::NodesWithCpus() const {
  int count = 0;
  for (int i = 0; i < nodes; ++i) {
    const std::vector<int>& cpus = snapshot.topology.nodes[i].cpus;
    if (std::any_of(cpus.begin(), cpus.end(),
                    [&](int cpu) { return NodeOfCpu(cpu) == i; })) {
      ++count;
    }
  }
  return count;
}

Standing Context::StandingOf(EntityKey key) const {
  Standing standing;
  const EntityHistory* entry = history.Find(key);
  if (entry == nullptr) return standing;
  standing.held = entry->held_until_ns > snapshot.now_ns;
  if (entry->last_move_ns != 0 &&
      snapshot.now_ns < entry->last_move_ns + dwell_ns) {
    standing.dwell_node = NodeIndexOfId(entry->node);
  }
  return standing;
}

bool Context::WouldReturn(EntityKey key, int to) const {
  const EntityHistory* entry = history.Find(key);
  if (entry == nullptr || entry->last_move_ns == 0 ||
      snapshot.now_ns >= entry->last_move_ns + hold_ns) {
    return false;
  }
  // An IRQ we took from CPUs on several nodes was served on each of them:
  // sending it on to another goes back too. Its consumers' split is what
  // flips (a tick without NET_RX falls back to counting workers).
  if (entry->left_node == kSeveralNodes) {
    return key.kind == EntityKind::kIrq && to != NodeIndexOfId(entry->node);
  }
  return entry->left_node >= 0 && NodeIndexOfId(entry->left_node) == to;
}

uint64_t Worker::SumRunOn(int n) const {
  uint64_t sum = 0;
  for (const ThreadSample& t : target->threads) {
    if (n < static_cast<int>(t.runtime_ns.size())) sum += t.runtime_ns[n];
  }
  return sum;
}

uint64_t Worker::SumFaultsOn(int n) const {
  uint64_t sum = 0;
  for (const ThreadSample& t : target->threads) {
    if (n < static_cast<int>(t.faults.size())) {
      sum += t.faults[n].local + t.faults[n].remote;
    }
  }
  return sum;
}

uint64_t Worker::SnapshotPagesOn(int n) const {
  return n < static_cast<int>(target->resident_pages.size())
             ? target->resident_pages[n]
             : 0;
}

bool MoveLimit::Take(Tally& tally) {
  if (taken_ >= max_) {
    ++tally.deferred;
    return false;
  }
  ++taken_;
  return true;
}

}  // namespace locus::decide_internal
