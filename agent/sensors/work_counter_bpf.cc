#include "agent/sensors/work_counter_bpf.h"

#include <bpf/libbpf.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/sensors/bpf_skeleton.h"
#include "common/os_error.h"
#include "common/status_macros.h"
#include "locus/work.h"
#include "policy/experiment_latency.h"
#include "work.skel.h"

namespace locus {
namespace {

// The counters' layout as the program writes it: three u64 and the
// histogram, no padding.
static_assert(sizeof(locus_work_counts) ==
              (3 + LOCUS_WORK_BUCKETS) * sizeof(__u64));
static_assert(offsetof(locus_work_counts, bytes_sent) == 0);
static_assert(offsetof(locus_work_counts, accepted) == sizeof(__u64));
static_assert(offsetof(locus_work_counts, requests) == 2 * sizeof(__u64));
static_assert(offsetof(locus_work_counts, service_us) == 3 * sizeof(__u64));
// The histogram's layout as the experiment's quantiles invert it.
static_assert(LOCUS_WORK_SUB_BITS == experiment::kLatencySubBits);
static_assert(LOCUS_WORK_MAX_MSB == experiment::kLatencyMaxMsb);
static_assert(LOCUS_WORK_BUCKETS == experiment::kLatencyBuckets);

using WorkSkeleton = BpfSkeleton<work_bpf>;

absl::StatusOr<std::unique_ptr<WorkSkeleton>> LoadAndAttach() {
  auto skel = std::make_unique<WorkSkeleton>("work");
  RETURN_IF_ERROR(skel->Open());
  RETURN_IF_ERROR(skel->Load());
  RETURN_IF_ERROR(skel->Attach());
  return skel;
}

class BpfWorkCounter : public WorkCounter {
 public:
  explicit BpfWorkCounter(const WorkCounterOptions& options)
      : watched_(options.procfs_root) {}

  absl::Status Watch(const std::vector<int32_t>& pids) override {
    if (pids.empty()) {
      Stop();
      return absl::OkStatus();
    }
    if (pids.size() > LOCUS_WORK_MAX_PROCESSES) {
      return absl::InvalidArgumentError(absl::StrCat("work: ", pids.size(),
                                                     " processes, at most ",
                                                     LOCUS_WORK_MAX_PROCESSES));
    }
    ASSIGN_OR_RETURN(WatchedProcesses::Change change, watched_.Replace(pids));
    if (!skel_) {
      absl::StatusOr<std::unique_ptr<WorkSkeleton>> skel = LoadAndAttach();
      if (!skel.ok()) {
        watched_.Clear();
        return skel.status();
      }
      skel_ = *std::move(skel);
      // A fresh program knows none of them yet.
      change = {{}, Added()};
    }
    // Stop counting before forgetting; count into a zeroed entry from the
    // moment the program sees the process.
    for (int32_t pid : change.dropped) {
      uint32_t key = pid;
      bpf_map__delete_elem((*skel_)->maps.watched, &key, sizeof(key), 0);
      bpf_map__delete_elem((*skel_)->maps.counters, &key, sizeof(key), 0);
    }
    for (int32_t pid : change.added) {
      uint32_t key = pid;
      locus_work_counts zero = {};
      uint8_t one = 1;
      RETURN_IF_ERROR(Update((*skel_)->maps.counters, key, &zero, sizeof(zero),
                             "counters"));
      RETURN_IF_ERROR(
          Update((*skel_)->maps.watched, key, &one, sizeof(one), "watched"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> Read() override {
    absl::flat_hash_map<int32_t, WorkSample> out;
    if (!skel_) return out;
    // Counters, then CPU time, back to back: microseconds apart, against an
    // interval of seconds.
    absl::flat_hash_map<int32_t, locus_work_counts> counts;
    for (const auto& [pid, unused] : watched_.start_times()) {
      uint32_t key = pid;
      locus_work_counts value = {};
      if (bpf_map__lookup_elem((*skel_)->maps.counters, &key, sizeof(key),
                               &value, sizeof(value), 0) == 0) {
        counts[pid] = value;
      }
    }
    ASSIGN_OR_RETURN(auto cpu, watched_.ReadCpu());
    for (auto& [pid, sample] : cpu) {
      auto it = counts.find(pid);
      if (it == counts.end()) continue;
      sample.bytes_sent = it->second.bytes_sent;
      sample.accepted = it->second.accepted;
      sample.requests = it->second.requests;
      sample.service_us.assign(std::begin(it->second.service_us),
                               std::end(it->second.service_us));
      out[pid] = std::move(sample);
    }
    return out;
  }

  void Stop() override {
    skel_.reset();  // detaches the programs and frees the maps
    watched_.Clear();
  }

  std::string source() const override { return kWorkSourceBpf; }
  std::string service_source() const override { return kServiceSourceBpf; }

 private:
  // Every pid of the watched set: what a new program must be told.
  std::vector<int32_t> Added() const {
    std::vector<int32_t> pids;
    for (const auto& [pid, unused] : watched_.start_times()) {
      pids.push_back(pid);
    }
    return pids;
  }

  static absl::Status Update(bpf_map* map, uint32_t key, const void* value,
                             size_t size, absl::string_view name) {
    int err =
        bpf_map__update_elem(map, &key, sizeof(key), value, size, BPF_ANY);
    if (err == 0) return absl::OkStatus();
    return ErrnoStatus(absl::StrCat("work: adding pid ", key, " to ", name),
                       -err);
  }

  WatchedProcesses watched_;
  std::unique_ptr<WorkSkeleton> skel_;
};

}  // namespace

std::unique_ptr<WorkCounter> MakeWorkCounter(
    const WorkCounterOptions& options) {
  if (options.disable_bpf) {
    return MakeProcfsWorkCounter(options, "bpf disabled");
  }
  absl::StatusOr<std::unique_ptr<WorkSkeleton>> probe = LoadAndAttach();
  if (!probe.ok()) {
    return MakeProcfsWorkCounter(
        options, absl::StrCat("bpf unavailable: ", probe.status().message()));
  }
  return std::make_unique<BpfWorkCounter>(options);
}

}  // namespace locus
