#include "agent/daemon/metrics_convert.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "google/protobuf/util/time_util.h"

namespace locus {
namespace {

using google::protobuf::util::TimeUtil;

v1::ActionOutcome ToOutcome(Outcome outcome, bool irq) {
  switch (outcome) {
    case Outcome::kApplied:
    case Outcome::kUnchanged:
      return v1::ACTION_OUTCOME_APPLIED;
    case Outcome::kDryRun:
      return v1::ACTION_OUTCOME_DRY_RUN;
    case Outcome::kGone:
      return irq ? v1::ACTION_OUTCOME_IRQ_GONE : v1::ACTION_OUTCOME_TASK_GONE;
    case Outcome::kForbidden:
      return v1::ACTION_OUTCOME_FORBIDDEN;
    case Outcome::kUnmanageable:
      return v1::ACTION_OUTCOME_KERNEL_MANAGED;
    case Outcome::kBackedOff:
    case Outcome::kRefused:
    case Outcome::kError:
      return v1::ACTION_OUTCOME_FAILED;
  }
  return v1::ACTION_OUTCOME_UNSPECIFIED;
}

v1::TaskRole ToRole(TargetRole role) {
  switch (role) {
    case TargetRole::kMaster:
      return v1::TASK_ROLE_MASTER;
    case TargetRole::kWorker:
      return v1::TASK_ROLE_WORKER;
    case TargetRole::kOther:
      break;
  }
  return v1::TASK_ROLE_OTHER;
}

int NodeOfCpu(const Topology& topology, int cpu) {
  if (cpu < 0 || cpu >= static_cast<int>(topology.cpu_node.size())) return -1;
  return topology.cpu_node[cpu];
}

void AddNodes(const Snapshot& snapshot, const TickReport& report,
              v1::Metrics* out) {
  const Topology& topology = snapshot.topology;
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    const Node& node = topology.nodes[i];
    v1::NodeMetrics* m = out->add_nodes();
    m->set_node(node.id);
    m->mutable_cpus()->Add(node.cpus.begin(), node.cpus.end());
    double busy = 0;
    for (int cpu : node.cpus) {
      if (cpu < static_cast<int>(snapshot.cpus.size())) {
        busy += snapshot.cpus[cpu].busy;
      }
    }
    if (!node.cpus.empty()) m->set_cpu_busy(busy / node.cpus.size());
    uint64_t local = 0, remote = 0;
    for (const Target& target : snapshot.targets) {
      for (const ThreadSample& thread : target.threads) {
        if (i < thread.faults.size()) {
          local += thread.faults[i].local;
          remote += thread.faults[i].remote;
        }
      }
    }
    m->set_faults_local(local);
    m->set_faults_remote(remote);
    if (local + remote > 0) {
      m->set_local_fault_ratio(static_cast<double>(local) / (local + remote));
    }
    uint64_t pages = 0;
    for (const ActionRecord& record : report.actions) {
      const auto* move = std::get_if<MigratePages>(&record.action.op);
      if (move != nullptr && move->to_node == node.id) {
        pages += record.result.pages_moved;
      }
    }
    m->set_pages_migrated(pages);
    m->set_mem_total_bytes(node.mem_total_bytes);
    m->set_mem_free_bytes(node.mem_free_bytes);
  }
}

}  // namespace

v1::AgentMode ToAgentMode(Mode mode) {
  return mode == v1::Policy::MODE_DRY_RUN ? v1::AGENT_MODE_DRY_RUN
                                          : v1::AGENT_MODE_ENFORCE;
}

v1::PolicyState ToPolicyState(const PolicyState& state) {
  v1::PolicyState out;
  out.set_path(state.is_default ? "" : state.source);
  out.set_version(state.version);
  out.set_last_error(state.last_error);
  return out;
}

std::vector<v1::SensorSource> ToSensorSources(
    const SnapshotCollector::SensorState& sensors) {
  std::vector<v1::SensorSource> out(3);
  out[0].set_sensor("migrations");
  out[0].set_source(sensors.sources.sched);
  out[1].set_sensor("numa_faults");
  out[1].set_source(sensors.sources.numa);
  out[1].set_detail(sensors.numa_status);
  out[2].set_sensor("softirq");
  out[2].set_source(sensors.sources.softirq);
  for (v1::SensorSource& s : out) s.set_ok(s.source() != "none");
  out[1].set_ok(out[1].ok() && sensors.numa_active);
  return out;
}

v1::Action ToAction(const Action& action, uint64_t tick,
                    const ActionResult* result) {
  v1::Action out;
  out.set_tick(tick);
  out.set_reason(action.reason);
  std::visit(
      [&](const auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, PinThread>) {
          v1::PinThread* m = out.mutable_pin_thread();
          m->set_pid(op.pid);
          m->set_tid(op.tid);
          m->set_node(op.node);
          m->mutable_cpus()->Add(op.cpus.begin(), op.cpus.end());
        } else if constexpr (std::is_same_v<T, MigratePages>) {
          v1::MigratePages* m = out.mutable_migrate_pages();
          m->set_pid(op.pid);
          m->set_from_node(op.from_node);
          m->set_to_node(op.to_node);
          m->set_max_bytes(op.max_bytes);
          if (result != nullptr) m->set_moved_bytes(result->bytes_moved);
        } else {
          v1::SetIrqAffinity* m = out.mutable_set_irq_affinity();
          m->set_irq(op.irq);
          m->mutable_cpus()->Add(op.cpus.begin(), op.cpus.end());
        }
      },
      action.op);
  if (result != nullptr) {
    out.set_outcome(ToOutcome(
        result->outcome, std::holds_alternative<SetIrqAffinity>(action.op)));
    if (out.outcome() != v1::ACTION_OUTCOME_APPLIED &&
        out.outcome() != v1::ACTION_OUTCOME_DRY_RUN) {
      out.set_error(result->message);
    }
  }
  return out;
}

v1::Metrics ToMetrics(const TickReport& report, const MetricsContext& context) {
  v1::Metrics out;
  out.set_tick(report.tick);
  *out.mutable_time() =
      TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(context.wall_time));
  out.set_tick_period_ns(absl::ToInt64Nanoseconds(context.period));
  out.set_tick_duration_ns(absl::ToInt64Nanoseconds(report.took));
  out.set_overruns_total(report.overruns);
  out.set_mode(ToAgentMode(report.mode));

  absl::flat_hash_set<EntityKey> held(report.held_down.begin(),
                                      report.held_down.end());
  if (report.snapshot != nullptr) {
    const Snapshot& snapshot = *report.snapshot;
    AddNodes(snapshot, report, &out);
    for (const Target& target : snapshot.targets) {
      bool target_held =
          held.contains(EntityKey{EntityKind::kTask, target.pid});
      for (const ThreadSample& thread : target.threads) {
        v1::TaskMetrics* m = out.add_tasks();
        m->set_pid(target.pid);
        m->set_tid(thread.tid);
        m->set_comm(target.comm);
        m->set_role(ToRole(target.role));
        m->set_cpu(thread.cpu);
        m->set_node(NodeOfCpu(snapshot.topology, thread.cpu));
        m->mutable_allowed_cpus()->Add(thread.allowed_cpus.begin(),
                                       thread.allowed_cpus.end());
        uint64_t local = 0, remote = 0;
        for (const NodeFaults& f : thread.faults) {
          local += f.local;
          remote += f.remote;
        }
        m->set_faults_local(local);
        m->set_faults_remote(remote);
        m->set_migrations(thread.migrations);
        m->set_cross_node_migrations(thread.cross_node_migrations);
        m->set_held_down(target_held);
      }
    }
    for (const IrqSample& irq : snapshot.irqs) {
      v1::IrqMetrics* m = out.add_irqs();
      m->set_irq(irq.irq);
      m->set_name(irq.name);
      m->set_net_device(irq.net_device);
      m->set_device_node(irq.device_node);
      m->mutable_cpus()->Add(irq.affinity.begin(), irq.affinity.end());
      m->mutable_effective_cpus()->Add(irq.effective.begin(),
                                       irq.effective.end());
      m->mutable_count_per_cpu()->Add(irq.count_per_cpu.begin(),
                                      irq.count_per_cpu.end());
      uint64_t count = 0;
      for (uint64_t c : irq.count_per_cpu) count += c;
      m->set_count(count);
      m->set_kernel_managed(irq.managed);
      m->set_held_down(held.contains(EntityKey{EntityKind::kIrq, irq.irq}));
    }
  }
  for (const ActionRecord& record : report.actions) {
    *out.add_actions() = ToAction(record.action, report.tick, &record.result);
  }
  for (const RevertRecord& revert : report.reverts) {
    v1::Revert* m = out.add_reverts();
    m->set_tick(report.tick);
    *m->mutable_action() =
        ToAction(revert.verdict.action, report.tick, nullptr);
    m->set_reason(absl::StrCat(
        "objective ", static_cast<int>(revert.verdict.before * 100), "% -> ",
        static_cast<int>(revert.verdict.after * 100), "% after the action"));
    m->set_outcome(revert.status.ok() ? v1::ACTION_OUTCOME_APPLIED
                                      : v1::ACTION_OUTCOME_FAILED);
    if (!revert.status.ok()) m->set_error(revert.status.ToString());
  }
  for (const ExternalEvent& event : report.external) {
    v1::ExternalChange* m = out.add_external_changes();
    m->set_tick(report.tick);
    bool irq = event.key.kind == EntityKind::kIrq;
    m->set_tid(irq ? 0 : event.key.id);
    m->set_irq(irq ? event.key.id : -1);
    m->set_what(irq ? "irq affinity" : "thread affinity");
    m->set_detail(event.message);
  }
  *out.mutable_policy() = ToPolicyState(report.policy);
  for (v1::SensorSource& s : ToSensorSources(context.sensors)) {
    *out.add_sensors() = std::move(s);
  }
  uint64_t dropped = 0;
  for (const auto& [name, count] : context.sensors.drops) dropped += count;
  out.mutable_drops()->set_sensor_events_dropped_total(dropped);
  return out;
}

}  // namespace locus
