// The undo journal as connection steering's SteeringJournal: a group's
// ListenKey journaled as an "R" record (see journal.h).
#ifndef LOCUS_AGENT_ACT_CONNECTIONS_STEERING_JOURNAL_H_
#define LOCUS_AGENT_ACT_CONNECTIONS_STEERING_JOURNAL_H_

#include "agent/act/connections/connection_steering.h"
#include "agent/host/listeners.h"
#include "agent/journal/journal.h"

namespace locus {

class JournalSteering : public SteeringJournal {
 public:
  // Borrows `journal`, which outlives it.
  explicit JournalSteering(Journal* journal) : journal_(journal) {}
  absl::Status RecordAttach(const ListenKey& key) override {
    return journal_->RecordSteered(key);
  }
  absl::Status ForgetAttach(const ListenKey& key) override {
    return journal_->ForgetSteered(key);
  }

 private:
  Journal* journal_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_CONNECTIONS_STEERING_JOURNAL_H_
