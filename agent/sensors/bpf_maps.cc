#include "agent/sensors/bpf_maps.h"

#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace locus {

int PossibleCpus() {
  int n = libbpf_num_possible_cpus();
  return n < 1 ? 1 : n;
}

std::vector<uint64_t> ReadDropCounters(int map_fd,
                                       absl::Span<const char* const> names,
                                       std::map<std::string, uint64_t>& drops) {
  std::vector<uint64_t> sums(names.size(), 0);
  std::vector<uint64_t> per_cpu(PossibleCpus());
  for (uint32_t k = 0; k < names.size(); ++k) {
    if (bpf_map_lookup_elem(map_fd, &k, per_cpu.data()) != 0) continue;
    for (uint64_t v : per_cpu) sums[k] += v;
  }
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k] != nullptr) drops[names[k]] = sums[k];
  }
  return sums;
}

MappedArray::~MappedArray() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

absl::Status MappedArray::Map(int map_fd, size_t bytes, const char* what) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t rounded = (bytes + page - 1) / page * page;
  void* m = mmap(nullptr, rounded, PROT_READ, MAP_SHARED, map_fd, 0);
  if (m == MAP_FAILED) return LastErrnoStatus(absl::StrCat("mmap of ", what));
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = m;
  bytes_ = rounded;
  return absl::OkStatus();
}

}  // namespace locus
