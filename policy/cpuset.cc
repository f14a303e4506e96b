#include "policy/cpuset.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/cpu_list.h"

namespace locus::decide_internal {
namespace {

bool Covers(const std::vector<char>& set, const std::vector<char>& other) {
  for (size_t n = 0; n < set.size(); ++n) {
    if (other[n] && !set[n]) return false;
  }
  return true;
}

std::string Why(const Context& ctx, const Allowed& a, bool fallback) {
  std::vector<char> with_cpus(ctx.nodes, 0);
  for (int n = 0; n < ctx.nodes; ++n) {
    with_cpus[n] = !ctx.worker_cpus[n].empty();
  }
  std::vector<std::string> parts;
  if (!Covers(a.run, with_cpus)) {
    parts.push_back(
        absl::StrCat("cpuset.cpus allows only node ", NodeIds(ctx, a.run)));
  }
  if (!Covers(a.mem, a.run)) {
    parts.push_back(
        absl::StrCat("cpuset.mems allows only ", NodeIds(ctx, a.mem)));
  }
  std::string why = absl::StrJoin(parts, ", ");
  if (fallback) {
    absl::StrAppend(&why, ": its memory stays remote, homed nearest it");
  }
  return why;
}

// Memory only where it cannot run (cpus on node 1, mems on node 0 as a
// cgroup may say, or mems on a CPU-less node): it runs where it may, on the
// nodes nearest its memory; no page move can bring that memory home.
std::vector<char> NearestMemory(const Context& ctx, const Allowed& a) {
  std::vector<int> distance(ctx.nodes, -1);
  int nearest = -1;
  for (int n = 0; n < ctx.nodes; ++n) {
    if (!a.run[n]) continue;
    for (int m = 0; m < ctx.nodes; ++m) {
      if (!a.mem[m]) continue;
      const int d = ctx.Distance(n, m);
      if (distance[n] < 0 || d < distance[n]) distance[n] = d;
    }
    if (nearest < 0 || distance[n] < nearest) nearest = distance[n];
  }
  std::vector<char> home(ctx.nodes, 0);
  for (int n = 0; n < ctx.nodes; ++n)
    home[n] = a.run[n] && distance[n] == nearest;
  return home;
}

}  // namespace

std::string NodeIds(const Context& ctx, const std::vector<char>& set) {
  std::vector<int> ids;
  for (int n = 0; n < ctx.nodes; ++n) {
    if (set[n]) ids.push_back(ctx.Id(n));
  }
  return FormatCpuList(ids);
}

Allowed AllowedNodes(const Context& ctx, const Target& target) {
  static const CgroupCpuset kNone;
  const CgroupCpuset& cpuset = target.cgroup ? *target.cgroup : kNone;
  Allowed a{.run = std::vector<char>(ctx.nodes, 0),
            .mem = std::vector<char>(ctx.nodes, cpuset.mems.empty()),
            .home = {},
            .constrained = false,
            .why = {}};
  if (cpuset.cpus.empty()) {
    for (int n = 0; n < ctx.nodes; ++n) a.run[n] = !ctx.worker_cpus[n].empty();
  } else {
    for (int cpu : cpuset.cpus) {
      const int n = ctx.NodeOfCpu(cpu);
      if (n >= 0 && !a.run[n] &&
          std::binary_search(ctx.worker_cpus[n].begin(),
                             ctx.worker_cpus[n].end(), cpu)) {
        a.run[n] = 1;
      }
    }
  }
  for (int id : cpuset.mems) {
    if (int n = ctx.NodeIndexOfId(id); n >= 0) a.mem[n] = 1;
  }
  a.home.assign(ctx.nodes, 0);
  bool any = false;
  for (int n = 0; n < ctx.nodes; ++n) {
    a.home[n] = a.run[n] && a.mem[n];
    any = any || a.home[n];
  }
  if (!any) a.home = NearestMemory(ctx, a);
  for (int n = 0; n < ctx.nodes; ++n) {
    if (!a.home[n] && !ctx.worker_cpus[n].empty()) a.constrained = true;
  }
  if (a.constrained) a.why = Why(ctx, a, !any);
  return a;
}

std::vector<int> CpusFor(const Context& ctx, const Target& target, int node) {
  const std::vector<int>& usable = ctx.worker_cpus[node];
  if (!target.cgroup || target.cgroup->cpus.empty()) return usable;
  const std::vector<int>& allowed = target.cgroup->cpus;
  std::vector<int> out;
  std::set_intersection(usable.begin(), usable.end(), allowed.begin(),
                        allowed.end(), std::back_inserter(out));
  return out;
}

bool MemAllowed(const Context& ctx, const Target& target, int node) {
  if (!target.cgroup || target.cgroup->mems.empty()) return true;
  const std::vector<int>& mems = target.cgroup->mems;
  return std::find(mems.begin(), mems.end(), ctx.Id(node)) != mems.end();
}

std::string HomeConstraint(const Context& ctx, const Target& target, int home) {
  if (!HasCpuset(target)) return "";
  const Allowed a = AllowedNodes(ctx, target);
  if (!a.constrained) return "";
  return absl::StrCat("home node ", ctx.Id(home), ": ", a.why);
}

}  // namespace locus::decide_internal
