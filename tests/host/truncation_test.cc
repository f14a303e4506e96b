// Every prefix of every fixture file the parsers read: a file cut short at
// any byte gives a value or an error, never a crash, and a cut stat is
// always an error (it would otherwise yield a wrong CPU or start time).
#include <filesystem>
#include <fstream>

#include "agent/host/irqs.h"
#include "agent/host/numa_maps.h"
#include "agent/host/proc_parse.h"
#include "agent/host/topology.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TruncationTest, EveryPrefixOfEveryProcFile) {
  auto topology = ReadTopology(FixturePath("numa2/sys"));
  ASSERT_TRUE(topology.ok());
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           FixturePath("numa2/proc"))) {
    if (!entry.is_regular_file() || entry.is_symlink()) continue;
    const std::string name = entry.path().filename().string();
    const std::string text = Slurp(entry.path().string());
    ++files;
    // Field 39 starts after the 37th space following the comm's ')'.
    size_t processor_offset = text.rfind(')');
    for (int spaces = 0; spaces < 37 && processor_offset != std::string::npos;
         ++spaces) {
      processor_offset = text.find(' ', processor_offset + 1);
    }
    for (size_t n = 0; n <= text.size(); ++n) {
      absl::string_view prefix(text.data(), n);
      std::vector<std::string> errors;
      if (name == "stat") {
        auto stat = ParseProcStat(prefix);
        // Cut before the processor field (39) starts is an error.
        if (n <= processor_offset) {
          EXPECT_FALSE(stat.ok()) << entry.path() << " cut at " << n;
        }
      } else if (name == "status") {
        (void)ParseStatusCpusAllowed(prefix);
      } else if (name == "numa_maps") {
        (void)ParseNumaMaps(prefix, *topology, 4096);
      } else if (name == "interrupts") {
        (void)ParseInterrupts(prefix, &errors);
      } else if (name == "cmdline") {
        (void)ParseCmdline(prefix);
      } else if (name == "cgroup") {
        (void)SystemdUnitOf(ParseCgroupPath(prefix));
      }
    }
  }
  EXPECT_GT(files, 20);
}

TEST(TruncationTest, EveryPrefixOfTopologyFiles) {
  TempTree tree;
  tree.CopyFixture("numa4");
  const std::string node = "sys/devices/system/node/node1/";
  for (const char* file : {"meminfo", "distance", "cpulist"}) {
    const std::string original = Slurp(tree.root() + "/" + node + file);
    for (size_t n = 0; n < original.size(); ++n) {
      tree.Write(node + file, original.substr(0, n));
      std::vector<std::string> errors;
      auto topology = ReadTopology(tree.root() + "/sys", &errors);
      ASSERT_TRUE(topology.ok()) << file << " cut at " << n;
      EXPECT_EQ(topology->nodes.size(), 4u);
      // The other nodes are intact whatever happened to node 1.
      EXPECT_EQ(topology->nodes[0].cpus, (std::vector<int>{0, 1}));
      EXPECT_EQ(topology->nodes[3].distances.size(), 4u);
    }
    tree.Write(node + file, original);
  }
}

}  // namespace
}  // namespace locus
