// bpf/accepts.bpf.c on the real kernel: threads of this process accept on
// loopback listeners, a forked child on a shared one, and Read() must name
// exactly the thread (gettid) that called, per listening socket inode
// (fstat's st_ino). Needs root (CAP_BPF, CAP_PERFMON).
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "agent/sensors/accept_owners.h"
#include "agent/sensors/accept_owners_bpf.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/loopback_listener.h"

namespace locus {

// Readable failures (ADL finds it beside AcceptOwner).
void PrintTo(const AcceptOwner& o, std::ostream* os) {
  *os << "{process " << o.process << ", tid " << o.tid
      << (o.shared ? ", shared}" : "}");
}

namespace {

using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// A thread that calls accept (or accept4) once on `fd` as it starts. What
// it saw is read after Join.
class AcceptThread {
 public:
  explicit AcceptThread(int fd, bool use_accept4 = false)
      : thread_([this, fd, use_accept4] {
          tid_ = gettid();
          int got = use_accept4 ? accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)
                                : accept(fd, nullptr, nullptr);
          err_ = got < 0 ? errno : 0;
          accepted_.reset(got);
        }) {}
  ~AcceptThread() {
    if (thread_.joinable()) thread_.join();
  }

  // Its tid, once it has returned from accept.
  pid_t Join() {
    thread_.join();
    return tid_;
  }
  bool accepted() const { return accepted_.valid(); }
  int err() const { return err_; }

 private:
  pid_t tid_ = 0;
  int err_ = 0;
  UniqueFd accepted_;
  std::thread thread_;  // last: starts once the rest is built
};

// Ids of the BPF programs loaded now whose name is `name`.
std::set<uint32_t> ProgramIds(const std::string& name) {
  std::set<uint32_t> ids;
  uint32_t id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    UniqueFd fd(bpf_prog_get_fd_by_id(id));
    if (!fd.valid()) continue;  // unloaded meanwhile
    bpf_prog_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) == 0 &&
        name == info.name) {
      ids.insert(id);
    }
  }
  return ids;
}

class AcceptOwnersPrivilegedTest : public testing::Test {
 protected:
  void SetUp() override {
    owners_ = MakeAcceptOwners(/*disable_bpf=*/false);
    if (owners_->source() != kAcceptOwnersSourceBpf) {
      if (owners_->source().find(std::strerror(EPERM)) != std::string::npos) {
        GTEST_SKIP() << "BPF refused here: " << owners_->source();
      }
      FAIL() << "accepts.bpf.c did not load: " << owners_->source();
    }
    ASSERT_TRUE(owners_->Watch({getpid()}).ok());
  }
  void TearDown() override {
    if (owners_) {
      EXPECT_TRUE(owners_->Watch({}).ok());
    }
  }

  absl::flat_hash_map<uint64_t, AcceptOwner> Owners() {
    auto read = owners_->Read();
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? *read : absl::flat_hash_map<uint64_t, AcceptOwner>();
  }

  std::unique_ptr<AcceptOwners> owners_;
};

TEST_F(AcceptOwnersPrivilegedTest, EachThreadOwnsItsListener) {
  LoopbackListener a = ListenOnLoopback(5), b = ListenOnLoopback(5);
  // Both threads may be blocked in accept before the connections come.
  AcceptThread ta(a.fd.get()), tb(b.fd.get(), /*use_accept4=*/true);
  UniqueFd ca = ConnectTo(a), cb = ConnectTo(b);
  pid_t tid_a = ta.Join(), tid_b = tb.Join();
  ASSERT_TRUE(ta.accepted()) << std::strerror(ta.err());
  ASSERT_TRUE(tb.accepted()) << std::strerror(tb.err());
  ASSERT_NE(tid_a, tid_b);

  EXPECT_THAT(
      Owners(),
      UnorderedElementsAre(Pair(a.inode, AcceptOwner{getpid(), tid_a, false}),
                           Pair(b.inode, AcceptOwner{getpid(), tid_b, false})));
}

TEST_F(AcceptOwnersPrivilegedTest, ListenerOfTwoThreadsIsSharedUntilForgotten) {
  LoopbackListener l = ListenOnLoopback(5);
  UniqueFd c1 = ConnectTo(l);
  AcceptThread first(l.fd.get());
  pid_t tid1 = first.Join();
  ASSERT_TRUE(first.accepted()) << std::strerror(first.err());
  EXPECT_THAT(Owners(), UnorderedElementsAre(
                            Pair(l.inode, AcceptOwner{getpid(), tid1, false})));

  UniqueFd c2 = ConnectTo(l);
  AcceptThread second(l.fd.get());
  pid_t tid2 = second.Join();
  ASSERT_TRUE(second.accepted()) << std::strerror(second.err());
  EXPECT_THAT(Owners(), UnorderedElementsAre(
                            Pair(l.inode, AcceptOwner{getpid(), tid2, true})));

  owners_->Forget({l.inode});
  EXPECT_THAT(Owners(), IsEmpty());
  UniqueFd c3 = ConnectTo(l);
  UniqueFd s3(accept(l.fd.get(), nullptr, nullptr));
  ASSERT_TRUE(s3.valid());
  EXPECT_THAT(Owners(), UnorderedElementsAre(Pair(
                            l.inode, AcceptOwner{getpid(), gettid(), false})));
}

TEST_F(AcceptOwnersPrivilegedTest, RecordsAtEntryAndOnlySockets) {
  // An accept that fails (nothing pending) still says who polls it.
  LoopbackListener l = ListenOnLoopback(5);
  ASSERT_EQ(fcntl(l.fd.get(), F_SETFL, O_NONBLOCK), 0);
  AcceptThread poller(l.fd.get(), /*use_accept4=*/true);
  pid_t tid = poller.Join();
  ASSERT_FALSE(poller.accepted());
  EXPECT_EQ(poller.err(), EAGAIN);

  // accept on a pipe (ENOTSOCK) records nothing.
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  ASSERT_LT(accept(r.get(), nullptr, nullptr), 0);
  ASSERT_LT(accept(-1, nullptr, nullptr), 0);

  EXPECT_THAT(Owners(), UnorderedElementsAre(
                            Pair(l.inode, AcceptOwner{getpid(), tid, false})));
}

// A forked child that accepts once on `fd` each time it reads 'a' from
// `cmd`, answering 'd' on `done`; EOF or anything else ends it.
[[noreturn]] void ChildLoop(int fd, int cmd, int done) {
  char c = 0;
  while (read(cmd, &c, 1) == 1 && c == 'a') {
    int got = accept(fd, nullptr, nullptr);
    if (got >= 0) close(got);
    char d = got >= 0 ? 'd' : 'e';
    if (write(done, &d, 1) != 1) break;
  }
  _exit(0);
}

TEST_F(AcceptOwnersPrivilegedTest, OnlyWatchedProcessesAreRecorded) {
  // Inherited: the child accepts on the same socket.
  LoopbackListener l = ListenOnLoopback(5);
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe2(to_child, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(from_child, O_CLOEXEC), 0);
  UniqueFd cmd_r(to_child[0]), cmd_w(to_child[1]);
  UniqueFd done_r(from_child[0]), done_w(from_child[1]);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cmd_w.reset();  // else it never reads EOF
    done_r.reset();
    ChildLoop(l.fd.get(), cmd_r.get(), done_w.get());
  }
  cmd_r.reset();
  done_w.reset();
  auto child_accepts = [&] {
    UniqueFd c = ConnectTo(l);
    char cmd = 'a', done = 0;
    ASSERT_EQ(write(cmd_w.get(), &cmd, 1), 1);
    ASSERT_EQ(read(done_r.get(), &done, 1), 1);
    ASSERT_EQ(done, 'd');
  };
  auto parent_accepts = [&] {
    UniqueFd c = ConnectTo(l);
    UniqueFd s(accept(l.fd.get(), nullptr, nullptr));
    ASSERT_TRUE(s.valid());
  };

  // Only the child watched: the parent's accept leaves nothing, the child's
  // is recorded (single-threaded: its tid is its pid).
  ASSERT_TRUE(owners_->Watch({child}).ok());
  parent_accepts();
  EXPECT_THAT(Owners(), IsEmpty());
  child_accepts();
  EXPECT_THAT(Owners(), UnorderedElementsAre(
                            Pair(l.inode, AcceptOwner{child, child, false})));

  // Dropping the child forgets its entry and its later accepts.
  ASSERT_TRUE(owners_->Watch({getpid()}).ok());
  EXPECT_THAT(Owners(), IsEmpty());
  child_accepts();
  EXPECT_THAT(Owners(), IsEmpty());
  parent_accepts();
  EXPECT_THAT(Owners(), UnorderedElementsAre(Pair(
                            l.inode, AcceptOwner{getpid(), gettid(), false})));

  // Both watched, as a reload's old and new worker processes are: a
  // socket that another process accepts on now is that process's, not
  // shared (HAProxy hands its sockets to the new process).
  ASSERT_TRUE(owners_->Watch({getpid(), child}).ok());
  child_accepts();
  EXPECT_THAT(Owners(), UnorderedElementsAre(
                            Pair(l.inode, AcceptOwner{child, child, false})));

  cmd_w.reset();  // EOF: the child exits
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(AcceptOwnersPrivilegedTest, EmptyWatchDetachesAndForgets) {
  ASSERT_TRUE(owners_->Watch({}).ok());
  EXPECT_THAT(Owners(), IsEmpty());
  std::set<uint32_t> before = ProgramIds("accept_enter");
  ASSERT_TRUE(owners_->Watch({getpid()}).ok());
  std::set<uint32_t> ours;
  for (uint32_t id : ProgramIds("accept_enter")) {
    if (!before.contains(id)) ours.insert(id);
  }
  ASSERT_EQ(ours.size(), 1u) << "the program is attached while watching";

  LoopbackListener l = ListenOnLoopback(5);
  UniqueFd c = ConnectTo(l);
  UniqueFd s(accept(l.fd.get(), nullptr, nullptr));
  ASSERT_TRUE(s.valid());
  EXPECT_EQ(Owners().size(), 1u);

  ASSERT_TRUE(owners_->Watch({}).ok());
  EXPECT_THAT(Owners(), IsEmpty());
  // Detached at once; the kernel frees the program after an RCU grace
  // period.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = true;
    for (uint32_t id : ProgramIds("accept_enter")) gone &= !ours.contains(id);
    if (!gone) usleep(10'000);
  }
  EXPECT_TRUE(gone) << "program " << *ours.begin() << " still loaded after 5 s";
  // Watching again starts from an empty map.
  ASSERT_TRUE(owners_->Watch({getpid()}).ok());
  EXPECT_THAT(Owners(), IsEmpty());
}

TEST_F(AcceptOwnersPrivilegedTest, RejectsBadProcessSetsAndKeepsWatching) {
  // More processes than the program's map holds (4096), a pid that is none.
  std::vector<int32_t> many;
  for (int32_t i = 1; i <= 5000; ++i) many.push_back(i);
  EXPECT_TRUE(absl::IsInvalidArgument(owners_->Watch(many)));
  EXPECT_TRUE(absl::IsInvalidArgument(owners_->Watch({getpid(), -1})));

  LoopbackListener l = ListenOnLoopback(5);
  UniqueFd c = ConnectTo(l);
  UniqueFd s(accept(l.fd.get(), nullptr, nullptr));
  ASSERT_TRUE(s.valid());
  EXPECT_THAT(Owners(), UnorderedElementsAre(Pair(
                            l.inode, AcceptOwner{getpid(), gettid(), false})));
}

TEST(AcceptOwnersDisabledTest, WatchSaysBpfDisabled) {
  std::unique_ptr<AcceptOwners> owners = MakeAcceptOwners(/*disable_bpf=*/true);
  EXPECT_EQ(owners->source(), "bpf disabled");
  absl::Status watch = owners->Watch({getpid()});
  EXPECT_TRUE(absl::IsFailedPrecondition(watch)) << watch;
  EXPECT_THAT(std::string(watch.message()), testing::HasSubstr("bpf disabled"));
  EXPECT_TRUE(owners->Watch({}).ok());
  owners->Forget({1});
  auto read = owners->Read();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(*read, IsEmpty());
}

}  // namespace
}  // namespace locus
