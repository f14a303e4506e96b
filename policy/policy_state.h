// The policy in force and where it came from: what the policy watcher keeps,
// the control loop runs and status/metrics report.
#ifndef LOCUS_POLICY_POLICY_STATE_H_
#define LOCUS_POLICY_POLICY_STATE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "locus/v1/policy.pb.h"

namespace locus {

struct PolicyState {
  std::shared_ptr<const v1::Policy> policy;
  // 1 after the first load, +1 each time the running policy changes.
  uint64_t version = 0;
  // "/etc/locus/policy.yaml", or "built-in default (/etc/locus/policy.yaml
  // absent)".
  std::string source;
  bool is_default = true;
  // Empty when the file last read is the one running. Otherwise why not:
  // "file:line:column: message" lines, or a note that the file went away.
  std::string last_error;
  // When this version came into force (Unix epoch, ns); 0 before Start.
  int64_t loaded_unix_ns = 0;
  // Reloads after start that replaced the running policy, and those that
  // kept it (a file refused, unreadable, or removed).
  uint64_t reloads_ok = 0;
  uint64_t reloads_rejected = 0;
};

}  // namespace locus

#endif  // LOCUS_POLICY_POLICY_STATE_H_
