// The shared reader (common/file_read.h) over whatever a file holds, then
// the cpuset parser its cgroup callers feed: the first byte picks the limit
// (0 to 16,320 bytes), the rest is the file. What is read is the file when
// it fits, and OutOfRange otherwise, with nothing held past the limit.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/file_read.h"
#include "fuzz_check.h"
#include "policy/cpu_list.h"

namespace {

// One file for the whole run, rewritten per input.
const std::string& FilePath() {
  static const std::string path = [] {
    char dir[] = "/tmp/locus-fuzz-read-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    return std::string(dir) + "/cpuset.cpus.effective";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t limit = static_cast<size_t>(data[0]) * 64;
  const absl::string_view content = locus::fuzz::AsText(data + 1, size - 1);
  {
    std::ofstream out(FilePath(), std::ios::trunc | std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  absl::StatusOr<std::string> read =
      locus::ReadRegularFile(FilePath(), {.max_bytes = limit});
  if (content.size() > limit) {
    LOCUS_FUZZ_CHECK(read.status().code() == absl::StatusCode::kOutOfRange);
    return 0;
  }
  LOCUS_FUZZ_CHECK(read.ok() && *read == content);
  absl::StatusOr<std::vector<int>> cpus = locus::ParseCpuList(*read);
  if (cpus.ok()) LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(*cpus));
  return 0;
}
