// Restoring the journal's steering records: each group looked for by its key
// and detached through a live member (fake kernel and finder), and the
// /proc scan that finds a group's sockets (fixture tree).
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "agent/act/connections/reuseport_restore.h"
#include "agent/act/connections/steering_journal.h"
#include "agent/act/restore.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/connections/fake_reuseport_ops.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kNetns = 4026531840;

ListenKey Key(uint16_t port) {
  ListenKey key;
  key.netns = kNetns;
  key.address.family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", key.address.bytes.data());
  key.address.port = port;
  return key;
}

class FakeFinder : public ListenerFinder {
 public:
  FoundGroups groups;
  std::set<ListenKey> asked;
  absl::StatusOr<FoundGroups> Find(const std::set<ListenKey>& keys,
                                   std::vector<std::string>*) override {
    asked = keys;
    return groups;
  }
};

class SteeringRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.path = tree_.root() + "/journal";
    auto journal = Journal::Open(options_);
    ASSERT_TRUE(journal.ok());
    JournalSteering steering(journal->get());
    ASSERT_TRUE(steering.RecordAttach(Key(80)).ok());
    // Port 80's sockets: inode 7 held by pid 10 at fd 3, 8 at fd 4.
    ops_.AddSocket(10, 3, 7, 80);
    ops_.AddSocket(10, 4, 8, 80);
    ops_.attached[80] = 1;
  }

  absl::StatusOr<RestoreReport> Restore() {
    return RestoreJournal(options_, threads_, irqs_, &steering_);
  }

  TempTree tree_;
  JournalOptions options_;
  FakeThreadOps threads_;
  FakeIrqOps irqs_;
  FakeReuseportOps ops_;
  FakeFinder finder_;
  SteeringRestoreOps steering_{&ops_, &finder_};
};

TEST_F(SteeringRestoreTest, AFoundGroupIsDetachedThroughALiveMember) {
  // The first member listed closed its fd since the scan.
  finder_.groups[Key(80)] = {{9, 0, 10, 5}, {7, 0, 10, 3}, {8, 0, 10, 4}};
  auto report = Restore();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->errors[0];
  EXPECT_EQ(report->groups_detached, 1);
  EXPECT_THAT(finder_.asked, ElementsAre(Key(80)));
  EXPECT_THAT(ops_.attached, IsEmpty());
  EXPECT_THAT(ops_.events, ElementsAre("detach group 80"));
  EXPECT_EQ(ops_.OpenDuplicates(), 0);
  EXPECT_NE(access(options_.path.c_str(), F_OK), 0) << "journal not cleared";
}

TEST_F(SteeringRestoreTest, AGoneGroupIsDropped) {
  auto report = Restore();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->groups_detached, 0);
  EXPECT_EQ(report->dropped, 1);
  EXPECT_THAT(ops_.events, IsEmpty());
}

TEST_F(SteeringRestoreTest, ARefusedDuplicationIsAnErrorNamingTheGroup) {
  finder_.groups[Key(80)] = {{7, 0, 10, 3}};
  ops_.dup_errors[7] = EPERM;
  auto report = Restore();
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->errors.size(), 1u);
  EXPECT_THAT(report->errors[0], HasSubstr("127.0.0.1:80: not detached"));
  EXPECT_THAT(report->errors[0], HasSubstr("Yama"));
  EXPECT_EQ(ops_.attached.count(80), 1u);
}

TEST_F(SteeringRestoreTest, WithoutSteeringOpsTheGroupIsNamed) {
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->errors.size(), 1u);
  EXPECT_THAT(report->errors[0], HasSubstr("127.0.0.1:80: steering program"));
}

// A /proc tree: pid 10 and 11 in the namespace, 12 in another.
TEST(ProcListenerFinderTest, FindsTheHoldersOfAGroupInItsNamespace) {
  TempTree tree;
  namespace fs = std::filesystem;
  auto link = [&](const std::string& at, const std::string& to) {
    fs::create_directories(fs::path(tree.root() + "/" + at).parent_path());
    fs::create_symlink(to, tree.root() + "/" + at);
  };
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
      "retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 "
      "00000000     0        0 700 1 0 100 0 0 10 0\n"
      "   1: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 "
      "00000000     0        0 800 1 0 100 0 0 10 0\n"
      "   2: 0100007F:0051 00000000:0000 0A 00000000:00000000 00:00000000 "
      "00000000     0        0 900 1 0 100 0 0 10 0\n";
  for (const char* pid : {"10", "11", "12"}) {
    tree.Write(std::string(pid) + "/net/tcp", tcp);
  }
  link("10/ns/net", "net:[4026531840]");
  link("11/ns/net", "net:[4026531840]");
  link("12/ns/net", "net:[4026532000]");
  link("10/fd/6", "socket:[700]");
  link("10/fd/5", "socket:[700]");
  link("10/fd/7", "/dev/null");
  link("11/fd/3", "socket:[800]");
  link("11/fd/4", "socket:[900]");
  link("12/fd/3", "socket:[700]");
  tree.Write("self", "");
  auto finder = MakeProcListenerFinder(tree.root());
  std::vector<std::string> errors;
  auto found = finder->Find({Key(80), Key(443)}, &errors);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(found->size(), 1u);
  const std::vector<GroupSocket>& sockets = found->at(Key(80));
  ASSERT_EQ(sockets.size(), 2u);
  EXPECT_EQ(sockets[0].inode, 700u);
  EXPECT_EQ(sockets[0].dup_pid, 10);
  EXPECT_EQ(sockets[0].dup_fd, 5);
  EXPECT_EQ(sockets[1].inode, 800u);
  EXPECT_EQ(sockets[1].dup_pid, 11);
  EXPECT_EQ(sockets[1].dup_fd, 3);
}

}  // namespace
}  // namespace locus
