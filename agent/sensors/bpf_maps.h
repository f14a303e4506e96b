// Reading the maps the BPF programs fill: hash maps entry by entry or in
// batches, per-CPU drop counters, and mmapped arrays.
#ifndef LOCUS_AGENT_SENSORS_BPF_MAPS_H_
#define LOCUS_AGENT_SENSORS_BPF_MAPS_H_

#include <bpf/bpf.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/os_error.h"

namespace locus {

// libbpf_num_possible_cpus(), at least 1: the number of values of a per-CPU
// map and of CPU slots the sensors read.
int PossibleCpus();

// Walks a hash map with get_next_key, two syscalls per entry; returns how
// many entries it read. For the maps of the raw_tp fallback, which serves
// kernels that may predate batch lookups (5.6).
template <typename Key, typename Value>
uint64_t ForEachEntry(int map_fd,
                      absl::FunctionRef<void(const Key&, const Value&)> fn) {
  Key key{};
  Key next{};
  Value value{};
  uint64_t n = 0;
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    key = next;
    prev = &key;
    if (bpf_map_lookup_elem(map_fd, &key, &value) != 0) continue;  // gone
    ++n;
    fn(key, value);
  }
  return n;
}

// Reads a hash or LRU hash map a chunk of entries per syscall
// (BPF_MAP_LOOKUP_BATCH). Its buffers are made on the first read and kept.
template <typename Key, typename Value>
class HashBatchReader {
 public:
  explicit HashBatchReader(uint32_t chunk = 1024) : chunk_(chunk) {}

  // Calls fn on every entry; returns how many there were.
  absl::StatusOr<uint64_t> ForEach(
      int map_fd, absl::FunctionRef<void(const Key&, const Value&)> fn) {
    if (keys_.empty()) {
      keys_.resize(chunk_);
      values_.resize(chunk_);
    }
    uint32_t at = 0;  // the bucket to start from
    uint64_t n = 0;
    for (;;) {
      uint32_t count = static_cast<uint32_t>(keys_.size());
      uint32_t next = 0;
      int err = bpf_map_lookup_batch(map_fd, &at, &next, keys_.data(),
                                     values_.data(), &count, nullptr);
      if (err == -ENOSPC && count == 0) {  // a bucket larger than the chunk
        keys_.resize(keys_.size() * 2);
        values_.resize(values_.size() * 2);
        continue;  // from the same bucket
      }
      if (err != 0 && err != -ENOENT) {
        return ErrnoStatus("batch lookup of a BPF map", -err);
      }
      for (uint32_t i = 0; i < count; ++i) fn(keys_[i], values_[i]);
      n += count;
      if (err == -ENOENT) return n;  // past the last bucket
      at = next;
    }
  }

 private:
  uint32_t chunk_;
  std::vector<Key> keys_;
  std::vector<Value> values_;
};

// Sums a per-CPU array of u64 drop counters, stores those with a name in
// `drops` under it (`names` is an ABI header's table, by counter), and
// returns every sum.
std::vector<uint64_t> ReadDropCounters(int map_fd,
                                       absl::Span<const char* const> names,
                                       std::map<std::string, uint64_t>& drops);

// Entries an LRU pushed out: those inserted minus those still there.
inline uint64_t Evicted(uint64_t inserted, uint64_t live) {
  return inserted > live ? inserted - live : 0;
}

// A read-only mapping of a BPF_F_MMAPABLE array map, unmapped with its
// owner.
class MappedArray {
 public:
  MappedArray() = default;
  ~MappedArray();
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;

  // Maps the first `bytes` of the map (rounded up to whole pages).
  absl::Status Map(int map_fd, size_t bytes, const char* what);
  const void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_BPF_MAPS_H_
