// /proc/PID/maps filtered by /proc/PID/numa_maps: the ranges the page
// migrator walks. Input: the maps text, then (after a NUL, if any) the
// numa_maps text.
#include "agent/host/proc_parse.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint64_t kMaxBytes = 64ull << 30;
  absl::string_view text = locus::fuzz::AsText(data, size);
  size_t nul = text.find('\0');
  std::optional<absl::string_view> numa_maps;
  if (nul != absl::string_view::npos) numa_maps = text.substr(nul + 1);
  for (const locus::MemRange& range : locus::ParseMigratableRanges(
           text.substr(0, nul), numa_maps, kMaxBytes)) {
    LOCUS_FUZZ_CHECK(range.start < range.end);
    LOCUS_FUZZ_CHECK(range.end - range.start <= kMaxBytes);
  }
  return 0;
}
