#include "agent/doctor/doctor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/doctor/doctor_neighbours.h"
#include "agent/doctor/doctor_servers.h"
#include "agent/doctor/doctor_tiers.h"
#include "agent/doctor/doctor_verdict.h"
#include "common/printable.h"

namespace locus {
namespace {

using doctor_internal::Fail;
using doctor_internal::Ok;
using doctor_internal::Warn;

bool Has(uint64_t caps, int bit) { return (caps >> bit) & 1; }

constexpr char kRunAsRoot[] =
    "run locusd as root (the packaged unit does), or grant the capabilities "
    "in its unit's AmbientCapabilities=";

DoctorCheck Capabilities(const DoctorInputs& in) {
  const char* name = "capabilities";
  if (!in.cap_effective.has_value()) {
    return Fail(name, "cannot read CapEff from /proc/self/status", kRunAsRoot);
  }
  uint64_t caps = *in.cap_effective;
  std::vector<std::string> missing;
  // Since Linux 5.8 CAP_BPF with CAP_PERFMON does what CAP_SYS_ADMIN did.
  if (!Has(caps, kCapSysAdmin) &&
      !(Has(caps, kCapBpf) && Has(caps, kCapPerfmon))) {
    missing.push_back("CAP_SYS_ADMIN (or CAP_BPF and CAP_PERFMON): sensors");
  }
  if (!Has(caps, kCapSysNice)) {
    missing.push_back("CAP_SYS_NICE: affinity and page moves");
  }
  std::string who = in.euid.has_value()
                        ? (*in.euid == 0 ? std::string("root")
                                         : absl::StrCat("uid ", *in.euid))
                        : std::string("unknown user");
  if (!missing.empty()) {
    return Fail(name,
                absl::StrCat("running as ", who, ", missing ",
                             absl::StrJoin(missing, "; ")),
                kRunAsRoot);
  }
  if (!Has(caps, kCapSysPtrace)) {
    return Warn(name,
                absl::StrCat("running as ", who,
                             ", missing CAP_SYS_PTRACE: no connection "
                             "steering (pidfd_getfd) and no page moves in "
                             "other users' processes"),
                kRunAsRoot);
  }
  return Ok(name, absl::StrCat("running as ", who,
                               " with the capabilities locusd needs"));
}

DoctorCheck Btf(const DoctorInputs& in) {
  if (in.btf_present) return Ok("btf", "/sys/kernel/btf/vmlinux present");
  return Warn("btf",
              "/sys/kernel/btf/vmlinux absent: the BPF sensors cannot load "
              "(CO-RE needs the kernel's BTF); they fall back to /proc",
              "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian's "
              "are)");
}

DoctorCheck Bpf(const DoctorInputs& in) {
  const char* name = "bpf";
  if (!in.probe.has_value()) {
    return Warn(name, absl::StrCat("not probed: ", in.probe_skipped),
                "run the doctor as root to probe the kernel's BPF features");
  }
  std::vector<std::string> sources;
  std::vector<std::string> fallbacks;
  for (const v1::SensorSource& s : in.probe->sensors()) {
    sources.push_back(absl::StrCat(s.sensor(), " on ", s.source()));
    if (!s.ok() || s.source() == "procfs") {
      fallbacks.push_back(absl::StrCat(
          s.sensor(), " on ", s.source(),
          s.detail().empty() ? "" : absl::StrCat(" (", s.detail(), ")")));
    }
  }
  if (fallbacks.empty()) {
    return Ok(name, absl::StrCat("sensors: ", absl::StrJoin(sources, ", ")));
  }
  return Warn(name,
              absl::StrCat("fallback sensors, less exact: ",
                           absl::StrJoin(fallbacks, "; ")),
              "`locusd --probe` says what the kernel refused; a kernel with "
              "tp_btf and iter/task (5.8+, BTF) runs every sensor in BPF");
}

DoctorCheck NumaNodes(const DoctorInputs& in) {
  const char* name = "numa";
  if (!in.topology.ok()) {
    return Fail(
        name,
        absl::StrCat("cannot read the NUMA topology: ", in.topology.message()),
        "locusd needs sysfs mounted at /sys (or --sysfs_root)");
  }
  if (in.numa_nodes < 2) {
    return Warn(name,
                absl::StrCat(in.numa_nodes,
                             " NUMA node: nothing to place, Locus only "
                             "watches here"),
                "Locus helps on multi-socket hosts; check `numactl -H` and "
                "the BIOS (node interleaving / NPS1 hide the nodes)");
  }
  return Ok(name, absl::StrCat(in.numa_nodes, " NUMA nodes"));
}

DoctorCheck NumaBalancing(const DoctorInputs& in) {
  const char* name = "numa_balancing";
  if (!in.numa_balancing.has_value()) {
    return Ok(name, "no AutoNUMA in this kernel");
  }
  if (*in.numa_balancing == 0) return Ok(name, "kernel.numa_balancing=0");
  // Tiering promotion alone scans only pages of a lower tier and moves no
  // task: the nodes with CPUs stay Locus's ("memory tiers" says more).
  if (*in.numa_balancing == 2) {
    return Ok(name,
              "kernel.numa_balancing=2: tiering promotion only (hot pages "
              "of a lower tier to a faster one)");
  }
  return Warn(name,
              absl::StrCat("kernel.numa_balancing=", *in.numa_balancing,
                           ": AutoNUMA also moves pages (and unpinned "
                           "tasks); beside Locus it brings memory home "
                           "sooner, at the cost of hinting faults"),
              "keep it, or `sysctl -w kernel.numa_balancing=0` to leave "
              "placement to Locus alone");
}

// PSI's five-minute CPU pressure: a host whose tasks wait for CPUs this
// much of the time is persistently saturated, and a worker kept to a node
// there waits for that node's CPUs.
constexpr double kSaturatedCpuPressure = 0.25;

DoctorCheck CpuPressure(double pressure, bool spill_enabled) {
  const char* name = "cpu_pressure";
  const std::string found =
      absl::StrFormat("some task waited for a CPU %.0f%% of the last 5 minutes",
                      100 * pressure);
  if (pressure < kSaturatedCpuPressure) return Ok(name, found);
  return Warn(
      name, absl::StrCat(found, ": the CPUs are persistently saturated"),
      spill_enabled
          ? "placement.spill is on: a waiting worker borrows the CPUs of a "
            "calmer node (`locusctl top` shows each node's wait); if every "
            "node is saturated, the host needs fewer tasks or more CPUs"
          : "turn placement.spill on (locus-policy(5)) so that a waiting "
            "worker may borrow a calmer node's CPUs");
}

// Look-alikes: processes the policy selects that locusd would refuse to
// act on, each with the agent's reason (agent/host/target_trust.h).
DoctorCheck Refused(const DoctorInputs& in) {
  constexpr size_t kShown = 5;  // anyone can start thousands
  std::vector<std::string> seen;
  for (const RefusedProcess& p : in.refused) {
    if (seen.size() == kShown) break;
    seen.push_back(absl::StrCat("pid ", p.pid, " (", Printable(p.comm), "): ",
                                Printable(p.reason, 2 * kMaxQuotedBytes)));
  }
  if (in.refused.size() > kShown) {
    seen.push_back(absl::StrCat("and ", in.refused.size() - kShown, " more"));
  }
  return Warn("refused",
              absl::StrCat("selected by the policy but refused as targets, "
                           "locusd leaves them alone: ",
                           absl::StrJoin(seen, "; ")),
              "if one is your server, run it from a root-owned binary no "
              "one else may write, started by root, or name its unit in "
              "targets.systemd_unit; if not, find out who started it");
}

DoctorCheck PtraceScope(const DoctorInputs& in) {
  const char* name = "ptrace_scope";
  if (!in.ptrace_scope.has_value()) return Ok(name, "no Yama");
  if (*in.ptrace_scope < 2) {
    return Ok(name,
              absl::StrCat("kernel.yama.ptrace_scope=", *in.ptrace_scope));
  }
  return Warn(name,
              absl::StrCat("kernel.yama.ptrace_scope=", *in.ptrace_scope,
                           ": pidfd_getfd is refused, so connection steering "
                           "cannot reach nginx's listening sockets"),
              *in.ptrace_scope == 2
                  ? "`sysctl -w kernel.yama.ptrace_scope=1`"
                  : "3 holds until reboot: set kernel.yama.ptrace_scope=1 in "
                    "/etc/sysctl.d and reboot");
}

DoctorCheck Kubelet(const DoctorInputs& in) {
  const char* name = "kubelet";
  if (!in.kubelet_cpu_policy.has_value()) {
    return Ok(name, "no kubelet CPU manager state");
  }
  if (*in.kubelet_cpu_policy != "static") {
    return Ok(
        name,
        absl::StrCat("kubelet CPU manager policy '",
                     Printable(*in.kubelet_cpu_policy, kMaxQuotedBytes), "'"));
  }
  return Warn(
      name,
      absl::StrCat("kubelet CPU manager policy static (", in.kubelet_state_path,
                   "): it gives Guaranteed pods exclusive CPUs and "
                   "resets their cpusets"),
      "set placement.cpus and irqs.cpus to the shared pool, so that "
      "Locus leaves the exclusive CPUs alone");
}

DoctorCheck Policy(const DoctorInputs& in) {
  const char* name = "policy";
  if (absl::IsNotFound(in.policy)) {
    return Ok(name, absl::StrCat("no file at ", in.policy_path,
                                 ": the built-in default (nginx) applies"));
  }
  if (!in.policy.ok()) {
    // The reader's message names file:line:column of every error.
    return Fail(name, std::string(in.policy.message()),
                absl::StrCat("fix the file; `locusctl policy check ",
                             in.policy_path, "` checks it again"));
  }
  return Ok(name, absl::StrCat(in.policy_path, " is valid"));
}

DoctorCheck Journal(const DoctorInputs& in) {
  const char* name = "journal";
  if (!in.journal_writable.ok()) {
    return Fail(name,
                absl::StrCat(in.journal_path, " cannot be written (",
                             in.journal_writable.message(),
                             "): locusd changes nothing it cannot journal, "
                             "so it would say NOT ACTING"),
                "make its directory writable by root (a read-only /var?), or "
                "give locusd --journal=PATH on a writable filesystem");
  }
  return Ok(name, absl::StrCat(in.journal_path, " writable"));
}

// The agent that answered locusctl holds its own journal: the lock it takes
// is exclusive, so a held lock on that journal is that agent's.
bool HeldByTheAgentAsked(const DoctorInputs& in) {
  return in.agent.has_value() && in.agent->reached.ok() &&
         !in.agent->status.journal_path().empty() &&
         in.agent->status.journal_path() == in.journal_path;
}

DoctorCheck Instance(const DoctorInputs& in) {
  const char* name = "instance";
  if (absl::IsFailedPrecondition(in.instance) && HeldByTheAgentAsked(in)) {
    return Ok(name, absl::StrCat("the journal is held by the locusd that "
                                 "answers on ",
                                 Printable(in.agent->socket)));
  }
  if (absl::IsFailedPrecondition(in.instance)) {
    return Warn(name,
                absl::StrCat("a locusd is running with this journal: ",
                             in.instance.message()),
                "drive it with locusctl; a second locusd would refuse to "
                "start");
  }
  if (!in.instance.ok()) {
    return Fail(name, std::string(in.instance.message()),
                "the journal's lock file must be creatable by root");
  }
  return Ok(name, "no other locusd holds the journal");
}

DoctorCheck Agent(const AgentAnswer& agent) {
  const char* name = "agent";
  if (!agent.reached.ok()) {
    return Warn(name,
                absl::StrCat("no locusd answers on ", agent.socket, ": ",
                             agent.reached.message()),
                "`systemctl enable --now locusd`, or locusctl "
                "--socket=PATH for one started elsewhere");
  }
  const v1::AgentStatus& s = agent.status;
  std::string mode = s.mode() == v1::AGENT_MODE_ENFORCE   ? "enforce"
                     : s.mode() == v1::AGENT_MODE_DRY_RUN ? "dry_run"
                                                          : "unknown";
  std::string source = s.mode_source() == v1::MODE_SOURCE_POLICY ? "policy"
                       : s.mode_source() == v1::MODE_SOURCE_FLAG ? "--mode"
                       : s.mode_source() == v1::MODE_SOURCE_RUNTIME
                           ? "runtime override"
                           : "unknown";
  std::string answer = absl::StrCat("locusd answers on ", agent.socket,
                                    ", mode ", mode, " (from ", source, ")");
  if (!s.journal_error().empty()) {
    return Warn(name, absl::StrCat(answer, ", NOT ACTING: ", s.journal_error()),
                "make the journal writable (see the journal line); the agent "
                "acts again once a record is written");
  }
  return Ok(name, answer);
}

}  // namespace

std::vector<DoctorCheck> RunDoctorChecks(const DoctorInputs& in) {
  std::vector<DoctorCheck> checks = {
      Capabilities(in),   Btf(in),           Bpf(in),
      NumaNodes(in),      NumaBalancing(in), IrqbalanceCheck(in),
      NumadCheck(in),     TunedCheck(in),    PtraceScope(in),
      ReuseportCheck(in), CpusetsCheck(in),  Kubelet(in),
      Policy(in),         Journal(in),       Instance(in)};
  // After numa_balancing, whose promotion it explains.
  checks.insert(checks.begin() + 5, MemoryTiersCheck(in));
  if (!in.refused.empty()) {
    // After the reuseport (or "no nginx running") line it explains.
    checks.insert(checks.begin() + 11, Refused(in));
  }
  if (in.cpu_pressure.has_value()) {
    checks.push_back(CpuPressure(*in.cpu_pressure, in.spill_enabled));
  }
  if (in.agent.has_value()) checks.push_back(Agent(*in.agent));
  return checks;
}

std::string FormatDoctor(const std::vector<DoctorCheck>& checks) {
  // Each line of `text` through Printable, the further ones indented.
  const auto shown = [](const std::string& text) {
    std::string out;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      absl::StrAppend(&out, out.empty() ? "" : "\n        ", Printable(line));
    }
    return out;
  };
  std::string out;
  for (const DoctorCheck& c : checks) {
    const char* word = c.verdict == Verdict::kOk     ? "OK  "
                       : c.verdict == Verdict::kWarn ? "WARN"
                                                     : "FAIL";
    absl::StrAppend(&out, word, "  ", c.name, ": ", shown(c.detail), "\n");
    if (!c.fix.empty())
      absl::StrAppend(&out, "      fix: ", shown(c.fix), "\n");
  }
  return out;
}

int DoctorExitCode(const std::vector<DoctorCheck>& checks) {
  for (const DoctorCheck& c : checks) {
    if (c.verdict == Verdict::kFail) return 1;
  }
  return 0;
}

}  // namespace locus
