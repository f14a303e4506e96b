#include "agent/ctl/experiment_command.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/ctl/command_base.h"
#include "agent/ctl/experiment_format.h"
#include "common/printable.h"

namespace locus {
namespace {

void ToProto(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t seconds = absl::IDivDuration(d, absl::Seconds(1), &d);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
}

// What `start` prints: what was started and how to follow it (the whole
// report, with no interval yet, would be mostly empty; --json gives it).
std::string FormatStarted(const v1::ExperimentReport& r) {
  const bool switchback = r.design() == "switchback";
  std::string out = absl::StrCat(
      "started experiment ", Printable(r.id()),
      r.aa()       ? " (A/A: neither arm treated)"
      : switchback ? " (switchback: the whole host, Locus on and off by block)"
                   : " (A/B)",
      ": ",
      switchback
          ? absl::StrCat(
                r.treated() + r.control(), " workers, blocks of ",
                absl::FormatDuration(absl::Seconds(r.block().seconds())), ", ")
          : absl::StrCat(r.treated(), " treated and ", r.control(),
                         " control workers, "),
      absl::FormatDuration(absl::Seconds(r.duration().seconds())),
      " in intervals of ",
      absl::FormatDuration(absl::Seconds(r.interval().seconds())), ", seed ",
      r.seed(), "\n");
  for (const std::string& note : r.notes()) {
    absl::StrAppend(&out, "  note: ", Printable(note), "\n");
  }
  return out +
         "'locusctl experiment status' shows its estimate as it goes; "
         "'locusctl experiment stop' ends it early.\n";
}

class ExperimentCommand : public CommandBase {
 public:
  using CommandBase::CommandBase;

  int Run() {
    stub_ = NewAgentStub(inv_.socket);
    const std::string& sub = inv_.args[0];
    if (sub == "start") return Start();
    if (sub == "status") return Status();
    if (sub == "stop") return Stop();
    return Usage(absl::StrCat("experiment wants start, status or stop, not '",
                              sub, "'"));
  }

 private:
  int Start() {
    const ExperimentArgs& a = inv_.experiment;
    v1::StartExperimentRequest request;
    if (a.duration > absl::ZeroDuration()) {
      ToProto(a.duration, request.mutable_duration());
    }
    if (a.interval > absl::ZeroDuration()) {
      ToProto(a.interval, request.mutable_interval());
    }
    request.set_aa(a.aa);
    request.set_seed(a.seed);
    if (a.burn_in >= 0) request.set_burn_in(static_cast<uint32_t>(a.burn_in));
    if (a.pre > absl::ZeroDuration()) ToProto(a.pre, request.mutable_pre());
    request.set_min_effect(a.min_effect);
    if (a.latency_margin) request.set_latency_margin(*a.latency_margin);
    for (const std::string& lever : a.levers) request.add_levers(lever);
    request.set_design(a.design);
    if (a.block > absl::ZeroDuration())
      ToProto(a.block, request.mutable_block());
    request.set_reason(a.reason.empty() ? "locusctl experiment start"
                                        : a.reason);
    v1::ExperimentReport report;
    int rc = Call("experiment start", &v1::Agent::Stub::StartExperiment,
                  request, &report);
    return rc != kExitOk ? rc : Print(report, FormatStarted);
  }

  int Status() {
    v1::ExperimentReport report;
    int rc = Call("experiment status", &v1::Agent::Stub::GetExperiment,
                  v1::GetExperimentRequest(), &report);
    return rc != kExitOk ? rc : Print(report, ctl::FormatExperiment);
  }

  int Stop() {
    v1::StopExperimentRequest request;
    request.set_reason(inv_.experiment.reason.empty()
                           ? "locusctl experiment stop"
                           : inv_.experiment.reason);
    v1::ExperimentReport report;
    int rc = Call("experiment stop", &v1::Agent::Stub::StopExperiment, request,
                  &report);
    return rc != kExitOk ? rc : Print(report, ctl::FormatExperiment);
  }
};

}  // namespace

int RunExperimentCommand(const CtlInvocation& inv, std::ostream& out,
                         std::ostream& err) {
  return ExperimentCommand(inv, out, err).Run();
}

}  // namespace locus
