#include "agent/doctor/doctor_servers.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/doctor/doctor_verdict.h"
#include "common/printable.h"

namespace locus {

using doctor_internal::Ok;
using doctor_internal::Warn;

namespace {

// None of the policy's servers runs (its targets.comm; nginx's by default).
DoctorCheck NoServer(const DoctorInputs& in) {
  std::vector<std::string> servers;
  for (const std::string& s : in.servers) {
    servers.push_back(Printable(s, kMaxQuotedBytes));
  }
  const std::string named =
      servers.empty() ? "nginx" : absl::StrJoin(servers, " or ");
  return Warn("targets",
              absl::StrCat("no ", named, " running: nothing to tune yet"),
              absl::StrCat("start ", named,
                           " (or name your server in the policy's "
                           "targets.comm); locusd finds it within a scan"));
}

}  // namespace

// Connection steering needs a socket per worker to choose between.
DoctorCheck ReuseportCheck(const DoctorInputs& in) {
  const char* name = "reuseport";
  if (in.nginx.empty()) return NoServer(in);
  // A thread worker server's sockets: a socket per thread (HAProxy's
  // `shards by-thread`), or one every thread shares.
  std::vector<std::string> without, with, errors, sharded, shared;
  for (const NginxListening& n : in.nginx) {
    const std::string who =
        absl::StrCat(Printable(n.server, kMaxQuotedBytes), " ", n.master_pid);
    if (!n.error.empty()) {
      errors.push_back(absl::StrCat(who, ": ", Printable(n.error)));
    }
    for (const std::string& a : n.no_reuseport)
      (n.thread_workers ? shared : without)
          .push_back(absl::StrCat(who, " ", a));
    for (const std::string& a : n.reuseport)
      (n.thread_workers ? sharded : with).push_back(absl::StrCat(who, " ", a));
  }
  if (!without.empty()) {
    return Warn(name,
                absl::StrCat("listens without reuseport on ",
                             absl::StrJoin(without, ", "),
                             ": its new connections cannot be steered by node"),
                "add `reuseport` to those listen directives (listen 80 "
                "reuseport;) and reload nginx");
  }
  if (!shared.empty()) {
    return Warn(name,
                absl::StrCat("worker threads share one listening socket on ",
                             absl::StrJoin(shared, ", "),
                             ": their new connections cannot be steered by "
                             "node"),
                "add `shards by-thread` to those bind lines (HAProxy 2.5+: a "
                "socket per thread) and reload");
  }
  if (!errors.empty()) {
    return Warn(name, absl::StrJoin(errors, "; "),
                "run the doctor as root, as locusd runs");
  }
  std::vector<std::string> parts;
  if (!with.empty() || sharded.empty()) {
    parts.push_back(
        absl::StrCat("listens with reuseport on ", absl::StrJoin(with, ", ")));
  }
  if (!sharded.empty()) {
    parts.push_back(absl::StrCat(
        "a socket per worker thread on ", absl::StrJoin(sharded, ", "),
        " (locusd learns which thread accepts on each from its accept "
        "calls)"));
  }
  return Ok(name, absl::StrJoin(parts, "; "));
}

// A cpuset that keeps nginx on one node leaves Locus nothing to place; one
// whose memory nodes differ from its CPUs' makes every access remote.
DoctorCheck CpusetsCheck(const DoctorInputs& in) {
  const char* name = "cpusets";
  if (in.numa_nodes < 2) return Ok(name, "one node: no cpuset can narrow it");
  std::vector<std::string> narrow;
  for (const NginxListening& n : in.nginx) {
    if (n.cgroup.empty() || n.cpu_nodes.empty()) continue;
    if (n.cpu_nodes.size() > 1) continue;
    std::string what = absl::StrCat("nginx ", n.master_pid, " in ",
                                    Printable(n.cgroup, kMaxQuotedBytes),
                                    ": CPUs on node ", n.cpu_nodes[0]);
    if (n.mems != n.cpu_nodes) {
      absl::StrAppend(&what, ", memory on node(s) ", absl::StrJoin(n.mems, ","),
                      " (every access remote)");
    }
    narrow.push_back(std::move(what));
  }
  if (narrow.empty()) {
    return Ok(name, "no cpuset keeps nginx's workers on one node");
  }
  return Warn(name,
              absl::StrCat(absl::StrJoin(narrow, "; "),
                           ": Locus keeps them there, nothing to place"),
              "widen the cpuset (AllowedCPUs=/AllowedMemoryNodes= of the "
              "unit, the pod's CPUs) if the workers should use other nodes; "
              "give it memory on the node of its CPUs");
}

}  // namespace locus
