// locusd steering a real nginx's new connections by node, on this machine
// shown as two nodes (tests/fixtures/split2: CPU 0 is node 0, CPU 1 is node
// 1). On loopback a SYN is handled on the connecting CPU, so a client pinned
// to CPU c "arrives" on node c. Asserted outside Locus: nginx's access log
// ($pid $remote_port) joined with each client's local port says which
// worker accepted each connection, and the worker's affinity says its node.
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/connections/loopback.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/loopback_port.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

constexpr char kNginx[] = "/usr/sbin/nginx";

// One HTTP request per connection from a process pinned to `cpu`; each
// connection's local port goes to `ports_file` as "cpu port", failures as
// "cpu fail". Returns the child's pid.
pid_t ClientsOn(int cpu, uint16_t port, int n, const std::string& ports_file) {
  pid_t child = fork();
  if (child != 0) return child;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
  FILE* out = fopen(ports_file.c_str(), "a");
  const sockaddr_in address = LoopbackAddress(port);
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char reply[512];
    const char request[] = "GET / HTTP/1.0\r\n\r\n";
    sockaddr_in local{};
    socklen_t length = sizeof(local);
    bool ok =
        connect(fd, reinterpret_cast<const sockaddr*>(&address),
                sizeof(address)) == 0 &&
        write(fd, request, sizeof(request) - 1) > 0 &&
        read(fd, reply, sizeof(reply)) > 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
    if (ok) {
      fprintf(out, "%d %d\n", cpu, ntohs(local.sin_port));
    } else {
      fprintf(out, "%d fail\n", cpu);
    }
    close(fd);
  }
  fclose(out);
  _exit(0);
}

struct Tally {
  int local = 0;   // reached a worker confined to the client CPU's node
  int remote = 0;  // reached a worker elsewhere (or not confined)
  int failed = 0;
  int unmatched = 0;  // no access log line for the port
};

class LocusdSteeringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
    ASSERT_EQ(access(kNginx, X_OK), 0) << "deploy/deps.sh installs nginx";
    std::filesystem::create_directories(dir_.File("logs"));
    port_ = UnusedLoopbackPort();
    ASSERT_GT(port_, 0) << "no free port on 127.0.0.1";
    std::ofstream(dir_.File("nginx.conf"))
        << "daemon off;\nmaster_process on;\nworker_processes 2;\n"
        << "pid " << dir_.File("nginx.pid") << ";\nerror_log "
        << dir_.File("logs/error.log") << ";\n"
        << "events { worker_connections 512; }\n"
        << "http { log_format steer '$pid $remote_port';\n"
        << "  access_log " << dir_.File("logs/access.log") << " steer;\n"
        << "  server { listen 127.0.0.1:" << port_
        << " reuseport; return 200 \"ok\"; } }\n";
    StartNginx();
  }

  void TearDown() override {
    if (agent_ > 0) Stop(agent_, SIGKILL);
    if (master_ > 0) Stop(master_, SIGTERM);
  }

  void StartNginx() {
    master_ = Spawn({kNginx, "-p", dir_.path(), "-c", dir_.File("nginx.conf")},
                    dir_.File("nginx.log"));
    ASSERT_GT(master_, 0);
    ASSERT_TRUE(WaitUntil([&] { return ChildrenOf(master_).size() == 2; },
                          absl::Seconds(10)));
  }

  pid_t StartAgent() {
    return Spawn({LOCUSD_PATH, "--sysfs_root=" + fixture_,
                  "--socket=" + dir_.File("locusd.sock"),
                  "--journal=" + dir_.File("journal"),
                  "--policy=" + dir_.File("absent.yaml"), "--tick=250ms"},
                 dir_.File("locusd.log"));
  }

  // Connections from both CPUs; returns where each went.
  Tally Connect(int per_cpu) {
    std::filesystem::remove(dir_.File("ports"));
    std::ofstream(dir_.File("logs/access.log"), std::ios::trunc).close();
    pid_t a = ClientsOn(0, port_, per_cpu, dir_.File("ports"));
    pid_t b = ClientsOn(1, port_, per_cpu, dir_.File("ports"));
    waitpid(a, nullptr, 0);
    waitpid(b, nullptr, 0);
    absl::SleepFor(absl::Milliseconds(200));  // the last log lines
    return Join();
  }

  Tally Join() {
    std::map<int, pid_t> worker_of_port;
    for (absl::string_view line :
         absl::StrSplit(ReadAll(dir_.File("logs/access.log")), '\n')) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      int pid = 0, port = 0;
      if (f.size() == 2 && absl::SimpleAtoi(f[0], &pid) &&
          absl::SimpleAtoi(f[1], &port))
        worker_of_port[port] = pid;
    }
    Tally tally;
    for (absl::string_view line :
         absl::StrSplit(ReadAll(dir_.File("ports")), '\n')) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      int cpu = 0, port = 0;
      if (f.size() != 2 || !absl::SimpleAtoi(f[0], &cpu)) continue;
      if (f[1] == "fail") {
        ++tally.failed;
        continue;
      }
      if (!absl::SimpleAtoi(f[1], &port)) continue;
      auto worker = worker_of_port.find(port);
      if (worker == worker_of_port.end()) {
        ++tally.unmatched;
        continue;
      }
      // split2: node n is CPU n alone.
      if (ThreadAffinity(worker->second) == std::vector<int>{cpu}) {
        ++tally.local;
      } else {
        ++tally.remote;
      }
    }
    return tally;
  }

  // Load from both CPUs until the agent has homed one worker on each node.
  bool WarmUp() {
    return WaitUntil(
        [&] {
          Connect(100);
          std::set<std::vector<int>> homes;
          for (pid_t w : ChildrenOf(master_)) homes.insert(ThreadAffinity(w));
          return homes == std::set<std::vector<int>>{{0}, {1}};
        },
        absl::Seconds(60));
  }

  // Without steering the kernel's hash sends about half of each CPU's
  // connections to the worker of the other node.
  void ExpectNotSteered() {
    Tally t = Connect(200);
    EXPECT_EQ(t.failed, 0);
    EXPECT_GT(t.remote, 400 / 10) << "local " << t.local;
  }

  const std::string fixture_ =
      std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/split2/sys";
  TempDir dir_;
  int port_ = 0;
  pid_t master_ = -1, agent_ = -1;
};

TEST_F(LocusdSteeringTest, ConnectionsReachAWorkerOfTheirNode) {
  agent_ = StartAgent();
  ASSERT_TRUE(WarmUp()) << ReadAll(dir_.File("locusd.log"));
  absl::SleepFor(absl::Milliseconds(500));
  Tally t = Connect(1000);
  EXPECT_EQ(t.failed, 0);
  EXPECT_LE(t.unmatched, 20);
  const int seen = t.local + t.remote;
  ASSERT_GT(seen, 1900);
  EXPECT_GE(t.local * 100, seen * 99) << t.local << " local of " << seen << "\n"
                                      << ReadAll(dir_.File("locusd.log"));
  EXPECT_THAT(ReadAll(dir_.File("journal")), ::testing::HasSubstr("R "))
      << "the attach is journaled";

  EXPECT_EQ(Stop(agent_, SIGTERM), 0);
  agent_ = -1;
  ExpectNotSteered();
}

TEST_F(LocusdSteeringTest, DoctorSeesNginxListenWithReuseport) {
  ProcessResult doctor =
      RunProcess({LOCUSD_PATH, "--doctor", "--sysfs_root=" + fixture_,
                  "--journal=" + dir_.File("journal"),
                  "--policy=" + dir_.File("absent.yaml")});
  EXPECT_THAT(doctor.out,
              ::testing::ContainsRegex(
                  "OK +reuseport: listens with reuseport on nginx [0-9]+ "
                  "127.0.0.1:" +
                  std::to_string(port_)))
      << doctor.out << doctor.err;
}

TEST_F(LocusdSteeringTest, KilledAgentsProgramIsDetachedByRestore) {
  agent_ = StartAgent();
  ASSERT_TRUE(WarmUp()) << ReadAll(dir_.File("locusd.log"));
  Stop(agent_, SIGKILL);
  agent_ = -1;
  Tally still = Connect(200);
  EXPECT_GE(still.local * 100, (still.local + still.remote) * 99)
      << "the program outlives a killed agent";

  ProcessResult restore = RunProcess(
      {LOCUSD_PATH, "--restore", "--journal=" + dir_.File("journal")});
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  ExpectNotSteered();
}

TEST_F(LocusdSteeringTest, ReloadLosesNoConnectionAndRestartIsSteeredAgain) {
  agent_ = StartAgent();
  ASSERT_TRUE(WarmUp()) << ReadAll(dir_.File("locusd.log"));
  std::filesystem::remove(dir_.File("ports"));
  pid_t a = ClientsOn(0, port_, 1500, dir_.File("ports"));
  pid_t b = ClientsOn(1, port_, 1500, dir_.File("ports"));
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_EQ(kill(master_, SIGHUP), 0);  // nginx -s reload
  waitpid(a, nullptr, 0);
  waitpid(b, nullptr, 0);
  Tally during = Join();
  EXPECT_EQ(during.failed, 0) << "connections lost across the reload";

  Stop(master_, SIGTERM);
  StartNginx();
  ASSERT_TRUE(WarmUp()) << ReadAll(dir_.File("locusd.log"));
  absl::SleepFor(absl::Milliseconds(500));
  Tally t = Connect(500);
  EXPECT_GE(t.local * 100, (t.local + t.remote) * 99)
      << "the new group is steered: " << t.local << " local, " << t.remote
      << " remote\n"
      << ReadAll(dir_.File("locusd.log"));
  EXPECT_EQ(Stop(agent_, SIGTERM), 0);
  agent_ = -1;
}

}  // namespace
}  // namespace locus
