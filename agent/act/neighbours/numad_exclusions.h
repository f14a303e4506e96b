// Keeping numad off the workers whose threads Locus placed, and handing
// them back: each such worker's pid is put on numad's exclusion list while
// Locus manages it, and taken off when Locus stops.
//
// Whose exclusion is whose: numad cannot be asked for its lists, so an
// exclusion is Locus's when the journal holds an "N" record for it under
// this numad's pid. Locus journals before it sends, and forgets once the
// removal is sent or the worker ended. A pid the admin excluded too (numad
// -x) is dropped from both lists by numad's only removal command: the
// admin's exclusion of a Locus worker ends with Locus's (said in the
// README).
//
// A new numad (another pid) starts with empty lists: it is counted and
// every wanted worker excluded there again. No numad running: the journal's
// records are forgotten.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_EXCLUSIONS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_EXCLUSIONS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/act/neighbours/numad_ops.h"
#include "agent/journal/journal.h"

namespace locus {

struct NumadState {
  bool running = false;
  int32_t pid = 0;
  std::set<int32_t> excluded;  // sent 'x' and journaled as Locus's
  std::string problem;         // why it cannot share now (empty: fine)
  uint64_t restarts = 0;       // new numad instances seen
  // What was refused for numad (NumadOps::LookAlikes), not counted.
  std::vector<std::string> look_alikes;
};

class NumadExclusions {
 public:
  // `ops` and `journal` are borrowed and must outlive this.
  NumadExclusions(NumadOps& ops, Journal& journal)
      : ops_(ops), journal_(journal) {}

  // Once per tick, never blocks. `wanted`: the workers' pids Locus manages.
  void Tick(const std::set<int32_t>& wanted);

  const NumadState& state() const { return state_; }

 private:
  void Reconcile(const std::set<int32_t>& wanted);
  void Exclude(const NumadInstance& numad, int32_t pid);
  void Release(const NumadInstance& numad, int32_t pid);
  void Problem(const std::string& problem);

  NumadOps& ops_;
  Journal& journal_;
  NumadState state_;
  int32_t last_pid_ = 0;
  std::vector<std::string> problems_;  // this tick's
};

// Exit, `locusd --restore`, and start after a crash: every journaled
// exclusion (pid -> numad pid) whose numad still runs (the same pid) and
// whose worker still runs is removed from numad's lists; the others need
// nothing, which is said. One message per pid in `messages`, or in
// `errors` when it could not be sent, and then in `kept` too (the journal's
// record is all that says the exclusion is Locus's).
void RestoreNumadExclusions(const std::map<int32_t, int32_t>& exclusions,
                            NumadOps& ops, std::vector<std::string>* messages,
                            std::vector<std::string>* errors,
                            std::map<int32_t, int32_t>* kept);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_EXCLUSIONS_H_
