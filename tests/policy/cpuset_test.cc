// Decide() with cgroup cpusets on 2-, 4- and 8-node hosts: homes only where
// a worker may both run and keep its memory, quotas over the nodes a pod may
// use, pins within its CPUs, page moves only to its memory nodes, and
// workers the kubelet places left alone. Then a property over generated
// cpusets: no planned action is one the kernel would refuse.
#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"
#include "tests/policy/plan_view.h"

namespace locus {
namespace {

using testing::ActionsOf;
using ::testing::ElementsAre;
using testing::HasNote;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeHost;
using testing::MakeNicIrq;
using testing::MakeWorker;
using testing::NodeCpus;
using testing::Reasons;

std::vector<int> Range(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

// A worker in a cgroup whose cpuset is `cpus` and `mems`; its thread's
// affinity is the cpuset's CPUs, as the kernel keeps it.
Target InCgroup(Target t, std::vector<int> cpus, std::vector<int> mems,
                const std::string& cgroup = "/system.slice/nginx.service",
                const std::string& placed_by = "") {
  for (ThreadSample& thread : t.threads) {
    thread.allowed_cpus = cpus;
    if (std::find(cpus.begin(), cpus.end(), thread.cpu) == cpus.end()) {
      thread.cpu = cpus.front();
    }
  }
  t.cgroup = std::make_shared<CgroupCpuset>(CgroupCpuset{
      .path = cgroup,
      .cpus = std::move(cpus),
      .mems = std::move(mems),
      .placed_by = placed_by,
  });
  return t;
}

// The case: nginx in a cpuset of node 1's CPUs. Spreading used to
// home one worker on node 0, a pin the kernel refused every hold-down.
TEST(CpusetDecideTest, APodOnOneNodeIsAlreadyHome) {
  Snapshot s = MakeHost(2, 4);
  s.targets.push_back(InCgroup(MakeWorker(s, 100, 1, -1, 1), Range(4, 7), {1}));
  s.targets.push_back(InCgroup(MakeWorker(s, 101, 1, -1, 1), Range(4, 7), {1}));
  Plan plan = Decide(s, DefaultPolicy(), History());
  EXPECT_THAT(plan.actions, IsEmpty()) << Reasons(plan);
  EXPECT_TRUE(HasNote(plan,
                      "2 worker(s) in /system.slice/nginx.service: homes only "
                      "on node 1: cpuset.cpus allows only node 1"))
      << Reasons(plan);
  EXPECT_TRUE(HasNote(plan, "converged: 2 of 2 workers on their home node"))
      << Reasons(plan);
}

// Both nodes' CPUs, memory only on node 0: node 1 would make every access
// remote with no page move to fix it.
TEST(CpusetDecideTest, MemsNarrowerThanCpusDecideTheHome) {
  Snapshot s = MakeHost(2, 4);
  s.targets.push_back(InCgroup(MakeWorker(s, 100, 1, -1, 0), Range(0, 7), {0}));
  s.targets.push_back(InCgroup(MakeWorker(s, 101, 1, -1, 0), Range(0, 7), {0}));
  s.targets[1].threads[0].cpu = 5;
  Plan plan = Decide(s, DefaultPolicy(), History());
  std::vector<PinThread> pins = ActionsOf<PinThread>(plan);
  ASSERT_EQ(pins.size(), 2u) << Reasons(plan);
  for (const PinThread& pin : pins) {
    EXPECT_EQ(pin.node, 0);
    EXPECT_EQ(pin.cpus, NodeCpus(s, 0));
  }
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("; home node 0: cpuset.mems allows only 0"));
  EXPECT_THAT(ActionsOf<MigratePages>(plan), IsEmpty()) << "already on node 0";
}

// Pages left on node 1 by an earlier cpuset go home to node 0, never the
// other way.
TEST(CpusetDecideTest, PagesMoveOnlyToAllowedNodes) {
  Snapshot s = MakeHost(2, 4);
  s.targets.push_back(InCgroup(MakeWorker(s, 100, 0, 0, 1), Range(0, 3), {0}));
  Plan plan = Decide(s, DefaultPolicy(), History());
  std::vector<MigratePages> moves = ActionsOf<MigratePages>(plan);
  ASSERT_EQ(moves.size(), 1u) << Reasons(plan);
  EXPECT_EQ(moves[0].to_node, 0);
  // A worker confined to node 1 with memory allowed only on node 0 stays
  // where it may run; nothing moves its pages to node 1.
  Snapshot t = MakeHost(2, 4);
  t.targets.push_back(InCgroup(MakeWorker(t, 100, 1, 1, 1), Range(4, 7), {0}));
  plan = Decide(t, DefaultPolicy(), History());
  EXPECT_THAT(plan.actions, IsEmpty()) << Reasons(plan);
  EXPECT_TRUE(HasNote(plan, "its memory stays remote")) << Reasons(plan);
}

// A pod on nodes 1 and 2 of four spreads over those two only.
TEST(CpusetDecideTest, SpreadCountsOnlyThePodsNodes) {
  Snapshot s = MakeHost(4, 4);
  for (int pid = 100; pid < 104; ++pid) {
    s.targets.push_back(
        InCgroup(MakeWorker(s, pid, 1, -1, 1), Range(4, 11), {1, 2}));
  }
  Plan plan = Decide(s, DefaultPolicy(), History());
  std::multiset<int> homes;
  for (const PinThread& pin : ActionsOf<PinThread>(plan)) {
    homes.insert(pin.node);
    EXPECT_EQ(pin.node, 2) << "two stay on node 1, two go to node 2";
    EXPECT_EQ(pin.cpus, NodeCpus(s, 2));
  }
  EXPECT_EQ(homes.size(), 2u) << Reasons(plan);
}

// near_nic with the NIC on node 0, a pod on nodes 2 and 3: its nearest
// allowed node fills first, and no worker is homed off its nodes.
TEST(CpusetDecideTest, NearNicCountsOnlyThePodsNodes) {
  Snapshot s = MakeHost(4, 2);
  s.topology.nodes[0].distances = {10, 20, 15, 30};
  s.topology.nodes[2].distances = {15, 20, 10, 20};
  s.topology.nodes[3].distances = {30, 20, 20, 10};
  s.irqs.push_back(MakeNicIrq(s, 50, "eth0", 0, 0, NodeCpus(s, 0)));
  for (int pid = 100; pid < 104; ++pid) {
    s.targets.push_back(
        InCgroup(MakeWorker(s, pid, 3, -1, 3), Range(4, 7), {2, 3}));
  }
  v1::Policy policy = DefaultPolicy();
  policy.mutable_placement()->set_strategy(v1::Placement::STRATEGY_NEAR_NIC);
  policy.mutable_placement()->set_node_capacity(1.0);
  policy.mutable_irqs()->set_enabled(false);
  Plan plan = Decide(s, policy, History());
  std::vector<PinThread> pins = ActionsOf<PinThread>(plan);
  ASSERT_EQ(pins.size(), 2u) << Reasons(plan);
  for (const PinThread& pin : pins) EXPECT_EQ(pin.node, 2) << Reasons(plan);
}

// On eight nodes, a cpuset of two CPUs of node 5 and one of node 6, memory
// on node 5: pinned to node 5's CPUs it may use, not all of node 5's.
TEST(CpusetDecideTest, PinsAreTheNodesCpusTheCgroupAllows) {
  Snapshot s = MakeHost(8, 8);
  s.targets.push_back(
      InCgroup(MakeWorker(s, 100, 6, -1, 5), {40, 41, 48}, {5}));
  s.targets[0].threads[0].cpu = 48;
  Plan plan = Decide(s, DefaultPolicy(), History());
  std::vector<PinThread> pins = ActionsOf<PinThread>(plan);
  ASSERT_EQ(pins.size(), 1u) << Reasons(plan);
  EXPECT_EQ(pins[0].node, 5);
  EXPECT_THAT(pins[0].cpus, ElementsAre(40, 41));
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("pin to node 5 cpus 40-41 (expected gain"));
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("home node 5: cpuset.cpus allows only node 5-6, "
                        "cpuset.mems allows only 5"));
  // Confined to two CPUs of node 5: already home.
  s.targets[0] = InCgroup(MakeWorker(s, 100, 5, -1, 5), {42, 43}, {5});
  plan = Decide(s, DefaultPolicy(), History());
  EXPECT_THAT(plan.actions, IsEmpty()) << Reasons(plan);
}

// A memory-only node (CXL, HBM) as the pod's only memory: homed on the node
// nearest it, and no page move to a node it may not use.
TEST(CpusetDecideTest, ACpuLessMemoryNodeHomesTheWorkerNearestIt) {
  Snapshot s = MakeHost(3, 4);
  s.topology.nodes[2].cpus.clear();
  for (int cpu = 8; cpu < 12; ++cpu) s.topology.cpu_node[cpu] = -1;
  s.topology.nodes[0].distances = {10, 20, 30};
  s.topology.nodes[1].distances = {20, 10, 14};
  s.topology.nodes[2].distances = {30, 14, 10};
  s.targets.push_back(InCgroup(MakeWorker(s, 100, 0, -1, 2), Range(0, 7), {2}));
  Plan plan = Decide(s, DefaultPolicy(), History());
  std::vector<PinThread> pins = ActionsOf<PinThread>(plan);
  ASSERT_EQ(pins.size(), 1u) << Reasons(plan);
  EXPECT_EQ(pins[0].node, 1);
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("home node 1: cpuset.mems allows only 2: its memory "
                        "stays remote, homed nearest it"));
  EXPECT_THAT(ActionsOf<MigratePages>(plan), IsEmpty()) << Reasons(plan);
}

// The kubelet placed it: no pin, no page move, said once; IRQ steering
// still counts it as a consumer.
TEST(CpusetDecideTest, AContainerTheKubeletPlacesIsLeftAlone) {
  Snapshot s = MakeHost(2, 4);
  s.targets.push_back(
      InCgroup(MakeWorker(s, 100, 0, -1, 1), {2, 3}, {0},
               "/kubepods.slice/pod-a.slice/cri-1.scope",
               "the kubelet: static CPU manager, exclusive cpus 2-3"));
  s.irqs.push_back(MakeNicIrq(s, 50, "eth0", 0, 1, NodeCpus(s, 1)));
  Plan plan = Decide(s, DefaultPolicy(), History());
  EXPECT_THAT(ActionsOf<PinThread>(plan), IsEmpty()) << Reasons(plan);
  EXPECT_THAT(ActionsOf<MigratePages>(plan), IsEmpty()) << Reasons(plan);
  std::vector<SetIrqAffinity> irqs = ActionsOf<SetIrqAffinity>(plan);
  ASSERT_EQ(irqs.size(), 1u) << Reasons(plan);
  EXPECT_LT(irqs[0].cpus[0], 4) << "to its consumer's node 0";
  EXPECT_TRUE(HasNote(plan,
                      "1 worker(s) in /kubepods.slice/pod-a.slice/cri-1.scope: "
                      "left alone, placed by the kubelet: static CPU manager, "
                      "exclusive cpus 2-3"))
      << Reasons(plan);
  s.irqs.clear();
  plan = Decide(s, DefaultPolicy(), History());
  EXPECT_TRUE(HasNote(plan,
                      "converged: 0 of 0 workers on their home node, 1 "
                      "placed by the kubelet"))
      << Reasons(plan);
}

// A cpuset changed at run time (node 1 -> node 0): the home we gave it on
// node 1 yields, and its pages follow to node 0.
TEST(CpusetDecideTest, ACpusetChangedAtRunTimeIsFollowed) {
  Snapshot s = MakeHost(2, 4);
  s.targets.push_back(InCgroup(MakeWorker(s, 100, 1, -1, 1), Range(4, 7), {1}));
  History history;
  Action pinned;
  pinned.op =
      PinThread{.pid = 100, .tid = 100, .node = 1, .cpus = NodeCpus(s, 1)};
  RecordApplied(history, pinned, s.topology,
                s.now_ns - 3600 * testing::kSecond);
  EXPECT_THAT(Decide(s, DefaultPolicy(), history).actions, IsEmpty());
  s.targets[0] = InCgroup(MakeWorker(s, 100, 0, -1, 1), Range(0, 3), {0});
  Plan plan = Decide(s, DefaultPolicy(), history);
  EXPECT_THAT(ActionsOf<PinThread>(plan), IsEmpty())
      << "the cpuset keeps it home";
  std::vector<MigratePages> moves = ActionsOf<MigratePages>(plan);
  ASSERT_EQ(moves.size(), 1u) << Reasons(plan);
  EXPECT_EQ(moves[0].to_node, 0);
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("home node 0: cpuset.cpus allows only node 0"));
}

int Pick(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A random cpuset on `s`: CPUs of one or more nodes (some of each), memory
// on one or more nodes (a CPU-less one among them at times).
void RandomCpuset(std::mt19937& rng, const Snapshot& s, CgroupCpuset& pod) {
  const int nodes = static_cast<int>(s.topology.nodes.size());
  while (pod.cpus.empty()) {
    for (int n = 0; n < nodes; ++n) {
      if (Pick(rng, 0, 2) != 0) continue;
      for (int cpu : s.topology.nodes[n].cpus) {
        if (Pick(rng, 0, 3) != 0) pod.cpus.push_back(cpu);
      }
    }
  }
  while (pod.mems.empty()) {
    for (int n = 0; n < nodes; ++n) {
      if (Pick(rng, 0, 2) == 0) pod.mems.push_back(n);
    }
  }
}

// A host of 2, 4 or 8 nodes (the last CPU-less at times) and workers of up
// to three pods with random cpusets, running, pinned and keeping pages
// anywhere their cpuset allows and some where it no longer does.
Snapshot RandomHost(std::mt19937& rng) {
  const int nodes = std::vector<int>{2, 4, 8}[Pick(rng, 0, 2)];
  Snapshot s = MakeHost(nodes, Pick(rng, 1, 4));
  if (nodes > 2 && Pick(rng, 0, 2) == 0) {
    for (int cpu : s.topology.nodes.back().cpus) s.topology.cpu_node[cpu] = -1;
    s.topology.nodes.back().cpus.clear();
  }
  std::vector<std::shared_ptr<CgroupCpuset>> pods(Pick(rng, 1, 3));
  for (size_t p = 0; p < pods.size(); ++p) {
    pods[p] = std::make_shared<CgroupCpuset>();
    RandomCpuset(rng, s, *pods[p]);
    pods[p]->path = absl::StrCat("/pod", p);
    if (Pick(rng, 0, 4) == 0) pods[p]->placed_by = "the kubelet: test";
  }
  const int workers = Pick(rng, 1, 8);
  for (int i = 0; i < workers; ++i) {
    const auto& pod = pods[Pick(rng, 0, static_cast<int>(pods.size()) - 1)];
    const int cpu =
        pod->cpus[Pick(rng, 0, static_cast<int>(pod->cpus.size()) - 1)];
    const int run = s.topology.cpu_node[cpu];
    Target t = MakeWorker(s, 100 + i, run, -1, Pick(rng, 0, nodes - 1));
    t.cgroup = pod;
    t.threads[0].cpu = cpu;
    t.threads[0].allowed_cpus = pod->cpus;
    if (Pick(rng, 0, 2) == 0) {  // pinned by someone within its cpuset
      std::vector<int> on_node;
      for (int c : pod->cpus) {
        if (s.topology.cpu_node[c] == run) on_node.push_back(c);
      }
      t.threads[0].allowed_cpus = on_node;
    }
    s.targets.push_back(t);
  }
  if (Pick(rng, 0, 1) == 0) {
    const int node = Pick(rng, 0, nodes - 1);
    if (!s.topology.nodes[node].cpus.empty()) {
      s.irqs.push_back(
          MakeNicIrq(s, 50, "eth0", 0, node, s.topology.nodes[node].cpus));
    }
  }
  return s;
}

v1::Policy RandomPolicy(std::mt19937& rng) {
  v1::Policy p = DefaultPolicy();
  p.mutable_placement()->set_strategy(Pick(rng, 0, 1)
                                          ? v1::Placement::STRATEGY_SPREAD
                                          : v1::Placement::STRATEGY_NEAR_NIC);
  p.mutable_placement()->set_pin_to(
      Pick(rng, 0, 1) ? v1::Placement::PIN_TO_NODE : v1::Placement::PIN_TO_CPU);
  p.mutable_placement()->set_node_capacity(Pick(rng, 1, 4) / 2.0);
  p.mutable_stability()->set_max_moves_per_tick(100);
  return p;
}

// No planned action is one the kernel refuses for a cpuset, or one that
// moves what the kubelet placed.
TEST(CpusetPropertyTest, NoPlannedActionIsForbiddenByTheCpuset) {
  std::mt19937 rng(21);
  int pins = 0, migrations = 0;
  for (int round = 0; round < 2000; ++round) {
    const Snapshot s = RandomHost(rng);
    const Plan plan = Decide(s, RandomPolicy(rng), History());
    SCOPED_TRACE(absl::StrCat("round ", round, "\n", Reasons(plan)));
    for (const Action& a : plan.actions) {
      if (auto* pin = std::get_if<PinThread>(&a.op)) {
        const CgroupCpuset& t = *s.targets[pin->pid - 100].cgroup;
        ++pins;
        EXPECT_EQ(t.placed_by, "");
        ASSERT_FALSE(pin->cpus.empty());
        for (int cpu : pin->cpus) {
          EXPECT_TRUE(std::binary_search(t.cpus.begin(), t.cpus.end(), cpu))
              << "cpu " << cpu;
          EXPECT_EQ(s.topology.cpu_node[cpu], pin->node);
        }
      } else if (auto* move = std::get_if<MigratePages>(&a.op)) {
        const CgroupCpuset& t = *s.targets[move->pid - 100].cgroup;
        ++migrations;
        EXPECT_EQ(t.placed_by, "");
        EXPECT_NE(std::find(t.mems.begin(), t.mems.end(), move->to_node),
                  t.mems.end());
      }
    }
  }
  // The generator reaches both kinds of action, not only empty plans.
  EXPECT_GT(pins, 500);
  EXPECT_GT(migrations, 100);
}

}  // namespace
}  // namespace locus
