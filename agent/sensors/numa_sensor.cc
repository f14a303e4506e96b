#include "agent/sensors/numa_sensor.h"

#include <bpf/libbpf.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/sensors/abi.h"
#include "agent/sensors/proc_sched.h"
#include "common/status_macros.h"
#include "numa.skel.h"

namespace locus {

NumaSensor::NumaSensor(const SensorOptions& options, NumaSource source)
    : options_(options), source_(source) {
  if (options.num_nodes < 2) {
    status_ = "inactive: single NUMA node, the kernel takes no hinting faults";
  } else if (!options.numa_balancing) {
    status_ =
        "inactive: kernel.numa_balancing=0, the kernel takes no hinting "
        "faults";
  } else {
    active_ = true;
    status_ = absl::StrCat("active (", SourceName(source), ")");
  }
}

NumaSensor::~NumaSensor() = default;

absl::StatusOr<std::unique_ptr<NumaSensor>> NumaSensor::Open(
    const SensorOptions& options, NumaSource source) {
  std::unique_ptr<NumaSensor> s(new NumaSensor(options, source));
  if (source == NumaSource::kProcfs) return s;
  RETURN_IF_ERROR(s->skel_.Open());
  s->Configure();
  RETURN_IF_ERROR(s->skel_.Load());
  RETURN_IF_ERROR(s->skel_.Attach());
  if (source == NumaSource::kIterTask) {
    s->iterator_ = std::make_unique<TaskIterator>(s->skel_->progs.dump_numa,
                                                  s->skel_->links.dump_numa);
  }
  return s;
}

void NumaSensor::Configure() {
  skel_->rodata->nr_node_ids = options_.num_nodes < 1 ? 1 : options_.num_nodes;
  bool fentry = source_ == NumaSource::kFentry;
  SetAutoload({skel_->progs.fault_fentry}, fentry);
  SetAutoload({skel_->progs.dump_numa}, !fentry);
  // The iterator reads the kernel's own counters: the LRU (preallocated,
  // ~5 MiB at the default size) is created only for fentry.
  bpf_map__set_autocreate(skel_->maps.fault_lru, fentry);
  bpf_map__set_max_entries(skel_->maps.fault_lru, options_.max_tasks);
}

absl::Status NumaSensor::Read(SensorReading& r, TaskTable& tasks,
                              const TaskScope& scope) {
  r.numa_active = active_;
  r.numa_status = status_;
  if (!active_) return absl::OkStatus();
  switch (source_) {
    case NumaSource::kFentry:
      r.numa_kind = NumaFaultKind::kPagesExact;
      return ReadFentry(r, tasks);
    case NumaSource::kIterTask:
      r.numa_kind = NumaFaultKind::kKernelDecayed;
      return ReadIterator(tasks, scope);
    case NumaSource::kProcfs:
      r.numa_kind = NumaFaultKind::kKernelDecayed;
      ReadProcfs(r, tasks);
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status NumaSensor::ReadFentry(SensorReading& r, TaskTable& tasks) {
  auto add = [&](const uint32_t&, const locus_numa_fentry_task& s) {
    TaskCounters& t = tasks.Get(s.tid, s.pid, CommOf(s.comm));
    t.numa_faults.assign(tasks.num_nodes(), {});
    for (int n = 0; n < tasks.num_nodes(); ++n) {
      NumaNodeFaults& f = t.numa_faults[n];
      f.local = s.local_pages[n];
      f.remote = s.remote_pages[n];
      f.total = f.local + f.remote;
      t.numa_local += f.local;
      t.numa_remote += f.remote;
    }
  };
  ASSIGN_OR_RETURN(uint64_t live,
                   faults_.ForEach(bpf_map__fd(skel_->maps.fault_lru), add));
  std::vector<uint64_t> d = ReadDropCounters(bpf_map__fd(skel_->maps.drops),
                                             kLocusNumaDropNames, r.drops);
  r.drops["numa.lru_evicted"] = Evicted(d[LOCUS_NUMA_LRU_INSERTS], live);
  return absl::OkStatus();
}

absl::Status NumaSensor::ReadIterator(TaskTable& tasks,
                                      const TaskScope& scope) {
  return iterator_->Read<locus_numa_iter_task>(
      scope, [&](const locus_numa_iter_task& s) {
        TaskCounters& t = tasks.Get(s.tid, s.pid, CommOf(s.comm));
        t.numa_faults.assign(tasks.num_nodes(), {});
        for (int n = 0; n < tasks.num_nodes(); ++n) {
          t.numa_faults[n].total = s.mem_faults[n];
        }
        t.numa_local = s.local;
        t.numa_remote = s.remote;
      });
}

void NumaSensor::ReadProcfs(SensorReading& r, TaskTable& tasks) const {
  uint64_t skipped = 0;
  for (const ProcTaskSched& p :
       ReadAllProcSched(options_.procfs_root, &skipped)) {
    if (p.sched.numa_faults.empty()) continue;
    TaskCounters& t =
        tasks.Get(p.tid, p.pid,
                  absl::string_view(p.sched.comm).substr(0, LOCUS_COMM_LEN));
    t.numa_faults.assign(tasks.num_nodes(), {});
    for (const ProcSchedNodeFaults& f : p.sched.numa_faults) {
      if (f.node < 0 || f.node >= tasks.num_nodes()) continue;
      t.numa_faults[f.node].total = f.task_private + f.task_shared;
    }
  }
  r.drops["numa.procfs_unreadable"] = skipped;
}

}  // namespace locus
