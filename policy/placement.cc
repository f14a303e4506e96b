// Placement: each node's quota of workers, a home node per worker, and the
// pins that take misplaced workers home.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "policy/apportion.h"
#include "policy/cpuset.h"
#include "policy/engine.h"

namespace locus::decide_internal {
namespace {

// near_nic's NIC: the one the policy names, else the device with the most
// queues (then by name): a choice that noise in interrupt counts cannot flip
// from tick to tick.
std::string NearNic(const Context& ctx) {
  std::string nic = ctx.policy.placement().nic();
  if (!nic.empty()) return nic;
  absl::flat_hash_map<std::string, int> queues;
  for (const IrqSample& irq : ctx.snapshot.irqs) {
    if (!irq.net_device.empty() && irq.device_node >= 0) {
      ++queues[irq.net_device];
    }
  }
  int best = 0;
  for (const auto& [name, count] : queues) {
    if (count > best || (count == best && name < nic)) nic = name, best = count;
  }
  return nic;
}

int NicNode(const Context& ctx, const std::string& nic) {
  for (const IrqSample& irq : ctx.snapshot.irqs) {
    if (irq.net_device == nic && irq.device_node >= 0) {
      return ctx.NodeIndexOfId(irq.device_node);
    }
  }
  return -1;
}

// Fills the nodes nearest the NIC's, up to node_capacity workers per CPU;
// the workers beyond every node's capacity go by CPUs.
std::vector<int> NearNicQuotas(const Context& ctx, int nic_node, int total,
                               const std::vector<double>& cpus) {
  std::vector<int> order;
  for (int n = 0; n < ctx.nodes; ++n) {
    if (cpus[n] > 0) order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const int da = ctx.Distance(nic_node, a);
    const int db = ctx.Distance(nic_node, b);
    return da < db || (da == db && a == nic_node && b != nic_node);
  });
  std::vector<int> quota(ctx.nodes, 0);
  int left = total;
  for (int n : order) {
    int capacity = std::max(
        1, static_cast<int>(ctx.policy.placement().node_capacity() * cpus[n]));
    quota[n] = std::min(capacity, left);
    left -= quota[n];
  }
  if (left > 0) {
    std::vector<int> extra = Apportion(left, cpus);
    for (int n = 0; n < ctx.nodes; ++n) quota[n] += extra[n];
  }
  return quota;
}

// near_nic's node, or -1 to spread (said once in the plan's notes).
int NearNicNode(const Context& ctx, Plan& plan) {
  if (ctx.policy.placement().strategy() != v1::Placement::STRATEGY_NEAR_NIC) {
    return -1;
  }
  const std::string nic = NearNic(ctx);
  const int nic_node = NicNode(ctx, nic);
  if (nic_node < 0 || ctx.worker_cpus[nic_node].empty()) {
    plan.notes.push_back(
        absl::StrCat("near_nic: no NIC with a known node",
                     nic.empty() ? "" : absl::StrCat(" (", nic, ")"),
                     " and usable CPUs; spreading workers instead"));
    return -1;
  }
  return nic_node;
}

// How many of the `total` workers each node should hold, `prefer[n]` of
// them preferring node n, by the CPUs they may use there (`cpus`: zero on a
// node their cgroup keeps them off, so only nodes they may use count). A
// NIC's node their cgroup forbids leaves its nearest allowed nodes first.
std::vector<int> Quotas(const Context& ctx, int total,
                        const std::vector<int>& prefer,
                        const std::vector<double>& cpus, int nic_node) {
  if (nic_node < 0) return Apportion(total, cpus, prefer);
  return NearNicQuotas(ctx, nic_node, total, cpus);
}

// The workers by their claims, gathered in one pass: on a big host every
// pass over the workers is a trip to memory.
struct Claims {
  // Worker indices with a preferred node, strongest rank first, each rank
  // in the snapshot's order.
  std::vector<std::vector<int>> by_rank;
  std::vector<int> unclaimed;  // worker indices with none
  std::vector<int> prefer;     // per node: workers preferring it
};

Claims GatherClaims(const Context& ctx, const std::vector<Worker>& workers,
                    const std::vector<int>& members) {
  Claims claims{.by_rank = std::vector<std::vector<int>>(kHeld + 1),
                .unclaimed = {},
                .prefer = std::vector<int>(ctx.nodes, 0)};
  for (int index : members) {
    const Worker& w = workers[index];
    if (w.pref < 0) {
      claims.unclaimed.push_back(index);
      continue;
    }
    claims.by_rank[kHeld - w.rank].push_back(index);
    ++claims.prefer[w.pref];
  }
  return claims;
}

// The rest: the node with places left that holds most of its pages, the
// nearest to where it would rather be on a tie.
int PlaceLeft(const Context& ctx, const Worker& w, std::vector<int>& left) {
  int best = -1;
  for (int n = 0; n < ctx.nodes; ++n) {
    if (left[n] <= 0) continue;
    if (best < 0 || w.PagesOn(n) > w.PagesOn(best) ||
        (w.PagesOn(n) == w.PagesOn(best) &&
         ctx.Distance(w.pref, n) < ctx.Distance(w.pref, best))) {
      best = n;
    }
  }
  if (best >= 0) --left[best];
  return best >= 0 ? best : w.pref;
}

// The worker stays where it is this tick (counted in `tally` by why).
bool Stays(const Context& ctx, const Worker& w, bool per_cpu, Tally& tally) {
  const bool in_place =
      w.PinnedHomeByUs() ||
      (per_cpu ? (w.pinned_cpu >= 0 && ctx.NodeOfCpu(w.pinned_cpu) == w.home)
               : w.pinned == w.home);
  if (in_place) {
    ++tally.converged;
  } else if (w.held) {
    ++tally.held;
  } else if (w.dwell_node >= 0 && w.dwell_node != w.home) {
    ++tally.dwelling;
  } else if (w.pinned >= 0 && !ctx.worker_cpus[w.pinned].empty() &&
             ctx.WouldReturn({EntityKind::kTask, w.pid}, w.home)) {
    // (Only while the policy still allows the node it is on.)
    ++tally.returning;
  } else {
    return false;
  }
  return true;
}

// Share of its runtime off its home node.
double RunOff(const Worker& w) {
  if (w.total_run > 0) {
    return double(w.total_run - w.RunOn(w.home)) / w.total_run;
  }
  return w.pinned >= 0 && w.pinned != w.home ? 1 : 0;
}

// Faults on memory elsewhere stay remote once pinned home; the rest become
// local.
double FaultGain(const Context& ctx, const Worker& w) {
  if (w.faults == 0 || w.faults < ctx.policy.memory().min_faults()) return 0;
  double off_home = double(w.faults - w.FaultsOn(w.home)) / w.faults;
  return std::max(0.0, double(w.remote_faults) / w.faults - off_home);
}

// Workers whose cgroups give them the same CPUs per home node: they share
// quotas, so a pod spreads over the nodes it may use and no other.
struct HomeGroup {
  std::vector<double> cpus;  // per node: CPUs they may use; 0 off home
  std::vector<int> members;  // worker indices, ascending
};

// "2 worker(s) in /kubepods/...: placed by the kubelet: ...", once per
// cgroup, for workers someone else places (their home stays -1).
void NoteByCgroup(const std::map<std::string, std::pair<int, std::string>>& by,
                  absl::string_view what, Plan& plan) {
  for (const auto& [cgroup, entry] : by) {
    plan.notes.push_back(absl::StrCat(entry.first, " worker(s) in ", cgroup,
                                      what, entry.second));
  }
}

// Per node, the CPUs `t` may use there where `a` lets it make its home.
std::vector<double> HomeCpus(const Context& ctx, const Target& t,
                             const Allowed& a) {
  std::vector<double> cpus(ctx.nodes, 0);
  for (int n = 0; n < ctx.nodes; ++n) {
    if (a.home[n]) cpus[n] = CpusFor(ctx, t, n).size();
  }
  return cpus;
}

std::string CgroupName(const Target& t) {
  return t.cgroup && !t.cgroup->path.empty() ? t.cgroup->path : "its cgroup";
}

// Workers without a cpuset (most, on a host) share one group, built without
// a look at each one's CPUs: a big host's tick must not pay for cpusets it
// does not have. Where the policy names several servers, each has groups of
// its own: every server spreads over the nodes (nginx's workers and HAProxy's
// threads alike), rather than one server on a node and another elsewhere.
std::vector<HomeGroup> GroupByCpuset(const Context& ctx,
                                     const std::vector<Worker>& workers,
                                     Plan& plan) {
  const Allowed anywhere = AllowedNodes(ctx, Target{});
  const bool per_server = ctx.policy.targets().comm_size() > 1;
  auto server = [&](const Worker& w) {
    return per_server ? w.target->comm : std::string();
  };
  // Per server: worker indices without a cpuset.
  std::map<std::string, std::vector<int>> free;
  std::map<std::pair<std::string, std::vector<double>>, std::vector<int>>
      groups;
  std::map<std::string, std::pair<int, std::string>> placed, constrained;
  for (size_t wi = 0; wi < workers.size(); ++wi) {
    const Worker& w = workers[wi];
    const Target& t = *w.target;  // read only for a worker with a cgroup
    if (w.placed_by_others) {
      auto& entry = placed[CgroupName(t)];
      entry = {entry.first + 1, t.cgroup->placed_by};
    } else if (!w.has_cpuset) {
      free[server(w)].push_back(static_cast<int>(wi));
    } else {
      const Allowed a = AllowedNodes(ctx, t);
      if (a.constrained) {
        auto& entry = constrained[CgroupName(t)];
        entry = {entry.first + 1,
                 absl::StrCat(NodeIds(ctx, a.home), ": ", a.why)};
      }
      groups[{server(w), HomeCpus(ctx, t, a)}].push_back(static_cast<int>(wi));
    }
  }
  NoteByCgroup(placed, ": left alone, placed by ", plan);
  NoteByCgroup(constrained, ": homes only on node ", plan);
  for (auto& [name, members] : free) {
    // A cpuset of every CPU and node is no cpuset: one group with those.
    std::vector<int>& all = groups[{name, HomeCpus(ctx, Target{}, anywhere)}];
    if (all.empty()) {
      all = std::move(members);
    } else {
      all.insert(all.end(), members.begin(), members.end());
      std::sort(all.begin(), all.end());
    }
  }
  std::vector<HomeGroup> out;
  for (auto& [key, members] : groups) {
    out.push_back({key.second, std::move(members)});
  }
  return out;
}

void AssignGroupHomes(const Context& ctx, std::vector<Worker>& workers,
                      const HomeGroup& group, int nic_node) {
  Claims claims = GatherClaims(ctx, workers, group.members);
  std::vector<int> left = Quotas(ctx, static_cast<int>(group.members.size()),
                                 claims.prefer, group.cpus, nic_node);
  std::vector<int>& rest = claims.unclaimed;
  // Strongest claims first; within a rank the snapshot's order decides.
  for (const std::vector<int>& rank : claims.by_rank) {
    for (int wi : rank) {
      Worker& w = workers[wi];
      if (left[w.pref] > 0 || w.held) {
        w.home = w.pref;
        --left[w.pref];
      } else {
        rest.push_back(wi);
      }
    }
  }
  // Then the rest, in the snapshot's order.
  std::sort(rest.begin(), rest.end());
  for (int wi : rest) workers[wi].home = PlaceLeft(ctx, workers[wi], left);
}

}  // namespace

void AssignHomes(const Context& ctx, std::vector<Worker>& workers, Plan& plan) {
  if (workers.empty() || !ctx.policy.placement().enabled()) return;
  const int nic_node = NearNicNode(ctx, plan);
  for (const HomeGroup& group : GroupByCpuset(ctx, workers, plan)) {
    AssignGroupHomes(ctx, workers, group, nic_node);
  }
}

// pin_to cpu: workers already on one CPU of their home keep it; others get
// the CPU with the fewest workers, then the least busy.
CpuChooser::CpuChooser(const Context& ctx, const std::vector<Worker>& workers)
    : ctx_(ctx), load_(ctx.cpu_index.size(), 0) {
  for (const Worker& w : workers) {
    if (w.home >= 0 && w.pinned_cpu >= 0 &&
        ctx.NodeOfCpu(w.pinned_cpu) == w.home) {
      ++load_[w.pinned_cpu];
    }
  }
}

int CpuChooser::Take(int node, const Target& target) {
  int best = -1;
  for (int cpu : CpusFor(ctx_, target, node)) {
    if (best < 0 || load_[cpu] < load_[best] ||
        (load_[cpu] == load_[best] && Busy(cpu) < Busy(best))) {
      best = cpu;
    }
  }
  if (best >= 0) ++load_[best];
  return best;
}

double CpuChooser::Busy(int cpu) const {
  return cpu < static_cast<int>(ctx_.snapshot.cpus.size())
             ? ctx_.snapshot.cpus[cpu].busy
             : 0;
}

PinCandidates::PinCandidates(const Context& ctx,
                             const std::vector<Worker>& workers,
                             Candidates& out, Tally& tally)
    : ctx_(ctx),
      out_(out),
      tally_(tally),
      enabled_(ctx.policy.placement().enabled()),
      per_cpu_(ctx.policy.placement().pin_to() == v1::Placement::PIN_TO_CPU) {
  if (!enabled_) return;
  out.moves.reserve(workers.size() + ctx.snapshot.irqs.size());
  // Built only when used: its constructor is a pass over the workers.
  if (per_cpu_) chooser_ = std::make_unique<CpuChooser>(ctx, workers);
}

PinCandidates::~PinCandidates() = default;

void PinCandidates::Add(const Worker& w, int wi) {
  if (!enabled_ || w.home < 0 || w.Spilled() ||
      Stays(ctx_, w, per_cpu_, tally_)) {
    return;
  }
  const double run_off = RunOff(w);
  const double gain = std::max(run_off, FaultGain(ctx_, w));
  if (gain < ctx_.min_gain || gain <= 0) {
    ++tally_.below_gain;
    return;
  }
  const int cpu = per_cpu_ ? chooser_->Take(w.home, *w.target) : -1;
  if (per_cpu_ && cpu < 0) return;
  out_.moves.push_back(Candidate{
      .kind = CandidateKind::kPin,
      .index = wi,
      .gain = gain,
      .id = w.pid,
      .node = w.home,
      .cpu = cpu,
      .run_off = run_off,
      .remote = w.faults > 0 ? double(w.remote_faults) / w.faults : -1,
      .from = w.pinned,
  });
}

}  // namespace locus::decide_internal
