// Fault injection at the actuators, on the real kernel of this machine
// (root): the kernel answers ESRCH, EINVAL, ENOENT and EIO/EPERM at the
// instant of the change, the journal's filesystem is full or read-only, and
// the agent is killed at random points while it moves threads and an IRQ.
// Each test checks what the host looks like afterwards: the kernel's masks,
// and the journal a restart would replay.
//
// "Between decision and action" is reproduced exactly: the real kernel calls
// are wrapped, and the fault (a thread exits, a cpuset shrinks, an IRQ
// vanishes) is made to happen just before the call that changes something.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/act/actuators.h"
#include "agent/host/file_util.h"
#include "common/os_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/real_kernel_test.h"
#include "tests/common/locusd_process.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The real kernel calls, with a hook just before the ones that change
// something, and optionally a stale view of the cpuset (what the agent read
// before the cpuset was narrowed).
class HookedThreadOps : public ThreadOps {
 public:
  explicit HookedThreadOps(std::unique_ptr<ThreadOps> real)
      : real_(std::move(real)) {}
  int GetAffinity(int32_t tid, std::vector<int>* cpus) override {
    return real_->GetAffinity(tid, cpus);
  }
  int SetAffinity(int32_t tid, const std::vector<int>& cpus) override {
    if (before_set) before_set();
    return real_->SetAffinity(tid, cpus);
  }
  int StartTime(int32_t tid, uint64_t* start_time) override {
    return real_->StartTime(tid, start_time);
  }
  int CpusetCpus(int32_t tid, std::vector<int>* cpus) override {
    if (stale_cpuset) {
      *cpus = *stale_cpuset;
      return 0;
    }
    return real_->CpusetCpus(tid, cpus);
  }
  std::function<void()> before_set;
  std::optional<std::vector<int>> stale_cpuset;

 private:
  std::unique_ptr<ThreadOps> real_;
};

class HookedIrqOps : public IrqOps {
 public:
  explicit HookedIrqOps(std::unique_ptr<IrqOps> real)
      : real_(std::move(real)) {}
  int ReadAffinity(int irq, std::vector<int>* cpus) override {
    return real_->ReadAffinity(irq, cpus);
  }
  int WriteAffinity(int irq, const std::vector<int>& cpus) override {
    ++writes;
    if (before_write) before_write();
    return real_->WriteAffinity(irq, cpus);
  }
  std::function<void()> before_write;
  int writes = 0;

 private:
  std::unique_ptr<IrqOps> real_;
};

// A cgroup whose cpuset allows only CPU 0: cgroup v2 (a child of
// /sys/fs/cgroup with the cpuset controller enabled) or v1
// (/sys/fs/cgroup/cpuset). Processes added are moved back to the parent and
// the cgroup removed on destruction.
class CpusetCgroup {
 public:
  CpusetCgroup() {
    const std::string name = absl::StrCat("locus-fault-", getpid());
    if (ReadAll("/sys/fs/cgroup/cgroup.controllers").find("cpuset") !=
        std::string::npos) {
      parent_ = "/sys/fs/cgroup";
      if (!Write(parent_ + "/cgroup.subtree_control", "+cpuset")) {
        why_ = "cannot enable the v2 cpuset controller";
        return;
      }
    } else if (access("/sys/fs/cgroup/cpuset/cpuset.cpus", F_OK) == 0) {
      parent_ = "/sys/fs/cgroup/cpuset";
    } else {
      why_ = "no cgroup v2 cpuset controller and no v1 cpuset hierarchy";
      return;
    }
    dir_ = parent_ + "/" + name;
    if (mkdir(dir_.c_str(), 0755) != 0) {
      why_ = ErrnoMessage(absl::StrCat("mkdir ", dir_), errno);
      dir_.clear();
      return;
    }
    std::string mems = ReadAll(parent_ + "/cpuset.mems");
    if (mems.empty()) mems = ReadAll(parent_ + "/cpuset.mems.effective");
    if (access((dir_ + "/cpuset.mems").c_str(), F_OK) == 0 &&
        !Write(dir_ + "/cpuset.mems", mems)) {
      why_ = "cannot set cpuset.mems";
      return;
    }
    if (!Write(dir_ + "/cpuset.cpus", "0")) why_ = "cannot set cpuset.cpus";
  }
  ~CpusetCgroup() {
    if (dir_.empty()) return;
    for (pid_t pid : added_) Write(parent_ + "/cgroup.procs", pid);
    rmdir(dir_.c_str());
  }
  // Empty when usable, else why not.
  const std::string& why_not() const { return why_; }
  bool Add(pid_t pid) {
    added_.push_back(pid);
    return Write(dir_ + "/cgroup.procs", pid);
  }

 private:
  template <typename T>
  static bool Write(const std::string& path, const T& value) {
    std::ofstream out(path);
    out << value << std::flush;
    return static_cast<bool>(out);
  }
  std::string parent_, dir_, why_;
  std::vector<pid_t> added_;
};

// IRQs whose affinity is every online CPU: the ones a test may move to one
// CPU and back.
std::vector<int> IrqsOnEveryCpu(const std::vector<int>& online) {
  std::vector<int> irqs;
  auto names = ListDirectory("/proc/irq");
  if (!names.ok()) return irqs;
  for (const std::string& name : *names) {
    int irq = 0;
    std::vector<int> cpus;
    if (absl::SimpleAtoi(name, &irq) &&
        MakeProcIrqOps("/proc")->ReadAffinity(irq, &cpus) == 0 &&
        cpus == online) {
      irqs.push_back(irq);
    }
  }
  return irqs;
}

class ActFaultTest : public RealKernelTest {
 protected:
  // Actuators over the real kernel, the calls wrapped in hooks.
  std::unique_ptr<Actuators> Make() {
    KernelOps ops = MakeKernelOps(options_);
    auto threads = std::make_unique<HookedThreadOps>(std::move(ops.threads));
    auto irqs = std::make_unique<HookedIrqOps>(std::move(ops.irqs));
    threads_ = threads.get();
    irqs_ = irqs.get();
    ops.threads = std::move(threads);
    ops.irqs = std::move(irqs);
    return MakeWith(std::move(ops));
  }

  // What a restart would restore: the journal on disk, replayed.
  JournalContents OnDisk() {
    auto contents = ReadJournal(options_.journal.path);
    EXPECT_TRUE(contents.ok()) << contents.status();
    return contents.ok() ? *contents : JournalContents{};
  }

  HookedThreadOps* threads_ = nullptr;
  HookedIrqOps* irqs_ = nullptr;
};

// ESRCH: the thread exits after the agent looked at it (start time, cpuset,
// mask) and journaled it, just before sched_setaffinity.
TEST_F(ActFaultTest, ThreadExitsBetweenDecisionAndAction) {
  int release[2];
  ASSERT_EQ(pipe(release), 0);
  std::atomic<pid_t> tid{0};
  std::thread doomed([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    char byte;
    (void)!read(release[0], &byte, 1);
  });
  ASSERT_TRUE(WaitUntil([&] { return tid != 0; }, absl::Seconds(5)));
  const std::vector<int> main_before = ThreadAffinity(getpid());
  auto actuators = Make();
  ASSERT_NE(actuators, nullptr);
  const std::string task = absl::StrCat("/proc/self/task/", tid.load());
  auto end_it = [&] {
    (void)!write(release[1], "x", 1);
    doomed.join();
    WaitUntil([&] { return access(task.c_str(), F_OK) != 0; },
              absl::Seconds(5));
  };
  threads_->before_set = end_it;
  ActionResult result =
      actuators->Apply({PinThread{getpid(), tid, 1, {1}}, "test", 0});
  if (doomed.joinable()) end_it();  // the hook was not reached
  EXPECT_EQ(result.outcome, Outcome::kGone) << result.message;
  EXPECT_THAT(result.message, HasSubstr("No such process"));
  // Nothing left to restore, in memory or on disk; the rest untouched.
  EXPECT_THAT(actuators->journal().contents().threads, IsEmpty());
  EXPECT_THAT(OnDisk().threads, IsEmpty());
  EXPECT_EQ(ThreadAffinity(getpid()), main_before);
  close(release[0]);
  close(release[1]);

  // Gone before the agent even looked: the same outcome, nothing written.
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  result = actuators->Apply({PinThread{child, child, 1, {1}}, "test", 0});
  EXPECT_EQ(result.outcome, Outcome::kGone) << result.message;
  EXPECT_THAT(OnDisk().threads, IsEmpty());
}

// EINVAL: the target's cpuset allows CPU 0 only and the agent asks for CPU 1,
// once knowing it (refused before any write), once with a view of the cpuset
// taken before it was narrowed (the kernel refuses the change).
TEST_F(ActFaultTest, CpusetForbidsTheChosenCpus) {
  CpusetCgroup cgroup;
  if (!cgroup.why_not().empty()) GTEST_SKIP() << cgroup.why_not();
  IdleChild idle;
  const pid_t child = idle.pid();
  ASSERT_TRUE(cgroup.Add(child));
  ASSERT_THAT(ThreadAffinity(child), ElementsAre(0));
  auto actuators = Make();
  ASSERT_NE(actuators, nullptr);
  const Action pin{PinThread{child, child, 1, {1}}, "test", 0};

  ActionResult result = actuators->Apply(pin);
  EXPECT_EQ(result.outcome, Outcome::kForbidden) << result.message;
  EXPECT_THAT(result.message, HasSubstr("cpuset allows 0, none of 1"));
  EXPECT_THAT(ThreadAffinity(child), ElementsAre(0));
  EXPECT_FALSE(std::filesystem::exists(options_.journal.path))
      << "refused before anything was journaled";

  threads_->stale_cpuset = online_;
  result = actuators->Apply(pin);
  EXPECT_EQ(result.outcome, Outcome::kForbidden) << result.message;
  EXPECT_THAT(result.message, HasSubstr("Invalid argument"));
  EXPECT_THAT(ThreadAffinity(child), ElementsAre(0));
  // Journaled before the attempt, forgotten after it: nothing to restore.
  EXPECT_THAT(actuators->journal().contents().threads, IsEmpty());
  EXPECT_THAT(OnDisk().threads, IsEmpty());
}

// ENOENT: an IRQ (in a procfs fixture) disappears before the agent reads it,
// and between its read and its write.
TEST_F(ActFaultTest, IrqDisappears) {
  const std::string procfs = tree_.root() + "/proc";
  const std::string irq_dir = procfs + "/irq/900";
  std::filesystem::create_directories(irq_dir);
  std::ofstream(irq_dir + "/smp_affinity_list") << "0-1\n";
  options_.procfs_root = procfs;
  auto actuators = Make();
  ASSERT_NE(actuators, nullptr);
  const Action move{SetIrqAffinity{900, {1}}, "test", 0};

  irqs_->before_write = [&] { std::filesystem::remove_all(irq_dir); };
  ActionResult result = actuators->Apply(move);
  EXPECT_EQ(result.outcome, Outcome::kGone) << result.message;
  EXPECT_THAT(result.message, HasSubstr("No such file"));
  EXPECT_THAT(actuators->journal().contents().irqs, IsEmpty());
  EXPECT_THAT(OnDisk().irqs, IsEmpty());

  irqs_->before_write = nullptr;
  int writes = irqs_->writes;
  result = actuators->Apply(move);  // gone before the read
  EXPECT_EQ(result.outcome, Outcome::kGone) << result.message;
  EXPECT_EQ(irqs_->writes, writes);
  EXPECT_THAT(OnDisk().irqs, IsEmpty());
}

// EIO (up to 6.x) or EPERM (6.18): an IRQ whose affinity the kernel manages
// (virtio-blk and NVMe queues, for instance). Found by asking: IRQs that
// accept the change are put back at once.
TEST_F(ActFaultTest, KernelManagedIrqIsLeftAloneForGood) {
  auto actuators = Make();
  ASSERT_NE(actuators, nullptr);
  std::string seen;
  for (int irq : IrqsOnEveryCpu(online_)) {
    const Action move{SetIrqAffinity{irq, {online_.back()}}, "test", 0};
    ActionResult result = actuators->Apply(move);
    absl::StrAppend(&seen, irq, ": ", OutcomeName(result.outcome), "; ");
    if (result.outcome == Outcome::kApplied) {
      ASSERT_TRUE(actuators->Revert(move).ok());
      continue;
    }
    if (result.outcome != Outcome::kUnmanageable) continue;
    EXPECT_THAT(result.message, HasSubstr("kernel-managed"));
    std::vector<int> after;
    ASSERT_EQ(MakeProcIrqOps("/proc")->ReadAffinity(irq, &after), 0);
    EXPECT_EQ(after, online_);
    EXPECT_THAT(actuators->journal().contents().irqs, IsEmpty());
    EXPECT_THAT(OnDisk().irqs, IsEmpty());
    EXPECT_EQ(actuators->unmanageable_irqs().count(irq), 1u);
    const int writes = irqs_->writes;
    EXPECT_EQ(actuators->Apply(move).outcome, Outcome::kUnmanageable);
    EXPECT_EQ(irqs_->writes, writes) << "never tried again";
    RecordProperty("managed_irq", irq);
    return;
  }
  GTEST_SKIP() << "no kernel-managed IRQ on this machine (" << seen << ")";
}

// ENOSPC then EROFS under the journal: every change is refused, the masks
// stay as they were, and starting on the read-only mount is not an error.
TEST_F(ActFaultTest, FullThenReadOnlyJournalRefusesToAct) {
  const std::string mnt = tree_.root() + "/mnt";
  SmallTmpfs tmpfs(mnt, 0);
  ASSERT_EQ(tmpfs.error(), 0) << strerror(tmpfs.error());
  {
    std::ofstream fill(mnt + "/fill");
    std::string block(4096, 'x');
    for (int i = 0; i < 64 && fill; ++i) fill << block << std::flush;
  }
  IdleChild idle;
  const pid_t child = idle.pid();
  options_.journal.path = mnt + "/journal";
  const std::vector<int> before = ThreadAffinity(child);
  const Action pin{PinThread{child, child, 1, {1}}, "test", 0};
  {
    auto actuators = Make();
    ASSERT_NE(actuators, nullptr);
    ActionResult result = actuators->Apply(pin);
    EXPECT_EQ(result.outcome, Outcome::kRefused) << result.message;
    EXPECT_THAT(result.message, HasSubstr("No space left"));
    EXPECT_EQ(ThreadAffinity(child), before);
    EXPECT_FALSE(actuators->journal().last_error().ok());
  }  // closes the journal, so the filesystem can be remounted read-only

  std::filesystem::remove(mnt + "/fill");
  std::filesystem::remove(mnt + "/journal");
  ASSERT_EQ(
      mount(nullptr, mnt.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
      << strerror(errno);
  auto ro = Make();
  ASSERT_NE(ro, nullptr);
  ActionResult result = ro->Apply(pin);
  EXPECT_EQ(result.outcome, Outcome::kRefused) << result.message;
  EXPECT_THAT(result.message, HasSubstr("Read-only"));
  EXPECT_EQ(ThreadAffinity(child), before);
  auto restored = RestoreJournal(options_.journal);
  EXPECT_TRUE(restored.ok()) << restored.status();
}

// An IRQ this machine lets Locus move (one whose affinity is every online
// CPU), or -1.
int SettableIrq(const std::vector<int>& online, Actuators& probe) {
  for (int irq : IrqsOnEveryCpu(online)) {
    const Action move{SetIrqAffinity{irq, {online.back()}}, "probe", 0};
    if (probe.Apply(move).outcome == Outcome::kApplied &&
        probe.Revert(move).ok()) {
      return irq;
    }
  }
  return -1;
}

// An "agent" process moves 8 threads and an IRQ to random CPU sets as fast
// as it can and is killed with SIGKILL after a random delay, 30 times; after
// each kill the journal it left restores every mask exactly.
TEST_F(ActFaultTest, Kill9WhileMovingThreadsAndAnIrqRestoresExactly) {
  TargetFamily family(FAULT_TARGET_PATH, "locus-fault-a", 2, 4,
                      tree_.root() + "/target.log");
  ASSERT_TRUE(family.ok()) << ReadAll(tree_.root() + "/target.log");
  const auto original = AffinityOfAll(family.workers());
  ASSERT_EQ(original.size(), 8u);
  int irq = -1;
  {
    auto probe = Make();
    ASSERT_NE(probe, nullptr);
    irq = SettableIrq(online_, *probe);
  }
  RecordProperty("irq", irq);
  std::vector<int> irq_original;
  if (irq >= 0) MakeProcIrqOps("/proc")->ReadAffinity(irq, &irq_original);

  const unsigned seed = static_cast<unsigned>(getpid());
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> choices;
  for (int cpu : online_) choices.push_back({cpu});
  choices.push_back(online_);
  int moved_at_kill = 0, torn = 0;
  constexpr int kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round, ", seed ", seed));
    int started[2];
    ASSERT_EQ(pipe(started), 0);
    pid_t agent = fork();
    ASSERT_GE(agent, 0);
    if (agent == 0) {
      std::mt19937 child_rng(seed + round);
      auto actuators = Actuators::Create(options_, MakeKernelOps(options_));
      if (!actuators.ok()) _exit(1);
      (void)!write(started[1], "x", 1);
      for (;;) {
        for (const auto& [tid, cpus] : original) {
          (*actuators)
              ->Apply(
                  {PinThread{0, tid, 0, choices[child_rng() % choices.size()]},
                   "fault", 0});
        }
        if (irq >= 0) {
          (*actuators)
              ->Apply(
                  {SetIrqAffinity{irq, choices[child_rng() % choices.size()]},
                   "fault", 0});
        }
      }
    }
    // Once the agent is up, anywhere in its moves (the first ones wait for
    // the journal's fdatasync: milliseconds to tens of them here).
    char byte;
    close(started[1]);
    ASSERT_EQ(read(started[0], &byte, 1), 1);
    close(started[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 100000));
    ASSERT_EQ(Stop(agent, SIGKILL), -SIGKILL);
    if (AffinityOfAll(family.workers()) != original) ++moved_at_kill;

    auto report = RestoreJournal(options_.journal);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << report->errors.front();
    torn += report->truncated_tail;
    EXPECT_EQ(AffinityOfAll(family.workers()), original);
    if (irq >= 0) {
      std::vector<int> now;
      ASSERT_EQ(MakeProcIrqOps("/proc")->ReadAffinity(irq, &now), 0);
      EXPECT_EQ(now, irq_original) << "irq " << irq;
    }
    EXPECT_FALSE(std::filesystem::exists(options_.journal.path));
  }
  // The kills must have hit a changed host most of the time, or the test
  // proved nothing.
  EXPECT_GE(moved_at_kill, kRounds / 2);
  RecordProperty("moved_at_kill", moved_at_kill);
  RecordProperty("torn_tails", torn);
  std::cout << "kill -9 rounds " << kRounds << ", host changed at kill "
            << moved_at_kill << ", torn journal tails " << torn << ", irq "
            << irq << "\n";
}

}  // namespace
}  // namespace locus
