// Fills DoctorInputs from the host: every file through the roots below, so
// that tests read fixture trees instead.
#ifndef LOCUS_AGENT_DOCTOR_DOCTOR_READER_H_
#define LOCUS_AGENT_DOCTOR_DOCTOR_READER_H_

#include <ostream>
#include <set>
#include <string>

#include "agent/doctor/doctor.h"
#include "agent/sensors/feature_probe.h"
#include "common/defaults.h"

namespace locus {

// Where the kubelet keeps its CPU manager's choice (policy and assignments).
inline constexpr char kDefaultKubeletCpuManagerState[] =
    "/var/lib/kubelet/cpu_manager_state";

struct DoctorPaths {
  std::string sysfs_root = kDefaultSysfsRoot;
  std::string procfs_root = kDefaultProcfsRoot;
  std::string kubelet_state = kDefaultKubeletCpuManagerState;
  std::string policy_path = kDefaultPolicyPath;
  std::string journal_path = kDefaultJournalPath;
  // The neighbours' own places (agent/act/neighbours/).
  std::string irqbalance_run_dir = "/run/irqbalance";
  std::string numad_pid_file = "/run/numad.pid";
  std::string tuned_profile = "/etc/tuned/active_profile";
  std::set<Feature> disabled_features;  // --disable_feature, as the probe
};

// `prober` answers the BPF feature probe; it is asked only when the
// capabilities read say the probe can run (CAP_BPF and CAP_PERFMON, or
// CAP_SYS_ADMIN).
DoctorInputs ReadDoctorInputs(const DoctorPaths& paths, KernelProber* prober);

// ReadDoctorInputs with the kernel's own prober.
DoctorInputs ReadHostDoctorInputs(const DoctorPaths& paths);

// `locusd --doctor`: the checks printed on `out`; the exit code.
int RunDoctor(const DoctorPaths& paths, std::ostream& out);

}  // namespace locus

#endif  // LOCUS_AGENT_DOCTOR_DOCTOR_READER_H_
