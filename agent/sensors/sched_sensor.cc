#include "agent/sensors/sched_sensor.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>

#include "agent/sensors/abi.h"
#include "agent/sensors/bpf_maps.h"
#include "agent/sensors/sampling.h"
#include "common/os_error.h"
#include "common/status_macros.h"
#include "sched.skel.h"

namespace locus {

SchedSensor::SchedSensor(const SensorOptions& options, TraceSource source)
    : options_(options), source_(source), ncpus_(PossibleCpus()) {}

SchedSensor::~SchedSensor() = default;

absl::StatusOr<std::unique_ptr<SchedSensor>> SchedSensor::Open(
    const SensorOptions& options, TraceSource source, int softirq_tasks) {
  std::unique_ptr<SchedSensor> s(new SchedSensor(options, source));
  RETURN_IF_ERROR(s->skel_.Open());
  RETURN_IF_ERROR(s->Configure(softirq_tasks));
  RETURN_IF_ERROR(s->skel_.Load());
  // Through the live mapping of .bss, before any program runs.
  uint32_t mask = PowerOfTwoAtLeast(options.switch_sample_every) - 1;
  for (locus_sched_cpu& slot : s->skel_->bss->cpu_slots) {
    slot.sample_mask = mask;
  }
  RETURN_IF_ERROR(s->skel_.Attach());
  if (s->btf()) {
    s->iterator_ = std::make_unique<TaskIterator>(s->skel_->progs.dump_sched,
                                                  s->skel_->links.dump_sched);
  }
  return s;
}

absl::Status SchedSensor::Configure(int softirq_tasks) {
  for (size_t c = 0; c < options_.cpu_node.size() && c < LOCUS_MAX_CPUS; ++c) {
    int node = options_.cpu_node[c];
    skel_->rodata->cpu_node[c] = node < 0 ? 0 : node;
  }
  SetAutoload({skel_->progs.switch_btf, skel_->progs.dump_sched,
               skel_->progs.rename_btf},
              btf());
  // On one node no move crosses a node: the tp_btf migrate program would
  // run on every migration for nothing (the iterator reads the counts).
  SetAutoload({skel_->progs.migrate_btf}, btf() && options_.num_nodes > 1);
  SetAutoload({skel_->progs.migrate_raw, skel_->progs.switch_raw,
               skel_->progs.rename_raw},
              !btf());
  // The unused per-task map is not created: task storage may not exist on
  // the kernels that need the LRU fallback.
  bpf_map__set_autocreate(btf() ? skel_->maps.task_lru : skel_->maps.task_state,
                          false);
  bpf_map__set_max_entries(skel_->maps.task_lru, options_.max_tasks);
  if (!btf()) {
    bpf_map__set_autocreate(skel_->maps.softirq_tasks, false);
    return absl::OkStatus();
  }
  // One task walk for both sensors' per-task figures.
  if (int err = bpf_map__reuse_fd(skel_->maps.softirq_tasks, softirq_tasks)) {
    return ErrnoStatus("sharing the softirq task storage", -err);
  }
  return absl::OkStatus();
}

absl::Status SchedSensor::Read(SensorReading& r, TaskTable& tasks,
                               const TaskScope& scope) {
  auto add = [&](const locus_sched_task& s) {
    AddTask(s, r.softirq_traced, tasks);
  };
  uint64_t live = 0;
  if (iterator_) {
    RETURN_IF_ERROR(iterator_->Read<locus_sched_task>(scope, add));
  } else {
    live = ForEachEntry<uint32_t, locus_sched_task>(
        bpf_map__fd(skel_->maps.task_lru),
        [&](const uint32_t&, const locus_sched_task& s) { add(s); });
  }
  ReadCpus(r);
  std::vector<uint64_t> d = ReadDropCounters(bpf_map__fd(skel_->maps.drops),
                                             kLocusSchedDropNames, r.drops);
  if (!btf()) {
    r.drops["sched.lru_evicted"] = Evicted(d[LOCUS_SCHED_LRU_INSERTS], live);
  }
  return absl::OkStatus();
}

void SchedSensor::AddTask(const locus_sched_task& s, double softirq_traced,
                          TaskTable& tasks) const {
  TaskCounters& t = tasks.Get(s.tid, s.pid, CommOf(s.comm));
  t.cpu = s.cpu;
  t.migrations = s.migrations;
  t.cross_node_migrations = s.cross_node_migrations;
  for (int n = 0; n < tasks.num_nodes(); ++n) t.runtime_ns[n] = s.runtime_ns[n];
  if (btf()) {  // the softirq sensor's charges, read by this iterator
    t.net_rx_softirq_ns = UnseenToo(s.net_rx_ns, softirq_traced);
    t.softirq_ns = UnseenToo(s.softirq_ns, softirq_traced);
  }
}

void SchedSensor::ReadCpus(SensorReading& r) const {
  for (int c = 0; c < ncpus_ && c < LOCUS_MAX_CPUS; ++c) {
    const locus_sched_cpu& slot = skel_->bss->cpu_slots[c];
    r.cpus[c].switches = slot.switches;
    r.cpus[c].busy_ns =
        Scale(slot.sampled_busy_ns, slot.switches, slot.sampled_switches);
    r.cpus[c].untimed_switches =
        Scale(slot.sampled_untimed, slot.switches, slot.sampled_switches);
  }
}

void SchedSensor::TakeRenamed(SensorReading& r) {
  uint64_t lost = r.drops[kLocusSchedDropNames[LOCUS_SCHED_RENAMED_LOST]];
  r.renamed = DrainRenamed();
  if (lost != renamed_lost_) r.renamed.reset();
  renamed_lost_ = lost;
}

// Takes and empties the set. A rename between reading a key and deleting it
// is lost from the set but not missed: its process is in this answer.
std::vector<int32_t> SchedSensor::DrainRenamed() {
  int fd = bpf_map__fd(skel_->maps.renamed);
  std::vector<int32_t> pids;
  ForEachEntry<uint32_t, uint8_t>(fd, [&](const uint32_t& pid, const uint8_t&) {
    pids.push_back(static_cast<int32_t>(pid));
  });
  for (int32_t pid : pids) bpf_map_delete_elem(fd, &pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace locus
