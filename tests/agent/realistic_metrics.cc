#include "tests/agent/realistic_metrics.h"

#include <algorithm>
#include <string>

namespace locus {
namespace {

constexpr int kCpusPerNode = 8;

void AddNodes(uint64_t tick, const RealisticShape& shape, v1::Metrics& m) {
  for (int n = 0; n < shape.nodes; ++n) {
    v1::NodeMetrics* node = m.add_nodes();
    node->set_node(n);
    for (int c = 0; c < kCpusPerNode; ++c) node->add_cpus(n * kCpusPerNode + c);
    node->set_cpu_busy(0.4);
    // Every fifth tick has no faults on node 1.
    bool quiet = n == 1 && tick % 5 == 0;
    node->set_faults_local(quiet ? 0 : 900);
    node->set_faults_remote(quiet ? 0 : 100);
    node->set_local_fault_ratio(quiet ? 0 : 0.9);
    node->set_mem_total_bytes(64ULL << 30);
    node->set_mem_free_bytes(32ULL << 30);
    node->set_target_resident_bytes(1ULL << 30);
  }
}

void AddTasksAndIrqs(const RealisticShape& shape, v1::Metrics& m) {
  int cpus = shape.nodes * kCpusPerNode;
  for (int i = 0; i < shape.threads; ++i) {
    v1::TaskMetrics* task = m.add_tasks();
    task->set_pid(10000 + i / 10 * 10);
    task->set_tid(10000 + i);
    task->set_comm("nginx");
    task->set_cpu(i % cpus);
    task->set_node(i % 97 == 0 ? -1 : (i % cpus) / kCpusPerNode);
    task->set_faults_local(9);
    task->set_faults_remote(1);
  }
  for (int q = 0; q < shape.irqs; ++q) {
    v1::IrqMetrics* irq = m.add_irqs();
    irq->set_irq(100 + q);
    irq->set_name("mlx5_comp" + std::to_string(q));
    irq->set_net_device("eth0");
    irq->set_device_node(q % shape.nodes);
    irq->add_cpus(q % cpus);
    for (int c = 0; c < cpus; ++c)
      irq->add_count_per_cpu(c == q % cpus ? 50 : 1);
    irq->set_count(50 + cpus - 1);
  }
}

void AddActions(uint64_t tick, v1::Metrics& m) {
  v1::Action* pin = m.add_actions();
  pin->mutable_pin_thread()->set_tid(10000 + static_cast<int>(tick % 1000));
  pin->set_outcome(tick % 7 == 0 ? v1::ACTION_OUTCOME_TASK_GONE
                                 : v1::ACTION_OUTCOME_APPLIED);
  v1::Action* move = m.add_actions();
  move->mutable_migrate_pages()->set_from_node(tick % 2 == 0 ? 1 : -1);
  move->mutable_migrate_pages()->set_to_node(0);
  move->mutable_migrate_pages()->set_moved_bytes(4 << 20);
  move->set_outcome(v1::ACTION_OUTCOME_APPLIED);
  if (tick == 3) m.add_reverts()->set_tick(tick);
  if (tick == 4) {
    v1::ExternalChange* change = m.add_external_changes();
    change->set_irq(101);
    change->set_what("irq affinity");
  }
}

// An A/B experiment from tick 3 on: its first interval ends at tick 4, its
// estimate exists from tick 5.
void AddExperiment(uint64_t tick, v1::Metrics& m) {
  if (tick < 3) return;
  v1::ExperimentReport* r = m.mutable_experiment();
  r->set_id("exp-20261202-173012");
  r->set_state(v1::EXPERIMENT_STATE_RUNNING);
  r->set_intervals(static_cast<uint32_t>(tick - 3));
  r->set_treated(50);
  r->set_control(50);
  if (tick >= 4) {
    v1::ExperimentInterval* last = r->add_series();
    last->set_index(static_cast<uint32_t>(tick - 4));
    last->set_treated_bytes_per_cpu_second(2.6e9);
    last->set_control_bytes_per_cpu_second(2.5e9);
  }
  for (v1::ExperimentEstimate* e :
       {r->mutable_work(), r->mutable_connections()}) {
    e->set_valid(tick >= 5);
    e->set_ratio(1.04);
    e->set_low(0.98);
    e->set_high(1.10);
  }
  r->set_guardrail_p(0.6);
  r->set_guardrail_bound(tick >= 5 ? 0.0001 : 0);
}

}  // namespace

// A stock host: irqbalance with a ban of its own and two of Locus's, numad
// with the workers Locus pinned, AutoNUMA on, tuned with its profile.
void AddNeighbours(const RealisticShape& shape, v1::Metrics& m) {
  v1::Neighbour* irqbalance = m.add_neighbours();
  irqbalance->set_name("irqbalance");
  irqbalance->set_mode("ban");
  irqbalance->set_running(true);
  irqbalance->set_pid(812);
  irqbalance->set_socket("/run/irqbalance/irqbalance812.sock");
  irqbalance->add_irqs_banned_by_others(9);
  for (int i = 0; i < std::min(shape.irqs, 2); ++i) {
    irqbalance->add_irqs_banned(100 + i);
  }
  v1::Neighbour* numad = m.add_neighbours();
  numad->set_name("numad");
  numad->set_mode("exclude");
  numad->set_running(true);
  numad->set_pid(77);
  for (int i = 0; i < (shape.threads + 9) / 10; ++i) {
    numad->add_pids_excluded(4000 + i);
  }
  v1::Neighbour* autonuma = m.add_neighbours();
  autonuma->set_name("autonuma");
  autonuma->set_running(true);
  autonuma->set_note("on (kernel.numa_balancing=1)");
  v1::Neighbour* tuned = m.add_neighbours();
  tuned->set_name("tuned");
  tuned->set_running(true);
  tuned->set_pid(640);
  tuned->set_note("profile 'throughput-performance'");
}

v1::Metrics RealisticMetrics(uint64_t tick, const RealisticShape& shape) {
  v1::Metrics m;
  m.set_tick(tick);
  m.set_tick_period_ns(1'000'000'000);
  m.set_tick_duration_ns(tick % 10 == 0 ? 1'200'000'000 : 8'000'000);
  // An overrun that was mostly waiting: 50 ms of CPU in 1.2 s.
  m.set_tick_cpu_ns(tick % 10 == 0 ? 50'000'000 : 5'000'000);
  m.set_overruns_total(tick / 10);
  m.set_mode(v1::AGENT_MODE_ENFORCE);
  AddNodes(tick, shape, m);
  AddTasksAndIrqs(shape, m);
  AddActions(tick, m);
  AddExperiment(tick, m);
  AddNeighbours(shape, m);
  // numa_faults falls back from iter_task to procfs at tick 5.
  v1::SensorSource* faults = m.add_sensors();
  faults->set_sensor("numa_faults");
  faults->set_source(tick < 5 ? "iter_task" : "procfs");
  faults->set_ok(true);
  v1::SensorSource* softirq = m.add_sensors();
  softirq->set_sensor("softirq");
  softirq->set_source("tp_btf");
  softirq->set_ok(true);
  // A reload refused at tick 4 (the error stays at 5), one taken at 6.
  m.mutable_policy()->set_version(tick < 6 ? 1 : 2);
  m.mutable_policy()->set_reloads_rejected(tick < 4 ? 0 : 1);
  m.mutable_policy()->set_reloads_ok(tick < 6 ? 0 : 1);
  if (tick == 4 || tick == 5) {
    m.mutable_policy()->set_last_error("policy.yaml:3:7: unknown key 'nodez'");
  }
  m.mutable_drops()->set_sensor_events_dropped_total(tick * 3);
  (*m.mutable_drops()->mutable_sensor_events_dropped())["numa.lru_evicted"] =
      tick * 2;
  (*m.mutable_drops()->mutable_sensor_events_dropped())["sched.lru_evicted"] =
      tick;
  return m;
}

v1::AgentStatus RealisticStatus(uint64_t tick, const RealisticShape& shape) {
  v1::AgentStatus status;
  status.set_mode(v1::AGENT_MODE_ENFORCE);
  status.set_tick(tick);
  status.set_targets((shape.threads + 9) / 10);
  status.set_threads(shape.threads);
  status.set_journal_entries(static_cast<uint32_t>(tick));
  status.set_held_down(tick >= 3 ? 1 : 0);
  return status;
}

}  // namespace locus
