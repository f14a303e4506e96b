// /proc/PID/numa_maps: resident pages per node, on a four-node host.
#include "agent/host/numa_maps.h"
#include "fuzz_check.h"
#include "tests/common/snapshot_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const locus::Topology* const host =
      new locus::Topology(locus::testing::MakeHost(4, 2).topology);
  absl::string_view text = locus::fuzz::AsText(data, size);
  // 4 KiB pages (x86), and 64 KiB ones (arm64, ppc64) where a 4 KiB
  // kernelpagesize_kB field counts as a fraction of a page.
  for (uint64_t page_size : {4096u, 65536u}) {
    absl::StatusOr<std::vector<uint64_t>> pages =
        locus::ParseNumaMaps(text, *host, page_size);
    if (pages.ok()) LOCUS_FUZZ_CHECK(pages->size() == host->nodes.size());
  }
  return 0;
}
