#include "agent/experiment/units.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/host/topology.h"
#include "google/protobuf/util/time_util.h"

namespace locus {
namespace {

using experiment::Arm;
using google::protobuf::util::TimeUtil;

// The node id a target's threads ran on most over the last tick, else the
// node of its first thread's CPU; -1 when unknown.
int MainNode(const Target& target, const Topology& topology) {
  std::vector<uint64_t> runtime(topology.nodes.size(), 0);
  for (const ThreadSample& thread : target.threads) {
    for (size_t n = 0; n < thread.runtime_ns.size() && n < runtime.size(); ++n)
      runtime[n] += thread.runtime_ns[n];
  }
  auto most = std::max_element(runtime.begin(), runtime.end());
  if (most != runtime.end() && *most > 0)
    return topology.nodes[most - runtime.begin()].id;
  for (const ThreadSample& thread : target.threads) {
    if (thread.cpu >= 0 &&
        static_cast<size_t>(thread.cpu) < topology.cpu_node.size())
      return topology.cpu_node[thread.cpu];
  }
  return -1;
}

// A small, seeded, stable draw (splitmix64) for the arm of a late joiner.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Its workers: the targets marked so, or, where none is, every target but
// a master. Thread workers are not units: the work sensor counts per
// process, and one process's threads cannot be told apart there.
bool IsWorker(const Target& target, bool marked) {
  if (target.process != 0) return false;
  return marked ? target.role == TargetRole::kWorker
                : target.role != TargetRole::kMaster;
}

bool AnyMarked(const Snapshot& snapshot) {
  return std::any_of(
      snapshot.targets.begin(), snapshot.targets.end(),
      [](const Target& t) { return t.role == TargetRole::kWorker; });
}

Unit UnitOf(const Target& target, const Topology& topology) {
  Unit unit;
  unit.pid = target.pid;
  unit.comm = target.comm;
  unit.node = MainNode(target, topology);
  unit.instance = target.instance;
  return unit;
}

}  // namespace

size_t CountWorkers(const Snapshot& snapshot) {
  const bool marked = AnyMarked(snapshot);
  return std::count_if(snapshot.targets.begin(), snapshot.targets.end(),
                       [&](const Target& t) { return IsWorker(t, marked); });
}

std::vector<Unit> WorkersOf(const Snapshot& snapshot) {
  const bool marked = AnyMarked(snapshot);
  std::vector<Unit> units;
  for (const Target& target : snapshot.targets) {
    if (IsWorker(target, marked))
      units.push_back(UnitOf(target, snapshot.topology));
  }
  return units;
}

namespace {

// How many nodes the target's threads may run on, all of them together.
int NodesAllowed(const Target& target, const Topology& topology) {
  absl::flat_hash_set<int> nodes;
  for (const ThreadSample& thread : target.threads) {
    for (int cpu : thread.allowed_cpus) {
      const int node = NodeOfCpu(topology, cpu);
      if (node >= 0) nodes.insert(node);
    }
  }
  return static_cast<int>(nodes.size());
}

}  // namespace

void CountWidened(RunningExperiment& run, const Snapshot& snapshot) {
  // An A/A treats no arm: a worker someone else confined says nothing of
  // the soft home.
  if (run.header.aa()) return;
  absl::flat_hash_map<int32_t, const Target*> by_pid;
  for (const Target& target : snapshot.targets) by_pid[target.pid] = &target;
  for (Unit& unit : run.units) {
    if (!unit.active || unit.arm != Arm::kTreated) continue;
    auto it = by_pid.find(unit.pid);
    if (it == by_pid.end()) continue;
    const int nodes = NodesAllowed(*it->second, snapshot.topology);
    if (nodes == 1) {
      unit.confined = true;
      ++run.confined_ticks;
    } else if (unit.confined && nodes > 1) {
      ++run.widened_ticks;
    }
  }
}

std::vector<int32_t> TrackUnits(
    RunningExperiment& run, const Snapshot& snapshot,
    absl::FunctionRef<std::optional<int>(int32_t)> home_of) {
  absl::flat_hash_set<int32_t> present;
  for (const Target& target : snapshot.targets) present.insert(target.pid);
  absl::flat_hash_set<int32_t> known;
  for (Unit& unit : run.units) {
    known.insert(unit.pid);
    if (unit.active && !present.contains(unit.pid)) {
      unit.active = false;
      unit.lost_at = run.intervals;
      run.notes.push_back(
          absl::StrCat("worker ", unit.pid, " (", ArmWord(unit.arm),
                       ") exited after interval ", run.intervals));
    }
  }
  std::vector<int32_t> joined;
  const bool marked = AnyMarked(snapshot);
  for (const Target& target : snapshot.targets) {
    // Only a worker not yet a unit costs more than this look-up per tick.
    if (known.contains(target.pid) || !IsWorker(target, marked)) continue;
    Unit unit = UnitOf(target, snapshot.topology);
    if (std::optional<int> home = home_of(unit.pid)) unit.node = *home;
    // Active units per arm in its stratum: the new worker evens them.
    int treated = 0, control = 0;
    for (const Unit& other : run.units) {
      if (!other.active || other.node != unit.node ||
          other.instance != unit.instance)
        continue;
      (other.arm == Arm::kTreated ? treated : control) += 1;
    }
    if (treated != control) {
      unit.arm = treated < control ? Arm::kTreated : Arm::kControl;
    } else {
      unit.arm = Mix(run.seed ^ static_cast<uint64_t>(unit.pid)) & 1
                     ? Arm::kTreated
                     : Arm::kControl;
    }
    unit.joined_at = run.intervals;
    run.notes.push_back(absl::StrCat("worker ", unit.pid, " joined the ",
                                     ArmWord(unit.arm), " arm after interval ",
                                     run.intervals,
                                     " (a new worker: reload or respawn)"));
    joined.push_back(unit.pid);
    run.units.push_back(std::move(unit));
  }
  return joined;
}

namespace {

// A counter's growth; 0 where it went back (a thread that exited takes its
// waits and switches with it).
uint64_t Grown(uint64_t now, uint64_t last) {
  return now > last ? now - last : 0;
}

// Adds a unit's interval up to `now` to its totals, unless it is still
// settling into its arm (the burn-in: shown in the series, left out of its
// totals, and counted); true when added.
bool Count(RunningExperiment& run, Unit& unit, const WorkSample& now) {
  const uint64_t b = now.bytes_sent - unit.last.bytes_sent;
  const uint64_t a = now.accepted - unit.last.accepted;
  const uint64_t c = now.cpu_ns - unit.last.cpu_ns;
  const WorkSample last = std::exchange(unit.last, now);
  if (unit.burned < run.burn_in) {
    ++unit.burned;
    ++run.burned;
    return false;
  }
  unit.bytes += b;
  unit.accepted += a;
  unit.cpu_ns += c;
  unit.wait_ns += Grown(now.wait_ns, last.wait_ns);
  unit.voluntary_switches +=
      Grown(now.voluntary_switches, last.voluntary_switches);
  unit.involuntary_switches +=
      Grown(now.involuntary_switches, last.involuntary_switches);
  unit.requests += Grown(now.requests, last.requests);
  if (unit.service_us.size() < now.service_us.size())
    unit.service_us.resize(now.service_us.size());
  for (size_t i = 0; i < now.service_us.size(); ++i) {
    unit.service_us[i] += Grown(
        now.service_us[i], i < last.service_us.size() ? last.service_us[i] : 0);
  }
  ++unit.intervals;
  return true;
}

}  // namespace

void AddInterval(RunningExperiment& run,
                 const absl::flat_hash_map<int32_t, WorkSample>& samples,
                 int64_t end_unix_ns) {
  ++run.intervals;
  // Per arm: bytes and CPU time of this interval.
  double bytes[2] = {0, 0}, cpu[2] = {0, 0};
  std::vector<std::pair<Unit*, double>> logs;  // log bytes per CPU-second
  for (Unit& unit : run.units) {
    if (!unit.active) continue;
    auto it = samples.find(unit.pid);
    if (it == samples.end()) {
      unit.active = false;
      unit.lost_at = run.intervals - 1;
      run.notes.push_back(
          absl::StrCat("worker ", unit.pid, " (", ArmWord(unit.arm),
                       ") exited after interval ", unit.lost_at));
      continue;
    }
    const WorkSample& now = it->second;
    if (!unit.baseline || now.bytes_sent < unit.last.bytes_sent ||
        now.accepted < unit.last.accepted || now.cpu_ns < unit.last.cpu_ns) {
      // Its first read (it joined since the last interval), or a counter
      // that went back: this interval starts its count.
      unit.last = now;
      unit.baseline = true;
      continue;
    }
    const uint64_t b = now.bytes_sent - unit.last.bytes_sent;
    const uint64_t c = now.cpu_ns - unit.last.cpu_ns;
    const int arm = static_cast<int>(unit.arm);
    bytes[arm] += static_cast<double>(b);
    cpu[arm] += static_cast<double>(c) / 1e9;
    if (Count(run, unit, now) && b > 0 && c > 0)
      logs.push_back({&unit, std::log(static_cast<double>(b) / (c / 1e9))});
  }
  // Each worker's noise about all workers in the same interval: what moves
  // every worker at once (the traffic, the host) cancels between the arms
  // and is left out, as the estimate leaves it out.
  double mean = 0;
  for (const auto& [unit, y] : logs) mean += y / logs.size();
  for (auto& [unit, y] : logs) {
    const double d = y - mean;
    ++unit->logs;
    const double delta = d - unit->log_mean;
    unit->log_mean += delta / unit->logs;
    unit->log_m2 += delta * (d - unit->log_mean);
  }
  run.host_bytes += static_cast<uint64_t>(bytes[0] + bytes[1]);
  run.host_wall_ns += Grown(end_unix_ns, run.counted_at_unix_ns);
  run.counted_at_unix_ns = end_unix_ns;
  v1::ExperimentInterval interval;
  interval.set_index(run.intervals);
  *interval.mutable_end() = TimeUtil::NanosecondsToTimestamp(end_unix_ns);
  const int t = static_cast<int>(Arm::kTreated);
  const int c = static_cast<int>(Arm::kControl);
  interval.set_treated_bytes_per_cpu_second(cpu[t] > 0 ? bytes[t] / cpu[t] : 0);
  interval.set_control_bytes_per_cpu_second(cpu[c] > 0 ? bytes[c] / cpu[c] : 0);
  run.series.push_back(std::move(interval));
}

void AddPreInterval(RunningExperiment& run,
                    const absl::flat_hash_map<int32_t, WorkSample>& samples) {
  ++run.pre_intervals;
  for (Unit& unit : run.units) {
    auto it = samples.find(unit.pid);
    if (!unit.active || it == samples.end()) continue;
    const WorkSample& now = it->second;
    if (unit.baseline && now.bytes_sent >= unit.last.bytes_sent &&
        now.accepted >= unit.last.accepted && now.cpu_ns >= unit.last.cpu_ns) {
      unit.pre_bytes += now.bytes_sent - unit.last.bytes_sent;
      unit.pre_accepted += now.accepted - unit.last.accepted;
      unit.pre_cpu_ns += now.cpu_ns - unit.last.cpu_ns;
    }
    unit.last = now;
    unit.baseline = true;
  }
}

std::vector<experiment::UnitTotals> Totals(const RunningExperiment& run,
                                           bool connections) {
  std::vector<experiment::UnitTotals> totals;
  // The strata are the assignment's: (instance, node), numbered densely.
  std::map<std::pair<int32_t, int>, int> strata;
  for (const Unit& unit : run.units) {
    if (unit.intervals == 0) continue;
    experiment::UnitTotals t;
    t.stratum = strata.try_emplace({unit.instance, unit.node}, strata.size())
                    .first->second;
    t.arm = unit.arm;
    t.work = static_cast<double>(connections ? unit.accepted : unit.bytes);
    t.cpu_seconds = static_cast<double>(unit.cpu_ns) / 1e9;
    t.pre_work =
        static_cast<double>(connections ? unit.pre_accepted : unit.pre_bytes);
    t.pre_cpu_seconds = static_cast<double>(unit.pre_cpu_ns) / 1e9;
    t.intervals = static_cast<int>(unit.intervals);
    totals.push_back(t);
  }
  return totals;
}

absl::flat_hash_set<int32_t> Untreated(const RunningExperiment& run) {
  absl::flat_hash_set<int32_t> pids;
  for (const Unit& unit : run.units) {
    if (run.header.aa() || run.in_pre || unit.arm == Arm::kControl)
      pids.insert(unit.pid);
  }
  return pids;
}

std::vector<int32_t> ActivePids(const RunningExperiment& run,
                                std::optional<experiment::Arm> arm) {
  std::vector<int32_t> pids;
  for (const Unit& unit : run.units) {
    if (unit.active && (!arm || unit.arm == *arm)) pids.push_back(unit.pid);
  }
  return pids;
}

}  // namespace locus
