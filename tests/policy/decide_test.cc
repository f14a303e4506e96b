// Decide() on hand-built scenarios over 1, 2, 4 and 8 node hosts. Each row
// builds a snapshot (and maybe history), adjusts the default policy, and
// checks the plan: which actions, with which targets, and the numbers in
// their reasons.
#include "policy/decide.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"
#include "tests/policy/plan_view.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using testing::HasNote;
using ::testing::HasSubstr;
using testing::Irqs;
using testing::kGiB;
using testing::kMiB;
using testing::kSecond;
using testing::MakeHost;
using testing::MakeNicIrq;
using testing::MakeWorker;
using testing::Migrations;
using testing::NodeCpus;
using testing::Pins;
using testing::Reasons;

struct Scenario {
  std::string name;
  std::function<Snapshot()> snapshot;
  std::function<void(v1::Policy&)> policy;
  std::function<History(const Snapshot&)> history;
  std::function<void(const Snapshot&, const Plan&)> check;
};

// Workers balanced over `nodes` nodes, one per node, pinned with local memory.
Snapshot Balanced(int nodes, int cpus_per_node) {
  Snapshot s = MakeHost(nodes, cpus_per_node);
  for (int n = 0; n < nodes; ++n) {
    s.targets.push_back(MakeWorker(s, 100 + n, n, n, n));
  }
  return s;
}

// 8 nodes of 1 CPU; 20 workers all on node 0, unpinned, memory-light.
Snapshot TwentyWorkersOnNodeZero() {
  Snapshot s = MakeHost(8, 1);
  for (int i = 0; i < 20; ++i) {
    s.targets.push_back(MakeWorker(s, 200 + i, 0, -1, 0, 0));
  }
  return s;
}

std::vector<Scenario> Scenarios() {
  std::vector<Scenario> rows;

  rows.push_back({"one_node_host_plans_nothing_and_says_why",
                  [] {
                    Snapshot s = MakeHost(1, 4);
                    s.targets.push_back(MakeWorker(s, 100, 0, -1, 0));
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty());
                    EXPECT_TRUE(HasNote(plan,
                                        "1 NUMA node with CPUs: nothing "
                                        "to balance"))
                        << Reasons(plan);
                  }});

  rows.push_back({"converged_two_nodes_gives_empty_plan",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.targets.push_back(MakeWorker(s, 110, 0, 0, 0));
                    s.targets.push_back(MakeWorker(s, 111, 1, 1, 1));
                    s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 0, {1}));
                    s.irqs.push_back(MakeNicIrq(s, 41, "eth0", 1, 0, {5}));
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
                    EXPECT_TRUE(
                        HasNote(plan,
                                "converged: 4 of 4 workers on their home "
                                "node, 2 NIC IRQs with their consumers"))
                        << Reasons(plan);
                  }});

  rows.push_back(
      {"misplaced_memory_two_nodes_moves_pages_home",
       [] {
         Snapshot s = Balanced(2, 4);
         // Pinned to node 1, all 100 MiB on node 0: every fault remote.
         s.targets[1] = MakeWorker(s, 101, 1, 1, 0, 25'600);
         return s;
       },
       {},
       {},
       [](const Snapshot&, const Plan& plan) {
         EXPECT_TRUE(Pins(plan).empty()) << Reasons(plan);
         ASSERT_EQ(Migrations(plan).size(), 1u) << Reasons(plan);
         MigratePages m = Migrations(plan)[0];
         EXPECT_EQ(m.pid, 101);
         EXPECT_EQ(m.to_node, 1);
         EXPECT_EQ(m.max_bytes, 100 * kMiB);
         EXPECT_EQ(plan.actions[0].reason,
                   "worker 101 (nginx) 100% of NUMA faults (1000 of 1000) off "
                   "home node 1 -> migrate 100 MiB of 100 MiB to node 1 "
                   "(budget 256 MiB/s, expected gain 100%)");
       }});

  rows.push_back({"one_worker_keeps_its_node_when_the_split_is_even",
                  [] {
                    // One worker, two nodes of 2 CPUs: either node is its
                    // fair share, so the one it is confined to stays.
                    Snapshot s = MakeHost(2, 2);
                    s.targets.push_back(MakeWorker(s, 100, 1, 1, 1));
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
                  }});

  // Worker 101 confined to node 1 with `pages` per node.
  auto worker_with_pages = [](std::vector<uint64_t> pages) {
    return [pages] {
      Snapshot s = Balanced(2, 4);
      Target w = MakeWorker(s, 101, 1, 1, 1, 25'600);
      w.resident_pages.assign(pages.begin(), pages.end());
      testing::SetFaultsFromPages(w, 1);
      s.targets[1] = w;
      return s;
    };
  };
  // 80% of its pages on node 1: 20% remote is below the threshold that
  // starts a migration.
  auto mostly_home = worker_with_pages({5'120, 20'480});
  auto memory_moved = [](bool settled) {
    return [settled](const Snapshot& s) {
      History h;
      EntityHistory& e = h.entities[{EntityKind::kMemory, 101}];
      e.last_move_ns = s.now_ns - kSecond;
      e.node = 1;
      e.settled_ns = settled ? s.now_ns - kSecond : 0;
      return h;
    };
  };
  rows.push_back(
      {"migration_under_way_finishes_below_the_threshold",
       mostly_home,
       {},
       memory_moved(false),
       [](const Snapshot&, const Plan& plan) {
         ASSERT_EQ(Migrations(plan).size(), 1u) << Reasons(plan);
         EXPECT_EQ(Migrations(plan)[0].to_node, 1);
         EXPECT_EQ(Migrations(plan)[0].max_bytes, 20 * kMiB);
         EXPECT_EQ(plan.actions[0].reason,
                   "worker 101 (nginx) migration under way, 20% of resident "
                   "pages still off home node 1 -> migrate 20 MiB of 20 MiB "
                   "to node 1 (budget 256 MiB/s, expected gain 20%)");
       }});
  rows.push_back({"settled_memory_below_the_threshold_stays",
                  mostly_home,
                  {},
                  memory_moved(true),
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Migrations(plan).empty()) << Reasons(plan);
                  }});
  // 80% of its pages on node 0, and a pass (never a move) that found none
  // of them movable: shared or file pages. Asking again every tick would
  // find nothing again.
  auto mostly_away = worker_with_pages({20'480, 5'120});
  auto settled_ago = [](uint64_t ago_ns) {
    return [ago_ns](const Snapshot& s) {
      History h;
      EntityHistory& e = h.entities[{EntityKind::kMemory, 101}];
      e.settled_ns = s.now_ns - ago_ns;
      return h;
    };
  };
  rows.push_back({"unmovable_memory_is_not_asked_again_within_the_dwell",
                  mostly_away,
                  {},
                  settled_ago(kSecond),
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Migrations(plan).empty()) << Reasons(plan);
                  }});
  rows.push_back({"unmovable_memory_is_asked_again_after_the_dwell",
                  mostly_away,
                  {},
                  settled_ago(60 * kSecond),
                  [](const Snapshot&, const Plan& plan) {
                    ASSERT_EQ(Migrations(plan).size(), 1u) << Reasons(plan);
                    EXPECT_EQ(Migrations(plan)[0].to_node, 1);
                  }});
  rows.push_back({"below_the_threshold_without_a_migration_stays",
                  mostly_home,
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Migrations(plan).empty()) << Reasons(plan);
                  }});

  rows.push_back({"remote_faults_on_pages_autonuma_moved_home_still_count",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.numa_balancing_mode = 1;
                    // Confined to node 1, its 100 MiB still on node 0; NUMA
                    // balancing moves a page per fault, so every fault was
                    // remote but counts on node 1's memory, where the page
                    // went.
                    Target w = MakeWorker(s, 101, 1, 1, 0, 25'600);
                    w.threads[0].faults = {NodeFaults{}, NodeFaults{0, 1000}};
                    s.targets[1] = w;
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    ASSERT_EQ(Migrations(plan).size(), 1u) << Reasons(plan);
                    EXPECT_EQ(Migrations(plan)[0].to_node, 1);
                    EXPECT_EQ(Migrations(plan)[0].max_bytes, 100 * kMiB);
                    EXPECT_THAT(
                        plan.actions[0].reason,
                        HasSubstr("100% of resident pages off home node 1"));
                  }});

  rows.push_back({"remote_faults_on_home_memory_with_pages_home_move_nothing",
                  [] {
                    // The same faults, but its pages are home already: faults
                    // taken before it was confined there.
                    Snapshot s = Balanced(2, 4);
                    Target w = MakeWorker(s, 101, 1, 1, 1, 25'600);
                    w.threads[0].faults = {NodeFaults{}, NodeFaults{0, 1000}};
                    s.targets[1] = w;
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Migrations(plan).empty()) << Reasons(plan);
                  }});

  rows.push_back(
      {"misplaced_memory_within_budget",
       [] {
         Snapshot s = Balanced(2, 4);
         s.targets[0] = MakeWorker(s, 100, 0, 0, 1, 1 * kGiB / 4096);
         s.targets[1] = MakeWorker(s, 101, 1, 1, 0, 1 * kGiB / 4096);
         return s;
       },
       [](v1::Policy& p) { p.mutable_memory()->set_budget_mb_per_s(300); },
       {},
       [](const Snapshot&, const Plan& plan) {
         uint64_t total = 0;
         for (const MigratePages& m : Migrations(plan)) total += m.max_bytes;
         EXPECT_EQ(total, 300 * kMiB) << Reasons(plan);
         EXPECT_EQ(Migrations(plan).size(), 1u);
         EXPECT_TRUE(HasNote(plan,
                             "1 page migration(s) deferred: budget of "
                             "300 MiB this tick spent"))
             << Reasons(plan);
       }});

  rows.push_back(
      {"threads_bouncing_across_nodes_four_nodes_get_pinned",
       [] {
         Snapshot s = Balanced(4, 2);
         // Worker 103 is not pinned and splits its time between nodes 2 and
         // 3 with 40 cross-node migrations; its memory is on node 3.
         Target t = MakeWorker(s, 103, 2, -1, 3);
         t.threads[0].runtime_ns = {0, 0, 250'000'000, 250'000'000};
         t.threads[0].cross_node_migrations = 40;
         // Its faults are on node 3's memory: local while it runs there.
         t.threads[0].faults[3] = {500, 500};
         s.targets[3] = t;
         return s;
       },
       {},
       {},
       [](const Snapshot& s, const Plan& plan) {
         ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
         PinThread pin = Pins(plan)[0];
         EXPECT_EQ(pin.tid, 103);
         EXPECT_EQ(pin.node, 3);
         EXPECT_EQ(pin.cpus, NodeCpus(s, 3));
         EXPECT_EQ(plan.actions[0].reason,
                   "worker 103 (nginx) 50% of runtime off node 3, 50% remote "
                   "faults, 40 cross-node migrations/s -> pin to node 3 cpus "
                   "6-7 (expected gain 50%)");
       }});

  rows.push_back(
      {"irq_on_far_node_follows_its_consumers",
       [] {
         Snapshot s = Balanced(2, 2);
         // Node 0's worker takes 90% of NET_RX; the single-queue NIC sits on
         // node 1.
         s.targets[0].threads[0].net_rx_softirq_ns = 9'000'000;
         s.targets[1].threads[0].net_rx_softirq_ns = 1'000'000;
         s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 1, {2, 3}, 5000));
         // CPU 1 has less softirq time than CPU 0.
         s.cpus[0].softirq_ns[kSoftirqNetRx] = 3'000'000;
         s.cpus[1].softirq_ns[kSoftirqNetRx] = 1'200'000;
         return s;
       },
       {},
       {},
       [](const Snapshot&, const Plan& plan) {
         ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
         EXPECT_EQ(Irqs(plan)[0].irq, 40);
         EXPECT_THAT(Irqs(plan)[0].cpus, ElementsAre(1));
         EXPECT_EQ(plan.actions[0].reason,
                   "irq 40 (eth0 queue 0, eth0-rx-0) 100% of 5000 interrupts "
                   "off node 0, its consumers on node 0 (90% of NET_RX 10.0 "
                   "ms) -> cpu 1 on node 0 (least softirq: 1.2 ms, expected "
                   "gain 80%)");
       }});

  rows.push_back({"irq_queues_shared_between_nodes_like_their_consumers",
                  [] {
                    Snapshot s = Balanced(2, 2);
                    for (int q = 0; q < 4; ++q) {
                      s.irqs.push_back(
                          MakeNicIrq(s, 40 + q, "eth0", q, 1, {2}));
                    }
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    // Equal consumers: two queues stay on node 1, two go to
                    // node 0 and are spread over its CPUs.
                    std::vector<SetIrqAffinity> irqs = Irqs(plan);
                    ASSERT_EQ(irqs.size(), 2u) << Reasons(plan);
                    EXPECT_EQ(irqs[0].irq, 42);
                    EXPECT_EQ(irqs[1].irq, 43);
                    EXPECT_NE(irqs[0].cpus, irqs[1].cpus);
                    for (const SetIrqAffinity& i : irqs) {
                      ASSERT_EQ(i.cpus.size(), 1u);
                      EXPECT_LT(i.cpus[0], 2);
                    }
                  }});

  rows.push_back({"kernel_managed_irq_is_left_alone",
                  [] {
                    Snapshot s = Balanced(2, 2);
                    s.targets[1] = MakeWorker(s, 101, 0, 0, 0);
                    IrqSample irq = MakeNicIrq(s, 40, "eth0", 0, 1, {3});
                    irq.managed = true;
                    s.irqs.push_back(irq);
                    return s;
                  },
                  [](v1::Policy& p) {
                    p.mutable_placement()->set_enabled(false);
                    p.mutable_memory()->set_enabled(false);
                  },
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Irqs(plan).empty()) << Reasons(plan);
                    EXPECT_TRUE(HasNote(plan, "1 kernel-managed NIC IRQ(s)"))
                        << Reasons(plan);
                  }});

  rows.push_back(
      {"more_workers_than_cpus_eight_nodes_spread_by_cpus",
       TwentyWorkersOnNodeZero,
       [](v1::Policy& p) {
         p.mutable_stability()->set_max_moves_per_tick(100);
         p.mutable_placement()->set_pin_to(v1::Placement::PIN_TO_CPU);
       },
       {},
       [](const Snapshot&, const Plan& plan) {
         std::map<int, int> per_node;
         for (const PinThread& pin : Pins(plan)) {
           ++per_node[pin.node];
           ASSERT_EQ(pin.cpus.size(), 1u);
           EXPECT_EQ(pin.cpus[0], pin.node);  // 1 CPU per node
         }
         // 20 over 8 equal nodes: 3,3,3,3,2,2,2,2; node 0's 3 already run
         // there (nothing to gain by pinning them), the 17 others move.
         EXPECT_EQ(per_node,
                   (std::map<int, int>{
                       {1, 3}, {2, 3}, {3, 3}, {4, 2}, {5, 2}, {6, 2}, {7, 2}}))
             << Reasons(plan);
       }});

  rows.push_back(
      {"max_moves_per_tick_caps_the_plan",
       TwentyWorkersOnNodeZero,
       {},
       {},
       [](const Snapshot&, const Plan& plan) {
         EXPECT_EQ(Pins(plan).size(), 8u) << Reasons(plan);
         EXPECT_TRUE(HasNote(plan, "9 move(s) deferred: max_moves_per_tick=8"))
             << Reasons(plan);
       }});

  rows.push_back({"one_node_full_gets_no_pages",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.targets[1] = MakeWorker(s, 101, 1, 1, 0);
                    // Node 1: 64 GiB with 5 GiB free, under its 10% reserve.
                    s.topology.nodes[1].mem_free_bytes = 5 * kGiB;
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
                    EXPECT_TRUE(HasNote(plan,
                                        "node 1 full: free memory at its 10% "
                                        "reserve, pages not moved there"))
                        << Reasons(plan);
                  }});

  // Whichever candidate finds a node full first (the one with the most to
  // gain, here worker 101's home, node 1), the notes come in node order.
  rows.push_back({"full_nodes_are_noted_in_node_order",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.targets[0] = MakeWorker(s, 100, 0, 0, 1);
                    s.targets[0].resident_pages = {10'000, 15'000};
                    testing::SetFaultsFromPages(s.targets[0], 0);
                    s.targets[1] = MakeWorker(s, 101, 1, 1, 0);
                    for (Node& node : s.topology.nodes) {
                      node.mem_free_bytes = 5 * kGiB;  // under 10% of 64
                    }
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
                    std::vector<std::string> full;
                    for (const std::string& note : plan.notes) {
                      if (note.find(" full: ") != std::string::npos) {
                        full.push_back(note.substr(0, note.find(':')));
                      }
                    }
                    EXPECT_EQ(full, (std::vector<std::string>{"node 0 full",
                                                              "node 1 full"}))
                        << Reasons(plan);
                  }});

  rows.push_back({"near_nic_fills_the_nic_node_then_spills",
                  [] {
                    Snapshot s = MakeHost(2, 2);
                    for (int i = 0; i < 3; ++i) {
                      s.targets.push_back(MakeWorker(s, 300 + i, 0, -1, 0, 0));
                    }
                    s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 1, {2}));
                    return s;
                  },
                  [](v1::Policy& p) {
                    p.mutable_placement()->set_strategy(
                        v1::Placement::STRATEGY_NEAR_NIC);
                    p.mutable_irqs()->set_enabled(false);
                  },
                  {},
                  [](const Snapshot& s, const Plan& plan) {
                    // Node 1 (the NIC's) takes 2 workers (1 per CPU); the third
                    // stays.
                    std::vector<PinThread> pins = Pins(plan);
                    ASSERT_EQ(pins.size(), 2u) << Reasons(plan);
                    for (const PinThread& pin : pins) {
                      EXPECT_EQ(pin.node, 1);
                      EXPECT_EQ(pin.cpus, NodeCpus(s, 1));
                    }
                    EXPECT_EQ(pins[0].tid, 301);
                    EXPECT_EQ(pins[1].tid, 302);
                  }});

  rows.push_back(
      {"dwell_blocks_moving_a_recent_move_elsewhere",
       [] {
         Snapshot s = MakeHost(2, 1);
         s.targets.push_back(MakeWorker(s, 100, 0, 0, 0, 0));
         s.targets.push_back(MakeWorker(s, 101, 0, 0, 0, 0));
         return s;
       },
       {},
       [](const Snapshot& s) {
         // Both were pinned to node 0 ten seconds ago; the spread now wants
         // one on node 1, but not within the 30 s dwell.
         History h;
         for (int pid : {100, 101}) {
           h.entities[{EntityKind::kTask, pid}] = {s.now_ns - 10 * kSecond, 0,
                                                   0};
         }
         return h;
       },
       [](const Snapshot&, const Plan& plan) {
         EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
         EXPECT_TRUE(HasNote(plan, "1 entity(ies) within dwell time (30 s)"))
             << Reasons(plan);
       }});

  rows.push_back({"after_dwell_the_spread_moves_one",
                  [] {
                    Snapshot s = MakeHost(2, 1);
                    s.targets.push_back(MakeWorker(s, 100, 0, 0, 0, 0));
                    s.targets.push_back(MakeWorker(s, 101, 0, 0, 0, 0));
                    return s;
                  },
                  {},
                  [](const Snapshot& s) {
                    History h;
                    for (int pid : {100, 101}) {
                      h.entities[{EntityKind::kTask, pid}] = {
                          s.now_ns - 31 * kSecond, 0, 0};
                    }
                    return h;
                  },
                  [](const Snapshot&, const Plan& plan) {
                    ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
                    EXPECT_EQ(Pins(plan)[0].tid, 101);
                    EXPECT_EQ(Pins(plan)[0].node, 1);
                  }});

  rows.push_back({"held_down_worker_is_left_alone",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.targets[1] = MakeWorker(s, 101, 1, 1, 0);
                    return s;
                  },
                  {},
                  [](const Snapshot& s) {
                    History h;
                    Action pin;
                    pin.op = PinThread{101, 101, 1, {4, 5, 6, 7}};
                    HoldDown(h, pin, s.now_ns + 100 * kSecond);
                    return h;
                  },
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
                  }});

  rows.push_back(
      {"gain_below_threshold_is_no_move",
       [] {
         Snapshot s = Balanced(2, 2);
         // Unpinned, 95% of its time on its node: not worth a move.
         Target t = MakeWorker(s, 101, 1, -1, 1);
         t.threads[0].runtime_ns = {25'000'000, 475'000'000};
         s.targets[1] = t;
         return s;
       },
       {},
       {},
       [](const Snapshot&, const Plan& plan) {
         EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
         EXPECT_TRUE(HasNote(plan, "1 possible move(s) below min_gain 10%"))
             << Reasons(plan);
       }});

  rows.push_back({"dry_run_still_plans",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.targets[1] = MakeWorker(s, 101, 1, 1, 0);
                    return s;
                  },
                  [](v1::Policy& p) { p.set_mode(v1::Policy::MODE_DRY_RUN); },
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_EQ(Migrations(plan).size(), 1u);
                    EXPECT_TRUE(HasNote(plan, "dry_run")) << Reasons(plan);
                  }});

  rows.push_back({"only_targeted_processes_move",
                  [] {
                    Snapshot s = Balanced(2, 4);
                    s.targets[1] = MakeWorker(s, 101, 1, 1, 0);
                    s.targets[1].comm = "postgres";
                    Target master = MakeWorker(s, 99, 1, 1, 0);
                    master.role = TargetRole::kMaster;
                    s.targets.push_back(master);
                    return s;
                  },
                  {},
                  {},
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
                  }});

  // The host model is refreshed on its own thread: the snapshot after a move
  // may still show the entity where it was. What we moved within its dwell
  // to where the plan wants it is in place, not moved a second time.
  rows.push_back(
      {"snapshot_older_than_our_pin_does_not_pin_again",
       [] {
         Snapshot s = MakeHost(2, 2);
         s.targets.push_back(MakeWorker(s, 100, 0, 0, 0, 0));
         // Pinned to node 1 a second ago; the model still has it
         // unpinned on node 0.
         s.targets.push_back(MakeWorker(s, 101, 0, -1, 0, 0));
         return s;
       },
       {},
       [](const Snapshot& s) {
         History h;
         h.entities[{EntityKind::kTask, 101}] = {s.now_ns - 1 * kSecond, 1, 0};
         return h;
       },
       [](const Snapshot&, const Plan& plan) {
         EXPECT_TRUE(Pins(plan).empty()) << Reasons(plan);
         EXPECT_TRUE(HasNote(plan, "converged: 2 of 2 workers"))
             << Reasons(plan);
       }});

  rows.push_back(
      {"snapshot_older_than_our_irq_move_does_not_move_it_again",
       [] {
         Snapshot s = Balanced(2, 2);
         s.targets[1].threads[0].net_rx_softirq_ns = 9'000'000;
         // Moved to CPU 2 a second ago; the model still shows it
         // on node 0's CPUs, where its last interrupts landed.
         s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 0, {0, 1}));
         return s;
       },
       [](v1::Policy& p) {
         p.mutable_placement()->set_enabled(false);
         p.mutable_memory()->set_enabled(false);
       },
       [](const Snapshot& s) {
         History h;
         h.entities[{EntityKind::kIrq, 40}] = {s.now_ns - 1 * kSecond, 1, 0};
         return h;
       },
       [](const Snapshot&, const Plan& plan) {
         EXPECT_TRUE(Irqs(plan).empty()) << Reasons(plan);
       }});

  // Moving something straight back to where we took it from, less than
  // hold_down_s ago, is refused: a signal that flips must not move an IRQ
  // back and forth one dwell apart.
  // IRQ 40 moved to node 1 `seconds_ago`, from node `left` (kSeveralNodes:
  // from CPUs of several).
  auto irq_moved_from = [](int left, uint64_t seconds_ago) {
    return [left, seconds_ago](const Snapshot& s) {
      History h;
      EntityHistory moved;
      moved.last_move_ns = s.now_ns - seconds_ago * kSecond;
      moved.node = 1;
      moved.left_node = left;
      h.entities[{EntityKind::kIrq, 40}] = moved;
      return h;
    };
  };
  auto consumers_back_on_node_zero = [] {
    Snapshot s = Balanced(2, 2);
    s.targets[0].threads[0].net_rx_softirq_ns = 9'000'000;
    s.targets[1].threads[0].net_rx_softirq_ns = 1'000'000;
    s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 1, {2}, 5000));
    return s;
  };
  rows.push_back({"irq_not_moved_back_to_the_node_we_took_it_from",
                  consumers_back_on_node_zero,
                  {},
                  irq_moved_from(0, 60),  // past its 30 s dwell
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Irqs(plan).empty()) << Reasons(plan);
                    EXPECT_TRUE(HasNote(plan,
                                        "1 entity(ies) not moved back to the "
                                        "node we took them from"))
                        << Reasons(plan);
                  }});
  rows.push_back({"irq_moved_back_after_hold_down",
                  consumers_back_on_node_zero,
                  {},
                  irq_moved_from(0, 301),  // hold_down_s is 300
                  [](const Snapshot&, const Plan& plan) {
                    ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
                    EXPECT_THAT(Irqs(plan)[0].cpus, ElementsAre(0));
                  }});
  // Taken from CPUs on several nodes, it was served on each of them: going
  // on to another within hold_down_s is going back too.
  rows.push_back({"irq_taken_from_several_nodes_stays_within_hold_down",
                  consumers_back_on_node_zero,
                  {},
                  irq_moved_from(kSeveralNodes, 60),
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Irqs(plan).empty()) << Reasons(plan);
                    EXPECT_TRUE(HasNote(plan, "not moved back"))
                        << Reasons(plan);
                  }});
  rows.push_back({"irq_taken_from_several_nodes_moves_after_hold_down",
                  consumers_back_on_node_zero,
                  {},
                  irq_moved_from(kSeveralNodes, 301),
                  [](const Snapshot&, const Plan& plan) {
                    ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
                    EXPECT_THAT(Irqs(plan)[0].cpus, ElementsAre(0));
                  }});
  rows.push_back({"irq_moved_back_when_its_node_is_no_longer_allowed",
                  consumers_back_on_node_zero,
                  [](v1::Policy& p) { p.mutable_irqs()->set_cpus("0-1"); },
                  irq_moved_from(0, 60),
                  [](const Snapshot&, const Plan& plan) {
                    ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
                  }});
  rows.push_back({"worker_not_pinned_back_to_the_node_we_took_it_from",
                  [] {
                    Snapshot s = MakeHost(2, 1);
                    s.targets.push_back(MakeWorker(s, 100, 1, 1, 1, 0));
                    s.targets.push_back(MakeWorker(s, 101, 1, 1, 1, 0));
                    return s;
                  },
                  {},
                  [](const Snapshot& s) {
                    // 100 is held down on node 1, so the spread wants 101 on
                    // node 0: where we pinned it away from a minute ago.
                    History h;
                    Action pin;
                    pin.op = PinThread{100, 100, 1, {1}};
                    HoldDown(h, pin, s.now_ns + 100 * kSecond);
                    EntityHistory moved;
                    moved.last_move_ns = s.now_ns - 60 * kSecond;
                    moved.node = 1;
                    moved.left_node = 0;
                    h.entities[{EntityKind::kTask, 101}] = moved;
                    return h;
                  },
                  [](const Snapshot&, const Plan& plan) {
                    EXPECT_TRUE(Pins(plan).empty()) << Reasons(plan);
                    EXPECT_TRUE(HasNote(plan, "not moved back"))
                        << Reasons(plan);
                  }});

  return rows;
}

class DecideScenarioTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(DecideScenarioTest, Plan) {
  const Scenario& row = GetParam();
  Snapshot snapshot = row.snapshot();
  v1::Policy policy = DefaultPolicy();
  // Rows leave `policy` and `history` empty when the defaults do.
  if (row.policy) row.policy(policy);
  History history = row.history ? row.history(snapshot) : History();
  Plan plan = Decide(snapshot, policy, history);
  row.check(snapshot, plan);
  // Pure: the same inputs give the same plan.
  Plan again = Decide(snapshot, policy, history);
  EXPECT_EQ(Reasons(plan), Reasons(again));
}

INSTANTIATE_TEST_SUITE_P(Scenarios, DecideScenarioTest,
                         ::testing::ValuesIn(Scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& info) {
                           return info.param.name;
                         });

// A process name is anyone's to choose: the reasons that name it (shown by
// explain, logs, the metrics stream and journald) carry it escaped, as made.
TEST(DecideReasons, NameATargetEscaped) {
  const std::string comm = "ngi\x1b[2J\nx";
  Snapshot s = TwentyWorkersOnNodeZero();
  for (Target& t : s.targets) t.comm = comm;
  v1::Policy policy = DefaultPolicy();
  policy.mutable_targets()->clear_comm();
  policy.mutable_targets()->add_comm(comm);
  Plan plan = Decide(s, policy, History());
  ASSERT_FALSE(Pins(plan).empty()) << Reasons(plan);
  for (const Action& a : plan.actions) {
    EXPECT_THAT(a.reason, HasSubstr("(ngi\\x1b[2J\\nx")) << a.reason;
    EXPECT_EQ(a.reason.find_first_of("\x1b\n"), std::string::npos) << a.reason;
  }
}

// The same situations on 2, 4 and 8 nodes (2 CPUs each): the move targets
// the right node whatever the host's size, and nothing else moves.
class DecideAcrossNodesTest : public ::testing::TestWithParam<int> {};

TEST_P(DecideAcrossNodesTest, MisplacedMemoryGoesHome) {
  const int nodes = GetParam();
  Snapshot s = Balanced(nodes, 2);
  const int last = nodes - 1;
  s.targets[last] = MakeWorker(s, 100 + last, last, last, 0);
  Plan plan = Decide(s, DefaultPolicy(), History());
  ASSERT_EQ(plan.actions.size(), 1u) << Reasons(plan);
  ASSERT_EQ(Migrations(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Migrations(plan)[0].pid, 100 + last);
  EXPECT_EQ(Migrations(plan)[0].to_node, last);
}

TEST_P(DecideAcrossNodesTest, BouncingWorkerIsPinnedWhereItsMemoryIs) {
  const int nodes = GetParam();
  Snapshot s = Balanced(nodes, 2);
  const int last = nodes - 1;
  Target t = MakeWorker(s, 100 + last, last, -1, last);
  t.threads[0].runtime_ns.assign(nodes, 0);
  t.threads[0].runtime_ns[last - 1] = 300'000'000;
  t.threads[0].runtime_ns[last] = 200'000'000;
  t.threads[0].cross_node_migrations = 25;
  s.targets[last] = t;
  Plan plan = Decide(s, DefaultPolicy(), History());
  ASSERT_EQ(Pins(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Pins(plan)[0].node, last);
  EXPECT_EQ(Pins(plan)[0].cpus, NodeCpus(s, last));
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("60% of runtime off node " + std::to_string(last)));
}

TEST_P(DecideAcrossNodesTest, IrqOnTheFarNodeComesToItsConsumers) {
  const int nodes = GetParam();
  Snapshot s = Balanced(nodes, 2);
  for (Target& t : s.targets) t.threads[0].net_rx_softirq_ns = 100'000;
  s.targets[0].threads[0].net_rx_softirq_ns = 50'000'000;
  s.irqs.push_back(
      MakeNicIrq(s, 60, "eth0", 0, nodes - 1, NodeCpus(s, nodes - 1)));
  s.cpus[0].softirq_ns[kSoftirqNetRx] = 900'000;
  s.cpus[1].softirq_ns[kSoftirqNetRx] = 100'000;
  Plan plan = Decide(s, DefaultPolicy(), History());
  ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Irqs(plan)[0].cpus, std::vector<int>{1});
  EXPECT_EQ(plan.actions.size(), 1u) << Reasons(plan);
}

TEST_P(DecideAcrossNodesTest, BalancedHostIsConverged) {
  Snapshot s = Balanced(GetParam(), 2);
  Plan plan = Decide(s, DefaultPolicy(), History());
  EXPECT_TRUE(plan.actions.empty()) << Reasons(plan);
}

INSTANTIATE_TEST_SUITE_P(Nodes, DecideAcrossNodesTest,
                         ::testing::Values(2, 4, 8));

// Consumers' NET_RX split wobbling around the middle, tick after tick: the
// IRQ stays where it is (gain 2-4% < min_gain 10%).
TEST(DecideTest, IrqStaysWhileConsumerSplitWobblesInsideTheBand) {
  v1::Policy policy = DefaultPolicy();
  for (int nodes : {2, 8}) {
    Snapshot s = Balanced(nodes, 1);
    s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 0, {0}));
    for (int tick = 0; tick < 10; ++tick) {
      // The IRQ's node alternates between a little more and a little less
      // than the others.
      for (int n = 0; n < nodes; ++n) {
        s.targets[n].threads[0].net_rx_softirq_ns = 10'000'000;
      }
      s.targets[0].threads[0].net_rx_softirq_ns =
          tick % 2 == 0 ? 9'000'000 : 11'000'000;
      s.now_ns += kSecond;
      Plan plan = Decide(s, policy, History());
      EXPECT_TRUE(plan.actions.empty())
          << nodes << " nodes, tick " << tick << "\n"
          << Reasons(plan);
    }
    // A real shift (node 1 takes 60% more than node 0) does move it.
    s.targets[1].threads[0].net_rx_softirq_ns = 10'000'000 * nodes;
    Plan plan = Decide(s, policy, History());
    ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
    EXPECT_EQ(Irqs(plan)[0].cpus, std::vector<int>{1});
  }
}

TEST(DecideTest, RecordAppliedMakesThePinTheHome) {
  Snapshot s = MakeHost(2, 2);
  History h;
  Action pin;
  pin.op = PinThread{7, 7, 1, {2, 3}};
  RecordApplied(h, pin, s.topology, 5 * kSecond);
  const EntityHistory* e = h.Find({EntityKind::kTask, 7});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->node, 1);
  EXPECT_EQ(e->last_move_ns, 5 * kSecond);

  EXPECT_EQ(e->left_node, -1);  // the pin did not say where it came from

  Action irq;
  irq.op = SetIrqAffinity{40, {3}};
  irq.from_node = 0;
  RecordApplied(h, irq, s.topology, 6 * kSecond);
  EXPECT_EQ(h.Find({EntityKind::kIrq, 40})->node, 1);
  EXPECT_EQ(h.Find({EntityKind::kIrq, 40})->left_node, 0);

  HoldDown(h, pin, 100 * kSecond);
  EXPECT_EQ(h.Find({EntityKind::kTask, 7})->held_until_ns, 100 * kSecond);
  EXPECT_EQ(h.Find({EntityKind::kMemory, 7})->held_until_ns, 100 * kSecond);
  EXPECT_EQ(h.Find({EntityKind::kTask, 7})->node, -1);
}

TEST(DecideTest, FromNodeOfSaysOneNodeSeveralOrUnknown) {
  Snapshot s = MakeHost(2, 2);  // CPUs 0-1 on node 0, 2-3 on node 1
  EXPECT_EQ(FromNodeOf(s.topology, {2, 3}), 1);
  EXPECT_EQ(FromNodeOf(s.topology, {1, 2}), kSeveralNodes);
  EXPECT_EQ(FromNodeOf(s.topology, {0, 1, 2, 3}), kSeveralNodes);
  EXPECT_EQ(FromNodeOf(s.topology, {}), -1);
  EXPECT_EQ(FromNodeOf(s.topology, {1, 9}), -1);
}

TEST(DecideTest, PruneForgetsGoneEntities) {
  Snapshot s = MakeHost(2, 2);
  s.targets.push_back(MakeWorker(s, 100, 0, 0, 0));
  History h;
  h.entities[{EntityKind::kTask, 100}] = {1, 0, 0};
  h.entities[{EntityKind::kTask, 555}] = {1, 0, 0};
  h.entities[{EntityKind::kIrq, 40}] = {1, 0, 0};
  PruneHistory(h, s);
  EXPECT_NE(h.Find({EntityKind::kTask, 100}), nullptr);
  EXPECT_EQ(h.Find({EntityKind::kTask, 555}), nullptr);
  EXPECT_EQ(h.Find({EntityKind::kIrq, 40}), nullptr);
}

}  // namespace
}  // namespace locus
