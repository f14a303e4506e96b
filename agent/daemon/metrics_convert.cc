#include "agent/daemon/metrics_convert.h"

#include <map>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agent/daemon/connection_metrics.h"
#include "agent/host/tiering_report.h"
#include "common/utf8.h"
#include "google/protobuf/util/time_util.h"
#include "policy/pressure.h"

namespace locus {
namespace {

using google::protobuf::util::TimeUtil;

template <typename Field, typename Values>
void Assign(Field* field, const Values& values) {
  field->Clear();
  for (auto v : values) field->Add(v);
}

int NodeOfCpu(const Topology& topology, int cpu) {
  if (cpu < 0 || cpu >= static_cast<int>(topology.cpu_node.size())) return -1;
  return topology.cpu_node[cpu];
}

v1::TaskRole ToProtoRole(const Target& target) {
  if (target.process != 0) return v1::TASK_ROLE_WORKER_THREAD;
  if (target.role == TargetRole::kMaster) return v1::TASK_ROLE_MASTER;
  if (target.role == TargetRole::kWorker) return v1::TASK_ROLE_WORKER;
  return v1::TASK_ROLE_OTHER;
}

v1::ActionOutcome ToOutcome(Outcome outcome, bool irq) {
  switch (outcome) {
    case Outcome::kApplied:
      return v1::ACTION_OUTCOME_APPLIED;
    case Outcome::kUnchanged:
      return v1::ACTION_OUTCOME_UNCHANGED;
    case Outcome::kDryRun:
      return v1::ACTION_OUTCOME_DRY_RUN;
    case Outcome::kGone:
      return irq ? v1::ACTION_OUTCOME_IRQ_GONE : v1::ACTION_OUTCOME_TASK_GONE;
    case Outcome::kForbidden:
      return v1::ACTION_OUTCOME_FORBIDDEN;
    case Outcome::kUnmanageable:
      return v1::ACTION_OUTCOME_KERNEL_MANAGED;
    case Outcome::kRefused:
      return v1::ACTION_OUTCOME_REFUSED;
    case Outcome::kWaiting:
      return v1::ACTION_OUTCOME_WAITING;
    case Outcome::kBackedOff:
    case Outcome::kError:
      return v1::ACTION_OUTCOME_FAILED;
  }
  return v1::ACTION_OUTCOME_UNSPECIFIED;
}

// One task per target thread; adds each thread's faults to `faults`, which
// is indexed like topology.nodes (by position, not id).
void AddTasks(const Snapshot& snapshot, std::vector<NodeFaults>& faults,
              v1::Metrics* metrics) {
  metrics->clear_tasks();
  for (const Target& target : snapshot.targets) {
    for (const ThreadSample& thread : target.threads) {
      v1::TaskMetrics* task = metrics->add_tasks();
      task->set_pid(ProcessOf(target));
      task->set_tid(thread.tid);
      task->set_comm(ValidUtf8(target.comm));
      task->set_role(ToProtoRole(target));
      task->set_cpu(thread.cpu);
      task->set_node(NodeOfCpu(snapshot.topology, thread.cpu));
      Assign(task->mutable_allowed_cpus(), thread.allowed_cpus);
      for (uint64_t pages : target.resident_pages)
        task->add_resident_bytes(pages * target.page_size);
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
      task->set_runqueue_wait_ns(thread.wait_ns);
      uint64_t run = 0;
      for (uint64_t ns : thread.runtime_ns) run += ns;
      task->set_runtime_ns(run);
      task->set_home_node(-1);
      task->set_home_time_ratio(-1);
      task->set_spill_node(-1);
    }
  }
}

double MeanBusy(const Snapshot& snapshot, const Node& node) {
  double busy = 0;
  int samples = 0;
  for (int cpu : node.cpus) {
    if (cpu >= 0 && cpu < static_cast<int>(snapshot.cpus.size())) {
      busy += snapshot.cpus[cpu].busy;
      ++samples;
    }
  }
  return samples > 0 ? busy / samples : 0;
}

// -1 when /proc/stat was not read for one of its CPUs.
double MeanBusyAll(const Snapshot& snapshot, const Node& node) {
  double busy = 0;
  for (int cpu : node.cpus) {
    if (cpu < 0 || cpu >= static_cast<int>(snapshot.cpus.size()) ||
        snapshot.cpus[cpu].busy_all < 0) {
      return -1;
    }
    busy += snapshot.cpus[cpu].busy_all;
  }
  return node.cpus.empty() ? -1 : busy / node.cpus.size();
}

void AddNodes(const Snapshot& snapshot, const std::vector<NodeFaults>& faults,
              v1::Metrics* metrics) {
  metrics->clear_nodes();
  // The run-queue wait as the soft home measures it (the thresholds do not
  // change it): of the targets' threads that last ran on each node.
  const std::vector<NodePressure> pressure =
      MeasurePressure(snapshot, v1::Spill());
  for (size_t n = 0; n < snapshot.topology.nodes.size(); ++n) {
    const Node& node = snapshot.topology.nodes[n];
    v1::NodeMetrics* out = metrics->add_nodes();
    out->set_node(node.id);
    Assign(out->mutable_cpus(), node.cpus);
    out->set_cpu_busy(MeanBusy(snapshot, node));
    out->set_cpu_busy_all(MeanBusyAll(snapshot, node));
    out->set_runqueue_wait_s(pressure[n].wait_total);
    out->set_faults_local(faults[n].local);
    out->set_faults_remote(faults[n].remote);
    uint64_t total = faults[n].local + faults[n].remote;
    out->set_local_fault_ratio(
        total > 0 ? static_cast<double>(faults[n].local) / total : 0);
    out->set_mem_total_bytes(node.mem_total_bytes);
    out->set_mem_free_bytes(node.mem_free_bytes);
    uint64_t resident = 0;
    for (const Target& target : snapshot.targets) {
      if (n < target.resident_pages.size())
        resident += target.resident_pages[n] * target.page_size;
    }
    out->set_target_resident_bytes(resident);
  }
}

void AddIrqs(const Snapshot& snapshot, v1::Metrics* metrics) {
  metrics->clear_irqs();
  for (const IrqSample& irq : snapshot.irqs) {
    v1::IrqMetrics* out = metrics->add_irqs();
    out->set_irq(irq.irq);
    out->set_name(ValidUtf8(irq.name));
    out->set_net_device(ValidUtf8(irq.net_device));
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

// Each thread's home node (Locus's, else the one node its affinity allows)
// and the share of its runtime spent on that node's CPUs. Tasks are in the
// snapshot's order of targets and threads (AddTasks).
void AddHomes(const Snapshot& snapshot,
              const std::map<int32_t, TickReport::Home>& homes,
              v1::Metrics* out) {
  const Topology& topology = snapshot.topology;
  int task = 0;
  for (const Target& target : snapshot.targets) {
    auto ours = homes.find(target.pid);
    for (const ThreadSample& thread : target.threads) {
      if (task >= out->tasks_size()) return;
      v1::TaskMetrics& m = *out->mutable_tasks(task++);
      int home = FromNodeOf(topology, thread.allowed_cpus);
      if (ours != homes.end()) {
        home = ours->second.node;
        m.set_spill_node(ours->second.spill_node);
      }
      if (home < 0) continue;
      m.set_home_node(home);
      uint64_t on_home = 0;
      for (size_t n = 0; n < thread.runtime_ns.size(); ++n) {
        if (n < topology.nodes.size() && topology.nodes[n].id == home) {
          on_home += thread.runtime_ns[n];
        }
      }
      if (m.runtime_ns() > 0) {
        m.set_home_time_ratio(static_cast<double>(on_home) / m.runtime_ns());
      }
    }
  }
}

// What the snapshot cannot know: pages this tick's actions moved, and which
// entities the loop holds down.
void AddTickEffects(const TickReport& report, v1::Metrics* out) {
  absl::flat_hash_set<EntityKey> held(report.held_down.begin(),
                                      report.held_down.end());
  for (v1::NodeMetrics& node : *out->mutable_nodes()) {
    uint64_t pages = 0;
    for (const ActionRecord& record : report.actions) {
      const auto* move = std::get_if<MigratePages>(&record.action.op);
      if (move != nullptr && move->to_node == node.node()) {
        pages += record.result.pages_moved;
      }
    }
    node.set_pages_migrated(pages);
  }
  for (v1::TaskMetrics& task : *out->mutable_tasks()) {
    // A thread worker is held as itself, a worker process as a whole.
    const int32_t entity =
        task.role() == v1::TASK_ROLE_WORKER_THREAD ? task.tid() : task.pid();
    task.set_held_down(held.contains(EntityKey{EntityKind::kTask, entity}));
  }
  for (v1::IrqMetrics& irq : *out->mutable_irqs()) {
    irq.set_held_down(held.contains(EntityKey{EntityKind::kIrq, irq.irq()}));
  }
  if (report.snapshot != nullptr) AddHomes(*report.snapshot, report.homes, out);
}

void AddReverts(const TickReport& report, v1::Metrics* out) {
  for (const RevertRecord& revert : report.reverts) {
    v1::Revert* m = out->add_reverts();
    m->set_tick(report.tick);
    *m->mutable_action() = ToAction(revert.verdict.action, report.tick);
    m->set_reason(absl::StrCat(
        "objective ", static_cast<int>(revert.verdict.before * 100), "% -> ",
        static_cast<int>(revert.verdict.after * 100), "% after the action"));
    m->set_outcome(revert.status.ok() ? v1::ACTION_OUTCOME_APPLIED
                                      : v1::ACTION_OUTCOME_FAILED);
    if (!revert.status.ok()) m->set_error(ValidUtf8(revert.status.ToString()));
  }
}

void AddExternalChanges(const TickReport& report, v1::Metrics* out) {
  for (const ExternalEvent& event : report.external) {
    v1::ExternalChange* m = out->add_external_changes();
    m->set_tick(report.tick);
    bool irq = event.key.kind == EntityKind::kIrq;
    m->set_tid(irq ? 0 : event.key.id);
    m->set_irq(irq ? event.key.id : -1);
    m->set_what(irq ? "irq affinity" : "thread affinity");
    m->set_detail(ValidUtf8(event.message));
  }
}

v1::PolicyState ToPolicyState(const PolicyState& state) {
  v1::PolicyState out;
  out.set_path(state.is_default ? "" : ValidUtf8(state.source));
  out.set_version(state.version);
  if (state.loaded_unix_ns > 0) {
    *out.mutable_loaded() =
        TimeUtil::NanosecondsToTimestamp(state.loaded_unix_ns);
  }
  out.set_last_error(ValidUtf8(state.last_error));
  out.set_reloads_ok(state.reloads_ok);
  out.set_reloads_rejected(state.reloads_rejected);
  return out;
}

void AddSensors(const SnapshotCollector::SensorState& sensors,
                v1::Metrics* out) {
  auto add = [out](const char* sensor, const std::string& source, bool ok,
                   const std::string& detail) {
    v1::SensorSource* s = out->add_sensors();
    s->set_sensor(sensor);
    s->set_source(source);
    s->set_ok(ok && source != "none");
    s->set_detail(ValidUtf8(detail));
  };
  add("migrations", sensors.sources.sched, true, "");
  add("numa_faults", sensors.sources.numa, sensors.numa_active,
      sensors.numa_status);
  add("softirq", sensors.sources.softirq, true, "");
  uint64_t dropped = 0;
  for (const auto& [name, count] : sensors.drops) {
    dropped += count;
    (*out->mutable_drops()->mutable_sensor_events_dropped())[ValidUtf8(name)] =
        count;
  }
  out->mutable_drops()->set_sensor_events_dropped_total(dropped);
}

}  // namespace

void FillMetricsFromSnapshot(const Snapshot& snapshot, uint64_t tick,
                             int64_t wall_time_ns, v1::Metrics* metrics) {
  metrics->set_tick(tick);
  *metrics->mutable_time() = TimeUtil::NanosecondsToTimestamp(wall_time_ns);
  metrics->set_tick_period_ns(snapshot.tick_ns);
  std::vector<NodeFaults> faults(snapshot.topology.nodes.size());
  AddTasks(snapshot, faults, metrics);
  AddNodes(snapshot, faults, metrics);
  AddIrqs(snapshot, metrics);
  *metrics->mutable_memory_tiering() = MemoryTieringReport(
      snapshot.topology, snapshot.tiering, snapshot.numa_balancing_mode);
  SetNodeTiers(metrics);
}

v1::Action ToAction(const Action& action, uint64_t tick,
                    const ActionResult* result) {
  v1::Action out;
  out.set_tick(tick);
  out.set_reason(ValidUtf8(action.reason));
  std::visit(
      [&out, result](const auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, PinThread>) {
          v1::PinThread* p = out.mutable_pin_thread();
          p->set_pid(op.pid);
          p->set_tid(op.tid);
          p->set_node(op.node);
          Assign(p->mutable_cpus(), op.cpus);
          p->set_spill_node(op.spill_node);
        } else if constexpr (std::is_same_v<T, MigratePages>) {
          v1::MigratePages* m = out.mutable_migrate_pages();
          m->set_pid(op.pid);
          m->set_from_node(op.from_node);
          m->set_to_node(op.to_node);
          m->set_max_bytes(op.max_bytes);
          Assign(m->mutable_leave_nodes(), op.leave_nodes);
          if (result != nullptr) m->set_moved_bytes(result->bytes_moved);
        } else {
          v1::SetIrqAffinity* s = out.mutable_set_irq_affinity();
          s->set_irq(op.irq);
          Assign(s->mutable_cpus(), op.cpus);
        }
      },
      action.op);
  if (result == nullptr) return out;
  out.set_outcome(ToOutcome(result->outcome,
                            std::holds_alternative<SetIrqAffinity>(action.op)));
  if (out.outcome() != v1::ACTION_OUTCOME_APPLIED &&
      out.outcome() != v1::ACTION_OUTCOME_DRY_RUN) {
    out.set_error(ValidUtf8(result->message));
  }
  return out;
}

v1::AgentMode ToAgentMode(Mode mode) {
  return mode == v1::Policy::MODE_DRY_RUN ? v1::AGENT_MODE_DRY_RUN
                                          : v1::AGENT_MODE_ENFORCE;
}

v1::Metrics ToMetrics(const TickReport& report, const MetricsContext& context) {
  v1::Metrics out;
  int64_t wall_ns = absl::ToUnixNanos(context.wall_time);
  if (report.snapshot != nullptr) {
    FillMetricsFromSnapshot(*report.snapshot, report.tick, wall_ns, &out);
    AddTickEffects(report, &out);
  } else {
    out.set_tick(report.tick);
    *out.mutable_time() = TimeUtil::NanosecondsToTimestamp(wall_ns);
  }
  out.set_tick_period_ns(absl::ToInt64Nanoseconds(context.period));
  out.set_tick_duration_ns(absl::ToInt64Nanoseconds(report.took));
  out.set_tick_cpu_ns(absl::ToInt64Nanoseconds(report.cpu));
  if (report.experiment != nullptr)
    *out.mutable_experiment() = *report.experiment;
  out.set_overruns_total(report.overruns);
  out.set_actions_forbidden_total(report.forbidden);
  out.set_mode(ToAgentMode(report.mode));
  for (const ActionRecord& record : report.actions) {
    *out.add_actions() = ToAction(record.action, report.tick, &record.result);
  }
  AddReverts(report, &out);
  AddExternalChanges(report, &out);
  *out.mutable_policy() = ToPolicyState(report.policy);
  AddSensors(context.sensors, &out);
  AddConnectionGroups(report.connections, report.plan.connections, &out);
  return out;
}

}  // namespace locus
