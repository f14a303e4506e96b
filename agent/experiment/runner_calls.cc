// The runner's calls from outside the loop: the record at start, and the
// RPCs (start, status, stop) and the daemon's exit.
#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/core/event_log.h"
#include "agent/experiment/record.h"
#include "agent/experiment/report.h"
#include "agent/experiment/runner.h"
#include "common/log.h"
#include "common/printable.h"
#include "google/protobuf/util/time_util.h"
#include "policy/experiment_arms.h"
#include "policy/experiment_plan.h"

namespace locus {
namespace {

using google::protobuf::util::TimeUtil;

absl::Duration Or(const google::protobuf::Duration& d, absl::Duration dflt) {
  const int64_t ns = TimeUtil::DurationToNanoseconds(d);
  return ns == 0 ? dflt : absl::Nanoseconds(ns);
}

// A request's duration as protobuf allows it (nanos under a second, of the
// seconds' sign), not negative and at most experiment::kMaxExperimentSeconds:
// checked before anything turns it into nanoseconds, which a larger one
// overflows.
absl::Status CheckRequestDuration(absl::string_view name,
                                  const google::protobuf::Duration& d) {
  if (d.seconds() < 0 || d.nanos() < 0 || d.nanos() >= 1'000'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be a duration of 0 or more, not ",
                     d.seconds(), " s and ", d.nanos(), " ns"));
  }
  if (d.seconds() > experiment::kMaxExperimentSeconds ||
      (d.seconds() == experiment::kMaxExperimentSeconds && d.nanos() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " of ", d.seconds(),
                     " s is longer than the longest Locus runs, 30 days (",
                     experiment::kMaxExperimentSeconds, " s)"));
  }
  return absl::OkStatus();
}

// The request's durations, and its latency margin when it has one.
absl::Status CheckRequestFields(const v1::StartExperimentRequest& request) {
  const bool switchback = request.design() == kSwitchback;
  if (!switchback && !request.design().empty() &&
      request.design() != kAbDesign) {
    return absl::InvalidArgumentError(absl::StrCat("design: no design '",
                                                   Printable(request.design()),
                                                   "' (ab, switchback)"));
  }
  for (const auto& [name, d] : {std::pair{"duration", &request.duration()},
                                std::pair{"interval", &request.interval()},
                                std::pair{"pre-period", &request.pre()},
                                std::pair{"block", &request.block()}}) {
    if (absl::Status checked = CheckRequestDuration(name, *d); !checked.ok()) {
      return checked;
    }
  }
  if (absl::StatusOr<Levers> levers = ParseLevers(
          {request.levers().begin(), request.levers().end()}, switchback);
      !levers.ok()) {
    return levers.status();
  }
  if (switchback) {
    // What only the A/B design's arms give meaning to.
    if (request.aa()) {
      return absl::InvalidArgumentError(
          "a switchback has no A/A: its off blocks are the kernel alone "
          "already, and its error rate is checked by simulation");
    }
    if (TimeUtil::DurationToNanoseconds(request.pre()) != 0 ||
        request.min_effect() > 0) {
      return absl::InvalidArgumentError(
          "a switchback takes no pre-period and no --min-effect (the A/B "
          "design's): size it by its pairs of blocks");
    }
  } else if (TimeUtil::DurationToNanoseconds(request.block()) != 0) {
    return absl::InvalidArgumentError(
        "block is a switchback's (--design=switchback)");
  }
  if (request.has_latency_margin() &&
      !(request.latency_margin() >= 0 && request.latency_margin() <= 10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "latency_margin: ", request.latency_margin(),
        " is not a fraction from 0 to 10 (0.1: treated 10 % worse)"));
  }
  return absl::OkStatus();
}

}  // namespace

ExperimentRunner::ExperimentRunner(ExperimentOptions options,
                                   WorkCounter* counter,
                                   std::function<int64_t()> wall_ns)
    : options_(std::move(options)),
      counter_(counter),
      wall_ns_(std::move(wall_ns)) {}

void ExperimentRunner::LoadRecord() {
  if (options_.record_path.empty()) return;
  absl::StatusOr<std::optional<v1::ExperimentReport>> record =
      ReadExperimentRecord(options_.record_path);
  absl::MutexLock lock(&mu_);
  if (!record.ok()) {
    LogWarning("experiment record: ", record.status().ToString(),
               "; no last report");
    return;
  }
  if (!record->has_value()) return;
  last_ = **record;
  if (last_->state() != v1::EXPERIMENT_STATE_RUNNING) return;
  // Its agent never ended it: a crash, kill -9 or power loss. The journal
  // has put its workers back; what it measured until its last interval
  // stays readable.
  last_->set_state(v1::EXPERIMENT_STATE_INTERRUPTED);
  last_->set_reason(
      "the agent stopped mid-run (crash or kill); its workers were restored "
      "from the journal at the next start");
  last_->clear_remaining();
  last_->set_verdict(Verdict(*last_));
  WriteRecord(*last_);
  Log(ExperimentEntry(
      EventKind::kExperimentStop, last_->id(), "interrupted",
      absl::StrCat("experiment ", last_->id(), ": ", last_->reason())));
}

namespace {

// The plan holds two intervals to compare after the burn-in, each at least
// `min_interval` long.
absl::Status CheckPlan(absl::Duration duration, absl::Duration interval,
                       absl::Duration min_interval, uint32_t burn_in) {
  if (interval < min_interval) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval ", absl::FormatDuration(interval),
                     " is shorter than ", absl::FormatDuration(min_interval)));
  }
  if (duration < (2 + static_cast<int64_t>(burn_in)) * interval) {
    return absl::InvalidArgumentError(absl::StrCat(
        "duration ", absl::FormatDuration(duration),
        " holds fewer than two intervals of ", absl::FormatDuration(interval),
        " after a burn-in of ", burn_in));
  }
  return absl::OkStatus();
}

// A switchback's plan: blocks of whole intervals, each holding two after
// its burn-in, and whole pairs of them, at least two, in the duration
// (shortened to the pairs it holds); the block as planned (kDefaultBlock
// unless asked) into `request`. Nothing for the A/B design.
absl::Status PlanSwitchback(v1::StartExperimentRequest& request,
                            absl::Duration& duration, absl::Duration interval) {
  if (request.design() != kSwitchback) return absl::OkStatus();
  absl::Duration block = Or(request.block(), kDefaultBlock), unused;
  const int64_t per_block = absl::IDivDuration(block, interval, &unused);
  if (per_block < 2 + static_cast<int64_t>(request.burn_in())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block ", absl::FormatDuration(block),
        " holds fewer than two intervals of ", absl::FormatDuration(interval),
        " after a burn-in of ", request.burn_in()));
  }
  block = per_block * interval;
  const int64_t pairs = absl::IDivDuration(duration, 2 * block, &unused);
  if (pairs < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "duration ", absl::FormatDuration(duration),
        " holds fewer than two pairs of blocks of ",
        absl::FormatDuration(block), " (one on, one off each): at least ",
        absl::FormatDuration(4 * block)));
  }
  duration = pairs * 2 * block;
  *request.mutable_block() =
      TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(block));
  return absl::OkStatus();
}

// What Start answers before the arms are drawn.
v1::ExperimentReport Starting(const v1::StartExperimentRequest& request,
                              uint64_t seed) {
  v1::ExperimentReport report;
  report.set_state(v1::EXPERIMENT_STATE_RUNNING);
  report.set_aa(request.aa());
  report.set_seed(seed);
  *report.mutable_duration() = request.duration();
  *report.mutable_interval() = request.interval();
  report.set_reason(request.reason());
  *report.mutable_pre() = request.pre();
  report.set_design(request.design());
  *report.mutable_block() = request.block();
  report.set_verdict(request.design() == kSwitchback
                         ? "starting: the first block begins at the next tick"
                         : "starting: the arms are drawn at the next tick");
  return report;
}

// The defaults, once: the plan, the record and the run read them from the
// request from here on.
v1::StartExperimentRequest WithDefaults(const v1::StartExperimentRequest& asked,
                                        double latency_margin) {
  v1::StartExperimentRequest request = asked;
  if (!request.has_burn_in()) request.set_burn_in(kDefaultBurnIn);
  if (!request.has_latency_margin()) request.set_latency_margin(latency_margin);
  const bool switchback = request.design() == kSwitchback;
  if (request.design().empty()) request.set_design(kAbDesign);
  // In their one order, all four when none was named (CheckRequestFields
  // parsed them).
  const Levers levers =
      ParseLevers({request.levers().begin(), request.levers().end()},
                  switchback)
          .value_or(Levers{});
  request.clear_levers();
  for (const std::string& name : LeverNames(levers)) request.add_levers(name);
  return request;
}

}  // namespace

absl::StatusOr<v1::ExperimentReport> ExperimentRunner::Start(
    const v1::StartExperimentRequest& asked, Mode mode, double latency_margin) {
  if (absl::Status checked = CheckRequestFields(asked); !checked.ok()) {
    return checked;
  }
  v1::StartExperimentRequest request = WithDefaults(asked, latency_margin);
  absl::Duration duration = Or(request.duration(), options_.default_duration);
  const absl::Duration interval =
      Or(request.interval(), options_.default_interval);
  if (absl::Status plan = CheckPlan(duration, interval, options_.min_interval,
                                    request.burn_in());
      !plan.ok())
    return plan;
  if (absl::Status blocks = PlanSwitchback(request, duration, interval);
      !blocks.ok())
    return blocks;
  const bool switchback = request.design() == kSwitchback;
  if (mode == v1::Policy::MODE_DRY_RUN) {
    return absl::FailedPreconditionError(
        "the agent is in dry run: it changes nothing, so there would be no "
        "treated arm (`locusctl mode enforce` first)");
  }
  absl::MutexLock lock(&mu_);
  if (run_ != nullptr || pending_.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("an experiment runs already",
                     run_ ? absl::StrCat(" (", run_->header.id(), ")") : "",
                     "; `locusctl experiment stop` ends it"));
  }
  const size_t least = LeastWorkers(switchback);
  if (ticks_ > 0 && workers_seen_ < least) {
    return absl::FailedPreconditionError(
        absl::StrCat("needs at least ", least,
                     switchback ? " worker" : " workers (two per arm)",
                     "; the agent sees ", workers_seen_));
  }
  absl::StatusOr<Sized> sized = Preregister(request, duration, interval);
  if (!sized.ok()) return sized.status();
  Pending pending;
  pending.request = request;
  pending.planned_detectable = sized->detectable;
  *pending.request.mutable_duration() = TimeUtil::NanosecondsToDuration(
      absl::ToInt64Nanoseconds(sized->duration));
  *pending.request.mutable_interval() =
      TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(interval));
  // A caller's words go into every report, record and log line of the run:
  // a few hundred bytes of them (a request may carry 64 KiB).
  pending.request.set_reason(Clip(request.reason()));
  pending.seed = request.seed() != 0 ? request.seed() : std::random_device{}();
  v1::ExperimentReport report = Starting(pending.request, pending.seed);
  pending_ = std::move(pending);
  AwaitTick();
  if (run_ != nullptr) return Report(true);
  if (!pending_.has_value() && last_.has_value()) {
    // Drawn and refused at once (the workers went away since).
    return absl::FailedPreconditionError(last_->reason());
  }
  return report;
}

absl::StatusOr<ExperimentRunner::Sized> ExperimentRunner::Preregister(
    const v1::StartExperimentRequest& request, absl::Duration duration,
    absl::Duration interval) const {
  if (!(request.min_effect() > 0)) return Sized{duration, 0};
  const int burn_in = static_cast<int>(request.burn_in());
  experiment::Noise noise;
  if (last_.has_value() && last_->work().valid()) {
    const v1::ExperimentEstimate& work = last_->work();
    noise.detectable = work.detectable();
    // A pre-period narrowed the last run's interval; this one has none.
    if (work.adjusted() &&
        TimeUtil::DurationToNanoseconds(request.pre()) == 0 &&
        work.variance_reduction() < 1) {
      noise.detectable /= std::sqrt(1 - work.variance_reduction());
    }
    // Its intervals in this run's length: what it counted is time.
    const double counted = static_cast<double>(last_->intervals()) -
                           static_cast<double>(last_->burn_in());
    const absl::Duration last_interval =
        absl::Nanoseconds(TimeUtil::DurationToNanoseconds(last_->interval()));
    noise.intervals =
        last_interval > absl::ZeroDuration()
            ? static_cast<int>(counted *
                               absl::FDivDuration(last_interval, interval))
            : static_cast<int>(counted);
    noise.workers = static_cast<int>(last_->treated() + last_->control());
  }
  // A duration given is checked; none is sized.
  absl::Duration unused;
  const int asked =
      request.has_duration() && (request.duration().seconds() > 0 ||
                                 request.duration().nanos() > 0)
          ? static_cast<int>(absl::IDivDuration(duration, interval, &unused)) -
                burn_in
          : 0;
  const experiment::Plan plan = experiment::SizeExperiment(
      request.min_effect(), noise, static_cast<int>(workers_seen_), asked);
  if (!plan.ok) return absl::FailedPreconditionError(plan.why_not);
  return Sized{(plan.intervals + burn_in) * interval, plan.detectable};
}

void ExperimentRunner::AwaitTick() {
  if (options_.reply_wait <= absl::ZeroDuration()) return;
  struct Since {
    const uint64_t* ticks;
    uint64_t asked;
  } since{&ticks_, ticks_};
  mu_.AwaitWithTimeout(
      absl::Condition(
          +[](Since* s) { return *s->ticks > s->asked; }, &since),
      options_.reply_wait);
}

absl::StatusOr<v1::ExperimentReport> ExperimentRunner::Get() {
  absl::MutexLock lock(&mu_);
  if (run_ != nullptr) return Report(true);
  if (last_.has_value()) return *last_;
  if (pending_.has_value()) {
    return absl::UnavailableError(
        "an experiment is starting: its arms are drawn at the next tick");
  }
  return absl::NotFoundError("no experiment has run on this host yet");
}

absl::StatusOr<v1::ExperimentReport> ExperimentRunner::Stop(
    const v1::StopExperimentRequest& request) {
  absl::MutexLock lock(&mu_);
  if (pending_.has_value() && run_ == nullptr) {
    pending_.reset();
    return absl::FailedPreconditionError(
        "the experiment had not started yet: it will not");
  }
  if (run_ == nullptr)
    return absl::FailedPreconditionError("no experiment is running");
  run_->stop_requested = true;
  run_->stop_reason = request.reason().empty()
                          ? "stopped by `locusctl experiment stop`"
                          : absl::StrCat("stopped: ", Clip(request.reason()));
  v1::ExperimentReport report = Report(true);
  report.set_reason(run_->stop_reason + " (ends at the next tick)");
  AwaitTick();
  if (run_ == nullptr && last_.has_value()) return *last_;
  return report;
}

void ExperimentRunner::Interrupt(const std::string& why) {
  absl::MutexLock lock(&mu_);
  pending_.reset();
  if (run_ != nullptr) End(v1::EXPERIMENT_STATE_INTERRUPTED, why);
}

void ExperimentRunner::WriteRecord(const v1::ExperimentReport& report) {
  if (options_.record_path.empty()) return;
  if (absl::Status written =
          WriteExperimentRecord(options_.record_path, report);
      !written.ok()) {
    LogWarning("experiment record: ", written.ToString());
  }
}

}  // namespace locus
