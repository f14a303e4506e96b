// `locusd --check_policy=FILE`: the policy file validated against this host.
#ifndef LOCUS_AGENT_DAEMON_CHECK_POLICY_H_
#define LOCUS_AGENT_DAEMON_CHECK_POLICY_H_

#include <string>

namespace locus {

// The process exit code: 0 when valid ("FILE: ok" on stdout), 1 printing
// every error, with its file:line:column, on stderr.
int RunCheckPolicy(const std::string& path, const std::string& sysfs_root);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_CHECK_POLICY_H_
