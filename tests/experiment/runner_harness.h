// The experiment runner's test harness: a work counter whose workers work
// at a rate the test sets, an 8-worker host, and a runner ticked once a
// second.
#ifndef LOCUS_TESTS_EXPERIMENT_RUNNER_HARNESS_H_
#define LOCUS_TESTS_EXPERIMENT_RUNNER_HARNESS_H_

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/experiment/runner.h"
#include "google/protobuf/util/time_util.h"
#include "policy/experiment_latency.h"
#include "tests/common/snapshot_builder.h"

namespace locus::testing {

// Each watched pid gains, per Read, cpu_ns of CPU time and bytes at
// `rate(pid)` bytes per CPU-second (times a little deterministic noise).
class FakeWorkCounter : public WorkCounter {
 public:
  absl::Status Watch(const std::vector<int32_t>& pids) override {
    watched = std::set<int32_t>(pids.begin(), pids.end());
    ++watches;
    on_watch();
    return absl::OkStatus();
  }
  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> Read() override {
    absl::flat_hash_map<int32_t, WorkSample> out;
    ++reads;
    // Seconds of sending since the last read, by `clock` where it is set.
    const double sent_s =
        clock == nullptr ? 0.5
                         : (*clock - std::exchange(read_ns, *clock)) / 1e9 / 20;
    for (int32_t pid : watched) {
      if (gone.count(pid)) continue;
      WorkSample& s = totals[pid];
      const uint64_t cpu = 500'000'000;
      const double noise = 1 + 0.02 * std::sin(reads * 7.0 + pid * 13.0);
      s.cpu_ns += cpu;
      s.bytes_sent += static_cast<uint64_t>(rate(pid) * sent_s * noise);
      s.accepted += 100;
      s.wait_ns += static_cast<uint64_t>(wait(pid) * noise);
      AddRequests(s, service_us(pid), noise);
      out[pid] = s;
    }
    return out;
  }
  void Stop() override {
    watched.clear();
    ++stops;
  }
  std::string source() const override { return "fake"; }
  std::string service_source() const override {
    return "fake: the service times the test sets";
  }

  static void AddRequests(WorkSample& s, double median_us, double noise) {
    if (median_us <= 0) return;
    s.service_us.resize(experiment::kLatencyBuckets);
    for (int k = 0; k < 50; ++k) {
      const double us = median_us * noise * (0.5 + k / 49.0);
      int bucket = 0;
      while (bucket + 1 < experiment::kLatencyBuckets &&
             experiment::BucketHighUs(bucket) <= us)
        ++bucket;
      ++s.service_us[bucket];
      ++s.requests;
    }
  }

  std::function<double(int32_t)> rate = [](int32_t) { return 1e6; };
  // Run-queue wait (ns) per Read, and the median service time (us) of the
  // 50 requests each Read adds (0: none), spread from 0.5 to 1.5 times it.
  std::function<double(int32_t)> wait = [](int32_t) { return 1e7; };
  std::function<double(int32_t)> service_us = [](int32_t) { return 0.0; };
  // Called by Watch: the time the real sensor takes to load its programs.
  std::function<void()> on_watch = [] {};
  // When set, the bytes of a read grow with this clock (ns) since the last
  // one, rate(pid) / 20 per second of it (the 0.5 s of CPU each read adds
  // per 10 s interval), instead of a fixed step per read.
  const uint64_t* clock = nullptr;
  uint64_t read_ns = 0;
  std::set<int32_t> watched;
  std::set<int32_t> gone;
  std::map<int32_t, WorkSample> totals;
  int watches = 0, reads = 0, stops = 0;
};

// 8 workers (pids 101..108), four running on each of two nodes.
inline Snapshot Host(uint64_t now_ns, int workers = 8) {
  Snapshot s = MakeHost(2, 2);
  s.now_ns = now_ns;
  for (int i = 0; i < workers; ++i) {
    Target t = MakeWorker(s, 101 + i, i % 2, -1, i % 2);
    t.instance = 100;
    s.targets.push_back(t);
  }
  for (CpuSample& cpu : s.cpus) cpu.busy_all = 0.25;  // /proc/stat's
  return s;
}

inline PolicyState Policy(uint64_t version = 1) {
  PolicyState state;
  state.version = version;
  return state;
}

inline v1::StartExperimentRequest Request(int64_t duration_s,
                                          int64_t interval_s, bool aa = false) {
  v1::StartExperimentRequest request;
  *request.mutable_duration() =
      google::protobuf::util::TimeUtil::SecondsToDuration(duration_s);
  *request.mutable_interval() =
      google::protobuf::util::TimeUtil::SecondsToDuration(interval_s);
  request.set_aa(aa);
  request.set_seed(42);
  return request;
}

struct Harness {
  explicit Harness(std::string record = "")
      : runner(Options(std::move(record)), &counter,
               [this] { return static_cast<int64_t>(now); }) {
    runner.set_on_harm([this](const std::string& why) { harm = why; });
  }
  static ExperimentOptions Options(std::string record) {
    ExperimentOptions options;
    options.record_path = std::move(record);
    return options;
  }
  // One tick a second.
  ArmsThisTick Tick(int workers = 8, uint64_t policy_version = 1) {
    now += kSecond;
    return runner.OnTick(Host(now, workers), v1::Policy::MODE_ENFORCE,
                         Policy(policy_version), History());
  }
  FakeWorkCounter counter;
  ExperimentRunner runner;
  uint64_t now = 0;
  std::string harm;
};

inline std::set<int32_t> Treated(const v1::ExperimentReport& report) {
  std::set<int32_t> pids;
  for (const v1::ExperimentUnit& unit : report.units()) {
    if (unit.arm() == v1::EXPERIMENT_ARM_TREATED) pids.insert(unit.pid());
  }
  return pids;
}

}  // namespace locus::testing

#endif  // LOCUS_TESTS_EXPERIMENT_RUNNER_HARNESS_H_
