#include "agent/sensors/softirq_sensor.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/sensors/abi.h"
#include "agent/sensors/sampling.h"
#include "common/file_read.h"
#include "common/status_macros.h"
#include "softirq.skel.h"

namespace locus {

SoftirqSensor::SoftirqSensor(const SensorOptions& options, TraceSource source)
    : options_(options),
      source_(source),
      ncpus_(PossibleCpus()),
      irq_entries_(static_cast<size_t>(ncpus_) * LOCUS_MAX_IRQS),
      hardirq_period_(PowerOfTwoAtLeast(options.hardirq_sample_every)),
      windowed_(options.softirq_window_ns > 0 &&
                options.softirq_window_ns < options.softirq_window_every_ns) {}

SoftirqSensor::~SoftirqSensor() = default;

absl::StatusOr<std::unique_ptr<SoftirqSensor>> SoftirqSensor::Open(
    const SensorOptions& options, TraceSource source) {
  std::unique_ptr<SoftirqSensor> s(new SoftirqSensor(options, source));
  RETURN_IF_ERROR(s->skel_.Open());
  s->Configure();
  RETURN_IF_ERROR(s->skel_.Load());
  s->SetSlots();
  RETURN_IF_ERROR(s->skel_.Attach());
  RETURN_IF_ERROR(s->irq_stats_.Map(bpf_map__fd(s->skel_->maps.irq_stats),
                                    s->irq_entries_ * sizeof(locus_irq_stat),
                                    "irq_stats"));
  if (s->windowed_) RETURN_IF_ERROR(s->StartWindows());
  return s;
}

int SoftirqSensor::task_storage_fd() const {
  return bpf_map__fd(skel_->maps.task_stats);
}

void SoftirqSensor::Configure() {
  bpf_map__set_max_entries(skel_->maps.irq_stats, irq_entries_);
  SetAutoload({skel_->progs.softirq_entry_btf, skel_->progs.softirq_exit_btf,
               skel_->progs.irq_entry_btf, skel_->progs.irq_exit_btf},
              btf());
  SetAutoload({skel_->progs.softirq_entry_raw, skel_->progs.softirq_exit_raw,
               skel_->progs.irq_entry_raw, skel_->progs.irq_exit_raw},
              !btf());
  bpf_map__set_autocreate(btf() ? skel_->maps.task_lru : skel_->maps.task_stats,
                          false);
  bpf_map__set_max_entries(skel_->maps.task_lru, options_.max_tasks);
}

void SoftirqSensor::SetSlots() {
  // Through the live mapping of .bss, before any program runs.
  uint32_t softirq_mask = PowerOfTwoAtLeast(options_.softirq_sample_every) - 1;
  for (locus_softirq_cpu& slot : skel_->bss->cpu_slots) {
    slot.softirq_mask = softirq_mask;
    slot.hardirq_mask = hardirq_period_ - 1;
    slot.softirq_on = windowed_ ? 0 : 1;  // windowed: the first window opens
  }
}

void SoftirqSensor::SetGate(bool open) {
  for (int c = 0; c < ncpus_ && c < LOCUS_MAX_CPUS; ++c) {
    locus_softirq_cpu& slot = skel_->bss->cpu_slots[c];
    // A softirq whose entry the last window saw but whose exit it did not
    // left its start time in the slot; cleared while the gate is closed,
    // long after the programs last got past it, so that the next window's
    // first exit on that CPU does not time the gap between windows.
    if (open) slot.softirq_start_ns = 0;
    // Release: the cleared start time is in place before a program can
    // see the gate open.
    std::atomic_ref<uint32_t>(slot.softirq_on)
        .store(open ? 1 : 0, std::memory_order_release);
  }
}

absl::Status SoftirqSensor::StartWindows() {
  // /proc/softirqs counts since boot; readings count since this.
  ASSIGN_OR_RETURN(base_, ReadProcSoftirqs());
  windows_ = std::make_unique<GateWindows>(
      std::chrono::nanoseconds(options_.softirq_window_ns),
      std::chrono::nanoseconds(options_.softirq_window_every_ns),
      [this](bool open) { SetGate(open); });
  return absl::OkStatus();
}

// Counts are the hooks' own, or /proc/softirqs' when they trace in windows;
// time is scaled from the timed events to those counts.
absl::Status SoftirqSensor::ReadCounts(SensorReading& r) {
  std::vector<SoftirqCounts> all;
  if (windowed_) {
    ASSIGN_OR_RETURN(all, ReadProcSoftirqs());
    all.resize(std::max<size_t>(all.size(), ncpus_));
  }
  uint64_t seen_total = 0, total = 0;
  for (int c = 0; c < ncpus_ && c < LOCUS_MAX_CPUS; ++c) {
    const locus_softirq_cpu& slot = skel_->bss->cpu_slots[c];
    for (int v = 0; v < kNumSoftirqVectors; ++v) {
      uint64_t seen = slot.count[v];
      uint64_t count = seen;
      if (windowed_) {
        uint64_t base = c < static_cast<int>(base_.size()) ? base_[c][v] : 0;
        count = all[c][v] > base ? all[c][v] - base : 0;
      }
      seen_total += seen;
      total += count;
      r.cpus[c].softirq_count[v] = count;
      r.cpus[c].softirq_ns[v] =
          Scale(slot.sampled_ns[v], count, slot.sampled_count[v]);
    }
  }
  r.softirq_traced = seen_total && total > seen_total
                         ? static_cast<double>(seen_total) / total
                         : 1.0;
  return absl::OkStatus();
}

void SoftirqSensor::Read(SensorReading& r, TaskTable& tasks) {
  ReadIrqs(r);
  uint64_t live = 0;
  if (!btf()) {
    live = ForEachEntry<uint32_t, locus_softirq_task>(
        bpf_map__fd(skel_->maps.task_lru),
        [&](const uint32_t&, const locus_softirq_task& s) {
          TaskCounters& t = tasks.Get(s.tid, s.pid, CommOf(s.comm));
          t.net_rx_softirq_ns = UnseenToo(s.net_rx_ns, r.softirq_traced);
          t.softirq_ns = UnseenToo(s.softirq_ns, r.softirq_traced);
        });
  }
  std::vector<uint64_t> d = ReadDropCounters(bpf_map__fd(skel_->maps.drops),
                                             kLocusSoftirqDropNames, r.drops);
  if (!btf()) {
    r.drops["softirq.lru_evicted"] =
        Evicted(d[LOCUS_SOFTIRQ_LRU_INSERTS], live);
  }
}

void SoftirqSensor::ReadIrqs(SensorReading& r) const {
  const auto* stats = static_cast<const locus_irq_stat*>(irq_stats_.data());
  for (int irq = 0; irq < LOCUS_MAX_IRQS; ++irq) {
    IrqCounters ic;
    ic.irq = irq;
    bool any = false;
    for (int c = 0; c < ncpus_; ++c) {
      const locus_irq_stat& st =
          stats[static_cast<size_t>(c) * LOCUS_MAX_IRQS + irq];
      // Hardirqs are sampled whole (locus/softirq.h): both are estimates,
      // exact when the period is 1.
      ic.count_per_cpu.push_back(st.sampled_count * hardirq_period_);
      ic.ns_per_cpu.push_back(st.sampled_ns * hardirq_period_);
      any |= st.sampled_count != 0;
    }
    if (any) r.irqs.push_back(std::move(ic));
  }
}

absl::StatusOr<std::vector<SoftirqCounts>> SoftirqSensor::ReadProcSoftirqs()
    const {
  std::string path = absl::StrCat(options_.procfs_root, "/softirqs");
  absl::StatusOr<std::string> text = ReadRegularFile(path);
  if (!text.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", text.status().message()));
  }
  absl::StatusOr<std::vector<SoftirqCounts>> counts = ParseProcSoftirqs(*text);
  if (!counts.ok()) {
    return absl::Status(counts.status().code(),
                        absl::StrCat(path, ": ", counts.status().message()));
  }
  return counts;
}

}  // namespace locus
