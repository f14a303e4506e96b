// After a crash, `locusd --restore`'s path detaches a steering program: a
// child (standing for nginx) holds two reuseport listeners on 127.0.0.1;
// ConnectionSteering attaches through the real kernel ops with the real
// journal, its state is then dropped without detaching (the crash), and the
// restore, given only the journal file, finds the group in /proc and
// detaches it. Asserted outside Locus: SO_DETACH_REUSEPORT_BPF through a
// fresh duplicate of the child's socket finds nothing attached any more.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "agent/act/connections/connection_steering.h"
#include "agent/act/connections/reuseport_kernel.h"
#include "agent/act/connections/reuseport_restore.h"
#include "agent/act/connections/steering_journal.h"
#include "agent/act/restore.h"
#include "gtest/gtest.h"
#include "tests/act/connections/loopback.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

struct Hello {
  uint16_t port = 0;
  int fds[2] = {-1, -1};
  uint64_t inodes[2] = {0, 0};
};

TEST(SteeringRestorePrivilegedTest, RestoreAfterACrashDetachesTheProgram) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF and pidfd_getfd";
  int replies[2], hold[2];
  ASSERT_EQ(pipe2(replies, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(hold, O_CLOEXEC), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);
    close(hold[1]);
    Hello hello;
    hello.fds[0] = ReuseportListener(0, 16, 0, &hello.port);
    hello.fds[1] = ReuseportListener(hello.port, 16);
    for (int i = 0; i < 2; ++i) {
      struct stat st;
      fstat(hello.fds[i], &st);
      hello.inodes[i] = st.st_ino;
    }
    if (write(replies[1], &hello, sizeof(hello)) != sizeof(hello)) _exit(1);
    char c;
    while (read(hold[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(replies[1]);
  close(hold[0]);
  Hello hello;
  ASSERT_EQ(read(replies[0], &hello, sizeof(hello)),
            static_cast<ssize_t>(sizeof(hello)));
  ASSERT_GE(hello.fds[1], 0) << "child could not listen";

  TempTree tree;
  JournalOptions options;
  options.path = tree.root() + "/journal";
  std::unique_ptr<ReuseportOps> ops = MakeKernelReuseportOps();
  ListenGroup group;
  struct stat ns;
  ASSERT_EQ(stat("/proc/self/ns/net", &ns), 0);
  group.key.netns = ns.st_ino;
  group.key.address.family = AF_INET;
  in_addr_t loopback = htonl(INADDR_LOOPBACK);
  std::memcpy(group.key.address.bytes.data(), &loopback, 4);
  group.key.address.port = hello.port;
  for (int i = 0; i < 2; ++i) {
    group.sockets.push_back({hello.inodes[i], child, child, hello.fds[i]});
  }
  {
    auto journal = Journal::Open(options);
    ASSERT_TRUE(journal.ok()) << journal.status();
    JournalSteering journaled(journal->get());
    ConnectionSteering steering(ops.get(), &journaled);
    GroupSteering plan;
    plan.nodes[0].inodes = {hello.inodes[0]};
    plan.nodes[1].inodes = {hello.inodes[1]};
    steering.Apply({group}, {0, 1}, {{group.key, plan}});
    SteeringGroupStatus status = steering.status().at(group.key);
    if (!status.attached) {
      close(hold[1]);
      waitpid(child, nullptr, 0);
      GTEST_SKIP() << "cannot attach here: " << status.problem;
    }
    // The crash: state dropped, the program left attached.
  }
  ASSERT_EQ(ReadJournal(options.path)->steered.size(), 1u);

  std::unique_ptr<ListenerFinder> finder = MakeProcListenerFinder("/proc");
  SteeringRestoreOps steering{ops.get(), finder.get()};
  FakeThreadOps threads;
  FakeIrqOps irqs;
  auto report = RestoreJournal(options, threads, irqs, &steering);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->errors[0];
  EXPECT_EQ(report->groups_detached, 1);
  EXPECT_NE(access(options.path.c_str(), F_OK), 0) << "journal not cleared";

  // Nothing attached any more: a detach through the child's socket finds
  // none (ENOENT).
  UniqueFd dup;
  ASSERT_EQ(ops->Duplicate(child, hello.fds[0], hello.inodes[0], &dup), 0);
  EXPECT_EQ(ops->Detach(dup.get()), ENOENT);
  close(hold[1]);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace locus
