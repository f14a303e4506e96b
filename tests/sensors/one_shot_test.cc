// locusd's one-shot modes through their library entry points.
#include "agent/main/one_shot.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using testing::HasSubstr;
using testing::Not;

// Runs `fn` in a child whose effective capabilities are all dropped; returns
// (exit code, what it wrote to err).
template <typename Fn>
std::pair<int, std::string> WithoutCapabilities(Fn fn) {
  int pipefd[2];
  EXPECT_EQ(pipe(pipefd), 0);
  pid_t child = fork();
  if (child == 0) {
    close(pipefd[0]);
    __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3,
                                  .pid = 0};
    __user_cap_data_struct d[2] = {};
    syscall(SYS_capget, &h, d);
    for (auto& w : d) w.effective = 0;
    if (syscall(SYS_capset, &h, d) != 0) _exit(99);
    std::ostringstream out, err;
    int rc = fn(out, err);
    std::string e = err.str();
    (void)!write(pipefd[1], e.data(), e.size());
    _exit(rc);
  }
  close(pipefd[1]);
  std::string err;
  char buf[512];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) err.append(buf, n);
  close(pipefd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

TEST(OneShotTest, ProbeWithoutCapabilitiesExits1NamingThem) {
  auto [rc, err] = WithoutCapabilities([](std::ostream& out, std::ostream& e) {
    return RunProbe(OneShotOptions{}, out, e);
  });
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(err, HasSubstr("missing capability CAP_BPF"));
  EXPECT_THAT(err, HasSubstr("CAP_PERFMON"));
  EXPECT_THAT(err, Not(HasSubstr("CAP_SYS_ADMIN"))) << "not needed since 5.8";
}

TEST(OneShotTest, ObserveWithoutCapabilitiesExits1) {
  auto [rc, err] = WithoutCapabilities([](std::ostream& out, std::ostream& e) {
    OneShotOptions o;
    o.observe_seconds = 0.1;
    return RunObserve(o, out, e);
  });
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(err, HasSubstr("CAP_BPF"));
}

}  // namespace
}  // namespace locus
