// Inside Decide(): where a worker's cgroup lets it go. The kernel refuses a
// pin outside the cgroup's cpuset.cpus and a page move to a node outside its
// cpuset.mems, and a worker homed where its memory may not live has every
// access remote: a plan respects both, and says which constraint decided.
#ifndef LOCUS_POLICY_CPUSET_H_
#define LOCUS_POLICY_CPUSET_H_

#include <string>
#include <vector>

#include "policy/engine.h"

namespace locus::decide_internal {

// Whether the target's cgroup names a cpuset at all (most, on a systemd host,
// name one that allows everything).
inline bool HasCpuset(const Target& target) {
  return target.cgroup != nullptr &&
         (!target.cgroup->cpus.empty() || !target.cgroup->mems.empty());
}

// Whether someone else (the kubelet) places the target.
inline bool PlacedByOthers(const Target& target) {
  return target.cgroup != nullptr && !target.cgroup->placed_by.empty();
}

// Per node index, what the target's cgroup allows there.
struct Allowed {
  std::vector<char> run;     // some CPU placement may use is in cpuset.cpus
  std::vector<char> mem;     // the node is in cpuset.mems
  std::vector<char> home;    // run and mem; run alone where no node is both
  bool constrained = false;  // homes are fewer than the nodes with CPUs
  // What decided, for reasons: "cpuset.mems allows only 0"; "" when
  // nothing did.
  std::string why;
};
Allowed AllowedNodes(const Context& ctx, const Target& target);

// The CPUs of node index `node` that placement may use and the target's
// cgroup allows.
std::vector<int> CpusFor(const Context& ctx, const Target& target, int node);

// Whether the target's pages may be moved to node index `node`.
bool MemAllowed(const Context& ctx, const Target& target, int node);

// The ids of the node indices `set` marks, as a list ("0-1,3").
std::string NodeIds(const Context& ctx, const std::vector<char>& set);

// "home node 0: cpuset.mems allows only 0", for a reason; "" when the
// cgroup leaves every node.
std::string HomeConstraint(const Context& ctx, const Target& target, int home);

}  // namespace locus::decide_internal

#endif  // LOCUS_POLICY_CPUSET_H_
