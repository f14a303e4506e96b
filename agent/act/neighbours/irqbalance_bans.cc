#include "agent/act/neighbours/irqbalance_bans.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "common/printable.h"

namespace locus {
namespace {

// The first words of a command, for messages.
std::string Quoted(absl::string_view command) {
  constexpr size_t kShown = 24;
  return absl::StrCat("'", Printable(command.substr(0, kShown)),
                      command.size() > kShown ? "...'" : "'");
}

}  // namespace

void IrqbalanceBans::Tick(const std::set<int>& wanted, absl::Time now) {
  now_ = now;
  SetWanted(wanted);
  if (request_ != nullptr) PollRequest(now);
  if (request_ == nullptr && now >= retry_at_) StartNext(now);
  UpdateState();
}

bool IrqbalanceBans::Banned(int irq) const {
  if (!looked_) return false;
  if (!instance_.has_value() && !unusable_) return true;
  if (TakenOff(irq)) return false;
  if (!list_.has_value() || list_->count(irq) == 0) return false;
  auto effective = effective_at_.find(irq);
  return effective == effective_at_.end() || now_ >= effective->second;
}

void IrqbalanceBans::SetWanted(const std::set<int>& wanted) {
  wanted_.clear();
  wanted_problem_.clear();
  for (int irq : wanted) {
    if (irq > 0) {
      wanted_.insert(irq);
    } else if (wanted_problem_.empty()) {
      wanted_problem_ = absl::StrCat(
          "IRQ ", irq,
          " cannot be banned through irqbalance's socket (it reads the list "
          "up to the first 0)");
    }
  }
}

void IrqbalanceBans::PollRequest(absl::Time now) {
  absl::StatusOr<std::optional<std::string>> polled = request_->Poll();
  if (!polled.ok()) {
    Fail(std::string(polled.status().message()), now);
    return;
  }
  if (!polled->has_value()) {
    if (now - started_ >= kIrqbalanceSlowAnswer) {
      problem_ = absl::StrCat(
          Who(), " has not answered ", Quoted(command_), " in ",
          absl::FormatDuration(now - started_),
          "; still waiting (irqbalance dies of SIGPIPE when it answers a "
          "client that has gone)");
    }
    return;
  }
  const Step step = step_;
  request_.reset();
  step_ = Step::kNone;
  problem_ = wanted_problem_;  // it answers again
  if (step == Step::kRead) {
    OnSetup(**polled, now);
  } else if (!(*polled)->empty()) {
    Fail(absl::StrCat(Who(), " answered ", Quoted(command_), " with '",
                      Printable(**polled, kMaxQuotedBytes),
                      "' where it answers nothing"),
         now);
  } else {
    // Handled when it closed. Its next scan rescans, holding its loop for
    // a sleep interval: the list is read back once that is over, and what
    // was sent is in effect by then.
    sent_at_ = now;
    quiet_until_ = now + absl::Seconds(2 * sleep_seconds_ + 1);
    list_read_ = absl::InfinitePast();
  }
}

void IrqbalanceBans::Finish(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (request_ != nullptr) {
    absl::StatusOr<std::optional<std::string>> polled = request_->Poll();
    if (!polled.ok() || polled->has_value() || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  request_.reset();
  step_ = Step::kNone;
}

void IrqbalanceBans::OnSetup(const std::string& reply, absl::Time now) {
  absl::StatusOr<IrqbalanceSetup> setup = ParseIrqbalanceSetup(reply);
  if (!setup.ok()) {
    Fail(absl::StrCat(Who(), ": ", setup.status().message()), now);
    return;
  }
  // "setup" lists a new list at once, but irqbalance applies it at its next
  // scan, within its sleep interval: until then it may still move a newly
  // banned IRQ. In effect: what Locus sent, a sleep interval after the send;
  // what a read shows new, a sleep interval after that read; what the first
  // read of an instance shows, at once.
  if (setup->sleep_seconds > 0) sleep_seconds_ = setup->sleep_seconds;
  const absl::Duration sleep = absl::Seconds(sleep_seconds_);
  const bool first = !list_.has_value();
  std::map<int, absl::Time> effective;
  for (int irq : setup->banned_irqs) {
    auto known = effective_at_.find(irq);
    effective[irq] = known != effective_at_.end() ? known->second
                     : first                      ? now
                     : sent_.count(irq)           ? sent_at_ + sleep
                                                  : now + sleep;
  }
  effective_at_ = std::move(effective);
  list_ = std::move(setup->banned_irqs);
  list_read_ = now;
}

void IrqbalanceBans::StartNext(absl::Time now) {
  if (!Look(now) || now < quiet_until_) return;
  if (!list_.has_value() || now - list_read_ >= kIrqbalanceRefresh) {
    Begin(Step::kRead, std::string(kIrqbalanceSetupCommand), now);
    return;
  }
  std::set<int> target = Others();
  target.insert(wanted_.begin(), wanted_.end());
  if (target == *list_) {
    if (ForgetStale()) problem_ = wanted_problem_;
    return;
  }
  if (now - list_read_ >= kIrqbalanceSendFreshness) {
    Begin(Step::kRead, std::string(kIrqbalanceSetupCommand), now);
    return;
  }
  Send(target, now);
}

// Whether an irqbalance runs that Locus can talk to (then instance_ is it).
bool IrqbalanceBans::Look(absl::Time now) {
  const bool none = looked_ && !instance_.has_value() && !unusable_;
  if (none && now - last_look_ < kIrqbalanceLookInterval) return false;
  looked_ = true;
  last_look_ = now;
  absl::StatusOr<std::optional<IrqbalanceInstance>> found = ops_.Find();
  state_.look_alikes = ops_.LookAlikes();
  if (!found.ok()) {
    Lost();
    unusable_ = true;
    Fail(std::string(found.status().message()), now);
    return false;
  }
  unusable_ = false;
  if (!found->has_value()) {
    // Its runtime bans went with it.
    Lost();
    problem_.clear();
    if (absl::Status forgot = journal_.ForgetIrqbalanceBansWhere(
            [](int32_t, int32_t) { return true; });
        !forgot.ok()) {
      problem_ = std::string(forgot.message());
    }
    return false;
  }
  IrqbalanceInstance& instance = **found;
  if (last_pid_ != 0 && instance.pid != last_pid_) ++state_.restarts;
  if (!instance_.has_value() || instance_->pid != instance.pid) Lost();
  last_pid_ = instance.pid;
  instance_ = std::move(instance);
  return true;
}

void IrqbalanceBans::Lost() {
  instance_.reset();
  list_.reset();
  effective_at_.clear();
  list_read_ = absl::InfinitePast();
  sent_.clear();
  sent_at_ = absl::InfinitePast();
  quiet_until_ = absl::InfinitePast();
}

void IrqbalanceBans::Begin(Step step, const std::string& command,
                           absl::Time now) {
  absl::StatusOr<std::unique_ptr<IrqbalanceRequest>> started =
      ops_.Start(*instance_, command);
  if (!started.ok()) {
    Fail(std::string(started.status().message()), now);
    return;
  }
  request_ = *std::move(started);
  step_ = step;
  command_ = command;
  started_ = now;
}

void IrqbalanceBans::Send(const std::set<int>& target, absl::Time now) {
  absl::StatusOr<std::string> command = FormatBanIrqs(target);
  if (!command.ok()) {
    Fail(absl::StrCat(Who(),
                      "'s ban list cannot be sent whole, so Locus "
                      "leaves it as it is: ",
                      command.status().message()),
         now);
    return;
  }
  // Journal first: a crash after the send must find the IRQ to give back.
  const std::set<int> others = Others();
  for (int irq : wanted_) {
    if (others.count(irq)) continue;
    absl::Status recorded = journal_.RecordIrqbalanceBan(instance_->pid, irq);
    if (!recorded.ok()) {
      Fail(absl::StrCat("irq ", irq, ": not handed to ", Who(), ": ",
                        recorded.message()),
           now);
      return;
    }
  }
  problem_ = wanted_problem_;
  sent_ = target;
  Begin(Step::kSend, *command, now);
}

void IrqbalanceBans::Fail(const std::string& problem, absl::Time now) {
  request_.reset();
  step_ = Step::kNone;
  sent_.clear();  // maybe not sent: no ban is taken to be in effect early
  problem_ = problem;
  retry_at_ = now + kIrqbalanceRetry;
  // Read again before anything is sent: the list may have changed.
  list_read_ = absl::InfinitePast();
}

// With the list as wanted: the records of IRQs no longer on it, and of an
// earlier irqbalance, are dropped. False when the journal cannot be written.
bool IrqbalanceBans::ForgetStale() {
  absl::Status forgot =
      journal_.ForgetIrqbalanceBansWhere([&](int32_t irq, int32_t pid) {
        return pid != instance_->pid || !list_->count(irq);
      });
  if (!forgot.ok()) problem_ = std::string(forgot.message());
  return forgot.ok();
}

std::set<int> IrqbalanceBans::Mine() const {
  std::set<int> mine;
  if (!instance_.has_value()) return mine;
  for (const auto& [irq, pid] : journal_.contents().irqbalance_bans) {
    if (pid == instance_->pid) mine.insert(irq);
  }
  return mine;
}

std::set<int> IrqbalanceBans::Others() const {
  std::set<int> others;
  if (!list_.has_value()) return others;
  const std::set<int> mine = Mine();
  std::set_difference(list_->begin(), list_->end(), mine.begin(), mine.end(),
                      std::inserter(others, others.end()));
  return others;
}

std::string IrqbalanceBans::Who() const {
  return IrqbalanceName(instance_.has_value() ? instance_->pid : 0);
}

// A list sent (or being sent) since the last read without it took it off:
// irqbalance balances it again from its next scan, and the read from before
// the send still lists it.
bool IrqbalanceBans::TakenOff(int irq) const {
  const bool sent_since_read = step_ == Step::kSend || sent_at_ > list_read_;
  return sent_since_read && sent_.count(irq) == 0;
}

void IrqbalanceBans::UpdateState() {
  state_.running = instance_.has_value() || unusable_;
  state_.pid = instance_.has_value() ? instance_->pid : 0;
  state_.socket = instance_.has_value() ? instance_->socket : "";
  state_.banned_by_locus.clear();
  state_.banned_by_others = Others();
  state_.pending.clear();
  if (list_.has_value()) {
    const std::set<int> mine = Mine();
    for (int irq : *list_) {
      if (mine.count(irq) && !TakenOff(irq)) {
        state_.banned_by_locus.insert(irq);
      }
    }
  }
  if (state_.running) {
    for (int irq : wanted_) {
      if (!list_.has_value() || !list_->count(irq)) state_.pending.insert(irq);
    }
  }
  state_.problem = problem_.empty() ? wanted_problem_ : problem_;
}

}  // namespace locus
