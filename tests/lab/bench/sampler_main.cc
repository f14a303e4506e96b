// lab_sampler: the convergence benchmark's observer. Every --period_ms for
// --seconds it prints one CSV row about the watched processes (--pids, or
// the children of --children_of) as
// seen from outside, the same measurement whatever tool moves them:
//
//   t_s,local,total,run_node,migrated,numa_migrated,thread_changes,irq_changes,irq_cpus
//
// run_node: the node most of the processes last ran on. Without --irqs,
// local/total are resident pages of the processes (/proc/PID/numa_maps,
// summed) on run_node / on all nodes. With --irqs (the NIC's queue IRQs), they
// are NET_RX softirqs (receive and, with virtio-net's NAPI, transmit
// completions) on run_node's CPUs / on all CPUs over the last second
// (/proc/softirqs). migrated and numa_migrated: pages migrated since start
// (/proc/vmstat pgmigrate_success, numa_pages_migrated; the whole machine).
// thread_changes, irq_changes: affinity changes seen since start of the
// processes' threads and of the IRQs; irq_cpus: the IRQs' affinities now,
// '/' between IRQs, ';' for ','.
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "agent/host/numa_maps.h"
#include "agent/host/proc_parse.h"
#include "agent/host/topology.h"
#include "policy/cpu_list.h"
#include "tests/lab/bench/sampler.h"

ABSL_FLAG(std::string, pids, "", "Processes to watch, comma-separated.");
ABSL_FLAG(int, children_of, 0,
          "Watch the children of this process instead (looked up at every "
          "sample): nginx's workers, from the moment the master starts.");
ABSL_FLAG(std::string, irqs, "",
          "The NIC's queue IRQs, comma-separated: NET_RX share mode, and "
          "their affinities are watched.");
ABSL_FLAG(int, period_ms, 150, "Sample period.");
ABSL_FLAG(double, seconds, 30, "How long to sample.");
ABSL_FLAG(bool, start_on_stdin, false,
          "Start the clock when a line arrives on stdin (the caller starts "
          "the sampler early and says when the workload is in place).");

namespace locus {
namespace {

constexpr uint64_t kNsPerSec = 1'000'000'000;
constexpr uint64_t kWindowNs = kNsPerSec;

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

std::string Proc(int pid, absl::string_view file) {
  return absl::StrCat("/proc/", pid, "/", file);
}

uint64_t Vmstat(absl::string_view text, absl::string_view key) {
  auto value = ParseVmstat(text, key);
  return value.ok() ? *value : 0;
}

class Sampler {
 public:
  // Watches `pids`, or the children of `parent` when it is > 0.
  Sampler(Topology topology, std::vector<int> pids, int parent,
          std::vector<int> irqs)
      : topology_(std::move(topology)),
        pids_(std::move(pids)),
        parent_(parent),
        irqs_(std::move(irqs)),
        irq_cpus_(irqs_.size()) {}

  // One CSV row at `t_ns` since the start.
  std::string Row(uint64_t t_ns) {
    if (parent_ > 0) pids_ = ChildrenOf(parent_);
    const int run_node = RunNode();
    uint64_t local = 0, total = 0;
    if (irqs_.empty()) {
      CountPages(run_node, &local, &total);
    } else {
      CountNetRx(t_ns, run_node, &local, &total);
    }
    auto vmstat = ReadTextFile("/proc/vmstat");
    uint64_t migrated = 0, numa_migrated = 0;
    if (vmstat.ok()) {
      migrated = Vmstat(*vmstat, "pgmigrate_success");
      numa_migrated = Vmstat(*vmstat, "numa_pages_migrated");
    }
    if (first_) base_migrated_ = migrated, base_numa_ = numa_migrated;
    CountAffinityChanges();
    first_ = false;
    return absl::StrCat(
        absl::StrFormat("%.3f", t_ns / 1e9), ",", local, ",", total, ",",
        run_node, ",", migrated - base_migrated_, ",",
        numa_migrated - base_numa_, ",", thread_changes_, ",", irq_changes_,
        ",", absl::StrReplaceAll(absl::StrJoin(irq_cpus_, "/"), {{",", ";"}}));
  }

 private:
  int NodeOfCpu(int cpu) const {
    return cpu >= 0 && cpu < static_cast<int>(topology_.cpu_node.size())
               ? topology_.cpu_node[cpu]
               : -1;
  }

  static std::vector<int> ChildrenOf(int parent) {
    std::vector<int> children;
    auto entries = ListDirectory("/proc");
    if (!entries.ok()) return children;
    for (const std::string& name : *entries) {
      int pid = 0;
      if (!absl::SimpleAtoi(name, &pid)) continue;
      auto text = ReadTextFile(Proc(pid, "stat"));
      if (!text.ok()) continue;
      auto stat = ParseProcStat(*text);
      if (stat.ok() && stat->ppid == parent) children.push_back(pid);
    }
    return children;
  }

  int RunNode() const {
    std::vector<int> nodes;
    for (int pid : pids_) {
      auto text = ReadTextFile(Proc(pid, "stat"));
      if (!text.ok()) continue;
      auto stat = ParseProcStat(*text);
      if (stat.ok()) nodes.push_back(NodeOfCpu(stat->processor));
    }
    return MajorityNode(nodes);
  }

  // From numa_maps, exact: a move_pages(2) query would miss the pages NUMA
  // balancing has just made PROT_NONE (6.1 reports them absent) and so
  // overstate the share while AutoNUMA works.
  void CountPages(int run_node, uint64_t* local, uint64_t* total) const {
    for (int pid : pids_) {
      auto text = ReadTextFile(Proc(pid, "numa_maps"));
      if (!text.ok()) continue;
      auto pages = ParseNumaMaps(*text, topology_, sysconf(_SC_PAGESIZE));
      if (!pages.ok()) continue;
      for (size_t i = 0; i < pages->size(); ++i) {
        *total += (*pages)[i];
        if (topology_.nodes[i].id == run_node) *local += (*pages)[i];
      }
    }
  }

  void CountNetRx(uint64_t t_ns, int run_node, uint64_t* local,
                  uint64_t* total) {
    auto text = ReadTextFile("/proc/softirqs");
    if (!text.ok()) return;
    auto counts = ParseSoftirqCounts(*text, "NET_RX");
    if (!counts.ok()) return;
    if (previous_.empty()) previous_ = *counts;
    for (size_t cpu = 0; cpu < counts->size() && cpu < previous_.size();
         ++cpu) {
      const uint64_t delta = (*counts)[cpu] - previous_[cpu];
      net_rx_total_ += delta;
      if (NodeOfCpu(static_cast<int>(cpu)) == run_node) net_rx_local_ += delta;
    }
    previous_ = *counts;
    window_.Add(t_ns, net_rx_local_, net_rx_total_);
    std::tie(*local, *total) = window_.Over(kWindowNs);
  }

  void CountAffinityChanges() {
    for (int pid : pids_) {
      auto tasks = ListDirectory(Proc(pid, "task"));
      if (!tasks.ok()) continue;
      for (const std::string& name : *tasks) {
        int tid = 0;
        cpu_set_t set;
        CPU_ZERO(&set);
        if (!absl::SimpleAtoi(name, &tid) ||
            sched_getaffinity(tid, sizeof(set), &set) != 0) {
          continue;
        }
        std::vector<int> cpus;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
          if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
        }
        Changed(affinity_[tid], FormatCpuList(cpus), &thread_changes_);
      }
    }
    for (size_t i = 0; i < irqs_.size(); ++i) {
      auto line = ReadFirstLine(
          absl::StrCat("/proc/irq/", irqs_[i], "/smp_affinity_list"));
      if (line.ok()) Changed(irq_cpus_[i], *line, &irq_changes_);
    }
  }

  // Records `now` in `last`, counting a change from a known value.
  void Changed(std::string& last, const std::string& now, int* changes) {
    if (!first_ && !last.empty() && last != now) ++*changes;
    last = now;
  }

  Topology topology_;
  std::vector<int> pids_;
  int parent_;
  std::vector<int> irqs_;
  bool first_ = true;
  uint64_t base_migrated_ = 0, base_numa_ = 0;
  std::vector<uint64_t> previous_;
  uint64_t net_rx_local_ = 0, net_rx_total_ = 0;
  WindowCounts window_;
  std::map<int, std::string> affinity_;
  std::vector<std::string> irq_cpus_;
  int thread_changes_ = 0, irq_changes_ = 0;
};

}  // namespace
}  // namespace locus

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "lab_sampler --pids=P[,P...]|--children_of=P [--irqs=N[,N...]] "
      "[--period_ms=150] "
      "[--seconds=30]: placement of processes over time, as CSV");
  absl::ParseCommandLine(argc, argv);
  auto pids = locus::ParseIds(absl::GetFlag(FLAGS_pids));
  auto irqs = locus::ParseIds(absl::GetFlag(FLAGS_irqs));
  if (!pids.ok() || !irqs.ok()) {
    std::fprintf(
        stderr, "lab_sampler: %s\n",
        std::string((pids.ok() ? irqs : pids).status().message()).c_str());
    return 2;
  }
  const int period_ms = absl::GetFlag(FLAGS_period_ms);
  const int parent = absl::GetFlag(FLAGS_children_of);
  if ((pids->empty() == (parent <= 0)) || period_ms <= 0) {
    std::fprintf(stderr,
                 "lab_sampler: needs --pids or --children_of, and a positive "
                 "--period_ms\n");
    return 2;
  }
  auto topology = locus::ReadTopology("/sys");
  if (!topology.ok()) {
    std::fprintf(stderr, "lab_sampler: %s\n",
                 std::string(topology.status().message()).c_str());
    return 1;
  }
  locus::Sampler sampler(*std::move(topology), *std::move(pids), parent,
                         *std::move(irqs));
  std::printf(
      "t_s,local,total,run_node,migrated,numa_migrated,thread_changes,"
      "irq_changes,irq_cpus\n");
  std::fflush(stdout);
  if (absl::GetFlag(FLAGS_start_on_stdin)) {
    char line[64];
    if (std::fgets(line, sizeof(line), stdin) == nullptr) {
      std::fprintf(stderr, "lab_sampler: stdin closed before the start\n");
      return 1;
    }
  }
  const uint64_t start = locus::NowNs();
  const uint64_t end =
      start + static_cast<uint64_t>(absl::GetFlag(FLAGS_seconds) * 1e9);
  const uint64_t period = uint64_t(period_ms) * 1'000'000;
  uint64_t next = start;
  for (uint64_t now = start; now <= end; now = locus::NowNs()) {
    std::printf("%s\n", sampler.Row(now - start).c_str());
    std::fflush(stdout);
    next += period;
    now = locus::NowNs();
    if (next <= now) {
      next = now;  // the sample took longer than the period: no catching up
      continue;
    }
    timespec wait = {static_cast<time_t>((next - now) / 1'000'000'000),
                     static_cast<long>((next - now) % 1'000'000'000)};
    nanosleep(&wait, nullptr);
  }
  return 0;
}
