// The doctor's checks on made-up inputs (each verdict, the exit code), and
// its reader over fixture trees written here.
#include "agent/doctor/doctor.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "agent/doctor/doctor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/fixture_process.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using testing::AllOf;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;
using testing::Not;

constexpr uint64_t kAllCaps = 0x1ffffffffffULL;

// Inputs of a host where every check passes.
DoctorInputs Healthy() {
  DoctorInputs in;
  in.euid = 0;
  in.cap_effective = kAllCaps;
  in.btf_present = true;
  v1::ProbeReport probe;
  v1::SensorSource* s = probe.add_sensors();
  s->set_sensor("sched");
  s->set_source("tp_btf");
  s->set_ok(true);
  in.probe = probe;
  in.numa_nodes = 2;
  in.numa_balancing = 0;
  in.policy_path = "/etc/locus/policy.yaml";
  in.journal_path = "/var/lib/locus/journal";
  NginxListening nginx;
  nginx.master_pid = 40;
  nginx.reuseport = {"0.0.0.0:80"};
  in.nginx.push_back(nginx);
  return in;
}

DoctorCheck Find(const DoctorInputs& in, const std::string& name) {
  for (const DoctorCheck& c : RunDoctorChecks(in)) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no check named " << name;
  return {};
}

TEST(DoctorChecks, HealthyHostIsAllOkAndExitsZero) {
  std::vector<DoctorCheck> checks = RunDoctorChecks(Healthy());
  for (const DoctorCheck& c : checks) {
    EXPECT_EQ(c.verdict, Verdict::kOk) << c.name << ": " << c.detail;
    EXPECT_THAT(c.fix, IsEmpty()) << c.name;
  }
  EXPECT_EQ(checks.size(), 16u);  // no agent line unless asked
  EXPECT_EQ(DoctorExitCode(checks), 0);
  EXPECT_THAT(FormatDoctor(checks),
              HasSubstr("OK    btf: /sys/kernel/btf/vmlinux present\n"));
}

TEST(DoctorChecks, NginxWithoutReuseportIsAWarningWithTheFix) {
  DoctorInputs in = Healthy();
  in.nginx[0].reuseport = {"127.0.0.1:81"};
  in.nginx[0].no_reuseport = {"0.0.0.0:80"};
  DoctorCheck c = Find(in, "reuseport");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("without reuseport on nginx 40 0.0.0.0:80"));
  EXPECT_THAT(c.fix, HasSubstr("listen 80 reuseport;"));

  in.nginx[0].no_reuseport.clear();
  c = Find(in, "reuseport");
  EXPECT_EQ(c.verdict, Verdict::kOk);
  EXPECT_THAT(c.detail, HasSubstr("with reuseport on nginx 40 127.0.0.1:81"));

  in.nginx[0].error = "permission denied";
  EXPECT_EQ(Find(in, "reuseport").verdict, Verdict::kWarn);

  // No nginx at all: nothing to tune, said as such.
  in.nginx.clear();
  c = Find(in, "targets");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("no nginx running"));
  // The policy's servers are the ones named.
  in.servers = {"haproxy", "nginx"};
  c = Find(in, "targets");
  EXPECT_THAT(c.detail, HasSubstr("no haproxy or nginx running"));
  EXPECT_THAT(c.fix, HasSubstr("start haproxy or nginx"));
}

// A server whose workers are threads has one process's sockets, which no
// reuseport advice fixes: said as such, whatever its listeners.
// A thread worker server is told about `shards by-thread`, not nginx's
// `reuseport`: a socket per thread is steered, one shared socket is not.
TEST(DoctorChecks, ThreadWorkersAreToldAboutShardsNotReuseport) {
  DoctorInputs in = Healthy();
  NginxListening haproxy;
  haproxy.master_pid = 60;
  haproxy.server = "haproxy";
  haproxy.thread_workers = true;
  haproxy.reuseport = {"0.0.0.0:8080"};
  in.nginx.push_back(haproxy);
  DoctorCheck c = Find(in, "reuseport");
  EXPECT_EQ(c.verdict, Verdict::kOk);
  EXPECT_THAT(c.detail, HasSubstr("with reuseport on nginx 40 0.0.0.0:80"));
  EXPECT_THAT(c.detail, HasSubstr("a socket per worker thread on haproxy 60 "
                                  "0.0.0.0:8080"));

  in.nginx[1].no_reuseport = {"0.0.0.0:8443"};
  c = Find(in, "reuseport");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("worker threads share one listening socket "
                                  "on haproxy 60 0.0.0.0:8443"));
  EXPECT_THAT(c.fix, HasSubstr("`shards by-thread`"));
  EXPECT_THAT(c.fix, Not(HasSubstr("listen 80 reuseport")));
}

TEST(DoctorChecks, ACpusetOnOneNodeIsSaid) {
  DoctorInputs in = Healthy();
  in.nginx[0].cgroup = "/system.slice/nginx.service";
  in.nginx[0].cpu_nodes = {0, 1};
  in.nginx[0].mems = {0, 1};
  EXPECT_EQ(Find(in, "cpusets").verdict, Verdict::kOk);
  in.nginx[0].cpu_nodes = {1};
  in.nginx[0].mems = {0};
  in.numa_nodes = 1;  // a one-node host: nothing to narrow, nothing said
  EXPECT_EQ(Find(in, "cpusets").verdict, Verdict::kOk);
  in.numa_nodes = 2;
  DoctorCheck c = Find(in, "cpusets");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail,
              HasSubstr("nginx 40 in /system.slice/nginx.service: CPUs on node "
                        "1, memory on node(s) 0 (every access remote)"));
  EXPECT_THAT(c.fix, HasSubstr("AllowedCPUs="));
}

// A look-alike (any user can name a binary nginx) is listed as refused,
// with the agent's reason, not as a server to tune; names from the host
// cannot forge a line of the report.
TEST(DoctorChecks, LookAlikesAreRefusedAndNamesCannotForgeALine) {
  DoctorInputs in = Healthy();
  in.nginx[0].cgroup = "/system.slice/x\n\x1b[2JOK    everything fine";
  in.nginx[0].cpu_nodes = {0};
  in.nginx[0].mems = {0};
  in.refused.push_back(
      {4242, "nginx",
       "not trusted as a target: its executable /tmp/a\n\x1b[2J/nginx is "
       "owned by uid 1000, not root"});
  for (int pid = 1; pid <= 9; ++pid) in.refused.push_back({pid, "nginx", "x"});
  const std::vector<DoctorCheck> checks = RunDoctorChecks(in);
  EXPECT_EQ(checks.size(), 17u);
  const DoctorCheck refused = Find(in, "refused");
  EXPECT_EQ(refused.verdict, Verdict::kWarn);
  EXPECT_THAT(refused.detail,
              HasSubstr("pid 4242 (nginx): not trusted as a target: its "
                        "executable /tmp/a\\n\\x1b[2J/nginx is owned by "
                        "uid 1000"));
  EXPECT_THAT(refused.detail, HasSubstr("; and 5 more"));
  const std::string text = FormatDoctor(checks);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_THAT(text, Not(HasSubstr("\nOK    everything fine")));
  // One line per check, and one per fix.
  size_t lines = 0, fixes = 0;
  for (char c : text) lines += c == '\n';
  for (size_t at = text.find("fix: "); at != std::string::npos;
       at = text.find("fix: ", at + 1)) {
    ++fixes;
  }
  EXPECT_EQ(lines, checks.size() + fixes) << text;
}

TEST(DoctorChecks, ADetailOfSeveralLinesIsIndentedAndEscaped) {
  std::vector<DoctorCheck> checks = {
      {"policy", Verdict::kFail, "a.yaml:1:1: bad\na.yaml:2:1: \x1b[2J", "x"}};
  EXPECT_EQ(FormatDoctor(checks),
            "FAIL  policy: a.yaml:1:1: bad\n"
            "        a.yaml:2:1: \\x1b[2J\n"
            "      fix: x\n");
}

TEST(DoctorChecks, Capabilities) {
  DoctorInputs in = Healthy();
  // CAP_BPF + CAP_PERFMON stand in for CAP_SYS_ADMIN.
  in.euid = 1000;
  in.cap_effective = (1ULL << kCapBpf) | (1ULL << kCapPerfmon) |
                     (1ULL << kCapSysNice) | (1ULL << kCapSysPtrace);
  EXPECT_EQ(Find(in, "capabilities").verdict, Verdict::kOk);
  EXPECT_THAT(Find(in, "capabilities").detail, HasSubstr("uid 1000"));
  in.cap_effective = *in.cap_effective & ~(1ULL << kCapSysPtrace);
  DoctorCheck c = Find(in, "capabilities");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("pidfd_getfd"));
  in.cap_effective = (1ULL << kCapBpf) | (1ULL << kCapSysNice);
  c = Find(in, "capabilities");
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_THAT(c.detail,
              HasSubstr("CAP_SYS_ADMIN (or CAP_BPF and CAP_PERFMON)"));
  EXPECT_THAT(c.fix, HasSubstr("root"));
  EXPECT_EQ(DoctorExitCode(RunDoctorChecks(in)), 1);
  in.cap_effective.reset();
  EXPECT_EQ(Find(in, "capabilities").verdict, Verdict::kFail);
}

TEST(DoctorChecks, BtfAndBpf) {
  DoctorInputs in = Healthy();
  in.btf_present = false;
  EXPECT_EQ(Find(in, "btf").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "btf").fix, HasSubstr("CONFIG_DEBUG_INFO_BTF"));
  v1::SensorSource* numa = in.probe->add_sensors();
  numa->set_sensor("numa");
  numa->set_source("procfs");
  numa->set_ok(true);
  numa->set_detail("fentry: EPERM");
  DoctorCheck bpf = Find(in, "bpf");
  EXPECT_EQ(bpf.verdict, Verdict::kWarn);
  EXPECT_THAT(bpf.detail, HasSubstr("numa on procfs (fentry: EPERM)"));
  EXPECT_THAT(bpf.detail, Not(HasSubstr("sched")));
  in.probe.reset();
  in.probe_skipped = "needs CAP_BPF";
  EXPECT_EQ(Find(in, "bpf").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "bpf").detail, HasSubstr("not probed: needs CAP_BPF"));
}

TEST(DoctorChecks, NumaNodes) {
  DoctorInputs in = Healthy();
  EXPECT_EQ(Find(in, "numa").detail, "2 NUMA nodes");
  in.numa_nodes = 1;
  EXPECT_EQ(Find(in, "numa").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "numa").detail, HasSubstr("nothing to place"));
  in.topology = absl::NotFoundError("/x/devices/system/node: gone");
  EXPECT_EQ(Find(in, "numa").verdict, Verdict::kFail);
  EXPECT_THAT(Find(in, "numa").detail, HasSubstr("/x/devices/system/node"));
}

TEST(DoctorChecks, AutoNumaIrqbalanceNumadPtraceKubelet) {
  DoctorInputs in = Healthy();
  in.numa_balancing = 1;
  EXPECT_EQ(Find(in, "numa_balancing").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "numa_balancing").fix,
              HasSubstr("sysctl -w kernel.numa_balancing=0"));
  in.numa_balancing.reset();
  EXPECT_EQ(Find(in, "numa_balancing").verdict, Verdict::kOk);

  EXPECT_EQ(Find(in, "irqbalance").verdict, Verdict::kOk);
  EXPECT_THAT(Find(in, "irqbalance").detail, HasSubstr("not running"));
  in.irqbalance = {12, "/run/irqbalance/irqbalance12.sock", ""};
  DoctorCheck c = Find(in, "irqbalance");
  EXPECT_EQ(c.verdict, Verdict::kOk);
  EXPECT_THAT(c.detail, HasSubstr("irqbalance (pid 12) runs: Locus bans the "
                                  "IRQs it steers through "
                                  "/run/irqbalance/irqbalance12.sock"));
  in.irqbalance.sigpipe_kills = true;  // started from a shell
  c = Find(in, "irqbalance");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("does not ignore SIGPIPE"));
  EXPECT_THAT(c.fix, HasSubstr("systemctl start irqbalance"));
  in.irqbalance.sigpipe_kills = false;
  in.coexist.set_irqbalance(v1::Coexist::IRQBALANCE_MODE_OFF);
  c = Find(in, "irqbalance");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("coexist.irqbalance is off"));
  in.coexist.clear_irqbalance();
  in.irqbalance.unreachable = "irqbalance (pid 12) has no control socket";
  c = Find(in, "irqbalance");
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_THAT(c.detail, HasSubstr("no control socket Locus can use"));
  EXPECT_THAT(c.fix, HasSubstr("coexist.irqbalance: off"));
  in.irqbalance = {};

  // A refused look-alike warns whatever else holds, and is named.
  in.irqbalance.look_alikes = {
      "a process named irqbalance (pid 13, uid 65534) is not root's: ..."};
  c = Find(in, "irqbalance");
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_THAT(c.detail, HasSubstr("not running"));
  EXPECT_THAT(c.detail, HasSubstr("(pid 13, uid 65534) is not root's"));
  EXPECT_THAT(c.fix, HasSubstr("ps -o user,pid,args"));
  in.irqbalance.pid = 12;
  in.irqbalance.unreachable = "no control socket";
  EXPECT_EQ(Find(in, "irqbalance").verdict, Verdict::kFail);
  in.irqbalance = {};
  in.numad.look_alikes = {"the pid file /run/numad.pid is not ..."};
  EXPECT_EQ(Find(in, "numad").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "numad").detail, HasSubstr("/run/numad.pid"));
  in.numad = {};

  in.numad = {34, "its message queue (key 0xdeadbeef)", ""};
  c = Find(in, "numad");
  EXPECT_EQ(c.verdict, Verdict::kOk);
  EXPECT_THAT(c.detail, HasSubstr("numad (pid 34) runs: Locus puts the "
                                  "workers it places on its exclusion list"));
  in.coexist.set_numad(v1::Coexist::NUMAD_MODE_OFF);
  EXPECT_EQ(Find(in, "numad").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "numad").detail, HasSubstr("coexist.numad is off"));
  in.coexist.clear_numad();
  in.numad.unreachable = "its message queue was created by uid 1000";
  EXPECT_EQ(Find(in, "numad").verdict, Verdict::kFail);
  in.numad = {};

  in.tuned = RunningProcess{"tuned", 56};
  in.tuned_profile = "throughput-performance";
  EXPECT_EQ(Find(in, "tuned").verdict, Verdict::kOk);
  EXPECT_THAT(
      Find(in, "tuned").detail,
      HasSubstr("tuned (pid 56) runs profile 'throughput-performance'"));

  in.ptrace_scope = 1;
  EXPECT_EQ(Find(in, "ptrace_scope").verdict, Verdict::kOk);
  in.ptrace_scope = 2;
  EXPECT_EQ(Find(in, "ptrace_scope").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "ptrace_scope").fix, HasSubstr("ptrace_scope=1"));
  in.ptrace_scope = 3;
  EXPECT_THAT(Find(in, "ptrace_scope").fix, HasSubstr("reboot"));

  in.kubelet_cpu_policy = "none";
  EXPECT_EQ(Find(in, "kubelet").verdict, Verdict::kOk);
  in.kubelet_cpu_policy = "static";
  EXPECT_EQ(Find(in, "kubelet").verdict, Verdict::kWarn);
  EXPECT_THAT(Find(in, "kubelet").fix, HasSubstr("placement.cpus"));
  // Warnings alone do not fail the doctor.
  EXPECT_EQ(DoctorExitCode(RunDoctorChecks(in)), 0);
}

TEST(DoctorChecks, PolicyJournalInstanceAgent) {
  DoctorInputs in = Healthy();
  in.policy = absl::NotFoundError("gone");
  EXPECT_THAT(Find(in, "policy").detail, HasSubstr("built-in default"));
  in.policy = absl::InvalidArgumentError("p.yaml:3:5: unknown key 'mdoe'");
  EXPECT_EQ(Find(in, "policy").verdict, Verdict::kFail);
  EXPECT_THAT(Find(in, "policy").detail, HasSubstr("p.yaml:3:5"));
  in.policy = absl::OkStatus();
  in.journal_writable = absl::PermissionDeniedError("/ro: Read-only");
  EXPECT_EQ(Find(in, "journal").verdict, Verdict::kFail);
  EXPECT_THAT(Find(in, "journal").detail, HasSubstr("NOT ACTING"));
  in.journal_writable = absl::OkStatus();
  in.instance = absl::FailedPreconditionError("j.lock is locked");
  EXPECT_EQ(Find(in, "instance").verdict, Verdict::kWarn);
  in.agent.emplace().socket = "/s";
  in.agent->status.set_mode(v1::AGENT_MODE_DRY_RUN);
  in.agent->status.set_mode_source(v1::MODE_SOURCE_RUNTIME);
  EXPECT_EQ(Find(in, "agent").detail,
            "locusd answers on /s, mode dry_run (from runtime override)");
  in.agent->status.set_journal_error("journal not writable");
  EXPECT_EQ(Find(in, "agent").verdict, Verdict::kWarn);
  in.agent->reached = absl::UnavailableError("connection refused");
  EXPECT_THAT(Find(in, "agent").fix, HasSubstr("systemctl enable --now"));
  EXPECT_EQ(RunDoctorChecks(in).back().name, "agent");
}

// locusctl doctor through a running agent: the lock on the journal that
// agent says it holds is its own, not "another locusd".
TEST(DoctorChecks, InstanceHeldByTheAgentAskedIsNoWarning) {
  DoctorInputs in = Healthy();
  in.journal_path = "/var/lib/locus/journal";
  in.instance = absl::FailedPreconditionError("journal.lock is locked");
  AgentAnswer& agent = in.agent.emplace();
  agent.socket = "/run/locus/locusd.sock";
  agent.status.set_journal_path("/var/lib/locus/journal");
  EXPECT_EQ(Find(in, "instance").verdict, Verdict::kOk);
  EXPECT_EQ(Find(in, "instance").detail,
            "the journal is held by the locusd that answers on "
            "/run/locus/locusd.sock");
  // Another journal's agent, or one that did not answer, proves nothing.
  agent.status.set_journal_path("/elsewhere/journal");
  EXPECT_EQ(Find(in, "instance").verdict, Verdict::kWarn);
  agent.status.set_journal_path("/var/lib/locus/journal");
  agent.reached = absl::UnavailableError("connection refused");
  EXPECT_EQ(Find(in, "instance").verdict, Verdict::kWarn);
  // A free lock stays OK whoever answers.
  in.instance = absl::OkStatus();
  EXPECT_EQ(Find(in, "instance").verdict, Verdict::kOk);
}

// A prober that says yes to everything and counts its calls.
class YesProber : public KernelProber {
 public:
  ProbeResult Probe(Feature) override {
    ++calls;
    ProbeResult yes;
    yes.available = true;
    return yes;
  }
  int calls = 0;
};

class DoctorReaderTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "doctor-" + std::to_string(getpid());
    std::filesystem::remove_all(root_);
    paths_.sysfs_root =
        std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/numa2/sys";
    paths_.procfs_root = root_ + "/proc";
    paths_.kubelet_state = root_ + "/kubelet/cpu_manager_state";
    paths_.policy_path = root_ + "/policy.yaml";
    paths_.journal_path = root_ + "/lib/journal";
    paths_.irqbalance_run_dir = root_ + "/run/irqbalance";
    paths_.numad_pid_file = root_ + "/run/numad.pid";
    paths_.tuned_profile = root_ + "/tuned/active_profile";
    Write("/proc/self/status",
          "Name:\tx\nUid:\t1000\t0\t0\t0\n"
          "CapEff:\t000001ffffffffff\n");
    std::filesystem::create_directories(root_ + "/lib");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(
        std::filesystem::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  std::string root_;
  DoctorPaths paths_;
  YesProber prober_;
};

TEST_F(DoctorReaderTest, ReadsEveryInputThroughTheRoots) {
  Write("/proc/sys/kernel/numa_balancing", "1\n");
  Write("/proc/sys/kernel/yama/ptrace_scope", "2\n");
  // As root runs them (Uid, exe), for the neighbours' own lookup.
  WriteFixtureProcess(paths_.procfs_root, {.pid = 41, .comm = "irqbalance"});
  WriteFixtureProcess(paths_.procfs_root, {.pid = 43, .comm = "numad"});
  Write("/proc/41/comm", "irqbalance\n");
  Write("/proc/42/comm", "nginx\n");
  Write("/proc/41/status",
        "Name:\tirqbalance\nUid:\t0\t0\t0\t0\nSigIgn:\t0000000000000000\n");
  Write("/proc/43/comm", "numad\n");
  Write("/proc/44/comm", "tuned\n");
  Write("/tuned/active_profile", "balanced\n");
  // As the kernel shows it, for the neighbours' own lookup.
  Write("/proc/41/stat",
        "41 (irqbalance) S 1 41 41 0 -1 4194560 101 0 0 0 5 7 0 0 20 0 1 0 "
        "8649819 3133440 390 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 "
        "17 1 0 0 0 0 0 1 1 1 1 1 1 1 0\n");
  Write("/kubelet/cpu_manager_state",
        "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-3\"}");
  Write("/policy.yaml", "version: 1\nmdoe: enforce\n");
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_EQ(in.euid, 0u);  // the effective uid, second of four
  EXPECT_EQ(in.cap_effective, kAllCaps);
  EXPECT_FALSE(in.btf_present);  // not in the fixture's sysfs
  ASSERT_TRUE(in.probe.has_value());
  EXPECT_GT(prober_.calls, 0);
  EXPECT_EQ(in.numa_nodes, 2);
  EXPECT_EQ(in.numa_balancing, 1);
  EXPECT_EQ(in.ptrace_scope, 2);
  EXPECT_EQ(in.irqbalance.pid, 41);
  // Found as locusd would find it: its socket is not in the fixture.
  EXPECT_THAT(in.irqbalance.unreachable, HasSubstr("no control socket"));
  EXPECT_TRUE(in.irqbalance.sigpipe_kills) << "SIGPIPE not in SigIgn";
  EXPECT_EQ(in.numad.pid, 43);
  EXPECT_EQ(in.tuned->pid, 44);
  EXPECT_EQ(in.tuned_profile, "balanced");
  // The policy could not be read: the built-in default's coexist section.
  EXPECT_EQ(in.coexist.irqbalance(), v1::Coexist::IRQBALANCE_MODE_BAN);
  EXPECT_EQ(in.kubelet_cpu_policy, "static");
  EXPECT_THAT(in.policy.message(), HasSubstr("policy.yaml:2:1"));
  EXPECT_TRUE(in.journal_writable.ok()) << in.journal_writable;
  EXPECT_TRUE(in.instance.ok()) << in.instance;
  std::vector<DoctorCheck> checks = RunDoctorChecks(in);
  EXPECT_EQ(DoctorExitCode(checks), 1);  // the policy fails
  EXPECT_THAT(FormatDoctor(checks), HasSubstr("FAIL  policy: "));
}

// Issue #42: on a host with a CPU-less node in a slower tier, the doctor
// names the tiers and who moves pages between them.
TEST_F(DoctorReaderTest, MemoryTiersNameTheTiersAndTheirMovers) {
  paths_.sysfs_root =
      std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/tiered3/sys";
  Write("/proc/sys/kernel/numa_balancing", "2\n");
  Write("/proc/vmstat", "pgpromote_success 4100\npgdemote_kswapd 70000\n");
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  ASSERT_TRUE(in.memory_tiering.has_value());
  EXPECT_THAT(in.memory_tiering_errors, IsEmpty());
  DoctorCheck tiers = Find(in, "memory tiers");
  EXPECT_EQ(tiers.verdict, Verdict::kOk) << tiers.detail;
  EXPECT_THAT(tiers.detail,
              AllOf(HasSubstr("tier 4: nodes 0-1 (4 CPUs); tier 6: node 2 "
                              "(no CPUs)"),
                    HasSubstr("node 2: tier 6 (lower, no CPUs): the kernel "
                              "demotes to it (demotion on) and promotes from "
                              "it (numa_balancing=2); Locus leaves its pages"),
                    HasSubstr("DAMON kdamond 0 scheme 1: migrate_cold to "
                              "node 2"),
                    HasSubstr("promoted 4100 pages and demoted 70000")));
  // Tiering promotion alone is not AutoNUMA moving the workers' pages.
  EXPECT_EQ(Find(in, "numa_balancing").verdict, Verdict::kOk);

  // Nothing promotes: the lower tier's pages stay where they are.
  Write("/proc/sys/kernel/numa_balancing", "0\n");
  in = ReadDoctorInputs(paths_, &prober_);
  tiers = Find(in, "memory tiers");
  EXPECT_EQ(tiers.verdict, Verdict::kWarn);
  EXPECT_THAT(tiers.detail,
              AllOf(HasSubstr("does not promote from it (numa_balancing=0)"),
                    HasSubstr("nothing promotes hot pages")));
  EXPECT_THAT(tiers.fix, HasSubstr("kernel.numa_balancing=2"));
}

TEST_F(DoctorReaderTest, MemoryTiersOnAHostWithoutTiersIsOk) {
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);  // numa2
  ASSERT_TRUE(in.memory_tiering.has_value());
  const DoctorCheck tiers = Find(in, "memory tiers");
  EXPECT_EQ(tiers.verdict, Verdict::kOk);
  EXPECT_THAT(tiers.detail, HasSubstr("no lower tier"));
  EXPECT_THAT(tiers.detail, HasSubstr("demotion unknown"));
}

TEST_F(DoctorReaderTest, MemoryTiersNameAMalformedFile) {
  std::filesystem::copy(
      std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/tiered3/sys",
      root_ + "/sys", std::filesystem::copy_options::recursive);
  Write("/sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0-z\n");
  paths_.sysfs_root = root_ + "/sys";
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  const DoctorCheck tiers = Find(in, "memory tiers");
  EXPECT_EQ(tiers.verdict, Verdict::kWarn);
  EXPECT_THAT(tiers.detail, HasSubstr("memory_tier4/nodelist"));
}

// Issue #39: a user's process named irqbalance or numad is not taken for
// it, and is named as refused.
TEST_F(DoctorReaderTest, ALookAlikeIsNotTheNeighbourAndIsNamed) {
  for (int pid : {45, 46}) {
    const std::string comm = pid == 45 ? "irqbalance" : "numad";
    WriteFixtureProcess(
        paths_.procfs_root,
        {.pid = pid, .comm = comm, .uid = 65534, .euid = 65534});
    Write(absl::StrCat("/proc/", pid, "/comm"), comm + "\n");
  }
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_EQ(in.irqbalance.pid, 0);
  EXPECT_EQ(in.numad.pid, 0);
  EXPECT_THAT(in.irqbalance.look_alikes,
              ElementsAre(HasSubstr("a process named irqbalance (pid 45, uid "
                                    "65534) is not root's")));
  EXPECT_THAT(in.numad.look_alikes,
              ElementsAre(HasSubstr("a process named numad (pid 46, uid "
                                    "65534)")));
  std::vector<DoctorCheck> checks = RunDoctorChecks(in);
  EXPECT_THAT(FormatDoctor(checks),
              AllOf(HasSubstr("WARN  irqbalance: not running"),
                    HasSubstr("(pid 45, uid 65534) is not root's"),
                    HasSubstr("WARN  numad: not running")));
}

TEST_F(DoctorReaderTest, AbsentFilesAreOkAndNoCapabilitiesSkipTheProbe) {
  Write("/proc/self/status", "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0\n");
  paths_.sysfs_root =
      std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/numa1/sys";
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_EQ(prober_.calls, 0);
  EXPECT_FALSE(in.probe.has_value());
  EXPECT_EQ(in.numa_nodes, 1);
  EXPECT_FALSE(in.numa_balancing.has_value());
  EXPECT_FALSE(in.ptrace_scope.has_value());
  EXPECT_EQ(in.irqbalance.pid, 0);
  EXPECT_EQ(in.numad.pid, 0);
  EXPECT_FALSE(in.tuned.has_value());
  EXPECT_FALSE(in.kubelet_cpu_policy.has_value());
  EXPECT_TRUE(absl::IsNotFound(in.policy)) << in.policy;
  std::map<std::string, Verdict> verdicts;
  for (const DoctorCheck& c : RunDoctorChecks(in)) verdicts[c.name] = c.verdict;
  EXPECT_EQ(verdicts["capabilities"], Verdict::kFail);
  EXPECT_EQ(verdicts["numa"], Verdict::kWarn);
  EXPECT_EQ(verdicts["policy"], Verdict::kOk);
  EXPECT_EQ(verdicts["kubelet"], Verdict::kOk);
}

TEST(DoctorChecks, PersistentCpuPressureWarnsAndSaysWhatTheSoftHomeDoes) {
  DoctorInputs in = Healthy();
  in.cpu_pressure = 0.05;
  EXPECT_EQ(Find(in, "cpu_pressure").verdict, Verdict::kOk);
  in.cpu_pressure = 0.76;
  DoctorCheck check = Find(in, "cpu_pressure");
  EXPECT_EQ(check.verdict, Verdict::kWarn);
  EXPECT_THAT(check.detail,
              HasSubstr("some task waited for a CPU 76% of the last 5 "
                        "minutes: the CPUs are persistently saturated"));
  EXPECT_THAT(check.fix, HasSubstr("placement.spill is on"));
  in.spill_enabled = false;
  EXPECT_THAT(Find(in, "cpu_pressure").fix,
              HasSubstr("turn placement.spill on"));
}

TEST_F(DoctorReaderTest, ReadsCpuPressureAndTheSpillOfThePolicy) {
  Write("/proc/pressure/cpu",
        "some avg10=21.59 avg60=52.57 avg300=75.99 total=2324706120\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  Write("/policy.yaml", "placement:\n  spill:\n    enabled: false\n");
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  ASSERT_TRUE(in.cpu_pressure.has_value());
  EXPECT_DOUBLE_EQ(*in.cpu_pressure, 0.7599);
  EXPECT_FALSE(in.spill_enabled);
}

TEST_F(DoctorReaderTest, JournalUnderAFileIsNotWritable) {
  Write("/file", "x");
  paths_.journal_path = root_ + "/file/sub/journal";
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_FALSE(in.journal_writable.ok());
  EXPECT_THAT(in.journal_writable.message(), HasSubstr(root_ + "/file"));
  EXPECT_EQ(DoctorExitCode(RunDoctorChecks(in)), 1);
}

TEST_F(DoctorReaderTest, LockHeldByAnotherIsSeenAndNothingIsCreated) {
  DoctorInputs in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_TRUE(in.instance.ok());
  EXPECT_FALSE(std::filesystem::exists(paths_.journal_path + ".lock"));
  int fd = open((paths_.journal_path + ".lock").c_str(),
                O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_TRUE(absl::IsFailedPrecondition(in.instance)) << in.instance;
  close(fd);
  in = ReadDoctorInputs(paths_, &prober_);
  EXPECT_TRUE(in.instance.ok()) << in.instance;
}

}  // namespace
}  // namespace locus
