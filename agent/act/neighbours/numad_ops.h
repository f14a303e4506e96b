// The calls Locus makes to numad, behind a small interface so that the
// reconciler (numad_exclusions.h) is tested without root through a fake
// (tests/act/neighbours/fake_numad.h). The real one writes to numad's
// System V message queue (numad_queue.h).
//
// numad never answers these commands and offers no way to read its lists:
// a command sent is all Locus can know, which is why the journal, not
// numad, says which exclusions are Locus's.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_OPS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace locus {

struct NumadInstance {
  int32_t pid = 0;
  bool operator==(const NumadInstance&) const = default;
};

// numad's commands (numad.c, set_dynamic_options).
inline constexpr char kNumadExclude = 'x';  // leave this pid alone
inline constexpr char kNumadRemove = 'r';   // drop it from both pid lists

class NumadOps {
 public:
  virtual ~NumadOps() = default;
  // The running numad; nullopt when none runs; an error when one runs but
  // Locus cannot reach it safely (the text says why and what to do).
  virtual absl::StatusOr<std::optional<NumadInstance>> Find() = 0;
  // What the last Find refused to take for numad, one printable sentence
  // each: processes named numad that are not root's, a pid file not root's.
  virtual std::vector<std::string> LookAlikes() const { return {}; }
  // Sends one command about `pid`; never blocks.
  virtual absl::Status Send(const NumadInstance& numad, char command,
                            int32_t pid) = 0;
  // Whether `pid` still runs: a worker that ended needs no command.
  virtual bool ProcessExists(int32_t pid) = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_OPS_H_
