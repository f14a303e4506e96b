// A WorkCounter whose samples a test sets. Like the real ones, Read()
// returns only watched pids that have a sample (a pid with none reads as
// exited); Watch() and Read() fail with a status the test sets.
#ifndef LOCUS_AGENT_SENSORS_FAKE_WORK_COUNTER_H_
#define LOCUS_AGENT_SENSORS_FAKE_WORK_COUNTER_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "agent/sensors/work_counter.h"

namespace locus {

class FakeWorkCounter : public WorkCounter {
 public:
  // The cumulative sample Read() reports for `pid` while it is watched.
  void Set(int32_t pid, WorkSample sample) { samples_[pid] = sample; }
  // The process exited: Read() leaves it out.
  void Exit(int32_t pid) { samples_.erase(pid); }
  void FailWatch(absl::Status status) { watch_status_ = std::move(status); }
  void FailRead(absl::Status status) { read_status_ = std::move(status); }
  void set_source(std::string source) { source_ = std::move(source); }

  absl::Status Watch(const std::vector<int32_t>& pids) override {
    ++watches_;
    if (!watch_status_.ok()) return watch_status_;
    watched_ = std::set<int32_t>(pids.begin(), pids.end());
    return absl::OkStatus();
  }

  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> Read() override {
    ++reads_;
    if (!read_status_.ok()) return read_status_;
    absl::flat_hash_map<int32_t, WorkSample> out;
    for (int32_t pid : watched_) {
      auto it = samples_.find(pid);
      if (it != samples_.end()) out[pid] = it->second;
    }
    return out;
  }

  void Stop() override {
    ++stops_;
    watched_.clear();
  }

  std::string source() const override { return source_; }
  std::string service_source() const override { return kServiceSourceBpf; }

  const std::set<int32_t>& watched() const { return watched_; }
  int watches() const { return watches_; }
  int reads() const { return reads_; }
  int stops() const { return stops_; }

 private:
  absl::flat_hash_map<int32_t, WorkSample> samples_;
  std::set<int32_t> watched_;
  absl::Status watch_status_;
  absl::Status read_status_;
  std::string source_ = kWorkSourceBpf;
  int watches_ = 0;
  int reads_ = 0;
  int stops_ = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_FAKE_WORK_COUNTER_H_
