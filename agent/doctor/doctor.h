// `locusd --doctor` and `locusctl doctor`: will Locus help on this host, and
// what stands in the way. The checks are pure functions of DoctorInputs (what
// the host looks like), so that each verdict is tested on made-up inputs;
// doctor_reader.h fills the inputs from the host.
#ifndef LOCUS_AGENT_DOCTOR_DOCTOR_H_
#define LOCUS_AGENT_DOCTOR_DOCTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "locus/v1/agent.pb.h"
#include "locus/v1/policy.pb.h"
#include "policy/snapshot.h"

namespace locus {

enum class Verdict { kOk, kWarn, kFail };

struct DoctorCheck {
  std::string name;  // "capabilities", "btf", ...
  Verdict verdict = Verdict::kOk;
  std::string detail;  // what was found
  std::string fix;     // what to do; empty when there is nothing to do
};

// A process seen running, by its name (comm).
struct RunningProcess {
  std::string comm;
  int pid = 0;
};

// A tuner beside Locus (irqbalance, numad) as the actuators find it.
struct NeighbourFound {
  int pid = 0;              // 0: none runs
  std::string reach;        // how Locus reaches it, when it can
  std::string unreachable;  // why it cannot, when it cannot
  // Processes of its name that are not root's (and pid files that are not):
  // refused, one printable sentence each (NeighbourOps' LookAlikes).
  std::vector<std::string> look_alikes = {};
  // Its SIGPIPE is not ignored (/proc/PID/status SigIgn): irqbalance 1.9
  // then dies when it answers a client that has gone.
  bool sigpipe_kills = false;
};

// One nginx instance's TCP listening addresses, by whether each has a
// socket per worker (`reuseport`) or one shared socket.
struct NginxListening {
  int master_pid = 0;
  std::string server = "nginx";  // its comm
  // The policy's targets.thread_workers names it: its reuseport groups
  // have a socket per thread (HAProxy's `shards by-thread`).
  bool thread_workers = false;
  std::vector<std::string> reuseport;     // "0.0.0.0:80"
  std::vector<std::string> no_reuseport;  // one socket for every worker
  std::string error;                      // its sockets could not be read
  // Its workers' cgroup cpuset, when one constrains them: the nodes whose
  // CPUs it allows and the memory nodes it allows.
  std::string cgroup;
  std::vector<int> cpu_nodes;
  std::vector<int> mems;
};

// Whether an agent answered on the socket (locusctl doctor only).
struct AgentAnswer {
  std::string socket;
  absl::Status reached;  // the call's failure, OK when it answered
  v1::AgentStatus status;
};

struct DoctorInputs {
  // From /proc/self/status; nullopt when unreadable.
  std::optional<uint32_t> euid;
  std::optional<uint64_t> cap_effective;
  bool btf_present = false;  // /sys/kernel/btf/vmlinux
  // The probe, when it could run (it needs CAP_BPF and CAP_PERFMON).
  std::optional<v1::ProbeReport> probe;
  std::string probe_skipped;                 // why it did not run
  absl::Status topology = absl::OkStatus();  // reading the nodes
  int numa_nodes = 0;
  std::optional<int> numa_balancing;  // nullopt: the kernel has no AutoNUMA
  std::optional<int> ptrace_scope;    // nullopt: no Yama
  NeighbourFound irqbalance;
  NeighbourFound numad;
  std::optional<RunningProcess> tuned;
  std::string tuned_profile;  // its active profile, when readable
  v1::Coexist coexist;        // the policy's (the built-in one's when unread)
  std::vector<std::string> servers;   // its targets.comm: what it tunes
  std::vector<NginxListening> nginx;  // the trusted targets' instances
  // Processes the policy selects that locusd would refuse as targets (a
  // look-alike: any user can name a binary nginx), with why.
  std::vector<RefusedProcess> refused;
  // The kubelet's CPU manager policy ("static", "none"); nullopt: no state
  // file, so no kubelet here.
  std::optional<std::string> kubelet_cpu_policy;
  std::string kubelet_state_path;
  std::string policy_path;
  absl::Status policy = absl::OkStatus();  // NotFound: the built-in default
  std::string journal_path;
  absl::Status journal_writable = absl::OkStatus();
  // FailedPrecondition when another locusd holds the journal's lock.
  absl::Status instance = absl::OkStatus();
  std::optional<AgentAnswer> agent;  // locusctl doctor only
  // Share of the last five minutes some task waited for a CPU (PSI, host
  // wide: the kernel keeps no per-node figure); nullopt without PSI.
  std::optional<double> cpu_pressure;
  bool spill_enabled = true;  // the policy's placement.spill.enabled
  // The memory tiers and their movers (agent/host/tiering_report.h);
  // nullopt when the topology cannot be read. Files that were there but
  // unreadable or malformed, "<path>: <why>" each.
  std::optional<v1::MemoryTiering> memory_tiering;
  std::vector<std::string> memory_tiering_errors;
};

// Capability numbers as <linux/capability.h> has them (CAP_BPF and
// CAP_PERFMON are missing from older headers).
inline constexpr int kCapSysPtrace = 19;
inline constexpr int kCapSysAdmin = 21;
inline constexpr int kCapSysNice = 23;
inline constexpr int kCapPerfmon = 38;
inline constexpr int kCapBpf = 39;

// One line per check, in a fixed order (the agent's last, when asked).
std::vector<DoctorCheck> RunDoctorChecks(const DoctorInputs& in);

// "OK    name: detail" lines, with "      fix: ..." below a WARN or FAIL.
// Details quote names from the host (comms, cgroup paths, reasons): each
// line of a detail is shown through Printable (common/printable.h), and a
// detail's further lines are indented, so that nothing passes for a check.
std::string FormatDoctor(const std::vector<DoctorCheck>& checks);

// 0 when no check failed, 1 otherwise.
int DoctorExitCode(const std::vector<DoctorCheck>& checks);

}  // namespace locus

#endif  // LOCUS_AGENT_DOCTOR_DOCTOR_H_
