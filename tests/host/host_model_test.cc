// The host model hands the control loop, with the targets, the processes a
// selector matched but the trust rules refused, each with why (for explain).
#include "agent/host/host_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

bool IsTarget(const Snapshot& snapshot, int32_t pid) {
  return std::any_of(snapshot.targets.begin(), snapshot.targets.end(),
                     [&](const Target& t) { return t.pid == pid; });
}

TEST(HostModelTest, RefusedLookAlikesComeWithTheirReason) {
  TempTree tree;
  tree.CopyFixture("numa2");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  options.targets.read_numa_maps = false;
  HostModel model(options);
  // Worker 104 now runs a binary anyone may rewrite (and, when this does not
  // run as root, that root does not own either).
  const std::string binary = tree.root() + "/home/nginx";
  tree.Write("home/nginx", "#!/bin/true\n");
  ASSERT_EQ(chmod(binary.c_str(), 0777), 0);
  const std::string exe = tree.root() + "/proc/104/exe";
  std::filesystem::remove(exe);
  std::filesystem::create_symlink(binary, exe);

  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  EXPECT_FALSE(IsTarget(snapshot, 104));
  EXPECT_TRUE(IsTarget(snapshot, 100)) << "its master is still trusted";
  ASSERT_EQ(snapshot.refused_targets.size(), 1u);
  EXPECT_EQ(snapshot.refused_targets[0].pid, 104);
  EXPECT_EQ(snapshot.refused_targets[0].comm, "nginx");
  EXPECT_THAT(snapshot.refused_targets[0].reason,
              HasSubstr("not trusted as a target: its executable " + binary));

  // The list is this scan's, not a tally: the binary put back, it is gone.
  std::filesystem::remove(exe);
  std::filesystem::create_symlink("/usr/sbin/nginx", exe);
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  EXPECT_TRUE(IsTarget(snapshot, 104));
  EXPECT_THAT(snapshot.refused_targets, IsEmpty());
}

}  // namespace
}  // namespace locus
