// The sensors on the real kernel (label privileged: run as root). What this
// kernel forbids (LAB.md: fentry gives EPERM) is skipped with the reason;
// everything else must load, attach and count real events here.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/host/topology.h"
#include "agent/sensors/bpf_sensors.h"
#include "agent/sensors/capabilities.h"
#include "agent/sensors/libbpf_prober.h"
#include "agent/sensors/proc_softirqs.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

SensorOptions HostOptions() {
  SensorOptions o;
  absl::StatusOr<Topology> topo = ReadTopology("/sys");
  if (topo.ok()) {
    o.cpu_node = topo->cpu_node;
    int max_node = 0;
    for (const Node& n : topo->nodes) max_node = std::max(max_node, n.id);
    o.num_nodes = max_node + 1;
  }
  return o;
}

class Privileged : public testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::vector<std::string>> missing =
        MissingSensorCapabilities();
    ASSERT_TRUE(missing.ok()) << missing.status();
    ASSERT_TRUE(missing->empty())
        << "privileged tests run as root (missing " << missing->front() << ")";
  }

  // Opens the sensors with `off` forced off; fails the test on error.
  std::unique_ptr<SensorSource> Open(const std::string& off,
                                     SourcePlan* plan_out = nullptr) {
    return Open(off, HostOptions(), plan_out);
  }
  std::unique_ptr<SensorSource> Open(const std::string& off,
                                     const SensorOptions& options,
                                     SourcePlan* plan_out = nullptr) {
    absl::StatusOr<std::set<Feature>> disabled = ParseFeatureList(off);
    EXPECT_TRUE(disabled.ok());
    FeatureSet features(&prober_, *disabled);
    SourcePlan plan = ChooseSources(features);
    if (plan_out) *plan_out = plan;
    absl::StatusOr<std::unique_ptr<SensorSource>> s =
        OpenBpfSensors(options, plan);
    EXPECT_TRUE(s.ok()) << "disable=" << off << ": " << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }

  LibbpfProber prober_;
};

TEST_F(Privileged, ProbeMatchesLabMd) {
  FeatureSet features(&prober_, {});
  for (Feature f : {Feature::kTpBtf, Feature::kRawTp, Feature::kIterTask,
                    Feature::kTaskStorage}) {
    EXPECT_TRUE(features.Has(f))
        << FeatureName(f) << ": " << features.Explain(f);
  }
  // fentry may or may not exist; when it does not, the errno is reported.
  const ProbeResult& fentry = features.Get(Feature::kFentry);
  if (!fentry.available) {
    EXPECT_NE(fentry.error, 0);
  }
}

// Every source and every forced-off fallback loads, attaches and reads.
class LoadTest : public Privileged,
                 public testing::WithParamInterface<const char*> {};

TEST_P(LoadTest, LoadsAttachesAndReads) {
  SourcePlan plan;
  std::unique_ptr<SensorSource> s = Open(GetParam(), &plan);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->sources().sched, SourceName(plan.sched));
  EXPECT_EQ(s->sources().numa, SourceName(plan.numa));
  EXPECT_EQ(s->sources().softirq, SourceName(plan.softirq));
  EXPECT_NE(plan.sched, TraceSource::kNone);
  usleep(100'000);
  absl::StatusOr<SensorReading> r = s->Read();
  ASSERT_TRUE(r.ok()) << r.status();
  // Possible CPUs, at least the online ones.
  EXPECT_GE(r->cpus.size(), std::thread::hardware_concurrency());
  // The task iterator lists every task; the raw_tp LRU only tasks that
  // migrated since load, which within 100 ms may be none.
  if (plan.sched == TraceSource::kTpBtf) {
    EXPECT_FALSE(r->tasks.empty());
  }
  EXPECT_FALSE(r->numa_status.empty());
  uint64_t busy = 0;
  for (const CpuCounters& c : r->cpus) busy += c.busy_ns;
  EXPECT_GT(busy, 0u);
}

INSTANTIATE_TEST_SUITE_P(Fallbacks, LoadTest,
                         testing::Values("", "fentry", "tp_btf", "task_storage",
                                         "iter_task", "fentry,iter_task",
                                         "tp_btf,iter_task,fentry"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name =
                               *info.param ? info.param : "none_disabled";
                           for (char& c : name)
                             if (c == ',') c = '_';
                           return name;
                         });

TEST_F(Privileged, FentrySourceLoads) {
  FeatureSet features(&prober_, {});
  if (!features.Has(Feature::kFentry)) {
    GTEST_SKIP() << "this kernel refuses fentry (LAB.md): "
                 << features.Explain(Feature::kFentry);
  }
  SourcePlan plan = ChooseSources(features);
  ASSERT_EQ(plan.numa, NumaSource::kFentry);
  absl::StatusOr<std::unique_ptr<SensorSource>> s =
      OpenBpfSensors(HostOptions(), plan);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->Read().ok());
}

TEST_F(Privileged, SingleNodeSaysNumaInactive) {
  SensorOptions o = HostOptions();
  if (o.num_nodes > 1) GTEST_SKIP() << "host has " << o.num_nodes << " nodes";
  FeatureSet features(&prober_, {});
  absl::StatusOr<std::unique_ptr<SensorSource>> s = OpenBpfSensors(o, features);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<SensorReading> r = (*s)->Read();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->numa_active);
  EXPECT_NE(r->numa_status.find("single NUMA node"), std::string::npos);
  EXPECT_EQ(r->numa_kind, NumaFaultKind::kNone);
  for (const TaskCounters& t : r->tasks) EXPECT_TRUE(t.numa_faults.empty());
}

// tp_btf path and the raw_tp fallback must both count.
class CountTest : public Privileged,
                  public testing::WithParamInterface<const char*> {};

const TaskCounters* FindTask(const SensorReading& r, pid_t tid) {
  for (const TaskCounters& t : r.tasks)
    if (t.tid == tid) return &t;
  return nullptr;
}

// Moves a new thread between CPU 0 and CPU 1 `moves` times, burning a little
// CPU on each, and takes a reading while the thread is still alive (per-task
// storage, the tp_btf path, is freed with the task).
struct MoverResult {
  pid_t tid = 0;
  int moved = 0;
  absl::StatusOr<SensorReading> reading;
};
MoverResult MoveBetweenCpus(SensorSource& s, int moves) {
  MoverResult out;
  std::promise<void> moves_done, read_done;
  std::thread mover([&] {
    out.tid = static_cast<pid_t>(syscall(SYS_gettid));
    for (int i = 0; i < moves; ++i) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(i % 2, &set);
      if (sched_setaffinity(0, sizeof(set), &set) != 0) break;
      // The kernel moves the caller before the syscall returns.
      if (sched_getcpu() == i % 2) ++out.moved;
      for (int spin = 0; spin < 200000; ++spin) {
        asm volatile("" ::: "memory");  // runtime on this CPU
      }
    }
    moves_done.set_value();
    read_done.get_future().wait();
  });
  moves_done.get_future().wait();
  out.reading = s.Read();
  read_done.set_value();
  mover.join();
  return out;
}

TEST_P(CountTest, AffinityMovesAreMigrations) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  std::unique_ptr<SensorSource> s = Open(GetParam());
  ASSERT_NE(s, nullptr);
  constexpr int kMoves = 20;
  MoverResult m = MoveBetweenCpus(*s, kMoves);
  ASSERT_EQ(m.moved, kMoves) << "sched_setaffinity did not move the thread";
  ASSERT_TRUE(m.reading.ok()) << m.reading.status();
  const TaskCounters* t = FindTask(*m.reading, m.tid);
  ASSERT_NE(t, nullptr) << "tid " << m.tid << " not reported";
  // The first move may be a no-op if the thread already sat on CPU 0.
  EXPECT_GE(t->migrations, static_cast<uint64_t>(kMoves - 1));
  EXPECT_EQ(t->pid, getpid());
  if (HostOptions().num_nodes == 1) {
    EXPECT_EQ(t->cross_node_migrations, 0u);
  }
  uint64_t runtime = 0;
  for (uint64_t ns : t->runtime_ns) runtime += ns;
  EXPECT_GT(runtime, 0u);
  EXPECT_TRUE(t->cpu == 0 || t->cpu == 1) << t->cpu;
}

// Scoped to this process, a reading holds its threads (the mover among
// them, with its migrations) and no other process's; the scope is then
// lifted and every task is back.
TEST_P(CountTest, ScopedReadHoldsOnlyThatProcess) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  std::unique_ptr<SensorSource> s = Open(GetParam());
  ASSERT_NE(s, nullptr);
  s->SetScope(std::vector<int32_t>{getpid()});
  constexpr int kMoves = 10;
  MoverResult m = MoveBetweenCpus(*s, kMoves);
  ASSERT_TRUE(m.reading.ok()) << m.reading.status();
  const TaskCounters* t = FindTask(*m.reading, m.tid);
  ASSERT_NE(t, nullptr) << "tid " << m.tid << " not reported";
  EXPECT_GE(t->migrations, static_cast<uint64_t>(kMoves - 1));
  for (const TaskCounters& task : m.reading->tasks) {
    EXPECT_EQ(task.pid, getpid()) << "tid " << task.tid << " " << task.comm;
  }
  s->SetScope(std::nullopt);
  absl::StatusOr<SensorReading> all = s->Read();
  ASSERT_TRUE(all.ok()) << all.status();
  // With tp_btf the iterator lists every task; the raw_tp LRU only movers.
  if (std::string(GetParam()).empty()) {
    EXPECT_TRUE(std::any_of(
        all->tasks.begin(), all->tasks.end(),
        [](const TaskCounters& task) { return task.pid != getpid(); }))
        << "no other process without a scope";
  }
}

// A process that renames itself (as exec does) is reported once, by the
// next reading; a thread other than the leader renaming itself is not (a
// process's name is its leader's).
TEST_P(CountTest, RenamedProcessesAreReported) {
  std::unique_ptr<SensorSource> s = Open(GetParam());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Read().ok());  // takes any rename from before
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "locus-renamed");
    _exit(0);
  }
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  std::thread([] {
    pthread_setname_np(pthread_self(), "locus-thread");
  }).join();
  absl::StatusOr<SensorReading> r = s->Read();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->renamed.has_value());
  EXPECT_TRUE(
      std::binary_search(r->renamed->begin(), r->renamed->end(), child));
  EXPECT_FALSE(
      std::binary_search(r->renamed->begin(), r->renamed->end(), getpid()));
  r = s->Read();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->renamed.has_value());
  EXPECT_FALSE(
      std::binary_search(r->renamed->begin(), r->renamed->end(), child))
      << "reported twice";
}

// The same moves with a CPU->node map that puts CPU 0 and CPU 1 on different
// nodes: every move crosses, and runtime lands on both nodes. Exercises the
// cross-node path on this one-node machine.
TEST_P(CountTest, CrossNodeMovesWithATwoNodeMap) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  SensorOptions o;
  o.cpu_node = {0, 1};
  o.num_nodes = 2;
  std::unique_ptr<SensorSource> s = Open(GetParam(), o);
  ASSERT_NE(s, nullptr);
  constexpr int kMoves = 20;
  MoverResult m = MoveBetweenCpus(*s, kMoves);
  ASSERT_EQ(m.moved, kMoves);
  ASSERT_TRUE(m.reading.ok()) << m.reading.status();
  EXPECT_FALSE(m.reading->numa_active);  // numa_balancing is off here
  const TaskCounters* t = FindTask(*m.reading, m.tid);
  ASSERT_NE(t, nullptr);
  EXPECT_GE(t->cross_node_migrations, static_cast<uint64_t>(kMoves - 1));
  ASSERT_EQ(t->runtime_ns.size(), 2u);
  EXPECT_GT(t->runtime_ns[0], 0u);
  EXPECT_GT(t->runtime_ns[1], 0u);
}

// Sends `bytes` through a loopback TCP connection, then calls `while_alive`
// before the receiving thread exits: per-task storage (the tp_btf path) is
// freed with its task, and the agent reports live threads.
void LoopbackTraffic(size_t bytes, const std::function<void()>& while_alive) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(ls, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(ls, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(ls, 1), 0);
  ASSERT_EQ(getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::promise<void> received, observed;
  std::thread receiver([&] {
    int c = accept(ls, nullptr, nullptr);
    std::vector<char> buf(1 << 16);
    size_t got = 0;
    while (got < bytes) {
      ssize_t n = read(c, buf.data(), buf.size());
      if (n <= 0) break;
      got += n;
    }
    close(c);
    received.set_value();
    observed.get_future().wait();
  });
  int cs = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(connect(cs, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::vector<char> buf(1 << 16, 'x');
  size_t sent = 0;
  while (sent < bytes) {
    ssize_t n = write(cs, buf.data(), std::min(buf.size(), bytes - sent));
    if (n <= 0) break;
    sent += n;
  }
  close(cs);
  received.get_future().wait();
  while_alive();
  observed.set_value();
  receiver.join();
  close(ls);
  EXPECT_EQ(sent, bytes);
}

// NET_RX in a reading: per-CPU time and count, and time charged to tasks
// (all of them, and this process's threads).
struct NetRx {
  uint64_t ns = 0, count = 0, all = 0, ours = 0;
};
NetRx NetRxOf(const SensorReading& r) {
  NetRx n;
  for (const CpuCounters& c : r.cpus) {
    n.ns += c.softirq_ns[kSoftirqNetRx];
    n.count += c.softirq_count[kSoftirqNetRx];
  }
  for (const TaskCounters& t : r.tasks) {
    n.all += t.net_rx_softirq_ns;
    if (t.pid == getpid()) n.ours += t.net_rx_softirq_ns;
  }
  return n;
}

TEST_P(CountTest, LoopbackTcpShowsNetRxTime) {
  std::unique_ptr<SensorSource> s = Open(GetParam());
  ASSERT_NE(s, nullptr);
  absl::StatusOr<SensorReading> r;
  LoopbackTraffic(64 << 20, [&] { r = s->Read(); });
  ASSERT_TRUE(r.ok()) << r.status();
  NetRx n = NetRxOf(*r);
  EXPECT_GT(n.count, 0u);
  EXPECT_GT(n.ns, 0u);
  EXPECT_EQ(r->softirq_traced, 1.0);  // attached all along
  // Loopback NET_RX runs on the way out of a bottom-half section of the
  // sending or receiving thread (or in ksoftirqd when it piles up), so most
  // of it is charged to this process's threads; sampled, but 64 MiB is
  // thousands of softirqs.
  EXPECT_GT(n.ours, 0u) << "NET_RX charged to any task: " << n.all << " ns";
}

// NET_RX softirqs on every CPU, from the kernel's own count.
uint64_t ProcNetRx() {
  std::ifstream in("/proc/softirqs");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<SoftirqCounts>> c = ParseProcSoftirqs(text.str());
  EXPECT_TRUE(c.ok()) << c.status();
  uint64_t n = 0;
  if (c.ok()) {
    for (const SoftirqCounts& cpu : *c) n += cpu[kSoftirqNetRx];
  }
  return n;
}

// BPF links this process holds on tracepoint `tp` (tp_btf and raw_tp
// programs both attach through raw tracepoint links).
int LinksOn(const std::string& tp) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path(), ec) != "anon_inode:bpf_link")
      continue;
    char name[64] = {};
    bpf_link_info info = {};
    info.raw_tracepoint.tp_name = reinterpret_cast<uintptr_t>(name);
    info.raw_tracepoint.tp_name_len = sizeof(name);
    uint32_t len = sizeof(info);
    int fd = std::stoi(e.path().filename().string());
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
        info.type == BPF_LINK_TYPE_RAW_TRACEPOINT && tp == name) {
      ++n;
    }
  }
  return n;
}

// With the softirq hooks tracing 5 ms in every 50 ms, the counts are the
// kernel's (every softirq since the sensors opened), the hooks see a share
// of them near the time open, and time and per-task charges are still
// there, scaled up. The hooks stay attached throughout, closed between
// windows: attaching and detaching would patch kernel text at every window,
// interrupting every CPU.
TEST_P(CountTest, SoftirqWindowsCountEveryEventAndTraceAShare) {
  SensorOptions o = HostOptions();
  o.softirq_sample_every = 1;
  o.softirq_window_ns = 5'000'000;
  o.softirq_window_every_ns = 50'000'000;
  uint64_t before = ProcNetRx();
  std::unique_ptr<SensorSource> s = Open(GetParam(), o);
  ASSERT_NE(s, nullptr);
  absl::StatusOr<SensorReading> r;
  // Long enough for several windows whatever the loopback speed.
  absl::Time end = absl::Now() + absl::Milliseconds(600);
  int fewest_links = 2, samples = 0;
  while (absl::Now() < end) {
    LoopbackTraffic(16 << 20, [&] { r = s->Read(); });
    for (const char* tp : {"softirq_entry", "softirq_exit"}) {
      fewest_links = std::min(fewest_links, LinksOn(tp));
    }
    ++samples;
  }
  uint64_t after = ProcNetRx();
  ASSERT_TRUE(r.ok()) << r.status();
  NetRx n = NetRxOf(*r);
  EXPECT_GT(n.count, 0u);
  EXPECT_LE(n.count, after - before);
  EXPECT_GT(n.ns, 0u);
  EXPECT_GT(r->softirq_traced, 0.0);
  EXPECT_LT(r->softirq_traced, 0.5);
  EXPECT_GT(n.ours, 0u);
  EXPECT_EQ(fewest_links, 1) << "over " << samples << " samples";
}

// The sampling periods reach the programs (each CPU's slot carries them):
// with a period longer than the run, every event is counted and none timed.
TEST_P(CountTest, EventsPastTheSamplingPeriodAreCountedNotTimed) {
  SensorOptions o = HostOptions();
  o.softirq_sample_every = 1u << 30;
  o.switch_sample_every = 1u << 30;
  std::unique_ptr<SensorSource> s = Open(GetParam(), o);
  ASSERT_NE(s, nullptr);
  absl::StatusOr<SensorReading> r;
  LoopbackTraffic(16 << 20, [&] { r = s->Read(); });
  ASSERT_TRUE(r.ok()) << r.status();
  uint64_t net_rx = 0, switches = 0;
  for (const CpuCounters& c : r->cpus) {
    net_rx += c.softirq_count[kSoftirqNetRx];
    switches += c.switches;
    EXPECT_EQ(c.softirq_ns[kSoftirqNetRx], 0u) << "cpu " << c.cpu;
    EXPECT_EQ(c.busy_ns, 0u) << "cpu " << c.cpu;
  }
  EXPECT_GT(net_rx, 0u);
  EXPECT_GT(switches, 0u);
}

// IRQ -> total count across CPUs, from /proc/interrupts.
std::map<int, uint64_t> ProcInterrupts() {
  std::map<int, uint64_t> out;
  std::ifstream in("/proc/interrupts");
  std::string line;
  std::getline(in, line);  // CPU header
  while (std::getline(in, line)) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.empty()) continue;
    absl::string_view irq = f[0];
    if (!absl::ConsumeSuffix(&irq, ":")) continue;
    int n;
    if (!absl::SimpleAtoi(irq, &n)) continue;  // NMI, LOC, ...
    uint64_t total = 0;
    for (size_t i = 1; i < f.size(); ++i) {
      uint64_t v;
      if (!absl::SimpleAtoi(f[i], &v)) break;
      total += v;
    }
    out[n] = total;
  }
  return out;
}

// Disk writes that bypass the page cache: each one completes with an IRQ of
// the virtio block device (the one device IRQ that moves on this VM without
// outside network traffic).
void DirectWrites() {
  std::string path = testing::TempDir() + "/locus_irq_test.XXXXXX";
  int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  unlink(path.c_str());
  int flags = fcntl(fd, F_GETFL);
  bool direct = fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
  void* buf = nullptr;
  ASSERT_EQ(posix_memalign(&buf, 4096, 1 << 20), 0);
  memset(buf, 'x', 1 << 20);
  for (int i = 0; i < 8; ++i) {
    if (write(fd, buf, 1 << 20) != (1 << 20)) break;
    fsync(fd);
  }
  free(buf);
  close(fd);
  (void)direct;
}

TEST_P(CountTest, IrqCountGrows) {
  // Time every hardirq: the handful this makes could all miss the default
  // 1-in-64 sample, and the test checks time as well as counts.
  SensorOptions o = HostOptions();
  o.hardirq_sample_every = 1;
  std::unique_ptr<SensorSource> s = Open(GetParam(), o);
  ASSERT_NE(s, nullptr);
  std::map<int, uint64_t> before = ProcInterrupts();
  DirectWrites();
  absl::StatusOr<SensorReading> r = s->Read();
  std::map<int, uint64_t> after = ProcInterrupts();
  ASSERT_TRUE(r.ok()) << r.status();
  std::set<int> grew;
  for (const auto& [irq, n] : after)
    if (n > before[irq]) grew.insert(irq);
  ASSERT_FALSE(grew.empty()) << "no device IRQ fired at all";
  bool seen = false;
  for (const IrqCounters& i : r->irqs) {
    uint64_t count = 0, ns = 0;
    for (uint64_t c : i.count_per_cpu) count += c;
    for (uint64_t t : i.ns_per_cpu) ns += t;
    EXPECT_TRUE(after.count(i.irq)) << "irq " << i.irq << " unknown to /proc";
    if (grew.count(i.irq) && count > 0) {
      seen = true;
      EXPECT_GT(ns, 0u) << "irq " << i.irq;
    }
  }
  EXPECT_TRUE(seen) << "none of the IRQs /proc/interrupts saw grow is counted";
}

INSTANTIATE_TEST_SUITE_P(Sources, CountTest, testing::Values("", "tp_btf"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(*info.param ? "raw_tp"
                                                          : "tp_btf");
                         });

}  // namespace
}  // namespace locus
