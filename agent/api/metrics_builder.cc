#include "agent/api/metrics_builder.h"

#include <type_traits>
#include <variant>

namespace locus {
namespace {

template <typename Field, typename Values>
void Assign(Field* field, const Values& values) {
  field->Clear();
  for (auto v : values) field->Add(v);
}

int NodeOfCpu(const Topology& topology, int cpu) {
  if (cpu < 0 || cpu >= static_cast<int>(topology.cpu_node.size())) return -1;
  return topology.cpu_node[cpu];
}

}  // namespace

v1::TaskRole ToProtoRole(TargetRole role) {
  switch (role) {
    case TargetRole::kMaster:
      return v1::TASK_ROLE_MASTER;
    case TargetRole::kWorker:
      return v1::TASK_ROLE_WORKER;
    default:
      return v1::TASK_ROLE_OTHER;
  }
}

void FillMetricsFromSnapshot(const Snapshot& snapshot, uint64_t tick,
                             int64_t wall_time_ns, v1::Metrics* metrics) {
  metrics->set_tick(tick);
  metrics->mutable_time()->set_seconds(wall_time_ns / 1'000'000'000);
  metrics->mutable_time()->set_nanos(
      static_cast<int32_t>(wall_time_ns % 1'000'000'000));
  metrics->set_tick_period_ns(snapshot.tick_ns);

  const Topology& topology = snapshot.topology;
  // Faults are indexed like topology.nodes (by position, not id).
  std::vector<NodeFaults> faults(topology.nodes.size());
  metrics->clear_tasks();
  for (const Target& target : snapshot.targets) {
    for (const ThreadSample& thread : target.threads) {
      v1::TaskMetrics* task = metrics->add_tasks();
      task->set_pid(target.pid);
      task->set_tid(thread.tid);
      task->set_comm(target.comm);
      task->set_role(ToProtoRole(target.role));
      task->set_cpu(thread.cpu);
      task->set_node(NodeOfCpu(topology, thread.cpu));
      Assign(task->mutable_allowed_cpus(), thread.allowed_cpus);
      uint64_t local = 0;
      uint64_t remote = 0;
      for (size_t n = 0; n < thread.faults.size(); ++n) {
        local += thread.faults[n].local;
        remote += thread.faults[n].remote;
        if (n < faults.size()) {
          faults[n].local += thread.faults[n].local;
          faults[n].remote += thread.faults[n].remote;
        }
      }
      task->set_faults_local(local);
      task->set_faults_remote(remote);
      task->set_migrations(thread.migrations);
      task->set_cross_node_migrations(thread.cross_node_migrations);
    }
  }

  metrics->clear_nodes();
  for (size_t n = 0; n < topology.nodes.size(); ++n) {
    const Node& node = topology.nodes[n];
    v1::NodeMetrics* out = metrics->add_nodes();
    out->set_node(node.id);
    Assign(out->mutable_cpus(), node.cpus);
    double busy = 0;
    int samples = 0;
    for (int cpu : node.cpus) {
      if (cpu >= 0 && cpu < static_cast<int>(snapshot.cpus.size())) {
        busy += snapshot.cpus[cpu].busy;
        ++samples;
      }
    }
    out->set_cpu_busy(samples > 0 ? busy / samples : 0);
    out->set_faults_local(faults[n].local);
    out->set_faults_remote(faults[n].remote);
    uint64_t total = faults[n].local + faults[n].remote;
    out->set_local_fault_ratio(
        total > 0 ? static_cast<double>(faults[n].local) / total : 0);
    out->set_mem_total_bytes(node.mem_total_bytes);
    out->set_mem_free_bytes(node.mem_free_bytes);
  }

  metrics->clear_irqs();
  for (const IrqSample& irq : snapshot.irqs) {
    v1::IrqMetrics* out = metrics->add_irqs();
    out->set_irq(irq.irq);
    out->set_name(irq.name);
    out->set_net_device(irq.net_device);
    out->set_device_node(irq.device_node);
    Assign(out->mutable_cpus(), irq.affinity);
    Assign(out->mutable_effective_cpus(), irq.effective);
    Assign(out->mutable_count_per_cpu(), irq.count_per_cpu);
    uint64_t count = 0;
    for (uint64_t c : irq.count_per_cpu) count += c;
    out->set_count(count);
    out->set_kernel_managed(irq.managed);
  }
}

v1::Action ToProtoAction(const Action& action, uint64_t tick) {
  v1::Action out;
  out.set_tick(tick);
  out.set_reason(action.reason);
  std::visit(
      [&out](const auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, PinThread>) {
          v1::PinThread* p = out.mutable_pin_thread();
          p->set_pid(op.pid);
          p->set_tid(op.tid);
          p->set_node(op.node);
          Assign(p->mutable_cpus(), op.cpus);
        } else if constexpr (std::is_same_v<T, MigratePages>) {
          v1::MigratePages* m = out.mutable_migrate_pages();
          m->set_pid(op.pid);
          m->set_from_node(op.from_node);
          m->set_to_node(op.to_node);
          m->set_max_bytes(op.max_bytes);
        } else {
          v1::SetIrqAffinity* s = out.mutable_set_irq_affinity();
          s->set_irq(op.irq);
          Assign(s->mutable_cpus(), op.cpus);
        }
      },
      action.op);
  return out;
}

}  // namespace locus
