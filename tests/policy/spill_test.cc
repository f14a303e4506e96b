// The soft home (placement.spill): table tests of Decide over a tick
// sequence (pressure streaks kept by ObservePressure, applied actions by
// RecordApplied, as the loop does), and properties under random noise.
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "policy/pressure.h"
#include "tests/common/snapshot_builder.h"
#include "tests/policy/plan_view.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using testing::HasNote;
using ::testing::HasSubstr;
using testing::kSecond;
using testing::MakeHost;
using testing::MakeWorker;
using testing::Migrations;
using testing::NodeCpus;
using testing::Pins;
using testing::Reasons;

constexpr uint64_t kMs = 1'000'000;

// The loop in miniature: each tick observes pressure, decides, applies
// every action (affinity kept per tid, as the kernel would) and records it.
class Loop {
 public:
  explicit Loop(v1::Policy policy = DefaultPolicy()) : policy_(policy) {}

  Plan Tick(Snapshot s) {
    s.now_ns = now_;
    for (Target& t : s.targets) {
      for (ThreadSample& thread : t.threads) {
        auto it = affinity_.find(thread.tid);
        if (it != affinity_.end()) thread.allowed_cpus = it->second;
      }
    }
    ObservePressure(history_, s, policy_);
    Plan plan = Decide(s, policy_, history_);
    for (const Action& a : plan.actions) {
      if (const auto* pin = std::get_if<PinThread>(&a.op)) {
        affinity_[pin->tid] = pin->cpus;
      }
      RecordApplied(history_, a, s.topology, s.now_ns);
    }
    now_ += kSecond;
    return plan;
  }
  v1::Policy& policy() { return policy_; }
  const History& history() const { return history_; }
  History& mutable_history() { return history_; }
  uint64_t now() const { return now_; }

 private:
  v1::Policy policy_;
  History history_;
  std::map<int32_t, std::vector<int>> affinity_;
  uint64_t now_ = 1000 * kSecond;
};

// Two nodes of two CPUs, each CPU busy as given (from every task).
Snapshot Host(double busy0, double busy1, int nodes = 2) {
  Snapshot s = MakeHost(nodes, 2);
  for (CpuSample& cpu : s.cpus) {
    cpu.busy_all = s.topology.cpu_node[cpu.cpu] == 0 ? busy0 : busy1;
  }
  return s;
}

// A worker pinned to `node` with its memory there, running `run_ms` of the
// tick there and waiting `wait_ms` for a CPU.
Target Worker(const Snapshot& s, int pid, int node, uint64_t wait_ms,
              uint64_t run_ms = 500) {
  Target t = MakeWorker(s, pid, node, node, node);
  t.threads[0].wait_ns = wait_ms * kMs;
  t.threads[0].runtime_ns[node] = run_ms * kMs;
  return t;
}

// Node 0 taken by hogs: its CPUs all busy, its worker runs 300 ms of the
// second and waits 300 ms.
Snapshot Hogged(double busy1 = 0.4) {
  Snapshot s = Host(1.0, busy1);
  s.targets.push_back(Worker(s, 100, 0, 300, 300));
  s.targets.push_back(Worker(s, 101, 1, 2));
  return s;
}

// Node 0 calm again: the hog has gone, the worker waits no more.
Snapshot Calm() {
  Snapshot s = Host(0.3, 0.4);
  s.targets.push_back(Worker(s, 100, 0, 1));
  s.targets.push_back(Worker(s, 101, 1, 2));
  return s;
}

TEST(SpillTest, WidensOnlyAfterTheSaturationLastsSustainS) {
  Loop loop;
  for (int t = 0; t < 3; ++t) {
    EXPECT_TRUE(Pins(loop.Tick(Hogged())).empty()) << "tick " << t;
  }
  Plan plan = loop.Tick(Hogged());
  std::vector<PinThread> pins = Pins(plan);
  ASSERT_EQ(pins.size(), 1u) << Reasons(plan);
  EXPECT_EQ(pins[0].tid, 100);
  EXPECT_EQ(pins[0].node, 0);  // its home stays node 0
  EXPECT_EQ(pins[0].spill_node, 1);
  EXPECT_THAT(pins[0].cpus, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("node 0 at 100% busy, 300.0 ms wait per second for "
                        "worker 100 (nginx): widened to nodes 0-1 (node 1 at "
                        "40% busy) for at least 30 s; its memory stays on "
                        "node 0"));
  EXPECT_TRUE(HasNote(plan, "1 worker(s) widened")) << Reasons(plan);
}

TEST(SpillTest, NeverToABusierNodeNorOneWithoutSpareCpu) {
  // Node 1 at busy_above (no spare CPU), or within 5 points of node 0's
  // busy (as busy, give or take a tick's noise).
  for (auto [busy0, busy1] : {std::pair{1.0, 0.9}, std::pair{0.93, 0.89}}) {
    Loop loop;
    for (int t = 0; t < 6; ++t) {
      Snapshot s = Hogged();
      for (CpuSample& cpu : s.cpus) {
        cpu.busy_all = s.topology.cpu_node[cpu.cpu] == 0 ? busy0 : busy1;
      }
      Plan plan = loop.Tick(s);
      EXPECT_TRUE(Pins(plan).empty()) << Reasons(plan);
      if (t >= 3) {
        EXPECT_TRUE(HasNote(plan, "no node with spare CPU")) << Reasons(plan);
      }
    }
  }
  // Busy, but with CPU to spare: the worker may compete there.
  Loop loop;
  Plan plan;
  for (int t = 0; t < 4; ++t) plan = loop.Tick(Hogged(/*busy1=*/0.85));
  EXPECT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
}

TEST(SpillTest, WidensToTheNearestNodeWithSpareCpu) {
  Loop loop;
  Snapshot s = Host(0.97, 0.2, 4);
  // Node 2 is nearer node 0 than nodes 1 and 3, though busier than them.
  s.topology.nodes[0].distances = {10, 21, 12, 21};
  s.cpus[4].busy_all = s.cpus[5].busy_all = 0.5;
  s.targets.push_back(Worker(s, 100, 0, 300));
  Plan plan;
  for (int t = 0; t < 4; ++t) plan = loop.Tick(s);
  ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Pins(plan)[0].spill_node, 2);
  EXPECT_THAT(Pins(plan)[0].cpus, ElementsAre(0, 1, 4, 5));
}

TEST(SpillTest, WidensTheFewestWorkersNeededLongestWaitFirst) {
  Loop loop;
  Snapshot s = Host(1.0, 0.2);
  // Two workers share node 0's two CPUs with hogs. The node is 25 points
  // over the calm line on each of its 2 CPUs: half a CPU to take off it,
  // which one worker running 500 ms there covers.
  s.targets.push_back(Worker(s, 100, 0, 100));
  s.targets.push_back(Worker(s, 101, 0, 400));
  s.targets.push_back(Worker(s, 102, 1, 0));
  s.targets.push_back(Worker(s, 103, 1, 0));
  Plan plan;
  for (int t = 0; t < 4; ++t) plan = loop.Tick(s);
  ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Pins(plan)[0].tid, 101);
  // Still saturated: the next one waits until the first's effect shows.
  EXPECT_TRUE(Pins(loop.Tick(s)).empty());
}

TEST(SpillTest, WithoutRuntimeFiguresTheWaitSaysHowManyAreNeeded) {
  // No scheduler sensor: no runtime at all. One CPU per node; node 0 is 25
  // points over the calm line, and one worker that waited 300 ms covers it.
  Snapshot s = MakeHost(2, 1);
  for (CpuSample& cpu : s.cpus) cpu.busy_all = cpu.cpu == 0 ? 1.0 : 0.2;
  for (int i = 0; i < 4; ++i) {
    Target t = Worker(s, 100 + i, i % 2, i % 2 == 0 ? 300 : 0, 0);
    t.threads[0].runtime_ns = {0, 0};
    s.targets.push_back(t);
  }
  Loop loop;
  Plan plan;
  for (int t = 0; t < 4; ++t) plan = loop.Tick(s);
  EXPECT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
}

TEST(SpillTest, NarrowsBackAfterTheCalmLastsAndTheDwellIsOver) {
  Loop loop;
  for (int t = 0; t < 4; ++t) loop.Tick(Hogged());  // widened at tick 3
  const uint64_t widened = loop.now() - kSecond;
  // The hog ends: calm from here on. The dwell (30 s) holds it widened,
  // then the calm streak (3 s, long done) lets it go at once.
  uint64_t narrowed = 0;
  for (int t = 0; t < 40 && narrowed == 0; ++t) {
    Plan plan = loop.Tick(Calm());
    for (const PinThread& pin : Pins(plan)) {
      EXPECT_EQ(pin.spill_node, -1);
      EXPECT_THAT(pin.cpus, ElementsAre(0, 1));
      EXPECT_THAT(plan.actions[0].reason,
                  HasSubstr("busy from other tasks for"));
      EXPECT_THAT(plan.actions[0].reason,
                  HasSubstr("worker 100 (nginx) narrowed back to node 0 cpus "
                            "0-1 after 30 s widened"));
      narrowed = loop.now() - kSecond;
    }
  }
  EXPECT_EQ(narrowed, widened + 30 * kSecond);
}

TEST(SpillTest, NarrowsWithinSustainSOfTheEndOfPressureAfterTheDwell) {
  Loop loop;
  for (int t = 0; t < 40; ++t) loop.Tick(Hogged());  // past the dwell
  const uint64_t hog_gone = loop.now();
  uint64_t narrowed = 0;
  for (int t = 0; t < 10 && narrowed == 0; ++t) {
    if (!Pins(loop.Tick(Calm())).empty()) narrowed = loop.now() - kSecond;
  }
  EXPECT_EQ(narrowed, hog_gone + 3 * kSecond);
}

TEST(SpillTest, StaysWidenedWhileTheHogRunsOnAfterTheDwell) {
  Loop loop;
  // Widened, the worker runs mostly on node 1 and no longer waits; its
  // home stays busy with the hog alone: not calm, so not narrowed.
  for (int t = 0; t < 4; ++t) loop.Tick(Hogged());
  Snapshot s = Hogged();
  s.targets[0].threads[0].wait_ns = 0;
  s.targets[0].threads[0].runtime_ns = {50 * kMs, 900 * kMs};
  s.targets[0].threads[0].cpu = 2;
  for (int t = 0; t < 60; ++t) {
    EXPECT_TRUE(Pins(loop.Tick(s)).empty()) << "tick " << t;
  }
}

TEST(SpillTest, NoPageMoveWhileSpilled) {
  // Its memory is on node 1 (remote from its home): unspilled, Decide moves
  // it home; widened, it leaves it where it is.
  auto remote_memory = [](Snapshot s) {
    s.targets[0] = MakeWorker(s, 100, 0, 0, 1);
    s.targets[0].threads[0].wait_ns = 300 * kMs;
    s.targets[0].threads[0].runtime_ns[0] = 300 * kMs;
    return s;
  };
  {
    Loop hard;
    hard.policy().mutable_placement()->mutable_spill()->set_enabled(false);
    EXPECT_FALSE(Migrations(hard.Tick(remote_memory(Hogged()))).empty());
  }
  Loop loop;
  for (int t = 0; t < 40; ++t) {
    Plan plan = loop.Tick(remote_memory(Hogged()));
    if (t < 3) continue;  // not widened yet: its pages may go home
    for (const MigratePages& m : Migrations(plan)) {
      EXPECT_NE(m.pid, 100) << "tick " << t << ": " << Reasons(plan);
    }
    const EntityHistory* entry = loop.history().Find({EntityKind::kTask, 100});
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->spill_node, 1) << "tick " << t;
  }
}

TEST(SpillTest, OffMeansAHardHomeAndNarrowsBackWhatWasWidened) {
  Loop loop;
  for (int t = 0; t < 4; ++t) loop.Tick(Hogged());
  loop.policy().mutable_placement()->mutable_spill()->set_enabled(false);
  Plan plan = loop.Tick(Hogged());
  ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Pins(plan)[0].spill_node, -1);
  EXPECT_THAT(plan.actions[0].reason, HasSubstr("placement.spill is off"));
  for (int t = 0; t < 10; ++t) EXPECT_TRUE(Pins(loop.Tick(Hogged())).empty());
}

TEST(SpillTest, PinToCpuWidensAndNarrowsToOneCpu) {
  Loop loop;
  loop.policy().mutable_placement()->set_pin_to(v1::Placement::PIN_TO_CPU);
  auto on_cpu1 = [](Snapshot s) {
    s.targets[0].threads[0].allowed_cpus = {1};
    s.targets[1].threads[0].allowed_cpus = {2};
    s.cpus[0].busy = 0.9;  // CPU 1 the less busy of node 0
    s.cpus[1].busy = 0.2;
    return s;
  };
  Plan plan;
  for (int t = 0; t < 4; ++t) plan = loop.Tick(on_cpu1(Hogged()));
  ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
  EXPECT_THAT(Pins(plan)[0].cpus, ElementsAre(0, 1, 2, 3));
  for (int t = 0; t < 40; ++t) {
    plan = loop.Tick(on_cpu1(Calm()));
    if (!Pins(plan).empty()) break;
  }
  ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
  EXPECT_THAT(Pins(plan)[0].cpus, ElementsAre(1));
}

// Two widened workers narrowed back in one tick with pin_to cpu go to two
// CPUs, as placement's pins home would (one chooser for both).
TEST(SpillTest, WorkersNarrowedTogetherGetCpusOfTheirOwn) {
  Loop loop;
  loop.policy().mutable_placement()->set_pin_to(v1::Placement::PIN_TO_CPU);
  Snapshot s = Host(0.3, 0.4);
  for (int pid : {100, 101}) {
    Target t = Worker(s, pid, 0, 1);
    t.threads[0].allowed_cpus = {0, 1, 2, 3};
    s.targets.push_back(t);
    EntityHistory& e =
        loop.mutable_history().entities[{EntityKind::kTask, pid}];
    e.node = 0;
    e.spill_node = 1;
    e.last_move_ns = e.spill_changed_ns = loop.now() - 600 * kSecond;
  }
  // Two more on node 1, each on a CPU of its own: the spread keeps 100 and
  // 101 homed on node 0.
  for (int pid : {102, 103}) {
    Target t = Worker(s, pid, 1, 1);
    t.threads[0].allowed_cpus = {pid - 100};
    s.targets.push_back(t);
  }
  Plan plan;
  std::vector<PinThread> pins;
  for (int t = 0; t < 5 && pins.empty(); ++t) {
    plan = loop.Tick(s);
    for (const PinThread& pin : Pins(plan)) {
      if (pin.tid == 100 || pin.tid == 101) pins.push_back(pin);
    }
  }
  ASSERT_EQ(pins.size(), 2u) << Reasons(plan);
  ASSERT_EQ(pins[0].cpus.size(), 1u);
  ASSERT_EQ(pins[1].cpus.size(), 1u);
  EXPECT_NE(pins[0].cpus[0], pins[1].cpus[0]) << Reasons(plan);
  EXPECT_LT(pins[0].cpus[0], 2);  // both on node 0
  EXPECT_LT(pins[1].cpus[0], 2);
}

// Properties over random noisy load: node 0's busy and its worker's wait
// swing around the thresholds, node 1's too.
struct Change {
  uint64_t at = 0;
  bool widen = false;
};

TEST(SpillPropertyTest, BoundedChangesAndOnlyUnderSustainedPressure) {
  int widenings = 0, narrowings = 0;  // over all seeds: the cases occur
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0, 1);
    Loop loop;
    const v1::Spill& spill = loop.policy().placement().spill();
    std::map<int32_t, std::vector<Change>> changes;
    int saturated_streak = 0;
    bool hog = false;
    for (int t = 0; t < 600; ++t) {
      if (t % 30 == 0) hog = unit(rng) < 0.5;  // a hog switching on and off
      const double busy0 = hog ? 0.85 + 0.15 * unit(rng) : 0.9 * unit(rng);
      const double busy1 = unit(rng);
      Snapshot s = Host(busy0, busy1);
      for (int i = 0; i < 3; ++i) {
        s.targets.push_back(Worker(s, 100 + i, 0, hog ? 200 * unit(rng) : 0));
      }
      s.targets.push_back(Worker(s, 110, 1, 50 * unit(rng)));
      const std::vector<NodePressure> p = MeasurePressure(s, spill);
      // A streak starts saturated and lasts while the node stays loaded.
      if (saturated_streak > 0 && p[0].loaded) {
        ++saturated_streak;
      } else {
        saturated_streak = p[0].saturated ? 1 : 0;
      }
      Plan plan = loop.Tick(s);
      int widened = 0;
      for (const PinThread& pin : Pins(plan)) {
        std::vector<Change>& list = changes[pin.tid];
        if (pin.spill_node < 0) {
          // A narrowing (after a widening), or placement's own pin home.
          if (!list.empty() && list.back().widen) {
            list.push_back({loop.now(), false});
            ++narrowings;
          }
          continue;
        }
        list.push_back({loop.now(), true});
        ++widenings;
        ++widened;
        // Only after sustain_s of saturation (ticks 0..sustain_s), and
        // only a worker that waits now.
        EXPECT_GT(saturated_streak, static_cast<int>(spill.sustain_s()));
        EXPECT_TRUE(p[0].saturated);
        // Never to a busier node, nor one without spare CPU.
        EXPECT_LT(p[pin.spill_node].busy, p[pin.node].busy);
        EXPECT_LT(p[pin.spill_node].busy, spill.busy_above());
        EXPECT_FALSE(p[pin.spill_node].saturated);
        EXPECT_EQ(pin.node, 0);  // node 1 is never saturated long enough
      }
      // The fewest needed: one worker's runtime (0.5 CPU) covers any excess
      // of a 2-CPU node over the calm line (at most 2 x 0.25).
      EXPECT_LE(widened, 1) << Reasons(plan);
      for (const MigratePages& m : Migrations(plan)) {
        const EntityHistory* e =
            loop.history().Find({EntityKind::kTask, m.pid});
        EXPECT_TRUE(e == nullptr || e->spill_node < 0);
      }
    }
    for (const auto& [tid, list] : changes) {
      for (size_t i = 1; i < list.size(); ++i) {
        // At most one change per worker per dwell_s: no ping-pong.
        EXPECT_GE(list[i].at - list[i - 1].at, spill.dwell_s() * kSecond);
        EXPECT_NE(list[i].widen, list[i - 1].widen);
      }
    }
  }
  EXPECT_GT(widenings, 40);
  EXPECT_GT(narrowings, 20);
}

// The first tick (from 0) at which a worker is widened when node 0 is
// saturated (busy and waiting) for `saturated` ticks in a row, then calm
// for one, over and over; -1 when it never is.
int FirstWidening(int saturated) {
  Loop loop;
  for (int t = 0; t < 300; ++t) {
    const bool on = t % (saturated + 1) < saturated;
    Snapshot s = Host(on ? 0.97 : 0.6, 0.2);
    s.targets.push_back(Worker(s, 100, 0, on ? 300 : 1));
    if (!Pins(loop.Tick(s)).empty()) return t;
  }
  return -1;
}

TEST(SpillPropertyTest, BurstsShorterThanSustainSNeverWiden) {
  const int sustain =
      static_cast<int>(DefaultPolicy().placement().spill().sustain_s());
  // Saturated for sustain_s ticks at most, then a calm one: never.
  EXPECT_EQ(FirstWidening(sustain), -1);
  EXPECT_EQ(FirstWidening(1), -1);
  // One tick longer is sustained pressure: widened as it ends.
  EXPECT_EQ(FirstWidening(sustain + 1), sustain);
}

// The hog never leaves node 0, but its worker's wait comes and goes: a
// client that sends in bursts leaves it idle some seconds. A tick of less
// waiting under the same load does not start the count again.
TEST(SpillPropertyTest, AWaitThatComesAndGoesUnderTheSameLoadStillWidens) {
  const int sustain =
      static_cast<int>(DefaultPolicy().placement().spill().sustain_s());
  for (int quiet : {1, 2, 5}) {
    SCOPED_TRACE(quiet);
    Loop loop;
    int widened_at = -1;
    for (int t = 0; t < 60 && widened_at < 0; ++t) {
      const bool waits = t % (quiet + 1) == 0;
      Snapshot s = Host(0.97, 0.2);
      s.targets.push_back(Worker(s, 100, 0, waits ? 300 : 1));
      if (!Pins(loop.Tick(s)).empty()) widened_at = t;
    }
    // At the first tick it waits once sustain_s has passed since it
    // first did.
    EXPECT_EQ(widened_at, (sustain + quiet) / (quiet + 1) * (quiet + 1));
  }
}

// A worker Locus pinned home is not widened within stability.dwell_s of
// that pin, however saturated its home: the pin's watch would read the
// widening as its harm.
TEST(SpillTest, NotWidenedWithinTheDwellOfItsLastMove) {
  Loop loop;
  Snapshot s = Hogged();
  PinThread home;
  home.pid = home.tid = 100;
  home.node = 0;
  home.cpus = {0, 1};
  RecordApplied(loop.mutable_history(), Action{home, "pinned home"}, s.topology,
                loop.now());
  const uint64_t pinned = loop.now();
  const uint64_t dwell = DefaultPolicy().stability().dwell_s() * kSecond;
  uint64_t widened = 0;
  for (int t = 0; t < 60 && widened == 0; ++t) {
    for (const PinThread& pin : Pins(loop.Tick(Hogged()))) {
      if (pin.spill_node >= 0) widened = loop.now() - kSecond;
    }
  }
  EXPECT_EQ(widened, pinned + dwell);
}

// A widened worker held down (one of its moves was reverted) stays as it
// is, even once its home is calm and the dwell is over.
TEST(SpillTest, AHeldWorkerIsNotNarrowed) {
  Loop loop;
  for (int t = 0; t < 4; ++t) loop.Tick(Hogged());
  auto entry = loop.mutable_history().entities.find({EntityKind::kTask, 100});
  ASSERT_NE(entry, loop.mutable_history().entities.end());
  ASSERT_EQ(entry->second.spill_node, 1);
  entry->second.held_until_ns = loop.now() + 3600 * kSecond;
  for (int t = 0; t < 60; ++t) {
    EXPECT_TRUE(Pins(loop.Tick(Calm())).empty()) << "tick " << t;
  }
}

}  // namespace
}  // namespace locus
