// Shared by the fuzz targets: the input as text, and invariant checks that
// abort (so libFuzzer saves the input as a crash) with what failed.
#ifndef LOCUS_TESTS_FUZZ_FUZZ_CHECK_H_
#define LOCUS_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/string_view.h"

#define LOCUS_FUZZ_CHECK(condition)                                   \
  do {                                                                \
    if (!(condition)) {                                               \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, \
                   __LINE__, #condition);                             \
      std::abort();                                                   \
    }                                                                 \
  } while (0)

namespace locus::fuzz {

inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

// CPU sets the parsers return are strictly ascending and non-negative.
inline bool StrictlyAscending(const std::vector<int>& cpus) {
  for (size_t i = 0; i < cpus.size(); ++i) {
    if (cpus[i] < 0 || (i > 0 && cpus[i - 1] >= cpus[i])) return false;
  }
  return true;
}

}  // namespace locus::fuzz

#endif  // LOCUS_TESTS_FUZZ_FUZZ_CHECK_H_
