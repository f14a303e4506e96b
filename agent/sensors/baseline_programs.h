// Empty BPF programs on the sensors' hooks (bpf/empty.bpf.c), for the
// overhead benchmark: loaded next to the sensors, they give the per-event
// floor each sensor program is compared with. Not linked into locusd.
#ifndef LOCUS_AGENT_SENSORS_BASELINE_PROGRAMS_H_
#define LOCUS_AGENT_SENSORS_BASELINE_PROGRAMS_H_

#include <memory>

#include "absl/status/statusor.h"

namespace locus {

class BaselinePrograms {
 public:
  virtual ~BaselinePrograms() = default;
};

// Loads and attaches every empty program; they stay attached until the
// returned object is destroyed.
absl::StatusOr<std::unique_ptr<BaselinePrograms>> LoadBaselinePrograms();

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_BASELINE_PROGRAMS_H_
