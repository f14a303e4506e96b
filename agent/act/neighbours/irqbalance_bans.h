// Taking the IRQs Locus steers out of irqbalance's hands, and giving them
// back: irqbalance's banned IRQ list (its --banirq ones and those set
// through its socket, one list) is moved toward (others' bans ∪ the IRQs
// Locus wants), one non-blocking request at a time, across ticks.
//
// Whose ban is whose: an IRQ on the list is Locus's when the journal holds a
// "B" record for it under this irqbalance's pid, and someone else's
// otherwise. Locus journals an IRQ before the command that adds it (none
// for one others had banned: it stays theirs), and forgets it once a read
// of the list confirms it gone. A "settings ban irqs" replaces the whole
// list and irqbalance offers nothing like compare-and-swap, so the list is
// read at most kIrqbalanceSendFreshness before it is replaced: an edit by
// someone else in that window is lost (and one after it is kept).
//
// A new irqbalance (another pid: a restart) forgot every runtime ban: it is
// counted, and Locus's IRQs banned there again, journaled under the new pid
// (which replaces the old pid's records). No irqbalance running: the
// journal's records are forgotten, and every IRQ may be moved.
//
// Never close a connection before irqbalance has answered it: 1.9 answers
// "setup" with a send() to the client, and dies of SIGPIPE when the client
// has gone (unless its supervisor ignores SIGPIPE, as systemd does). So a
// request is waited for as long as that irqbalance lives, and none is made
// while it is likely to be held: after a change of its list, its next scan
// rescans and holds its main loop for a whole sleep interval.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_BANS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_BANS_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/act/neighbours/irqbalance_ops.h"
#include "agent/journal/journal.h"

namespace locus {

// How often the list is read when nothing changed: others' edits and an
// irqbalance that dropped Locus's bans are noticed within this.
inline constexpr absl::Duration kIrqbalanceRefresh = absl::Seconds(10);
// A request unanswered this long is said in problem, and still waited for
// (see above).
inline constexpr absl::Duration kIrqbalanceSlowAnswer = absl::Seconds(30);
// After a failed request, the next one waits this long.
inline constexpr absl::Duration kIrqbalanceRetry = absl::Seconds(5);
// irqbalance's default sleep interval, until a "setup" has said its own.
inline constexpr int kIrqbalanceDefaultSleepSeconds = 10;
// How long an exchange may take with an irqbalance of that sleep interval:
// a read held by a rescan, then a send and a read back across the rescan
// the send starts.
inline absl::Duration IrqbalanceExchangeWait(int sleep_seconds) {
  return absl::Seconds(2 * std::max(sleep_seconds, 1) + 5);
}
// How old a read of the list may be when a change to it is sent.
inline constexpr absl::Duration kIrqbalanceSendFreshness = absl::Seconds(2);
// While none runs, how often /proc is scanned for a new one.
inline constexpr absl::Duration kIrqbalanceLookInterval = absl::Seconds(2);

struct IrqbalanceState {
  bool running = false;
  int32_t pid = 0;
  std::string socket;
  std::set<int> banned_by_locus;   // in its list and journaled as Locus's
  std::set<int> banned_by_others;  // in its list, not Locus's
  std::set<int> pending;           // wanted, not yet confirmed in its list
  std::string problem;             // why it cannot share now (empty: fine)
  uint64_t restarts = 0;  // new irqbalance instances seen (bans given again)
  // Processes named irqbalance that are not root's: refused, not counted.
  std::vector<std::string> look_alikes;
};

class IrqbalanceBans {
 public:
  // `ops` and `journal` are borrowed and must outlive this.
  IrqbalanceBans(IrqbalanceOps& ops, Journal& journal)
      : ops_(ops), journal_(journal) {}

  // Once per tick, never blocks. `wanted`: the IRQs Locus steers or is
  // about to (an IRQ of 0 or less cannot be banned: said in problem).
  void Tick(const std::set<int>& wanted, absl::Time now);

  // Whether Locus may move `irq`: in irqbalance's list and in effect
  // (irqbalance applies a new list at its next scan: a sleep interval after
  // Locus sent it, or after a read first showed someone else's), and not
  // taken off by a list Locus sent since; or no irqbalance runs. False
  // before the first Tick has looked.
  bool Banned(int irq) const;

  // At exit: waits up to `timeout` for the request in flight to be
  // answered before it is closed (see above).
  void Finish(absl::Duration timeout);

  // irqbalance's sleep interval as its last "setup" said (its default
  // until then): how long a rescan holds it.
  int sleep_seconds() const { return sleep_seconds_; }

  const IrqbalanceState& state() const { return state_; }

 private:
  enum class Step { kNone, kRead, kSend };

  void SetWanted(const std::set<int>& wanted);
  void PollRequest(absl::Time now);
  void StartNext(absl::Time now);
  bool Look(absl::Time now);
  void Lost();
  void Begin(Step step, const std::string& command, absl::Time now);
  void Send(const std::set<int>& target, absl::Time now);
  void OnSetup(const std::string& reply, absl::Time now);
  void Fail(const std::string& problem, absl::Time now);
  bool ForgetStale();
  bool TakenOff(int irq) const;
  std::set<int> Mine() const;
  std::set<int> Others() const;
  std::string Who() const;
  void UpdateState();

  IrqbalanceOps& ops_;
  Journal& journal_;
  IrqbalanceState state_;
  std::set<int> wanted_;  // those that can be banned
  std::string wanted_problem_;
  bool looked_ = false;
  absl::Time last_look_ = absl::InfinitePast();
  std::optional<IrqbalanceInstance> instance_;
  bool unusable_ = false;  // one runs; Find said why Locus cannot use it
  int32_t last_pid_ = 0;   // the last instance seen, to count restarts
  std::optional<std::set<int>> list_;  // its list as last read
  // When each IRQ on the list is in effect (see Banned).
  std::map<int, absl::Time> effective_at_;
  absl::Time now_ = absl::InfinitePast();  // the last Tick's
  absl::Time list_read_ = absl::InfinitePast();
  int sleep_seconds_ = kIrqbalanceDefaultSleepSeconds;  // as setup said
  // The last list Locus sent, when, and until when no request is made
  // (irqbalance's rescan after the change).
  std::set<int> sent_;
  absl::Time sent_at_ = absl::InfinitePast();
  absl::Time quiet_until_ = absl::InfinitePast();
  Step step_ = Step::kNone;
  std::string command_;
  std::unique_ptr<IrqbalanceRequest> request_;
  absl::Time started_ = absl::InfinitePast();
  absl::Time retry_at_ = absl::InfinitePast();
  std::string problem_;
};

// Exit, `locusd --restore`, and start after a crash: for every journaled
// ban (irq -> irqbalance pid) whose irqbalance still runs (the same pid),
// takes those IRQs off its current list, keeping everything else, waiting
// up to `timeout` in all, or longer when its sleep interval needs it: the
// one its command line set (IrqbalanceInstance::sleep_seconds: the first
// read can wait out a rescan in progress), then the one its "setup" says
// (the read back can wait out the rescan the change starts);
// one whose irqbalance is gone needs nothing (a restarted irqbalance forgot
// runtime bans), which is said. One message per IRQ in `messages`, or in
// `errors` when it could not be given back, and then in `kept` too: the
// journal's record is all that says the ban is Locus's.
void RestoreIrqbalanceBans(const std::map<int, int32_t>& bans,
                           IrqbalanceOps& ops, absl::Duration timeout,
                           std::vector<std::string>* messages,
                           std::vector<std::string>* errors,
                           std::map<int, int32_t>* kept);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_BANS_H_
