// The real ReuseportOps: the skeleton of bpf/reuseport.bpf.c through libbpf,
// pidfd_open + pidfd_getfd, and the SO_*_REUSEPORT_* socket options. Its own
// library (locus_act_reuseport), so that the rest of locus_act never sees
// libbpf. Needs CAP_BPF (load, maps) and CAP_SYS_PTRACE (pidfd_getfd).
#ifndef LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_KERNEL_H_
#define LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_KERNEL_H_

#include <memory>

#include "agent/act/connections/reuseport_ops.h"

namespace locus {

// Each Load() tries the SELECT_OR_MIGRATE program first and, where the
// kernel refuses it (before 5.14), the plain select one; the answer is kept
// for later loads.
std::unique_ptr<ReuseportOps> MakeKernelReuseportOps();

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_KERNEL_H_
