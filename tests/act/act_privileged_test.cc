// Actuators against the real kernel of this machine (root): a child
// process's threads pinned and restored through the journal, on the SIGTERM
// path and after the agent is killed with SIGKILL; its pages queried with
// move_pages; an IRQ moved and restored where the kernel allows it. What the
// kernel refuses (ESRCH, EINVAL, ENOENT, EIO) and an unwritable journal are
// in tests/fault/act_fault_test.cc.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "agent/act/actuators.h"
#include "agent/host/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/real_kernel_test.h"
#include "tests/common/process_util.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A child with three threads (main + 2) that touches 8 MiB and waits.
class Worker {
 public:
  Worker() {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      std::vector<char> memory(8 << 20);
      memset(memory.data(), 1, memory.size());
      std::thread a([] { pause(); });
      std::thread b([] { pause(); });
      char byte = 1;
      (void)!write(ready[1], &byte, 1);
      pause();
      _exit(0);
    }
    close(ready[1]);
    char byte;
    (void)!read(ready[0], &byte, 1);
    close(ready[0]);
  }
  ~Worker() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::vector<pid_t> Tids() const { return ThreadsOf(pid_); }

 private:
  pid_t pid_ = -1;
};

class ActPrivilegedTest : public RealKernelTest {
 protected:
  std::unique_ptr<Actuators> Make() {
    return MakeWith(MakeKernelOps(options_));
  }
  void PinAll(Actuators& actuators, const Worker& worker, int cpu) {
    for (int32_t tid : worker.Tids()) {
      Action action{PinThread{worker.pid(), tid, 0, {cpu}}, "test", 0};
      ActionResult result = actuators.Apply(action);
      EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
      EXPECT_THAT(ThreadAffinity(tid), ElementsAre(cpu));
    }
  }
};

TEST_F(ActPrivilegedTest, PinAndRestoreOnSigtermPath) {
  Worker worker;
  ASSERT_GT(worker.pid(), 0);
  ASSERT_EQ(worker.Tids().size(), 3u);
  const std::vector<int> original = ThreadAffinity(worker.pid());
  ASSERT_EQ(original, online_);
  auto actuators = Make();
  ASSERT_NE(actuators, nullptr);
  PinAll(*actuators, worker, 1);
  EXPECT_EQ(actuators->journal().contents().threads.size(), 3u);
  EXPECT_TRUE(std::filesystem::exists(options_.journal.path));
  // What the daemon's SIGTERM handler does.
  auto report = actuators->RestoreAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->threads_restored, 3);
  for (int32_t tid : worker.Tids()) EXPECT_EQ(ThreadAffinity(tid), original);
  EXPECT_FALSE(std::filesystem::exists(options_.journal.path));
}

TEST_F(ActPrivilegedTest, RestoreAfterAgentKilledWithSigkill) {
  Worker worker;
  ASSERT_GT(worker.pid(), 0);
  const std::vector<int> original = ThreadAffinity(worker.pid());
  int done[2];
  ASSERT_EQ(pipe(done), 0);
  pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    // The "agent": pins, then is killed -9 without any chance to restore.
    close(done[0]);
    auto actuators = Actuators::Create(options_, MakeKernelOps(options_));
    bool ok = actuators.ok();
    for (int32_t tid : worker.Tids()) {
      Action action{PinThread{worker.pid(), tid, 0, {1}}, "test", 0};
      ok = ok && (*actuators)->Apply(action).outcome == Outcome::kApplied;
    }
    char byte = ok ? 1 : 0;
    (void)!write(done[1], &byte, 1);
    pause();
    _exit(0);
  }
  close(done[1]);
  char byte = 0;
  ASSERT_EQ(read(done[0], &byte, 1), 1);
  close(done[0]);
  ASSERT_EQ(byte, 1) << "the agent could not pin";
  kill(agent, SIGKILL);
  waitpid(agent, nullptr, 0);
  for (int32_t tid : worker.Tids())
    EXPECT_THAT(ThreadAffinity(tid), ElementsAre(1));

  // The restart: a fresh process state reads the journal the dead one left.
  auto report = RestoreJournal(options_.journal);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->threads_restored, 3);
  EXPECT_FALSE(report->truncated_tail);
  for (int32_t tid : worker.Tids()) EXPECT_EQ(ThreadAffinity(tid), original);
  EXPECT_FALSE(std::filesystem::exists(options_.journal.path));
}

TEST_F(ActPrivilegedTest, ExternalChangeIsBackedOff) {
  Worker worker;
  auto actuators = Make();
  ASSERT_NE(actuators, nullptr);
  const int32_t tid = worker.pid();
  Action action{PinThread{worker.pid(), tid, 0, {1}}, "test", 0};
  ASSERT_EQ(actuators->Apply(action).outcome, Outcome::kApplied);
  EXPECT_TRUE(actuators->CheckExternalChanges().empty());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  ASSERT_EQ(sched_setaffinity(tid, sizeof(set), &set), 0);  // "taskset"
  auto changes = actuators->CheckExternalChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, tid);
  EXPECT_EQ(actuators->Apply(action).outcome, Outcome::kBackedOff);
  EXPECT_THAT(ThreadAffinity(tid), ElementsAre(0));
  // Its entry is forgotten: restoring does not undo the operator's choice.
  auto report = actuators->RestoreAll();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->threads_restored, 0);
  EXPECT_THAT(ThreadAffinity(tid), ElementsAre(0));
}

TEST_F(ActPrivilegedTest, PagesQueriedWithMovePages) {
  Worker worker;
  auto ops = MakeKernelOps(options_);
  // Whole passes: under ASan the worker maps gigabytes of shadow, more than
  // the default 20 ms budget walks, and a pass cut short says nothing here.
  MigrationOptions whole_pass;
  whole_pass.time_budget_ns = 60'000'000'000;
  PageMigrator migrator(ops.pages.get(), ops.clock.get(), whole_pass, false);
  auto nodes = migrator.QueryNodes(worker.pid(), 0);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  // One node here: every resident page is on node 0, at least the 8 MiB the
  // worker touched.
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_GE((*nodes)[0], (8u << 20) / ops.pages->PageSize());
  // Nothing to move to the node everything is on.
  ActionResult result = migrator.Apply(MigratePages{worker.pid(), -1, 0, 0});
  EXPECT_EQ(result.outcome, Outcome::kUnchanged) << result.message;
  EXPECT_THAT(result.message, HasSubstr("pass complete"));
  // A node without memory is refused by the kernel: an outcome, no crash.
  result = migrator.Apply(MigratePages{worker.pid(), -1, 1, 0});
  EXPECT_EQ(result.outcome, Outcome::kError) << result.message;
  EXPECT_THAT(result.message, HasSubstr("move_pages"));
}

// Asks for `move` every 50 ms, as ticks would, until the page mover says
// it is over (nothing left, or an outcome that ends the job); 30 s at most.
ActionResult MoveUntilOver(Actuators& actuators, const Action& move) {
  ActionResult result = actuators.Apply(move);
  for (int i = 0; i < 600; ++i) {
    if (result.nothing_left || (result.outcome != Outcome::kApplied &&
                                result.outcome != Outcome::kUnchanged)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
    result = actuators.Apply(move);
  }
  return result;
}

// The page mover on the real kernel, through the actuators: a live
// process's pages go to the node asked (the second node where there is one,
// else the one they are on) and the job says when nothing is left; a node
// without memory ends the job with the kernel's refusal.
TEST_F(ActPrivilegedTest, PageMoverMovesRealPages) {
  Worker worker;
  std::unique_ptr<Actuators> actuators = Make();
  auto ops = MakeKernelOps(options_);
  const bool two_nodes =
      std::filesystem::exists("/sys/devices/system/node/node1/meminfo");
  const int target = two_nodes ? 1 : 0;
  Action move{MigratePages{worker.pid(), -1, target, 0}, "test", 0};
  ActionResult result = MoveUntilOver(*actuators, move);
  EXPECT_TRUE(result.nothing_left) << result.message;
  PageMigrator query(ops.pages.get(), ops.clock.get(), MigrationOptions{},
                     true);
  auto nodes = query.QueryNodes(worker.pid(), 0);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_GE((*nodes)[target], (8u << 20) / ops.pages->PageSize());
  if (two_nodes) return;
  Action away{MigratePages{worker.pid(), -1, 1, 0}, "test", 0};
  result = MoveUntilOver(*actuators, away);
  EXPECT_EQ(result.outcome, Outcome::kError) << result.message;
  EXPECT_THAT(result.message, HasSubstr("move_pages"));
}

TEST_F(ActPrivilegedTest, IrqAffinityChangedAndRestored) {
  auto names = ListDirectory("/proc/irq");
  ASSERT_TRUE(names.ok());
  auto ops = MakeProcIrqOps("/proc");
  std::string refusals;
  for (const std::string& name : *names) {
    int irq = 0;
    if (!absl::SimpleAtoi(name, &irq)) continue;
    std::vector<int> original;
    if (ops->ReadAffinity(irq, &original) != 0 || original != online_) {
      continue;
    }
    auto actuators = Make();
    ASSERT_NE(actuators, nullptr);
    Action action{SetIrqAffinity{irq, {1}}, "test", 0};
    ActionResult result = actuators->Apply(action);
    if (result.outcome != Outcome::kApplied) {
      refusals += result.message + "; ";
      EXPECT_TRUE(actuators->journal().contents().irqs.empty());
      continue;
    }
    std::vector<int> now;
    ASSERT_EQ(ops->ReadAffinity(irq, &now), 0);
    EXPECT_THAT(now, ElementsAre(1));
    EXPECT_EQ(actuators->journal().contents().irqs.count(irq), 1u);
    auto report = actuators->RestoreAll();
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->irqs_restored, 1);
    ASSERT_EQ(ops->ReadAffinity(irq, &now), 0);
    EXPECT_EQ(now, original);
    return;
  }
  GTEST_SKIP() << "no IRQ affinity could be set here: " << refusals;
}

}  // namespace
}  // namespace locus
