// How a run begins and ends in the agent's log and record: a switchback's
// start, a start with too few workers, and the end of every run (its last
// report, record and verdict).
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/api/prometheus_labels.h"
#include "agent/core/event_log.h"
#include "agent/experiment/report.h"
#include "agent/experiment/runner.h"
#include "agent/experiment/switchback.h"
#include "google/protobuf/util/time_util.h"

namespace locus {

using google::protobuf::util::TimeUtil;

void ExperimentRunner::LogStart() {
  const std::string& id = run_->header.id();
  if (!run_->switchback) {
    const size_t treated = ActivePids(*run_, experiment::Arm::kTreated).size();
    Log(ExperimentEntry(
        EventKind::kExperimentStart, id, "started",
        absl::StrCat("experiment ", id, " started",
                     run_->header.aa() ? " (A/A)" : "", ": ", treated,
                     " treated, ", run_->units.size() - treated,
                     " control workers, ", run_->planned, " intervals of ",
                     absl::FormatDuration(absl::Nanoseconds(run_->interval_ns)),
                     ", seed ", run_->seed)));
    return;
  }
  std::string order;
  for (bool on : run_->schedule) absl::StrAppend(&order, on ? "on " : "off ");
  Log(ExperimentEntry(
      EventKind::kExperimentStart, run_->header.id(), "started",
      absl::StrCat("experiment ", run_->header.id(),
                   " started (switchback): ", run_->units.size(), " workers, ",
                   run_->schedule.size() / 2, " pairs of blocks of ",
                   run_->block_intervals, " intervals of ",
                   absl::FormatDuration(absl::Nanoseconds(run_->interval_ns)),
                   ", in the order ", order, "(seed ", run_->seed, ")")));
}

void ExperimentRunner::AbortTooFew(const std::string& id, size_t found) {
  v1::ExperimentReport report;
  report.set_id(id);
  report.set_state(v1::EXPERIMENT_STATE_ABORTED);
  report.set_reason(
      found == 0 ? "found no worker to measure"
                 : absl::StrCat("needs at least ", options_.min_workers,
                                " workers (two per arm); found ", found));
  report.set_verdict("no estimate: " + report.reason());
  last_ = report;
  WriteRecord(report);
  Log(ExperimentEntry(EventKind::kExperimentStop, id, "aborted",
                      absl::StrCat("experiment ", id, ": ", report.reason())));
}

void ExperimentRunner::End(v1::ExperimentState state,
                           const std::string& reason) {
  counter_->Stop();
  CloseBlockEarly(*run_);
  v1::ExperimentReport report = Report(true);
  report.set_state(state);
  report.set_reason(reason);
  report.clear_remaining();
  *report.mutable_ended() = TimeUtil::NanosecondsToTimestamp(wall_ns_());
  report.set_verdict(Verdict(report));
  WriteRecord(report);
  const std::string& id = report.id();
  Log(ExperimentEntry(EventKind::kExperimentStop, id,
                      ExperimentStateWord(state),
                      absl::StrCat("experiment ", id, " ",
                                   ExperimentStateWord(state), ": ", reason)));
  const v1::ExperimentEstimate& work = report.work();
  // A switchback's interval holds at its planned end only (an A/B's read
  // before it is the confidence sequence, valid at any look).
  const bool cut_short = run_->switchback && state != v1::EXPERIMENT_STATE_DONE;
  Log(ExperimentEntry(EventKind::kExperimentVerdict, id,
                      state == v1::EXPERIMENT_STATE_GUARDRAIL ? "harmful"
                      : !work.valid()                         ? "no-estimate"
                      : cut_short                             ? "inconclusive"
                      : !work.significant()                   ? "no-difference"
                      : work.ratio() < 1                      ? "harmful"
                                                              : "significant",
                      absl::StrCat("experiment ", id, ": ", report.verdict())));
  v1::ExperimentReport slim = report;
  slim.clear_units();
  if (slim.series_size() > 1) {
    v1::ExperimentInterval last = slim.series(slim.series_size() - 1);
    slim.clear_series();
    *slim.add_series() = std::move(last);
  }
  ended_ = std::make_shared<const v1::ExperimentReport>(std::move(slim));
  last_ = std::move(report);
  run_.reset();
}

}  // namespace locus
