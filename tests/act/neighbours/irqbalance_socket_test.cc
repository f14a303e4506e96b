// The real ops' lookups on a fixture /proc and a scratch run directory:
// which irqbalance, which socket, and which sockets are refused. Talking
// through a socket needs root (irqbalance_privileged_test.cc).
#include "agent/act/neighbours/irqbalance_socket.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/fixture_process.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A listening socket bound at `path`, held by this process.
UniqueFd Listen(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  EXPECT_EQ(listen(fd.get(), 1), 0);
  return fd;
}

// irqbalance's abstract socket (108 zero bytes, shown as '@'), listening,
// as a line of /proc/PID/net/unix.
std::string AbstractListening() {
  return absl::StrCat(
      "0000000000000000: 00000002 00000000 00010000 0001 01 14598815 ",
      std::string(108, '@'), "\n");
}

class IrqbalanceSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFixtureProcess(proc(), {.pid = 1, .comm = "init"});
    WriteFixtureProcess(proc(), {.pid = 77, .comm = "irqbalance"});
    tree_.Write("proc/self/stat", FixtureStatLine(5, "locusd", 'R'));
    std::filesystem::create_directories(run_dir());
    chmod(run_dir().c_str(), 0755);
  }
  std::string proc() const { return tree_.root() + "/proc"; }
  std::string run_dir() const { return tree_.root() + "/run/irqbalance"; }
  absl::StatusOr<std::optional<IrqbalanceInstance>> Find() {
    return MakeIrqbalanceSocketOps(proc(), run_dir())->Find();
  }

  TempTree tree_;
};

TEST_F(IrqbalanceSocketTest, NoneRunning) {
  tree_.Remove("proc/77/stat");
  auto found = Find();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->has_value());
  // A zombie is not running either: its socket is closed.
  tree_.Write("proc/77/stat", FixtureStatLine(77, "irqbalance", 'Z'));
  found = Find();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->has_value());
}

TEST_F(IrqbalanceSocketTest, TwoRunningIsAnError) {
  WriteFixtureProcess(proc(), {.pid = 78, .comm = "irqbalance"});
  auto found = Find();
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(),
              HasSubstr("2 irqbalance processes run as root (pids 77, 78)"));
}

// Issue #39: a user's process named irqbalance beside the real one is not a
// second irqbalance, and alone it is none; either way it is named.
TEST_F(IrqbalanceSocketTest, AUsersLookAlikeIsNotCountedButNamed) {
  WriteFixtureProcess(
      proc(), {.pid = 78, .comm = "irqbalance", .uid = 65534, .euid = 65534});
  tree_.Write("proc/77/net/unix", AbstractListening());
  auto ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  auto found = ops->Find();
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, (IrqbalanceInstance{77, "@"}));
  EXPECT_THAT(ops->LookAlikes(),
              ElementsAre(HasSubstr("a process named irqbalance (pid 78, uid "
                                    "65534) is not root's")));

  tree_.Remove("proc/77/stat");
  ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  found = ops->Find();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->has_value()) << "only the look-alike: none runs";
  EXPECT_THAT(ops->LookAlikes(), ElementsAre(HasSubstr("pid 78")));
}

// The irqbalance found last is checked again each Find, as root's too: a
// user's process that took its pid (another start time) is not it.
TEST_F(IrqbalanceSocketTest, ThePidFoundLastMustStillBeRoots) {
  tree_.Write("proc/77/net/unix", AbstractListening());
  auto ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  auto found = ops->Find();
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  WriteFixtureProcess(proc(), {.pid = 77,
                               .comm = "irqbalance",
                               .uid = 1000,
                               .euid = 1000,
                               .start_time = 9000000});
  found = ops->Find();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->has_value());
  EXPECT_THAT(ops->LookAlikes(), ElementsAre(HasSubstr("pid 77, uid 1000")));
}

TEST_F(IrqbalanceSocketTest, NoSocketSaysWhatToDo) {
  auto found = Find();
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(found.status().message(),
              AllOf(HasSubstr("irqbalance (pid 77) has no control socket"),
                    HasSubstr(run_dir() + "/irqbalance77.sock"),
                    HasSubstr("coexist.irqbalance: off")));
}

TEST_F(IrqbalanceSocketTest, AbstractSocketFromItsNetUnix) {
  const std::string listening = absl::StrCat(
      "Num       RefCount Protocol Flags    Type St Inode Path\n",
      AbstractListening(),
      "0000000000000000: 00000003 00000000 00000000 0001 03 14598816\n");
  tree_.Write("proc/77/net/unix", listening);
  auto found = Find();
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, (IrqbalanceInstance{77, "@"}));
  // Connected but not listening, or another name: not irqbalance's.
  tree_.Write("proc/77/net/unix",
              absl::StrCat("0000000000000000: 00000002 00000000 00000000 0001 "
                           "03 1 ",
                           std::string(108, '@'), "\n",
                           "0000000000000000: 00000002 00000000 00010000 0001 "
                           "01 2 @irqbalance\n"));
  EXPECT_FALSE(Find().ok());
}

// Its interval as its command line set it, read once for that irqbalance:
// what its first answer may wait for (irqbalance_args.h).
TEST_F(IrqbalanceSocketTest, TheIntervalFromItsCommandLine) {
  tree_.Write("proc/77/net/unix", AbstractListening());
  tree_.Write("proc/77/cmdline",
              std::string("/usr/sbin/irqbalance\0--foreground\0--interval="
                          "40\0",
                          48));
  auto ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  auto found = ops->Find();
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ(**found, (IrqbalanceInstance{77, "@", 40}));
  tree_.Remove("proc/77/cmdline");
  found = ops->Find();
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ((*found)->sleep_seconds, 40) << "not read again";
  found = MakeIrqbalanceSocketOps(proc(), run_dir())->Find();
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ((*found)->sleep_seconds, 0) << "unreadable: unknown";
}

TEST_F(IrqbalanceSocketTest, SocketFileMustBeRootsInRootsDirectory) {
  const std::string path = run_dir() + "/irqbalance77.sock";
  UniqueFd server = Listen(path);
  auto found = Find();
  if (geteuid() != 0) {
    ASSERT_FALSE(found.ok());
    EXPECT_THAT(found.status().message(),
                AllOf(HasSubstr(path), HasSubstr(" is owned by uid "),
                      HasSubstr("not root")));
    return;
  }
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, (IrqbalanceInstance{77, path}));

  chmod(run_dir().c_str(), 0777);
  found = Find();
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(),
              AllOf(HasSubstr("is not a directory only root can write to"),
                    HasSubstr("mode 0777")));
  chmod(run_dir().c_str(), 0775);
  EXPECT_FALSE(Find().ok()) << "group-writable";

  chmod(run_dir().c_str(), 0755);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  found = Find();
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(), HasSubstr("is owned by uid 65534"));
}

TEST_F(IrqbalanceSocketTest, NotASocketIsRefused) {
  tree_.Write("run/irqbalance/irqbalance77.sock", "x");
  auto found = Find();
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(), HasSubstr("is not a socket"));
}

TEST_F(IrqbalanceSocketTest, StartRefusesEmptyAndLongCommands) {
  auto ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  const IrqbalanceInstance instance{77, run_dir() + "/irqbalance77.sock"};
  UniqueFd server = Listen(instance.socket);
  for (const std::string& command :
       {std::string(), std::string(kMaxIrqbalanceCommandBytes + 1, '1')}) {
    auto started = ops->Start(instance, command);
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  }
  // Nothing connected.
  pollfd waiting{server.get(), POLLIN, 0};
  EXPECT_EQ(poll(&waiting, 1, 0), 0);
}

TEST_F(IrqbalanceSocketTest, StartChecksThePeer) {
  auto ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  const IrqbalanceInstance instance{77, run_dir() + "/irqbalance77.sock"};
  auto started = ops->Start(instance, "setup");
  ASSERT_FALSE(started.ok()) << "nothing listens";
  EXPECT_THAT(started.status().message(),
              HasSubstr("irqbalance (pid 77): connect to "));

  UniqueFd server = Listen(instance.socket);
  started = ops->Start(instance, "setup");
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(started.status().message(),
              AllOf(HasSubstr(absl::StrCat("is held by pid ", getpid())),
                    HasSubstr("not by irqbalance (pid 77) as root")));
}

// The socket's listener is irqbalance's pid but runs as nobody (a process
// that dropped root, or a pid reused by a user's): nothing is sent.
TEST_F(IrqbalanceSocketTest, StartRefusesAPeerThatIsNotRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "setuid to nobody needs root";
  const std::string dir = tree_.root() + "/open";
  std::filesystem::create_directories(dir);
  chmod(tree_.root().c_str(), 0755);
  chmod(dir.c_str(), 0777);
  const std::string path = dir + "/irqbalance.sock";
  const pid_t child = fork();
  if (child == 0) {
    // Its credentials at listen() are what SO_PEERCRED reports.
    if (setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0) {
      _exit(1);
    }
    UniqueFd fd = Listen(path);
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  for (int i = 0; i < 200 && access(path.c_str(), F_OK) != 0; ++i) {
    usleep(10000);
  }
  auto ops = MakeIrqbalanceSocketOps(proc(), run_dir());
  auto started = ops->Start(IrqbalanceInstance{child, path}, "setup");
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(
      started.status().message(),
      AllOf(HasSubstr(absl::StrCat("is held by pid ", child, " uid 65534")),
            HasSubstr("nothing sent")));
}

}  // namespace
}  // namespace locus
