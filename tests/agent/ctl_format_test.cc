#include <algorithm>
#include <cerrno>
#include <sstream>
#include <streambuf>

#include "absl/strings/str_cat.h"
#include "agent/ctl/commands.h"
#include "agent/ctl/ctl_args.h"
#include "agent/ctl/format.h"
#include "agent/ctl/top_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

TEST(ParseCtlArgs, FlagsGoBeforeOrAfterTheCommand) {
  auto inv =
      ParseCtlArgs({"--socket=/tmp/a.sock", "watch", "--count", "3", "--json"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->socket, "/tmp/a.sock");
  EXPECT_EQ(inv->command, "watch");
  EXPECT_EQ(inv->count, 3);
  EXPECT_TRUE(inv->json);

  inv = ParseCtlArgs({"explain", "irq:4", "--socket", "/x", "--timeout=0.5"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->args, std::vector<std::string>{"irq:4"});
  EXPECT_EQ(inv->socket, "/x");
  EXPECT_EQ(inv->timeout, absl::Milliseconds(500));

  inv = ParseCtlArgs({"status"});
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->socket, "/run/locus/locusd.sock");
}

TEST(ParseCtlArgs, HelpForms) {
  auto inv = ParseCtlArgs({"--help"});
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(inv->help);
  EXPECT_EQ(inv->command, "");
  inv = ParseCtlArgs({"help", "top"});
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(inv->help);
  EXPECT_EQ(inv->command, "top");
  // --help wins over missing arguments.
  inv = ParseCtlArgs({"explain", "-h"});
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(inv->help);
  EXPECT_THAT(CtlUsage("explain"),
              HasSubstr("usage: locusctl [--socket=PATH] explain TID|irq:N"));
  EXPECT_THAT(CtlUsage(""), HasSubstr("policy check FILE"));
}

TEST(ParseCtlArgs, RefusesWhatDoesNotFit) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{},
                                             {"nope"},
                                             {"status", "extra"},
                                             {"watch", "--count=-1"},
                                             {"watch", "--count=x"},
                                             {"watch", "--count"},
                                             {"status", "--count=1"},
                                             {"mode", "--json", "enforce"},
                                             {"policy", "check"},
                                             {"policy", "show", "f"},
                                             {"status", "--socket="},
                                             {"status", "--timeout=0"},
                                             {"--frob", "status"}}) {
    auto inv = ParseCtlArgs(args);
    EXPECT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument)
        << (args.empty() ? "" : args[0]);
  }
}

TEST(ParseCtlArgs, TimeoutMustBeAFinitePositiveNumber) {
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "-1", "0", "x"}) {
    auto inv = ParseCtlArgs({"status", absl::StrCat("--timeout=", bad)});
    ASSERT_FALSE(inv.ok()) << bad;
    EXPECT_THAT(inv.status().message(),
                HasSubstr("--timeout wants a finite number of seconds"));
    EXPECT_THAT(inv.status().message(), HasSubstr(absl::StrCat("'", bad)));
  }
  auto inv = ParseCtlArgs({"status", "--timeout=2.5"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->timeout, absl::Milliseconds(2500));
}

TEST(ParseCtlArgs, VersionAloneOrWithACommand) {
  auto inv = ParseCtlArgs({"--version"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_TRUE(inv->version);
  inv = ParseCtlArgs({"status", "--version"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_TRUE(inv->version);
}

// A stream whose every write fails, as on a full disk.
class FullBuffer : public std::streambuf {
 protected:
  int overflow(int) override {
    errno = ENOSPC;
    return traits_type::eof();
  }
  std::streamsize xsputn(const char*, std::streamsize) override {
    errno = ENOSPC;
    return 0;
  }
};

TEST(RunLocusctl, OutputThatCannotBeWrittenFails) {
  FullBuffer full;
  std::ostream out(&full);
  std::ostringstream err;
  EXPECT_EQ(RunLocusctl({"--help"}, out, err), kExitFailed);
  EXPECT_EQ(err.str(),
            "locusctl: cannot write the output: No space left on device\n");

  std::ostringstream ok;
  std::ostringstream no_err;
  EXPECT_EQ(RunLocusctl({"--version"}, ok, no_err), kExitOk);
  EXPECT_THAT(ok.str(), testing::MatchesRegex("locusctl [0-9.]+ \\(build ("
                                              "[0-9a-f]+|unknown)\\)\n"));
  EXPECT_EQ(no_err.str(), "");
}

TEST(Format, StatusSaysWhereTheModeComesFrom) {
  v1::AgentStatus s;
  s.set_mode(v1::AGENT_MODE_DRY_RUN);
  EXPECT_THAT(ctl::FormatStatus(s), HasSubstr("mode dry_run, started"))
      << "a daemon that does not say gets no note";
  s.set_mode_source(v1::MODE_SOURCE_POLICY);
  s.set_policy_mode(v1::AGENT_MODE_DRY_RUN);
  EXPECT_THAT(ctl::FormatStatus(s), HasSubstr("mode dry_run (policy),"));
  s.set_mode_source(v1::MODE_SOURCE_RUNTIME);
  s.set_policy_mode(v1::AGENT_MODE_ENFORCE);
  EXPECT_THAT(ctl::FormatStatus(s),
              HasSubstr("mode dry_run (runtime override; policy says "
                        "enforce),"));
  s.set_mode(v1::AGENT_MODE_ENFORCE);
  s.set_mode_source(v1::MODE_SOURCE_FLAG);
  s.set_policy_mode(v1::AGENT_MODE_DRY_RUN);
  EXPECT_THAT(ctl::FormatStatus(s),
              HasSubstr("mode enforce (--mode flag; policy says dry_run),"));
}

TEST(Format, CpuListsAreRanges) {
  EXPECT_EQ(ctl::CpuListOrDash({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(ctl::CpuListOrDash({5, 3, 4, 4}), "3-5");
  EXPECT_EQ(ctl::CpuListOrDash({7}), "7");
  EXPECT_EQ(ctl::CpuListOrDash({}), "-");
}

TEST(Format, LocalShare) {
  EXPECT_EQ(ctl::FormatLocalShare(82, 18), "82%");
  EXPECT_EQ(ctl::FormatLocalShare(0, 0), "-");
}

TEST(Format, MetricsLineShowsDropsActionsAndReverts) {
  v1::Metrics m;
  m.set_tick(7);
  m.set_mode(v1::AGENT_MODE_ENFORCE);
  m.mutable_drops()->set_subscriber_dropped(3);
  v1::Revert* r = m.add_reverts();
  r->mutable_action()->mutable_set_irq_affinity()->set_irq(45);
  r->mutable_action()->mutable_set_irq_affinity()->add_cpus(1);
  r->set_reason("softirq locality 90% -> 60%");
  r->set_hold_down_until_tick(67);
  v1::ExternalChange* c = m.add_external_changes();
  c->set_tid(1201);
  c->set_irq(-1);
  c->set_what("affinity changed by someone else");
  m.mutable_policy()->set_last_error("policy.yaml:3:5: unknown key 'x'");
  m.add_nodes()->set_runqueue_wait_s(0.018);
  std::string text = ctl::FormatMetrics(m);
  EXPECT_THAT(text, HasSubstr("tick 7 enforce"));  // no time: none shown
  // The targets' run-queue wait on the node, in ms per second.
  EXPECT_THAT(text, HasSubstr(" migrated 0 wait 18ms/s"));
  m.mutable_time()->set_seconds(3600);
  EXPECT_THAT(ctl::FormatMetrics(m),
              ::testing::ContainsRegex("^tick 7 [0-9]{2}:[0-9]{2}:00 enforce"));
  EXPECT_THAT(text, HasSubstr("dropped 3 (this client read too slowly)"));
  EXPECT_THAT(text, HasSubstr("  revert irq 45 to cpus 1: softirq locality "
                              "90% -> 60%; held down until tick 67\n"));
  EXPECT_THAT(text,
              HasSubstr("  external tid 1201: affinity changed by someone"));
  EXPECT_THAT(text, HasSubstr("  policy error: policy.yaml:3:5: unknown key"));
}

// irqbalance (pid 812) running, told bans.
v1::Neighbour* AddIrqbalance(v1::AgentStatus& s) {
  v1::Neighbour* irqbalance = s.add_neighbours();
  irqbalance->set_name("irqbalance");
  irqbalance->set_mode("ban");
  irqbalance->set_running(true);
  irqbalance->set_pid(812);
  return irqbalance;
}

TEST(Format, StatusSaysWhatIrqbalanceAndNumadWereHanded) {
  v1::AgentStatus s;
  v1::Neighbour* irqbalance = AddIrqbalance(s);
  irqbalance->set_socket("/run/irqbalance/irqbalance812.sock");
  irqbalance->add_irqs_banned(38);
  irqbalance->add_irqs_banned(39);
  irqbalance->add_irqs_banned_by_others(9);
  irqbalance->add_irqs_pending(40);
  irqbalance->set_restarts(1);
  v1::Neighbour* numad = s.add_neighbours();
  numad->set_name("numad");
  numad->set_mode("exclude");
  numad->set_running(true);
  numad->set_pid(77);
  numad->add_pids_excluded(4001);
  numad->set_problem("queue 0xdeadbeef\nowned by uid 1000");
  const std::string text = ctl::FormatStatus(s);
  EXPECT_THAT(text, HasSubstr("\nirqbalance (pid 812, socket "
                              "/run/irqbalance/irqbalance812.sock): IRQs "
                              "banned by Locus 38,39, by others (kept) 9, "
                              "waiting for 40; restarted 1 time(s), told "
                              "again\n"));
  // Outside text is escaped: one line per neighbour.
  EXPECT_THAT(text, HasSubstr("\nnumad (pid 77): workers excluded by Locus "
                              "4001; PROBLEM: queue 0xdeadbeef\\nowned by "
                              "uid 1000\n"));
  numad->set_running(false);
  irqbalance->set_mode("off");
  EXPECT_THAT(ctl::FormatStatus(s), HasSubstr("\nnumad: not running\n"));
  EXPECT_THAT(ctl::FormatStatus(s),
              HasSubstr("(pid 812, socket /run/irqbalance/irqbalance812.sock)"
                        ": coexist off, told nothing\n"));
}

// Issue #39: processes named irqbalance or numad that are not root's are
// listed under their neighbour, running or not, escaped.
TEST(Format, StatusListsRefusedLookAlikes) {
  v1::AgentStatus s;
  v1::Neighbour* irqbalance = AddIrqbalance(s);
  irqbalance->add_look_alikes(
      "a process named irqbalance (pid 78, uid 65534) is not root's: real "
      "uid 65534; refused: Locus neither counts it nor speaks to it");
  irqbalance->add_look_alikes("a process named irqbalance (pid 79\x1b[2J");
  v1::Neighbour* numad = s.add_neighbours();
  numad->set_name("numad");
  numad->set_mode("exclude");
  numad->add_look_alikes("a process named numad (pid 90, uid 1000)");
  const std::string text = ctl::FormatStatus(s);
  EXPECT_THAT(text,
              HasSubstr("IRQs banned by Locus none, by others (kept) none\n"
                        "  look-alike: a process named irqbalance (pid 78, "
                        "uid 65534) is not root's: real uid 65534; refused: "
                        "Locus neither counts it nor speaks to it\n"
                        "  look-alike: a process named irqbalance (pid "
                        "79\\x1b[2J\n"));
  EXPECT_THAT(text, HasSubstr("\nnumad: not running\n  look-alike: a process "
                              "named numad (pid 90, uid 1000)\n"));
}

TEST(Format, StatusSaysWhatAutonumaAndTunedDoHere) {
  v1::AgentStatus s;
  v1::Neighbour* autonuma = s.add_neighbours();
  autonuma->set_name("autonuma");
  autonuma->set_running(true);
  autonuma->set_note("on (kernel.numa_balancing=1): it moves pages");
  v1::Neighbour* tuned = s.add_neighbours();
  tuned->set_name("tuned");
  tuned->set_running(true);
  tuned->set_pid(640);
  tuned->set_note("profile 'a\x1b[2J'");
  const std::string text = ctl::FormatStatus(s);
  EXPECT_THAT(text, HasSubstr("\nautonuma: on (kernel.numa_balancing=1): it "
                              "moves pages\n"));
  EXPECT_THAT(text, HasSubstr("\ntuned (pid 640): profile 'a\\x1b[2J'\n"));
}

TEST(Format, StatusSaysWhyTheAgentIsNotActing) {
  v1::AgentStatus s;
  s.set_mode(v1::AGENT_MODE_ENFORCE);
  EXPECT_THAT(ctl::FormatStatus(s), ::testing::Not(HasSubstr("NOT ACTING")));
  s.set_journal_error(
      "journal not writable, not acting: /var/lib/locus: Read-only file "
      "system");
  EXPECT_THAT(ctl::FormatStatus(s),
              HasSubstr("\nNOT ACTING: journal not writable, not acting: "
                        "/var/lib/locus: Read-only file system\n"));
}

// Two DRAM nodes with CPUs in tier 4 and a CPU-less node in tier 6, as
// MemoryTieringReport fills it on such a host.
v1::MemoryTiering TieredHost() {
  v1::MemoryTiering t;
  for (int id : {0, 1, 2}) {
    v1::TierNode* node = t.add_nodes();
    node->set_node(id);
    node->set_tier(id < 2 ? 4 : 6);
    node->set_cpus(id < 2 ? 2 : 0);
    node->set_lower_tier(id == 2);
  }
  t.set_demotion_enabled(1);
  t.set_numa_balancing_mode(2);
  t.add_damon_migrations("kdamond 0 scheme 1: migrate_cold to node 2\x1b[2J");
  t.set_promoted_total(4100);
  t.set_demoted_total(-1);
  return t;
}

TEST(Format, StatusNamesWhoMovesPagesOnALowerTier) {
  v1::AgentStatus s;
  *s.mutable_memory_tiering() = TieredHost();
  const std::string text = ctl::FormatStatus(s);
  EXPECT_THAT(text,
              HasSubstr("\nmemory tiers: tier 4: nodes 0-1 (4 CPUs); tier 6: "
                        "node 2 (no CPUs)\n"
                        "  node 2: tier 6 (lower, no CPUs): the kernel demotes "
                        "to it (demotion on) and promotes from it "
                        "(numa_balancing=2); Locus leaves its pages\n"
                        "  DAMON kdamond 0 scheme 1: migrate_cold to node "
                        "2\\x1b[2J\n"
                        "  since boot the kernel promoted 4100 pages and "
                        "demoted unknown\n"));
}

TEST(Format, StatusOfAHostWithoutALowerTierIsUnchanged) {
  v1::AgentStatus s;
  const std::string before = ctl::FormatStatus(s);
  v1::MemoryTiering t = TieredHost();
  t.mutable_nodes(2)->set_lower_tier(false);
  t.mutable_nodes(2)->set_tier(4);
  *s.mutable_memory_tiering() = t;
  EXPECT_EQ(ctl::FormatStatus(s), before);
}

TEST(Format, StatusListsEachWorkersMemoryByNodeAndTier) {
  v1::AgentStatus s;
  v1::WorkerMemory* w = s.add_worker_memory();
  w->set_pid(1200);
  w->set_comm("ngi\x1bnx");
  w->set_home_node(0);
  for (uint64_t mib : {40, 2, 38}) w->add_resident_bytes(mib << 20);
  // Not on a host without a lower tier: its status reads as before.
  EXPECT_THAT(ctl::FormatStatus(s), ::testing::Not(HasSubstr("worker memory")));
  *s.mutable_memory_tiering() = TieredHost();
  v1::WorkerMemory* alone = s.add_worker_memory();
  alone->set_pid(1300);
  alone->set_home_node(-1);
  alone->add_resident_bytes(0);
  alone->add_resident_bytes(0);
  alone->add_resident_bytes(4096);
  EXPECT_THAT(ctl::FormatStatus(s),
              HasSubstr("worker memory (resident, by node and tier):\n"
                        "  pid 1200 (ngi\\x1bnx): node 0 40.0 MiB (home), "
                        "node 1 2.0 MiB; lower tier: node 2 38.0 MiB\n"
                        "  pid 1300 (): lower tier: node 2 4.0 KiB\n"));
}

TEST(Format, ExplainShowsTheTasksMemoryByNodeAndTier) {
  v1::ExplainResponse e;
  e.set_subject("thread 1201 (nginx worker, pid 1200)");
  v1::TaskMetrics* t = e.mutable_task();
  t->set_home_node(1);
  for (uint64_t mib : {0, 12, 3}) t->add_resident_bytes(mib << 20);
  *e.mutable_memory_tiering() = TieredHost();
  EXPECT_THAT(ctl::FormatExplain(e),
              HasSubstr("\n  memory: node 1 12.0 MiB (home); lower tier: "
                        "node 2 3.0 MiB\n"));
  t->clear_resident_bytes();
  EXPECT_THAT(ctl::FormatExplain(e), HasSubstr("\n  memory: none\n"));
}

TEST(Format, ProbeShowsTheTiersAndTheKernelsMovers) {
  v1::ProbeReport r;
  r.set_kernel("6.8.0");
  EXPECT_THAT(ctl::FormatProbe(r),
              ::testing::Not(HasSubstr("memory tiers")));  // an agent's Probe
  *r.mutable_memory_tiering() = TieredHost();
  EXPECT_THAT(ctl::FormatProbe(r),
              HasSubstr("memory tiers: tier 4: nodes 0-1 (4 CPUs); tier 6: "
                        "node 2 (no CPUs)\n  demotion on; tiering promotion "
                        "on (numa_balancing=2); DAMON: 1 migrate scheme(s)\n"
                        "  node 2: tier 6 (lower"));
  // A host whose kernel lists no tiers says so, and how its movers are set.
  v1::MemoryTiering none;
  none.add_nodes()->set_cpus(4);
  none.set_demotion_enabled(-1);
  none.set_numa_balancing_mode(0);
  *r.mutable_memory_tiering() = none;
  EXPECT_THAT(ctl::FormatProbe(r),
              HasSubstr("memory tiers: none listed by the kernel (before "
                        "6.1?); no lower tier\n  demotion unknown; tiering "
                        "promotion off (numa_balancing=0); DAMON: no migrate "
                        "scheme\n"));
}

TEST(Format, MigrateAction) {
  v1::Action a;
  a.mutable_migrate_pages()->set_pid(1200);
  a.mutable_migrate_pages()->set_from_node(-1);
  a.mutable_migrate_pages()->set_to_node(1);
  a.mutable_migrate_pages()->set_max_bytes(64ull << 20);
  a.set_outcome(v1::ACTION_OUTCOME_TASK_GONE);
  EXPECT_EQ(ctl::FormatAction(a),
            "migrate pid 1200 pages to node 1 (up to 64 MiB) [task gone]");
}

v1::Metrics ManyThreads(int n) {
  v1::Metrics m;
  m.set_tick(1);
  m.add_nodes()->set_node(0);
  for (int i = 0; i < n; ++i) {
    v1::TaskMetrics* t = m.add_tasks();
    t->set_pid(100);
    t->set_tid(100 + i);
    t->set_comm("nginx");
    t->set_faults_remote(static_cast<uint64_t>((i * 7) % n));
  }
  m.add_irqs()->set_irq(45);
  return m;
}

TEST(RenderTop, FitsTheScreenWorstThreadsFirst) {
  v1::Metrics m = ManyThreads(50);
  std::vector<std::string> lines = ctl::RenderTop(m, 20, 60);
  EXPECT_LE(lines.size(), 20u);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 60u);
  bool more = false;
  uint64_t previous = UINT64_MAX;
  for (const std::string& line : lines) {
    if (line.rfind("... ", 0) == 0) more = true;
    int pid = 0;
    int tid = 0;
    char comm[16];
    if (sscanf(line.c_str(), "%d %d %15s", &pid, &tid, comm) == 3 &&
        pid == 100) {
      uint64_t remote = m.tasks(tid - 100).faults_remote();
      EXPECT_LE(remote, previous);
      previous = remote;
    }
  }
  EXPECT_TRUE(more);
  EXPECT_EQ(previous != UINT64_MAX, true);  // some threads were shown
  // The IRQ table still made it onto the screen.
  bool irq = false;
  for (const std::string& line : lines) irq |= line.rfind("45 ", 0) == 0;
  EXPECT_TRUE(irq);
}

TEST(RenderTop, MemoryAtHomeOverTheTopTierAndWhatLiesOnTheLowerTier) {
  v1::Metrics m = ManyThreads(2);
  *m.mutable_memory_tiering() = TieredHost();
  v1::TaskMetrics* t = m.mutable_tasks(0);
  t->set_home_node(1);
  // 30 MiB on home, 10 on node 0 (top tier), 64 on node 2 (lower): 75 %.
  for (uint64_t mib : {10, 30, 64}) t->add_resident_bytes(mib << 20);
  std::vector<std::string> lines = ctl::RenderTop(m, 40, 0);
  auto line_of = [&lines](const std::string& start) {
    for (const std::string& line : lines) {
      if (line.rfind(start, 0) == 0) return line;
    }
    return std::string();
  };
  const std::string header = line_of("PID ");
  const std::string shown = line_of("100     100 ");
  const size_t at = header.find("MEM@HOME");
  ASSERT_NE(at, std::string::npos);
  EXPECT_THAT(shown.substr(at, 30), HasSubstr("75%  64.0 MiB"));
  // Without a home, or memory, a dash.
  EXPECT_THAT(line_of("100     101 ").substr(at, 20),
              ::testing::MatchesRegex(" *- *- *"));
}

TEST(Json, OneLineWithProtoFieldNames) {
  v1::Metrics m;
  m.set_tick(3);
  auto json = ctl::ToJsonLine(m);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->find('\n'), std::string::npos);
  EXPECT_THAT(*json, HasSubstr("\"tick\":\"3\""));
  EXPECT_THAT(*json, HasSubstr("\"tick_period_ns\""));
}

}  // namespace
}  // namespace locus

namespace locus::ctl {
namespace {

TEST(FormatExplain, NoteOnlyDecisionsReadAsTheyAreAndNoneSaysWhy) {
  v1::ExplainResponse e;
  e.set_subject("thread 7");
  EXPECT_THAT(FormatExplain(e), ::testing::HasSubstr("no decisions recorded"));
  v1::Decision* d = e.add_decisions();
  d->set_tick(5);
  d->set_note("40% of runtime off node 1 → pin: applied");
  std::string out = FormatExplain(e);
  EXPECT_THAT(out,
              ::testing::HasSubstr("tick 5: 40% of runtime off node 1 → pin"));
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("no action")));
}

// Every string the agent sends is shown inert: a comm or a reason cannot
// add a line, clear the screen or move the cursor.
TEST(FormatExplain, WhatTheAgentSaysCannotForgeALine) {
  v1::ExplainResponse e;
  e.set_subject("thread 7 (\x1b[2J\nOK)");
  e.add_decisions()->set_note("a\nb\x1b[1A");
  v1::Revert* r = e.add_reverts();
  r->set_reason(
      "worse\n\xc2\x9b"
      "2J");
  r->mutable_action()->set_reason("why\x07");
  const std::string out = FormatExplain(e);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3) << out;
  EXPECT_THAT(out, ::testing::StartsWith("thread 7 (\\x1b[2J\\nOK)\n"));
  v1::AgentStatus status;
  status.mutable_policy()->set_last_error("p.yaml:1:1: a\np.yaml:2:1: \x1b");
  EXPECT_THAT(FormatStatus(status),
              ::testing::HasSubstr("policy last error: p.yaml:1:1: a\n"
                                   "    p.yaml:2:1: \\x1b\n"));
}

}  // namespace
}  // namespace locus::ctl

namespace locus {
namespace {

TEST(Format, ConnectionsPerGroupAndNodeTotalsInStatusTicksInWatch) {
  v1::AgentStatus s;
  v1::ConnectionGroup* g = s.add_connections();
  g->set_group("netns 1 0.0.0.0:80");
  g->set_steered(true);
  g->set_sockets(4);
  v1::NodeConnections* n = g->add_nodes();
  n->set_node(0);
  n->set_workers(2);
  n->set_local_total(998);
  n->set_fell_back_total(2);
  n->set_local(5);
  n->set_spill_permille(150);
  EXPECT_THAT(ctl::FormatStatus(s),
              HasSubstr("connections netns 1 0.0.0.0:80: steered, 4 socket(s)\n"
                        "  node 0: 2 worker(s), 99.8% local (998 local, 0 "
                        "spilled, 2 fell back), spilling 15%\n"));
  v1::Metrics m;
  *m.mutable_connections() = s.connections();
  EXPECT_THAT(ctl::FormatMetrics(m),
              HasSubstr("    node 0: 2 worker(s), 100.0% local (5 local, 0 "
                        "spilled, 0 fell back), spilling 15%\n"));
}

}  // namespace
}  // namespace locus
