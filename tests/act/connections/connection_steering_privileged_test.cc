// ConnectionSteering with the real kernel ops on this kernel: a child process
// (standing for nginx) listens on two reuseport sockets of 127.0.0.1; the
// actuator, in the test process, duplicates them from the child through
// pidfd_getfd, fills the program's maps with CPU 0 -> node 0, CPU 1 -> node 1
// and socket i on node i, and attaches. Clients pinned to each CPU connect
// (on loopback the SYN is handled on the connecting CPU); the child accepts
// and reports which socket got each connection. What is asserted is read
// outside Locus: the child's accept counts, refused connects, and the fds of
// the test process.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "agent/act/connections/connection_steering.h"
#include "agent/act/connections/reuseport_kernel.h"
#include "gtest/gtest.h"
#include "tests/act/connections/fake_reuseport_ops.h"
#include "tests/act/connections/loopback.h"

namespace locus {
namespace {

constexpr int kConnections = 64;

// How many fds of this process name one of `inodes`' sockets: a duplicate
// the actuator kept would keep a socket the child closed listening.
int HeldSockets(const uint64_t (&inodes)[2]) {
  int held = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (dirent* entry = readdir(dir)) {
    char link[64] = {};
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    if (readlink(path.c_str(), link, sizeof(link) - 1) <= 0) continue;
    for (uint64_t inode : inodes) {
      held += std::string(link) == "socket:[" + std::to_string(inode) + "]";
    }
  }
  closedir(dir);
  return held;
}

bool WriteAll(int fd, const void* data, size_t size) {
  return write(fd, data, size) == static_cast<ssize_t>(size);
}
bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= n;
  }
  return true;
}

// What the child tells the parent once it listens.
struct Hello {
  uint16_t port = 0;
  int fds[2] = {-1, -1};
  uint64_t inodes[2] = {0, 0};
};

// The child: listens, then serves commands: 'a' accept every pending
// connection and report counts per socket, 'c' close socket 1, EOF: exit.
[[noreturn]] void Child(int commands, int replies) {
  alarm(60);  // never outlives a test that lost track of it
  Hello hello;
  hello.fds[0] =
      ReuseportListener(0, 4 * kConnections, SOCK_NONBLOCK, &hello.port);
  hello.fds[1] = ReuseportListener(hello.port, 4 * kConnections, SOCK_NONBLOCK);
  for (int i = 0; i < 2; ++i) {
    struct stat st;
    fstat(hello.fds[i], &st);
    hello.inodes[i] = st.st_ino;
  }
  WriteAll(replies, &hello, sizeof(hello));
  char command;
  while (read(commands, &command, 1) == 1) {
    int32_t counts[2] = {0, 0};
    if (command == 'c') {
      close(hello.fds[1]);
      hello.fds[1] = -1;
    }
    for (int i = 0; command == 'a' && i < 2; ++i) {
      int fd;
      while (hello.fds[i] >= 0 && (fd = accept4(hello.fds[i], nullptr, nullptr,
                                                SOCK_CLOEXEC)) >= 0) {
        close(fd);
        ++counts[i];
      }
    }
    WriteAll(replies, counts, sizeof(counts));
  }
  _exit(0);
}

class ConnectionSteeringPrivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF and pidfd_getfd";
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
      GTEST_SKIP() << "needs two online CPUs to stand for two nodes";
    }
    int commands[2], replies[2];
    ASSERT_EQ(pipe2(commands, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(replies, O_CLOEXEC), 0);
    child_ = fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      close(commands[1]);  // or it never sees EOF
      close(replies[0]);
      Child(commands[0], replies[1]);
    }
    close(commands[0]);
    close(replies[1]);
    commands_ = commands[1];
    replies_ = replies[0];
    ASSERT_TRUE(ReadAll(replies_, &hello_, sizeof(hello_)));
    ASSERT_GE(hello_.fds[1], 0) << "child could not listen";
  }

  void TearDown() override {
    if (child_ <= 0) return;
    close(commands_);
    close(replies_);
    waitpid(child_, nullptr, 0);
  }

  ListenGroup Group() const {
    struct stat ns;
    stat("/proc/self/ns/net", &ns);
    ListenGroup group;
    group.key.netns = ns.st_ino;
    group.key.address.family = AF_INET;
    in_addr_t loopback = htonl(INADDR_LOOPBACK);
    std::memcpy(group.key.address.bytes.data(), &loopback, 4);
    group.key.address.port = hello_.port;
    for (int i = 0; i < 2; ++i) {
      group.sockets.push_back(
          {hello_.inodes[i], child_, child_, hello_.fds[i]});
    }
    return group;
  }

  void Steer() {
    GroupSteering steering;
    steering.nodes[0].inodes = {hello_.inodes[0]};
    steering.nodes[1].inodes = {hello_.inodes[1]};
    steering_.Apply({Group()}, {0, 1}, {{Group().key, steering}});
    SteeringGroupStatus status = steering_.status().at(Group().key);
    ASSERT_TRUE(status.attached) << status.problem;
    EXPECT_EQ(status.sockets, 2u);
    EXPECT_EQ(journal_.records.count(Group().key), 1u);
    EXPECT_EQ(HeldSockets(hello_.inodes), 0) << "the actuator kept a duplicate";
  }

  std::array<int32_t, 2> Command(char command) {
    std::array<int32_t, 2> counts{};
    EXPECT_TRUE(WriteAll(commands_, &command, 1));
    EXPECT_TRUE(ReadAll(replies_, counts.data(), sizeof(counts)));
    return counts;
  }

  // Per child socket, how many of `n` connections from `cpu` it accepted;
  // fails the test for any refused.
  std::array<int32_t, 2> Accepted(int cpu, int n) {
    std::vector<int> clients;
    EXPECT_EQ(ConnectPinned(cpu, hello_.port, n, &clients), 0)
        << "connections from cpu " << cpu << " refused";
    std::array<int32_t, 2> counts = Command('a');
    for (int fd : clients) close(fd);
    return counts;
  }

  pid_t child_ = -1;
  int commands_ = -1;
  int replies_ = -1;
  Hello hello_;
  std::unique_ptr<ReuseportOps> ops_ = MakeKernelReuseportOps();
  std::vector<std::string> events_;
  FakeSteeringJournal journal_{&events_};
  ConnectionSteering steering_{ops_.get(), &journal_};
};

TEST_F(ConnectionSteeringPrivilegedTest, EachConnectionGoesToItsCpusNode) {
  Steer();
  for (int cpu = 0; cpu < 2; ++cpu) {
    std::array<int32_t, 2> got = Accepted(cpu, kConnections);
    EXPECT_EQ(got[0] + got[1], kConnections) << "from cpu " << cpu;
    EXPECT_GE(got[cpu] * 100, kConnections * 99) << "from cpu " << cpu;
  }
  auto counters = steering_.Counters(Group().key);
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->nodes[0].local, uint64_t{kConnections});
  EXPECT_EQ(counters->nodes[1].local, uint64_t{kConnections});

  ASSERT_TRUE(steering_.DetachAll().ok());
  EXPECT_TRUE(journal_.records.empty());
  EXPECT_EQ(HeldSockets(hello_.inodes), 0);
  // Detached: the kernel's hash spreads CPU 0's connections again.
  std::array<int32_t, 2> got = Accepted(0, kConnections);
  EXPECT_EQ(got[0] + got[1], kConnections);
  EXPECT_GT(got[1], 0) << "still steered after DetachAll";
}

TEST_F(ConnectionSteeringPrivilegedTest, AClosedWorkerSocketRefusesNothing) {
  Steer();
  // Queued on socket 1 when it closes: migrated by SELECT_OR_MIGRATE.
  std::vector<int> queued;
  ASSERT_EQ(ConnectPinned(1, hello_.port, kConnections, &queued), 0);
  Command('c');
  std::array<int32_t, 2> got = Command('a');
  for (int fd : queued) close(fd);
  if (steering_.status().at(Group().key).migrates) {
    EXPECT_EQ(got[0], kConnections) << "queued connections were reset";
  }
  // New connections of node 1 find its slot empty and go to the hash.
  got = Accepted(1, kConnections);
  EXPECT_EQ(got[0], kConnections);
  ASSERT_TRUE(steering_.DetachAll().ok());
  EXPECT_EQ(HeldSockets(hello_.inodes), 0);
}

// An experiment through the actuator and the real program: six sockets of
// one group (held by this process, which stands for nginx here: the
// actuator duplicates them from it), four treated ones on node 0 and two in
// the control arm; every CPU stands for node 0, so each treated connection
// is local. Each worker must take its fair share of the new connections,
// 1/6 +- 10 %, and the program's CONTROL counter the control sockets'.
TEST(ConnectionSteeringExperimentTest, EachWorkerOfEitherArmGetsItsFairShare) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF and pidfd_getfd";
  constexpr int kSockets = 6, kRounds = 15, kPerRound = 600;
  constexpr int kAll = kRounds * kPerRound;  // 1/6 is 1500 +- 35
  uint16_t port = 0;
  std::array<int, kSockets> fds;
  fds.fill(-1);
  ListenGroup group;
  struct stat ns;
  ASSERT_EQ(stat("/proc/self/ns/net", &ns), 0);
  group.key.netns = ns.st_ino;
  group.key.address.family = AF_INET;
  in_addr_t loopback = htonl(INADDR_LOOPBACK);
  std::memcpy(group.key.address.bytes.data(), &loopback, 4);
  for (int i = 0; i < kSockets; ++i) {
    fds[i] = ReuseportListener(port, 2 * kPerRound, SOCK_NONBLOCK, &port);
    ASSERT_GE(fds[i], 0) << std::strerror(errno);
    struct stat st;
    ASSERT_EQ(fstat(fds[i], &st), 0);
    group.sockets.push_back({st.st_ino, getpid(), getpid(), fds[i]});
  }
  group.key.address.port = port;
  GroupSteering plan;
  for (int i = 2; i < kSockets; ++i) {
    plan.nodes[0].inodes.push_back(group.sockets[i].inode);
  }
  plan.control = {group.sockets[0].inode, group.sockets[1].inode};
  std::vector<int> node_of_cpu(sysconf(_SC_NPROCESSORS_CONF), 0);

  std::unique_ptr<ReuseportOps> ops = MakeKernelReuseportOps();
  std::vector<std::string> events;
  FakeSteeringJournal journal(&events);
  ConnectionSteering steering(ops.get(), &journal);
  steering.Apply({group}, node_of_cpu, {{group.key, plan}});
  SteeringGroupStatus status = steering.status().at(group.key);
  ASSERT_TRUE(status.attached) << status.problem;
  EXPECT_EQ(status.problem, "");

  std::array<int, kSockets> got{};
  for (int round = 0; round < kRounds; ++round) {
    std::vector<int> clients;
    EXPECT_EQ(ConnectPinned(0, port, kPerRound, &clients), 0) << "refused";
    for (int i = 0; i < kSockets; ++i) {
      int fd;
      while ((fd = accept4(fds[i], nullptr, nullptr, SOCK_CLOEXEC)) >= 0) {
        close(fd);
        ++got[i];
      }
    }
    for (int fd : clients) close(fd);
  }
  EXPECT_EQ(std::accumulate(got.begin(), got.end(), 0), kAll);
  for (int i = 0; i < kSockets; ++i) {
    const double share = static_cast<double>(got[i]) / kAll;
    std::printf("socket %d (%s): %.4f of %d connections (1/6: %.4f)\n", i,
                i < 2 ? "control" : "treated", share, kAll, 1.0 / kSockets);
    EXPECT_NEAR(share * kSockets, 1.0, 0.10) << "socket " << i;
  }
  auto counters = steering.Counters(group.key);
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->nodes[0].control, static_cast<uint64_t>(got[0] + got[1]));
  EXPECT_EQ(counters->nodes[0].local,
            static_cast<uint64_t>(kAll - got[0] - got[1]));
  EXPECT_EQ(counters->nodes[0].spilled + counters->nodes[0].fallback, 0u);

  ASSERT_TRUE(steering.DetachAll().ok());
  for (int fd : fds) close(fd);
}

}  // namespace
}  // namespace locus
