// ListenerScan over the listeners fixture (tests/fixtures/listeners/proc):
// where the workers are threads of process 101 (its instance 100), each
// socket's owner is the thread the accept sensor says accepts on it.
#include "agent/daemon/listener_scan.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// What the accept sensor reports, as a test sets it; Forget() drops the
// entries as the BPF map's deletes do.
class FakeAcceptOwners : public AcceptOwners {
 public:
  absl::Status Watch(const std::vector<int32_t>& processes) override {
    watches.push_back(processes);
    return watch_status;
  }
  absl::StatusOr<absl::flat_hash_map<uint64_t, AcceptOwner>> Read() override {
    ++reads;
    return owners;
  }
  void Forget(const std::vector<uint64_t>& inodes) override {
    for (uint64_t inode : inodes) {
      owners.erase(inode);
      forgotten.push_back(inode);
    }
  }
  std::string source() const override { return "fake"; }

  absl::Status watch_status;
  absl::flat_hash_map<uint64_t, AcceptOwner> owners;
  std::vector<std::vector<int32_t>> watches;
  std::vector<uint64_t> forgotten;
  int reads = 0;
};

Target WorkerThread(int32_t tid, int32_t process = 101) {
  Target t;
  t.pid = tid;
  t.process = process;
  t.comm = "haproxy";
  t.role = TargetRole::kWorker;
  t.instance = 100;
  return t;
}

const ListenGroup* Port80(const ListenerScan& scan) {
  for (const ListenGroup& group : scan.groups()) {
    if (group.key.address.port == 80 && group.sockets.size() == 3) {
      return &group;
    }
  }
  return nullptr;
}

class ListenerScanTest : public ::testing::Test {
 protected:
  const std::vector<Target> threads_ = {WorkerThread(1011), WorkerThread(1012)};
  FakeAcceptOwners accepts_;
  ListenerScan scan_{FixturePath("listeners/proc"), 5, &accepts_};
  std::vector<std::string> errors_;
};

TEST_F(ListenerScanTest, EachSocketIsOwnedByTheThreadThatAcceptsOnIt) {
  accepts_.owners[5001] = {.process = 101, .tid = 1011};
  accepts_.owners[5002] = {.process = 101, .tid = 1012};
  accepts_.owners[5003] = {.process = 101, .tid = 1011, .shared = true};
  scan_.Refresh(threads_, &errors_);
  EXPECT_THAT(accepts_.watches, ElementsAre(ElementsAre(101)));
  const ListenGroup* group = Port80(scan_);
  ASSERT_NE(group, nullptr);
  EXPECT_TRUE(group->thread_workers);
  ASSERT_EQ(group->sockets.size(), 3u);
  EXPECT_EQ(group->sockets[0].owner_pid, 1011);
  EXPECT_EQ(group->sockets[1].owner_pid, 1012);
  EXPECT_EQ(group->sockets[2].owner_pid, 0);
  EXPECT_TRUE(group->sockets[2].shared);
  EXPECT_FALSE(group->sockets[0].shared);
  // The policy sees the same.
  const ListenGroupSample sample = SampleOf(*group);
  EXPECT_TRUE(sample.thread_workers);
  EXPECT_EQ(sample.sockets[1].owner_pid, 1012);
  EXPECT_TRUE(sample.sockets[2].shared);

  // Owners are read every scan, the watch set only changes with the
  // processes: thread 1012 moves its accepts to 5003's entry.
  accepts_.owners[5003] = {.process = 101, .tid = 1012};
  scan_.Refresh(threads_, &errors_);
  EXPECT_EQ(accepts_.watches.size(), 1u);
  EXPECT_EQ(accepts_.reads, 2);
  EXPECT_EQ(Port80(scan_)->sockets[2].owner_pid, 1012);
  EXPECT_FALSE(Port80(scan_)->sockets[2].shared);
}

// A thread that exited owns nothing: its socket is learnt afresh from the
// next accept; an entry of another process (a reload's old one, dropped)
// is not believed.
TEST_F(ListenerScanTest, AnExitedThreadsSocketIsForgotten) {
  accepts_.owners[5001] = {.process = 101, .tid = 1011};
  accepts_.owners[5002] = {.process = 101, .tid = 1099};
  accepts_.owners[5003] = {.process = 77, .tid = 78};
  scan_.Refresh(threads_, &errors_);
  const ListenGroup* group = Port80(scan_);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->sockets[0].owner_pid, 1011);
  EXPECT_EQ(group->sockets[1].owner_pid, 0);
  EXPECT_EQ(group->sockets[2].owner_pid, 0);
  EXPECT_THAT(accepts_.forgotten, ElementsAre(5002));
}

// A reload: the instance's new process (102) takes over the sockets, and
// what the old one's threads accepted on no longer says which thread will:
// only the new process's threads own sockets from then on.
TEST_F(ListenerScanTest, AReloadsNewProcessOwnsWhatItsThreadsAcceptOn) {
  accepts_.owners[5001] = {.process = 101, .tid = 1011};
  accepts_.owners[5002] = {.process = 101, .tid = 1012};
  scan_.Refresh(threads_, &errors_);
  ASSERT_EQ(Port80(scan_)->sockets[0].owner_pid, 1011);

  std::vector<Target> both = threads_;
  both.push_back(WorkerThread(1021, 102));
  accepts_.owners[5002] = {.process = 102, .tid = 1021};
  scan_.Refresh(both, &errors_);
  EXPECT_THAT(accepts_.watches.back(), ElementsAre(101, 102));
  const ListenGroup* group = Port80(scan_);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->sockets[0].owner_pid, 0) << "the old process's";
  EXPECT_EQ(group->sockets[1].owner_pid, 1021);
  EXPECT_THAT(accepts_.forgotten, IsEmpty());
}

// Without the sensor (BPF refused) the sockets have no owner and the scan
// says why once per change, not a wrong owner: the process's own epoll
// sets hold every socket.
TEST_F(ListenerScanTest, WithoutTheSensorNoSocketHasAnOwner) {
  accepts_.watch_status = absl::FailedPreconditionError("bpf unavailable: x");
  accepts_.owners[5001] = {.process = 101, .tid = 1011};
  scan_.Refresh(threads_, &errors_);
  const ListenGroup* group = Port80(scan_);
  ASSERT_NE(group, nullptr);
  for (const GroupSocket& socket : group->sockets) {
    EXPECT_EQ(socket.owner_pid, 0) << socket.inode;
  }
  EXPECT_EQ(accepts_.reads, 0);
  bool said = false;
  for (const std::string& error : errors_) {
    said |= error.find("not steered: bpf unavailable: x") != std::string::npos;
  }
  EXPECT_TRUE(said) << ::testing::PrintToString(errors_);
}

// Processes are not thread workers: no watch, no read, the epoll owner.
TEST_F(ListenerScanTest, NoThreadWorkersNoSensor) {
  scan_.Refresh({}, &errors_);
  EXPECT_THAT(accepts_.watches, IsEmpty());
  EXPECT_EQ(accepts_.reads, 0);
  EXPECT_THAT(scan_.groups(), IsEmpty());
}

}  // namespace
}  // namespace locus
