// Flags go through absl's public API only: absl::flags_internal (and the
// headers under absl/flags/internal/) change between abseil releases, and a
// call into them stops Locus building against a newer abseil (Debian 13's).
// That the tree compiles without them is the build itself; this keeps them
// from coming back.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

TEST(AbslPublicApi, NoProductSourceUsesAbslInternals) {
  std::vector<std::string> offenders;
  int scanned = 0;
  for (const char* room : {"agent", "common", "policy", "bpf"}) {
    std::filesystem::path root = std::filesystem::path(LOCUS_SOURCE_DIR) / room;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(root)) {
      std::string ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      ++scanned;
      std::stringstream text;
      text << std::ifstream(entry.path()).rdbuf();
      for (const char* internal : {"flags_internal", "absl/flags/internal/"}) {
        if (text.str().find(internal) != std::string::npos) {
          offenders.push_back(entry.path().string() + ": " + internal);
        }
      }
    }
  }
  EXPECT_GT(scanned, 50) << "the sources were not found under "
                         << LOCUS_SOURCE_DIR;
  EXPECT_TRUE(offenders.empty()) << ::testing::PrintToString(offenders);
}

}  // namespace
}  // namespace locus
