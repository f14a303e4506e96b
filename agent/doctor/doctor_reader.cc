#include "agent/doctor/doctor_reader.h"

#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/act/neighbours/irqbalance_socket.h"
#include "agent/act/neighbours/numad_queue.h"
#include "agent/act/neighbours/process_finder.h"
#include "agent/host/cgroup_cpuset.h"
#include "agent/host/file_util.h"
#include "agent/host/listeners.h"
#include "agent/host/proc_parse.h"
#include "agent/host/proc_pressure.h"
#include "agent/host/targets.h"
#include "agent/host/tiering_report.h"
#include "agent/host/topology.h"
#include "agent/journal/journal.h"
#include "agent/journal/journal_lock.h"
#include "agent/sensors/libbpf_prober.h"
#include "agent/sensors/probe_report.h"
#include "agent/sensors/source_plan.h"
#include "common/file_read.h"
#include "common/os_error.h"
#include "common/unique_fd.h"
#include "policy/default_policy.h"
#include "policy/policy_yaml.h"

namespace locus {
namespace {

// Uid: (real, effective, ...) and CapEff: (hex) of /proc/self/status.
void ReadSelfStatus(const std::string& procfs_root, DoctorInputs& in) {
  absl::StatusOr<std::string> text =
      ReadTextFile(JoinPath(procfs_root, "/self/status"));
  if (!text.ok()) return;
  std::vector<absl::string_view> uids = ParseStatusValues(*text, "Uid");
  uint32_t euid = 0;
  if (uids.size() >= 2 && absl::SimpleAtoi(uids[1], &euid)) in.euid = euid;
  absl::StatusOr<uint64_t> caps = ParseStatusMask(*text, "CapEff");
  if (caps.ok()) in.cap_effective = *caps;
}

// Whether `pid` ignores `signal` (SigIgn: of /proc/PID/status); nullopt
// when that cannot be read.
std::optional<bool> IgnoresSignal(const std::string& procfs_root, int pid,
                                  int signal) {
  absl::StatusOr<std::string> text =
      ReadTextFile(JoinPath(procfs_root, absl::StrCat("/", pid, "/status")));
  if (!text.ok()) return std::nullopt;
  absl::StatusOr<uint64_t> ignored = ParseStatusMask(*text, "SigIgn");
  if (!ignored.ok()) return std::nullopt;
  return ((*ignored >> (signal - 1)) & 1) != 0;
}

bool CanProbe(const DoctorInputs& in) {
  if (!in.cap_effective.has_value()) return false;
  uint64_t c = *in.cap_effective;
  auto has = [c](int bit) { return ((c >> bit) & 1) != 0; };
  return has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon));
}

// A single integer file; nullopt when absent or not a number.
std::optional<int> ReadInt(const std::string& path) {
  absl::StatusOr<std::string> line = ReadFirstLine(path);
  int value = 0;
  if (!line.ok() || !absl::SimpleAtoi(*line, &value)) return std::nullopt;
  return value;
}

// Every process by its name (comm), from one walk of /proc; a process that
// ends between the listing and the read is just gone.
std::vector<RunningProcess> ListProcesses(const std::string& procfs_root) {
  std::vector<RunningProcess> found;
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(procfs_root);
  if (!names.ok()) return found;
  for (const std::string& name : *names) {
    int pid = 0;
    if (!absl::SimpleAtoi(name, &pid)) continue;
    absl::StatusOr<std::string> comm =
        ReadFirstLine(JoinPath(procfs_root, "/" + name + "/comm"));
    if (comm.ok()) found.push_back({*comm, pid});
  }
  return found;
}

std::string ReachOf(const IrqbalanceInstance& instance) {
  return instance.socket == kIrqbalanceAbstractSocket ? "its abstract socket"
                                                      : instance.socket;
}
std::string ReachOf(const NumadInstance&) {
  return "its message queue (key 0xdeadbeef)";
}

std::optional<RunningProcess> FindNamed(
    const std::vector<RunningProcess>& processes, absl::string_view comm) {
  for (const RunningProcess& p : processes) {
    if (p.comm == comm) return p;
  }
  return std::nullopt;
}

// The first process named `comm` that is root's (process_finder.h): a
// user's look-alike is not the neighbour, whatever its name.
std::optional<RunningProcess> FindDaemon(
    const std::vector<RunningProcess>& processes,
    const std::string& procfs_root, absl::string_view comm) {
  for (const RunningProcess& p : processes) {
    if (p.comm == comm && IsDaemon(procfs_root, p.pid, comm)) return p;
  }
  return std::nullopt;
}

// Found the way the actuators find it: how Locus reaches it, or why not,
// and what of its name was refused.
template <typename Ops>
NeighbourFound ReadNeighbour(const std::vector<RunningProcess>& processes,
                             const std::string& procfs_root,
                             absl::string_view comm, Ops& ops) {
  NeighbourFound found;
  auto instance = ops.Find();
  found.look_alikes = ops.LookAlikes();
  std::optional<RunningProcess> seen = FindDaemon(processes, procfs_root, comm);
  if (!seen.has_value()) return found;
  found.pid = seen->pid;
  if (!instance.ok()) {
    found.unreachable = std::string(instance.status().message());
  } else if (instance->has_value()) {
    found.pid = (*instance)->pid;
    found.reach = ReachOf(**instance);
  }
  return found;
}

// Each nginx master (an nginx whose parent is not one) with its workers,
// and how its TCP listeners are grouped.
// The nodes whose CPUs `cpus` holds.
std::vector<int> NodesOfCpus(const Topology& topology,
                             const std::vector<int>& cpus) {
  std::set<int> nodes;
  for (int cpu : cpus) {
    if (cpu >= 0 && static_cast<size_t>(cpu) < topology.cpu_node.size() &&
        topology.cpu_node[cpu] >= 0)
      nodes.insert(topology.cpu_node[cpu]);
  }
  return {nodes.begin(), nodes.end()};
}

// The cgroup cpuset of the instance's first worker (nginx keeps its workers
// in its master's cgroup).
void ReadCpuset(const DoctorPaths& paths, const Topology* topology,
                const NginxInstance& instance, NginxListening& out) {
  if (topology == nullptr || instance.worker_pids.empty()) return;
  std::vector<Target> targets(1);
  targets[0].pid = instance.worker_pids[0];
  std::vector<std::string> errors;
  CgroupCpusetReader(JoinPath(paths.sysfs_root, "/fs/cgroup"))
      .Fill(paths.procfs_root, targets, &errors);
  if (targets[0].cgroup == nullptr || targets[0].cgroup->cpus.empty()) return;
  out.cgroup = targets[0].cgroup->path;
  out.cpu_nodes = NodesOfCpus(*topology, targets[0].cgroup->cpus);
  out.mems = targets[0].cgroup->mems;
}

// The policy's targets as locusd finds them: its selectors and its trust
// rules (agent/host/target_trust.h, as the daemon's TargetsOf sets them), so
// that a look-alike any user started is listed as refused, with why, never
// as a server to tune. Only what the checks need is read.
std::vector<Target> ScanPolicyTargets(const DoctorPaths& paths,
                                      const v1::Policy& policy,
                                      const Topology* topology,
                                      std::vector<RefusedProcess>* refused) {
  TargetScanOptions options;
  options.selector = TargetSelector{};
  options.selector.comms.assign(policy.targets().comm().begin(),
                                policy.targets().comm().end());
  options.trust.systemd_unit = policy.targets().systemd_unit();
  options.read_threads = false;
  options.read_thread_cpu = false;
  options.read_numa_maps = false;
  std::vector<std::string> errors;
  absl::StatusOr<std::vector<Target>> targets = ScanTargets(
      HostPaths{paths.sysfs_root, paths.procfs_root}, options,
      topology != nullptr ? *topology : Topology{}, &errors, nullptr, refused);
  return targets.ok() ? *std::move(targets) : std::vector<Target>{};
}

// Each trusted instance (a master and the workers below it) with how its
// TCP listeners are grouped and its cgroup's cpuset.
std::vector<NginxListening> ReadNginxListening(
    const DoctorPaths& paths, const v1::Policy& policy,
    const std::vector<Target>& targets, const Topology* topology) {
  std::map<int32_t, NginxInstance> instances;
  std::map<int32_t, std::string> servers;
  for (const Target& t : targets) {
    NginxInstance& instance = instances[t.instance];
    instance.master_pid = t.instance;
    if (t.pid != t.instance) instance.worker_pids.push_back(t.pid);
    if (t.pid == t.instance || !servers.contains(t.instance)) {
      servers[t.instance] = t.comm;
    }
  }
  const auto& threaded = policy.targets().thread_workers();
  std::vector<NginxListening> out;
  for (const auto& [pid, instance] : instances) {
    NginxListening listening;
    listening.master_pid = pid;
    listening.server = servers[pid];
    listening.thread_workers = std::find(threaded.begin(), threaded.end(),
                                         listening.server) != threaded.end();
    std::vector<std::string> errors;
    absl::StatusOr<std::vector<ListenGroup>> groups =
        ReadListenGroups(paths.procfs_root, instance, &errors);
    if (!groups.ok()) {
      listening.error = std::string(groups.status().message());
    } else {
      for (const ListenGroup& g : *groups) {
        (g.reuseport() ? listening.reuseport : listening.no_reuseport)
            .push_back(ListenAddressString(g.key.address));
      }
    }
    ReadCpuset(paths, topology, instance, listening);
    out.push_back(std::move(listening));
  }
  return out;
}

// The kubelet writes {"policyName":"static","defaultCpuSet":...}; the value
// is taken without a JSON library: the file is small and flat.
std::optional<std::string> ReadKubeletPolicy(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return std::nullopt;
    return "unreadable";
  }
  size_t key = text->find("\"policyName\"");
  size_t open = key == std::string::npos ? key : text->find('"', key + 12);
  size_t close = open == std::string::npos ? open : text->find('"', open + 1);
  if (close == std::string::npos) return "unknown";
  return text->substr(open + 1, close - open - 1);
}

// Whether locusd could write the journal: its directory (or the nearest one
// that exists, since locusd creates the rest) and the file if present.
absl::Status JournalWritable(const std::string& journal) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(journal, ec)) {
    if (access(journal.c_str(), W_OK) != 0) {
      return ErrnoStatus(journal, errno);
    }
  }
  fs::path dir = fs::path(journal).parent_path();
  while (!dir.empty() && !fs::exists(dir, ec) && dir != dir.root_path()) {
    dir = dir.parent_path();
  }
  if (dir.empty()) dir = ".";
  // A file where a directory should be: locusd could not create the rest.
  if (!fs::is_directory(dir, ec)) return ErrnoStatus(dir.string(), ENOTDIR);
  if (access(dir.c_str(), W_OK) != 0) return ErrnoStatus(dir.string(), errno);
  return absl::OkStatus();
}

// Whether another process holds the instance lock (InstanceLock's file),
// taken and dropped at once; nothing is created when it does not exist.
absl::Status InstanceFree(const std::string& journal_path) {
  absl::StatusOr<std::string> journal = ResolveJournalPath(journal_path);
  if (!journal.ok()) return journal.status();
  const std::string path = *journal + ".lock";
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return errno == ENOENT ? absl::OkStatus() : ErrnoStatus(path, errno);
  }
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is locked"));
    }
    return ErrnoStatus(path, errno);
  }
  // A daemon started through another name (a hard link) holds the journal
  // file's own lock, as locusd's start checks.
  absl::StatusOr<UniqueFd> held = LockJournalFileAt(*journal);
  if (absl::IsFailedPrecondition(held.status())) return held.status();
  return absl::OkStatus();  // closing the fds drops the locks
}

void ReadKernel(const DoctorPaths& paths, KernelProber* prober,
                DoctorInputs& in) {
  std::error_code ec;
  in.btf_present = std::filesystem::exists(
      JoinPath(paths.sysfs_root, "/kernel/btf/vmlinux"), ec);
  if (prober != nullptr && CanProbe(in)) {
    FeatureSet features(prober, paths.disabled_features);
    in.probe = ProbeReportOf(features, ChooseSources(features));
  } else {
    in.probe_skipped = "loading BPF programs needs CAP_BPF and CAP_PERFMON";
  }
  in.numa_balancing =
      ReadInt(JoinPath(paths.procfs_root, "/sys/kernel/numa_balancing"));
  absl::StatusOr<std::string> psi =
      ReadRegularFile(JoinPath(paths.procfs_root, "/pressure/cpu"));
  absl::StatusOr<double> pressure =
      psi.ok() ? ParseCpuPressureAvg300(*psi) : psi.status();
  if (pressure.ok()) in.cpu_pressure = *pressure;
  in.ptrace_scope =
      ReadInt(JoinPath(paths.procfs_root, "/sys/kernel/yama/ptrace_scope"));
}

}  // namespace

DoctorInputs ReadDoctorInputs(const DoctorPaths& paths, KernelProber* prober) {
  DoctorInputs in;
  ReadSelfStatus(paths.procfs_root, in);
  ReadKernel(paths, prober, in);
  absl::StatusOr<Topology> topology = ReadTopology(paths.sysfs_root);
  in.topology = topology.status();
  if (topology.ok()) in.numa_nodes = static_cast<int>(topology->nodes.size());
  absl::StatusOr<v1::MemoryTiering> tiers = ReadMemoryTieringReport(
      paths.sysfs_root, paths.procfs_root, &in.memory_tiering_errors);
  if (tiers.ok()) in.memory_tiering = *std::move(tiers);
  const std::vector<RunningProcess> processes =
      ListProcesses(paths.procfs_root);
  in.irqbalance = ReadNeighbour(
      processes, paths.procfs_root, "irqbalance",
      *MakeIrqbalanceSocketOps(paths.procfs_root, paths.irqbalance_run_dir));
  if (in.irqbalance.pid > 0) {
    const std::optional<bool> ignored =
        IgnoresSignal(paths.procfs_root, in.irqbalance.pid, SIGPIPE);
    in.irqbalance.sigpipe_kills = ignored.has_value() && !*ignored;
  }
  in.numad = ReadNeighbour(
      processes, paths.procfs_root, "numad",
      *MakeNumadQueueOps(paths.procfs_root, paths.numad_pid_file));
  in.tuned = FindNamed(processes, "tuned");
  if (in.tuned.has_value()) {
    in.tuned_profile = ReadFirstLine(paths.tuned_profile).value_or("");
  }
  in.kubelet_state_path = paths.kubelet_state;
  in.kubelet_cpu_policy = ReadKubeletPolicy(paths.kubelet_state);
  in.policy_path = paths.policy_path;
  // CPU lists in the file are checked against this host, as locusd does.
  const Topology* host = topology.ok() ? &*topology : nullptr;
  absl::StatusOr<v1::Policy> policy = LoadPolicyFile(paths.policy_path, host);
  in.policy = policy.status();
  in.coexist = policy.ok() ? policy->coexist() : DefaultPolicy().coexist();
  in.spill_enabled =
      (policy.ok() ? *policy : DefaultPolicy()).placement().spill().enabled();
  // Without a valid file locusd runs the built-in default (or not at all):
  // its targets are the ones to look at.
  const v1::Policy& applied = policy.ok() ? *policy : DefaultPolicy();
  in.servers.assign(applied.targets().comm().begin(),
                    applied.targets().comm().end());
  const std::vector<Target> targets =
      ScanPolicyTargets(paths, applied, host, &in.refused);
  in.nginx = ReadNginxListening(paths, applied, targets, host);
  in.journal_path = paths.journal_path;
  in.journal_writable = JournalWritable(paths.journal_path);
  in.instance = InstanceFree(paths.journal_path);
  return in;
}

DoctorInputs ReadHostDoctorInputs(const DoctorPaths& paths) {
  LibbpfProber prober;
  return ReadDoctorInputs(paths, &prober);
}

int RunDoctor(const DoctorPaths& paths, std::ostream& out) {
  std::vector<DoctorCheck> checks =
      RunDoctorChecks(ReadHostDoctorInputs(paths));
  out << FormatDoctor(checks) << std::flush;
  return DoctorExitCode(checks);
}

}  // namespace locus
