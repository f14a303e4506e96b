// Reading BPF maps on the real kernel: batch lookups against the walk they
// replace, on an LRU hash like the NUMA sensor's (whose fentry source this
// kernel refuses, so the sensor itself cannot show it).
#include <bpf/bpf.h>

#include <cstdint>
#include <map>
#include <set>

#include "agent/sensors/bpf_maps.h"
#include "common/os_error.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"
#include "locus/numa.h"

namespace locus {
namespace {

using Value = locus_numa_fentry_task;

UniqueFd LruHash(uint32_t max_entries) {
  return UniqueFd(bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "locus_test",
                                 sizeof(uint32_t), sizeof(Value), max_entries,
                                 nullptr));
}

std::set<uint32_t> WalkedKeys(int fd) {
  std::set<uint32_t> keys;
  ForEachEntry<uint32_t, Value>(
      fd, [&](const uint32_t& k, const Value&) { keys.insert(k); });
  return keys;
}

TEST(BpfMapsPrivileged, BatchReadsWhatTheWalkReads) {
  // A chunk of 1 is smaller than many a bucket: the reader grows it.
  for (uint32_t chunk : {1u, 7u, 1024u}) {
    UniqueFd fd = LruHash(4096);
    ASSERT_TRUE(fd) << ErrnoMessage("bpf_map_create", -fd.get());
    for (uint32_t k = 1; k <= 1000; ++k) {
      Value v{};
      v.tid = k;
      v.local_pages[0] = 3 * k;
      ASSERT_EQ(bpf_map_update_elem(fd.get(), &k, &v, BPF_NOEXIST), 0);
    }
    std::set<uint32_t> walked = WalkedKeys(fd.get());
    EXPECT_GT(walked.size(), 900u);
    HashBatchReader<uint32_t, Value> reader(chunk);
    for (int pass = 0; pass < 2; ++pass) {  // buffers kept between reads
      std::map<uint32_t, uint64_t> read;
      absl::StatusOr<uint64_t> n =
          reader.ForEach(fd.get(), [&](const uint32_t& k, const Value& v) {
            EXPECT_EQ(v.tid, k);
            read[k] = v.local_pages[0];
          });
      ASSERT_TRUE(n.ok()) << n.status();
      EXPECT_EQ(*n, walked.size()) << "chunk " << chunk;
      ASSERT_EQ(read.size(), walked.size()) << "chunk " << chunk;
      for (uint32_t k : walked) EXPECT_EQ(read[k], 3 * k) << "key " << k;
    }
  }
}

TEST(BpfMapsPrivileged, BatchReadOfAnEmptyMapIsEmpty) {
  UniqueFd fd = LruHash(64);
  ASSERT_TRUE(fd) << ErrnoMessage("bpf_map_create", -fd.get());
  HashBatchReader<uint32_t, Value> reader;
  absl::StatusOr<uint64_t> n =
      reader.ForEach(fd.get(), [](const uint32_t&, const Value&) {
        ADD_FAILURE() << "an entry in an empty map";
      });
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0u);
}

TEST(BpfMapsPrivileged, BatchReadOfNoMapFails) {
  HashBatchReader<uint32_t, Value> reader;
  absl::StatusOr<uint64_t> n =
      reader.ForEach(-1, [](const uint32_t&, const Value&) {});
  EXPECT_FALSE(n.ok());
}

}  // namespace
}  // namespace locus
