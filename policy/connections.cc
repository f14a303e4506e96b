// Connection steering: for each reuseport group of the targets' listening
// sockets, which node each worker's socket serves (the node the worker is to
// run on after this plan) and how much of a busy node's new connections it
// leaves to the kernel's hash over every worker (spill).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/engine.h"

namespace locus::decide_internal {
namespace {

// Spill never takes a node's workers off its own connections altogether:
// the node would then serve only remote ones.
constexpr double kMaxSpill = 0.9;
// Spill changes by less than this are not made: the busy share the decision
// rests on is noisy from tick to tick.
constexpr double kSpillStep = 0.05;

// The node (index) a worker is to run on once this plan is applied: where
// a pin in the plan takes it, else where it is confined, else where it
// mostly runs; -1 when unknown.
absl::flat_hash_map<int32_t, int> NodeOfWorkers(
    const Context& ctx, const std::vector<Worker>& workers, const Plan& plan) {
  absl::flat_hash_map<int32_t, int> node_of;
  for (const Worker& w : workers) {
    int node = w.pinned;
    if (node < 0 && w.pinned_cpu >= 0) node = ctx.NodeOfCpu(w.pinned_cpu);
    if (node < 0) node = w.pref;
    node_of[w.pid] = node;
  }
  for (const Action& action : plan.actions) {
    if (const auto* pin = std::get_if<PinThread>(&action.op)) {
      node_of[WorkerOf(*pin)] = ctx.NodeIndexOfId(pin->node);
    }
  }
  return node_of;
}

// Per node index, the mean busy share of the workers whose sockets serve
// it (runtime over the tick, at most 1 each): a node whose workers are
// saturated is the one to spill, however busy its CPUs are otherwise.
std::vector<double> WorkerBusy(
    const Context& ctx, const std::vector<Worker>& workers,
    const absl::flat_hash_map<int32_t, int>& node_of) {
  std::vector<double> sum(ctx.nodes, 0);
  std::vector<int> count(ctx.nodes, 0);
  const double tick = static_cast<double>(ctx.snapshot.tick_ns);
  for (const Worker& w : workers) {
    auto it = node_of.find(w.pid);
    if (it == node_of.end() || it->second < 0 || tick <= 0) continue;
    sum[it->second] += std::min(1.0, w.total_run / tick);
    ++count[it->second];
  }
  for (int n = 0; n < ctx.nodes; ++n) {
    if (count[n] > 0) sum[n] /= count[n];
  }
  return sum;
}

// The spill that would bring the node's workers down to `threshold`,
// given that they are at `busy` while shedding `now` of the node's new
// connections: without spill they would be at about busy / (1 - now).
double SpillFor(double busy, double now, double threshold) {
  if (threshold >= 1) return 0;
  const double unshed = busy / (1 - now);
  double want = unshed > threshold ? 1 - threshold / unshed : 0;
  want = std::min(want, kMaxSpill);
  if (std::abs(want - now) < kSpillStep && want != 0) return now;
  return want;
}

// What a thread worker server needs for its connections to be steered.
constexpr char kOneSocketPerThread[] =
    "give its bind line `shards by-thread` (HAProxy 2.5+: a socket per "
    "thread) to steer connections by node";

bool PortSelected(const v1::Connections& policy, uint16_t port) {
  return policy.ports().empty() ||
         std::find(policy.ports().begin(), policy.ports().end(), port) !=
             policy.ports().end();
}

ListenGroupSteering SteerGroup(const Context& ctx,
                               const ListenGroupSample& group,
                               const absl::flat_hash_map<int32_t, int>& node_of,
                               const std::vector<double>& busy_of) {
  ListenGroupSteering steer;
  steer.group = group.name;
  steer.nodes.resize(ctx.nodes);
  for (int n = 0; n < ctx.nodes; ++n) steer.nodes[n].node = ctx.Id(n);
  int unplaced = 0;
  for (const ListenSocketSample& socket : group.sockets) {
    auto it = node_of.find(socket.owner_pid);
    if (socket.owner_pid == 0 || it == node_of.end() || it->second < 0) {
      ++unplaced;
      continue;
    }
    steer.nodes[it->second].inodes.push_back(socket.inode);
  }
  const auto spilled = ctx.history.spill_permille.find(group.name);
  std::vector<std::string> parts;
  for (int n = 0; n < ctx.nodes; ++n) {
    NodeSteering& node = steer.nodes[n];
    if (node.inodes.empty()) continue;
    uint32_t now = 0;
    if (spilled != ctx.history.spill_permille.end()) {
      auto it = spilled->second.find(node.node);
      if (it != spilled->second.end()) now = it->second;
    }
    const double busy = busy_of[n];
    const double spill = SpillFor(busy, now / 1000.0,
                                  ctx.policy.connections().spill_above_busy());
    node.spill_permille = static_cast<uint32_t>(std::lround(spill * 1000));
    std::string part =
        absl::StrCat("node ", node.node, ": ", node.inodes.size(), " worker",
                     node.inodes.size() == 1 ? "" : "s");
    if (node.spill_permille > 0) {
      absl::StrAppend(&part, " at ", Pct(busy), " busy, spilling ",
                      Pct(node.spill_permille / 1000.0));
    }
    parts.push_back(std::move(part));
  }
  steer.reason = absl::StrCat(
      "new connections to a worker of the node that "
      "received them (",
      absl::StrJoin(parts, "; "), ")");
  if (unplaced > 0) {
    absl::StrAppend(
        &steer.reason, "; ", unplaced,
        " socket(s) of no placed worker take only the hash's share");
  }
  return steer;
}

}  // namespace

void AddConnections(const Context& ctx, const std::vector<Worker>& workers,
                    Plan& plan) {
  const v1::Connections& policy = ctx.policy.connections();
  if (!policy.enabled() || ctx.snapshot.listen_groups.empty()) return;
  const absl::flat_hash_map<int32_t, int> node_of =
      NodeOfWorkers(ctx, workers, plan);
  const std::vector<double> busy = WorkerBusy(ctx, workers, node_of);
  for (const ListenGroupSample& group : ctx.snapshot.listen_groups) {
    if (!PortSelected(policy, group.port)) continue;
    if (group.sockets.size() < 2) {
      plan.notes.push_back(
          group.thread_workers
              ? absl::StrCat("connections: the worker threads share one "
                             "listening socket on ",
                             group.name, "; ", kOneSocketPerThread)
              : absl::StrCat("connections: nginx listens without reuseport "
                             "on ",
                             group.name,
                             "; add `reuseport` to its listen directive to "
                             "steer connections by node"));
      continue;
    }
    const auto shared =
        std::count_if(group.sockets.begin(), group.sockets.end(),
                      [](const ListenSocketSample& s) { return s.shared; });
    if (shared > 0) {
      plan.notes.push_back(absl::StrCat(
          "connections: ", shared, " socket(s) on ", group.name,
          " are accepted on by several worker threads; ", kOneSocketPerThread));
    }
    plan.connections.push_back(SteerGroup(ctx, group, node_of, busy));
  }
}

}  // namespace locus::decide_internal
