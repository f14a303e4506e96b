#include "agent/daemon/connection_metrics.h"

#include <map>
#include <set>

#include "common/utf8.h"

namespace locus {
namespace {

void SetCounts(const ReuseportPathCounts& tick,
               const ReuseportPathCounts& total, v1::NodeConnections* out) {
  out->set_local(tick.local);
  out->set_spilled(tick.spilled);
  out->set_fell_back(tick.fallback);
  out->set_migrated(tick.migrated);
  out->set_local_total(total.local);
  out->set_spilled_total(total.spilled);
  out->set_fell_back_total(total.fallback);
  out->set_migrated_total(total.migrated);
  out->set_control(tick.control);
  out->set_control_total(total.control);
}

}  // namespace

void AddConnectionGroups(const std::vector<SteeringState>& states,
                         const std::vector<ListenGroupSteering>& plan,
                         v1::Metrics* metrics) {
  for (const SteeringState& state : states) {
    v1::ConnectionGroup* group = metrics->add_connections();
    group->set_group(state.group);
    group->set_steered(state.steered);
    group->set_migrates(state.migrates);
    group->set_sockets(state.sockets);
    group->set_problem(ValidUtf8(state.problem));
    std::map<int, const NodeSteering*> planned;
    const ListenGroupSteering* steer = FindSteering(plan, state.group);
    if (steer != nullptr) {
      group->set_reason(steer->reason);
      for (const NodeSteering& node : steer->nodes) planned[node.node] = &node;
    }
    std::set<int> nodes;
    for (const auto& [node, unused] : planned) nodes.insert(node);
    for (const auto& [node, unused] : state.total) nodes.insert(node);
    for (int node : nodes) {
      v1::NodeConnections* out = group->add_nodes();
      out->set_node(node);
      auto tick = state.tick.find(node);
      auto total = state.total.find(node);
      SetCounts(
          tick == state.tick.end() ? ReuseportPathCounts{} : tick->second,
          total == state.total.end() ? ReuseportPathCounts{} : total->second,
          out);
      if (auto p = planned.find(node); p != planned.end()) {
        out->set_spill_permille(p->second->spill_permille);
        out->set_workers(p->second->inodes.size());
      }
    }
  }
}

}  // namespace locus
