// IRQs follow consumers: a NIC's queue IRQs are shared among nodes in
// proportion to their workers' NET_RX softirq time, each going to the CPU of
// its node with the least softirq time.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "policy/apportion.h"
#include "policy/engine.h"

namespace locus::decide_internal {

void Consumers::Add(const Worker& w) {
  int n = w.home >= 0 ? w.home : w.pref;
  if (n < 0) return;
  net_rx[n] += w.net_rx_ns;
  count[n] += 1;
}

void Consumers::Finish(const Context& ctx) {
  for (int n = 0; n < ctx.nodes; ++n) {
    if (ctx.irq_cpus[n].empty()) net_rx[n] = count[n] = 0;
    net_rx_total += net_rx[n];
  }
  weight = net_rx_total > 0 ? net_rx : count;
  for (double v : weight) weight_total += v;
}

namespace {

// The NIC queue IRQs the policy steers, by device name, each device's in
// queue order. Kernel-managed ones are only counted.
std::vector<std::vector<int>> QueuesByDevice(const Context& ctx, int& managed) {
  const absl::flat_hash_set<std::string> devices(
      ctx.policy.irqs().devices().begin(), ctx.policy.irqs().devices().end());
  const std::vector<IrqSample>& irqs = ctx.snapshot.irqs;
  absl::flat_hash_map<std::string, std::vector<int>> by_device;
  for (size_t i = 0; i < irqs.size(); ++i) {
    if (irqs[i].net_device.empty()) continue;
    if (!devices.empty() && !devices.contains(irqs[i].net_device)) continue;
    if (irqs[i].managed) {
      ++managed;
      continue;
    }
    by_device[irqs[i].net_device].push_back(static_cast<int>(i));
  }
  std::vector<std::pair<std::string, std::vector<int>>> sorted(
      by_device.begin(), by_device.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::vector<int>> queues;
  for (auto& [name, list] : sorted) {
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      return std::make_pair(irqs[a].queue, irqs[a].irq) <
             std::make_pair(irqs[b].queue, irqs[b].irq);
    });
    queues.push_back(std::move(list));
  }
  return queues;
}

// One queue's IRQ as this tick finds it, and the node it should be on.
struct Queue {
  int index = -1;               // in Snapshot::irqs
  uint64_t total = 0;           // its interrupts this tick
  std::vector<double> handled;  // share of them per node: where it is now
  int current = -1;             // the node its affinity names, or -1
  int target = -1;              // the node it should be on, or -1
};

// Shares each device's queues among nodes like their consumers and proposes
// the moves that bring the split closer.
class IrqPlanner {
 public:
  IrqPlanner(const Context& ctx, const Consumers& consumers, Candidates& out,
             Tally& tally);

  void PlanDevice(const std::vector<int>& list);

 private:
  const IrqSample& Irq(const Queue& q) const {
    return ctx_.snapshot.irqs[q.index];
  }
  Queue Describe(int index) const;
  void Keep(Queue& q, std::vector<int>& left) const;
  int Nearest(const Queue& q, std::vector<int>& left) const;
  void Propose(const Queue& q, int queues, std::vector<int>& on_node);
  bool Stays(const Queue& q);
  double Gain(const Queue& q, int queues,
              const std::vector<int>& on_node) const;
  int LeastLoadedCpu(int node) const;
  std::string Reason(const Queue& q, int cpu, double gain) const;

  const Context& ctx_;
  const Consumers& consumers_;
  Candidates& out_;
  Tally& tally_;
  std::vector<uint64_t> softirq_;  // per CPU, all vectors
  std::vector<int> assigned_;      // per CPU: IRQs given to it this tick
};

IrqPlanner::IrqPlanner(const Context& ctx, const Consumers& consumers,
                       Candidates& out, Tally& tally)
    : ctx_(ctx),
      consumers_(consumers),
      out_(out),
      tally_(tally),
      softirq_(ctx.cpu_index.size(), 0),
      assigned_(ctx.cpu_index.size(), 0) {
  for (const CpuSample& cpu : ctx.snapshot.cpus) {
    if (cpu.cpu < 0 || cpu.cpu >= static_cast<int>(softirq_.size())) continue;
    for (uint64_t ns : cpu.softirq_ns) softirq_[cpu.cpu] += ns;
  }
}

void IrqPlanner::PlanDevice(const std::vector<int>& list) {
  const int queues = static_cast<int>(list.size());
  std::vector<int> left = Apportion(queues, consumers_.weight);
  std::vector<Queue> described;
  std::vector<int> on_node(ctx_.nodes, 0);
  for (int index : list) {
    Queue& q = described.emplace_back(Describe(index));
    if (q.current >= 0) ++on_node[q.current];
    Keep(q, left);
  }
  for (Queue& q : described) {
    if (q.target < 0) q.target = Nearest(q, left);
  }
  for (const Queue& q : described) Propose(q, queues, on_node);
}

Queue IrqPlanner::Describe(int index) const {
  const IrqSample& irq = ctx_.snapshot.irqs[index];
  Queue q{.index = index, .handled = std::vector<double>(ctx_.nodes, 0)};
  for (size_t cpu = 0; cpu < irq.count_per_cpu.size(); ++cpu) {
    int n = ctx_.NodeOfCpu(static_cast<int>(cpu));
    if (n >= 0) q.handled[n] += irq.count_per_cpu[cpu];
    q.total += irq.count_per_cpu[cpu];
  }
  if (q.total == 0) {
    for (int cpu : irq.affinity) {
      int n = ctx_.NodeOfCpu(cpu);
      if (n >= 0) q.handled[n] += 1;
    }
  }
  double sum = 0;
  for (double v : q.handled) sum += v;
  for (double& v : q.handled) v = sum > 0 ? v / sum : 0;
  q.current = ctx_.CommonNode(irq.affinity);
  return q;
}

// Held, or moved within its dwell: that node is where it stays.
void IrqPlanner::Keep(Queue& q, std::vector<int>& left) const {
  const Standing standing = ctx_.StandingOf({EntityKind::kIrq, Irq(q).irq});
  int keep = standing.held              ? q.current
             : standing.dwell_node >= 0 ? standing.dwell_node
                                        : q.current;
  if (keep >= 0 &&
      (left[keep] > 0 || standing.held || standing.dwell_node >= 0)) {
    q.target = keep;
    --left[keep];
  }
}

// The node with the most queues left to take, the nearest the device's on
// a tie; -1 when none has any left.
int IrqPlanner::Nearest(const Queue& q, std::vector<int>& left) const {
  const int device_node = ctx_.NodeIndexOfId(Irq(q).device_node);
  int best = -1;
  for (int n = 0; n < ctx_.nodes; ++n) {
    if (left[n] <= 0 || consumers_.weight[n] <= 0) continue;
    if (best < 0 || left[n] > left[best] ||
        (left[n] == left[best] &&
         ctx_.Distance(device_node, n) < ctx_.Distance(device_node, best))) {
      best = n;
    }
  }
  if (best >= 0) --left[best];
  return best;
}

void IrqPlanner::Propose(const Queue& q, int queues,
                         std::vector<int>& on_node) {
  const int to = q.target;
  const int from = q.current;
  if (to < 0 || Stays(q)) return;
  const double gain = Gain(q, queues, on_node);
  if (gain < ctx_.min_gain || gain <= 0) {
    ++tally_.below_gain;
    return;
  }
  if (from >= 0) --on_node[from];
  ++on_node[to];
  const int cpu = LeastLoadedCpu(to);
  if (cpu < 0) return;
  ++assigned_[cpu];
  out_.moves.push_back(Candidate{
      .kind = CandidateKind::kIrq,
      .index = q.index,
      .gain = gain,
      .id = Irq(q).irq,
      .node = to,
      .cpu = cpu,
      .irq_reason = static_cast<int>(out_.irq_reasons.size()),
      .from = from,
  });
  out_.irq_reasons.push_back(Reason(q, cpu, gain));
}

// The IRQ is where it belongs, or must stay where it is (counted in the
// tally by why).
bool IrqPlanner::Stays(const Queue& q) {
  const EntityKey key{EntityKind::kIrq, Irq(q).irq};
  const Standing standing = ctx_.StandingOf(key);
  if (q.target == q.current) {
    ++tally_.irqs_in_place;
  } else if (standing.held) {
    ++tally_.held;
  } else if (standing.dwell_node == q.target) {
    // Moved there by us within its dwell; the snapshot predates it (see
    // Worker::PinnedHomeByUs). Moving it again would pick another CPU for
    // nothing.
    ++tally_.irqs_in_place;
  } else if (standing.dwell_node >= 0) {
    ++tally_.dwelling;
  } else if (q.current >= 0 && !ctx_.irq_cpus[q.current].empty() &&
             ctx_.WouldReturn(key, q.target)) {
    ++tally_.returning;
  } else {
    return false;
  }
  return true;
}

// How much closer the queues' split gets to the consumers' split (half the
// change in total variation distance): 80% for a single queue moving from a
// node with 10% of the consumers to one with 90%, 1% between nodes with 17%
// and 18%, which is noise, not a move.
double IrqPlanner::Gain(const Queue& q, int queues,
                        const std::vector<int>& on_node) const {
  const int to = q.target;
  const int from = q.current;
  if (from < 0) {
    // Spread over nodes: local now for the consumers where it lands.
    double local_now = 0;
    for (int n = 0; n < ctx_.nodes; ++n) {
      local_now += q.handled[n] * consumers_.Share(n);
    }
    return consumers_.Share(to) - local_now;
  }
  auto mismatch = [&](int n, int count) {
    return std::abs(double(count) / queues - consumers_.Share(n));
  };
  return (mismatch(from, on_node[from]) + mismatch(to, on_node[to]) -
          mismatch(from, on_node[from] - 1) - mismatch(to, on_node[to] + 1)) /
         2;
}

// The node's IRQ CPU given the fewest IRQs this tick, then with the least
// softirq time; -1 when the node has none.
int IrqPlanner::LeastLoadedCpu(int node) const {
  int best = -1;
  for (int cpu : ctx_.irq_cpus[node]) {
    if (best < 0 || assigned_[cpu] < assigned_[best] ||
        (assigned_[cpu] == assigned_[best] && softirq_[cpu] < softirq_[best])) {
      best = cpu;
    }
  }
  return best;
}

std::string IrqPlanner::Reason(const Queue& q, int cpu, double gain) const {
  const IrqSample& irq = Irq(q);
  const int to = q.target;
  const int from = q.current;
  const std::string now =
      q.total > 0
          ? absl::StrCat(Pct(1 - q.handled[to]), " of ", q.total,
                         " interrupts off node ", ctx_.Id(to))
          : absl::StrCat("affine to ",
                         from >= 0 ? absl::StrCat("node ", ctx_.Id(from))
                                   : "several nodes");
  const std::string consumers =
      consumers_.net_rx_total > 0
          ? absl::StrCat(Pct(consumers_.Share(to)), " of NET_RX ",
                         Ms(static_cast<uint64_t>(consumers_.net_rx_total)))
          : absl::StrCat(consumers_.count[to], " of ", consumers_.weight_total,
                         " workers");
  return absl::StrCat(
      "irq ", irq.irq, " (", irq.net_device, " queue ", irq.queue,
      irq.name.empty() ? "" : absl::StrCat(", ", irq.name), ") ", now,
      ", its consumers on node ", ctx_.Id(to), " (", consumers, ") -> cpu ",
      cpu, " on node ", ctx_.Id(to), " (least softirq: ", Ms(softirq_[cpu]),
      ", expected gain ", Pct(gain), ")");
}

}  // namespace

void AddIrqCandidates(const Context& ctx, const Consumers& consumers,
                      Candidates& out, Tally& tally, Plan& plan) {
  if (!ctx.policy.irqs().enabled()) return;
  int managed = 0;
  const std::vector<std::vector<int>> devices = QueuesByDevice(ctx, managed);
  if (managed > 0) {
    plan.notes.push_back(
        absl::StrCat(managed,
                     " kernel-managed NIC IRQ(s) left alone (affinity is "
                     "the kernel's)"));
  }
  if (devices.empty()) return;
  if (consumers.weight_total <= 0) {
    plan.notes.push_back("no workers to steer NIC IRQs towards");
    return;
  }
  IrqPlanner planner(ctx, consumers, out, tally);
  for (const std::vector<int>& list : devices) planner.PlanDevice(list);
}

}  // namespace locus::decide_internal
