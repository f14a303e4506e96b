// A scripted irqbalance for tests of agent/act/neighbours/irqbalance_bans.h
// without root: its banned IRQ list, answers that come only after some
// polls (or never), a restart under a new pid, and others' edits (tests
// change `list` directly). A command is handled when it is answered, as
// irqbalance handles it when its main loop gets to it, and "settings ban
// irqs" is read as 1.9.2 reads it (strtoul until a 0), so a badly formed
// command shows in the list.
//
// With `now` kept by the test, 1.9.2's rescan is played too: a change of
// the list is followed, `scan_after` later, by a rescan that holds its loop
// for `sleep_seconds` (nothing is answered meanwhile); and a "setup" whose
// connection is closed before it was answered kills it, as SIGPIPE kills
// 1.9.2 when it answers a client that has gone.
#ifndef LOCUS_TESTS_ACT_NEIGHBOURS_FAKE_IRQBALANCE_H_
#define LOCUS_TESTS_ACT_NEIGHBOURS_FAKE_IRQBALANCE_H_

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/act/neighbours/irqbalance_ops.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "agent/journal/journal.h"

namespace locus {

class FakeIrqbalance : public IrqbalanceOps {
 public:
  // One request as it was started.
  struct Started {
    int32_t pid = 0;
    std::string command;
    std::map<int, int32_t> journaled;  // the journal's bans at that moment
  };

  bool running = true;
  int32_t pid = 100;
  std::set<int> list;  // cl_banned_irqs
  absl::Status find_error;
  absl::Status start_error;
  int answer_after_polls = 0;  // polls answered "not yet" first
  bool hang = false;           // never answers
  // As under systemd (SIGPIPE ignored): a client gone before its answer
  // does not end it.
  bool ignores_sigpipe = false;
  std::optional<std::string> setup_reply;  // instead of the real format
  int sleep_seconds = 1;                   // its interval, as setup says
  int started_interval = 0;  // its command line's, as Find says (0: unknown)
  const Journal* journal = nullptr;       // looked at when a request starts
  absl::Time now = absl::InfinitePast();  // the test's clock, when it keeps one
  absl::Duration scan_after = absl::Seconds(1);  // change -> its next scan

  std::vector<Started> started;
  std::vector<std::string> handled;  // commands, as answered
  int find_calls = 0;
  int polls = 0;
  int open = 0;             // requests not yet dropped
  int started_in_hold = 0;  // requests made while a rescan held it
  bool died_of_sigpipe = false;

  std::string Socket() const {
    return absl::StrCat("/run/irqbalance/irqbalance", pid, ".sock");
  }

  // A new instance: runtime bans gone, only its own --banirq ones.
  void Restart(int32_t new_pid, std::set<int> banirq = {}) {
    pid = new_pid;
    list = std::move(banirq);
    running = true;
    hold_from_ = absl::InfinitePast();
  }

  std::vector<std::string> SentSettings() const {
    std::vector<std::string> out;
    for (const Started& s : started) {
      if (absl::StartsWith(s.command, "settings")) out.push_back(s.command);
    }
    return out;
  }

  absl::StatusOr<std::optional<IrqbalanceInstance>> Find() override {
    ++find_calls;
    if (!find_error.ok()) return find_error;
    if (!running) return std::optional<IrqbalanceInstance>();
    return std::optional<IrqbalanceInstance>(
        IrqbalanceInstance{pid, Socket(), started_interval});
  }

  absl::StatusOr<std::unique_ptr<IrqbalanceRequest>> Start(
      const IrqbalanceInstance& instance, absl::string_view command) override {
    if (command.empty() || command.size() > kMaxIrqbalanceCommandBytes) {
      return absl::InvalidArgumentError("command length");
    }
    if (!start_error.ok()) return start_error;
    if (!running || instance.pid != pid || instance.socket != Socket()) {
      return absl::UnavailableError("connect: Connection refused");
    }
    if (Held()) ++started_in_hold;
    started.push_back({pid, std::string(command),
                       journal ? journal->contents().irqbalance_bans
                               : std::map<int, int32_t>()});
    return std::unique_ptr<IrqbalanceRequest>(
        std::make_unique<Request>(this, std::string(command)));
  }

 private:
  class Request : public IrqbalanceRequest {
   public:
    Request(FakeIrqbalance* fake, std::string command)
        : fake_(fake),
          command_(std::move(command)),
          pid_(fake->pid),
          wait_(fake->answer_after_polls) {
      ++fake_->open;
    }
    ~Request() override {
      --fake_->open;
      if (!answer_.has_value() && command_ == "setup" && fake_->running &&
          fake_->pid == pid_ && !fake_->ignores_sigpipe) {
        fake_->died_of_sigpipe = true;
        fake_->running = false;
      }
    }

    absl::StatusOr<std::optional<std::string>> Poll() override {
      ++fake_->polls;
      if (answer_.has_value()) return answer_;
      if (fake_->hang || fake_->Held()) return std::nullopt;
      if (wait_ > 0) {
        --wait_;
        return std::nullopt;
      }
      if (!fake_->running || fake_->pid != pid_) {
        return absl::UnavailableError("read the answer: Connection reset");
      }
      answer_ = fake_->Handle(command_);
      return answer_;
    }

   private:
    FakeIrqbalance* fake_;
    std::string command_;
    int32_t pid_;
    int wait_;
    std::optional<std::string> answer_;
  };

  bool Held() const {
    return now >= hold_from_ && now < hold_from_ + absl::Seconds(sleep_seconds);
  }

  absl::Time hold_from_ = absl::InfinitePast();

  std::string Handle(const std::string& command) {
    handled.push_back(command);
    if (command == "setup") {
      if (setup_reply.has_value()) return *setup_reply;
      std::string reply = absl::StrCat("SLEEP ", sleep_seconds, " ");
      for (int irq : list) {
        absl::StrAppend(&reply, "IRQ ", irq, " LOAD 0 DIFF 0 CLASS 0 ");
      }
      return reply + "BANNED 00000000";
    }
    constexpr absl::string_view kBan = "settings ban irqs ";
    if (absl::StartsWith(command, kBan)) {
      const std::string rest = command.substr(kBan.size());
      hold_from_ = now + scan_after;
      list.clear();
      if (absl::StartsWith(rest, "NONE")) return "";
      char* end = nullptr;
      unsigned long irq = strtoul(rest.c_str(), &end, 10);
      do {
        list.insert(static_cast<int>(irq));
      } while ((irq = strtoul(end, &end, 10)));
    }
    return "";
  }
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_NEIGHBOURS_FAKE_IRQBALANCE_H_
