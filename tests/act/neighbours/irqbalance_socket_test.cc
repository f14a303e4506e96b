// The real ops' lookups on a fixture /proc and a scratch run directory:
// which irqbalance, which socket, and which sockets are refused. Talking
// through a socket needs root (irqbalance_privileged_test.cc).
#include "agent/act/neighbours/irqbalance_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A /proc/PID/stat line as the kernel writes it (52 fields).
std::string StatLine(int pid, const std::string& comm, char state) {
  return absl::StrCat(
      pid, " (", comm, ") ", std::string(1, state),
      " 1 77 77 0 -1 4194560 101 0 0 0 5 7 0 0 20 0 1 0 8649819 3133440 390 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 1 1 1 1 "
      "1 1 1 0\n");
}

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

class IrqbalanceSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("proc/1/stat", StatLine(1, "init", 'S'));
    tree_.Write("proc/77/stat", StatLine(77, "irqbalance", 'S'));
    tree_.Write("proc/self/stat", StatLine(5, "locusd", 'R'));
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
  tree_.Write("proc/77/stat", StatLine(77, "irqbalance", 'Z'));
  found = Find();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->has_value());
}

TEST_F(IrqbalanceSocketTest, TwoRunningIsAnError) {
  tree_.Write("proc/78/stat", StatLine(78, "irqbalance", 'S'));
  auto found = Find();
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(),
              HasSubstr("2 irqbalance processes run (pids 77, 78)"));
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
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 14598815 ",
      std::string(108, '@'), "\n",
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

}  // namespace
}  // namespace locus
