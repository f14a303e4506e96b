#include "agent/ctl/experiment_format.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "agent/ctl/experiment_feel_format.h"
#include "agent/ctl/memory_format.h"
#include "common/printable.h"

namespace locus {
namespace ctl {
namespace {

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

absl::Time FromProto(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

std::string FormatWhen(const google::protobuf::Timestamp& t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", FromProto(t),
                          absl::LocalTimeZone());
}

// Whole seconds: a report's durations need no more.
std::string FormatSpan(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

std::string ArmName(v1::ExperimentArm arm) {
  if (arm == v1::EXPERIMENT_ARM_TREATED) return "treated";
  if (arm == v1::EXPERIMENT_ARM_CONTROL) return "control";
  return "-";
}

// "12 of 180 intervals" (or "12 intervals" without a plan to divide).
std::string IntervalsDone(const v1::ExperimentReport& r) {
  absl::Duration interval = FromProto(r.interval());
  absl::Duration duration = FromProto(r.duration());
  if (interval <= absl::ZeroDuration() || duration <= absl::ZeroDuration()) {
    return absl::StrCat(r.intervals(), " intervals");
  }
  absl::Duration rest;
  return absl::StrCat(r.intervals(), " of ",
                      absl::IDivDuration(duration, interval, &rest),
                      " intervals");
}

// Before the planned end the intervals shown are valid at any look, and
// "significant" is "conclusive".
bool Live(const v1::ExperimentReport& r) {
  return r.state() != v1::EXPERIMENT_STATE_DONE && r.planned() > 0 &&
         r.intervals() < r.planned();
}

// "+3.1 % [+1.2, +5.0], significant (could detect ±4.0 %)".
std::string EstimateDetail(const v1::ExperimentEstimate& e, bool live) {
  std::string out = FormatRatioChange(e);
  if (!e.valid()) return out;
  if (live) {
    absl::StrAppend(&out, e.significant() ? ", conclusive" : ", not conclusive",
                    " (an interval valid at any look)");
  } else {
    absl::StrAppend(&out,
                    e.significant() ? ", significant" : ", not significant");
  }
  if (e.detectable() > 0) {
    absl::StrAppend(&out, absl::StrFormat(" (could detect ±%.1f %%)",
                                          e.detectable() * 100));
  }
  if (e.adjusted()) {
    absl::StrAppend(&out, absl::StrFormat("; CUPED removed %.0f %% of its "
                                          "variance",
                                          e.variance_reduction() * 100));
  }
  return out;
}

// The burn-in, and what the guardrail compares at its last look.
std::string BurnInAndGuardrail(const v1::ExperimentReport& r) {
  std::string out;
  if (r.min_effect() > 0) {
    absl::StrAppend(
        &out,
        absl::StrFormat("  planned: to detect ±%.1f %% (expected "
                        "±%.1f %% at this duration)\n",
                        r.min_effect() * 100, r.planned_detectable() * 100));
  }
  if (!r.levers().empty() && r.levers_size() < 4) {
    absl::StrAppend(&out, "  levers: ", absl::StrJoin(r.levers(), ","),
                    " only (the others acted on neither arm)\n");
  }
  if (FromProto(r.pre()) > absl::ZeroDuration()) {
    absl::StrAppend(&out, "  pre-period: ", FormatSpan(FromProto(r.pre())),
                    " (", r.pre_intervals(),
                    " intervals read, nothing applied): each worker's "
                    "covariate (CUPED)\n");
  }
  if (r.planned() > 0) {
    absl::StrAppend(&out, "  burn-in: each worker's first ", r.burn_in(),
                    " intervals after its arm was set are left out (",
                    r.burned_intervals(), " worker-intervals so far)\n");
  }
  if (const uint64_t ticks =
          r.treated_confined_ticks() + r.treated_widened_ticks();
      ticks > 0) {
    absl::StrAppend(
        &out,
        absl::StrFormat("  soft home: treated workers widened beyond their "
                        "home node %.1f %% of their ticks (%d of %d)\n",
                        100.0 * r.treated_widened_ticks() / ticks,
                        r.treated_widened_ticks(), ticks));
  }
  absl::StrAppend(
      &out,
      absl::StrFormat("  guardrail: p of harm %.2g, bound %.2g "
                      "(z %.2f, O'Brien-Fleming, exact; stops "
                      "early below it)\n",
                      r.guardrail_p(), r.guardrail_bound(), r.guardrail_z()));
  return out;
}

// The first lines: the verdict, and what the guardrail did.
std::string Verdict(const v1::ExperimentReport& r) {
  const bool running = r.state() == v1::EXPERIMENT_STATE_RUNNING;
  std::string out =
      r.verdict().empty()
          ? absl::StrCat("VERDICT: none yet (", IntervalsDone(r), ")\n")
          : absl::StrCat("VERDICT", running ? " (so far)" : "", ": ",
                         Printable(r.verdict()), "\n");
  if (r.state() == v1::EXPERIMENT_STATE_GUARDRAIL &&
      r.guardrail() == "latency") {
    absl::StrAppend(
        &out,
        absl::StrFormat("GUARDRAIL: treated requests waited significantly "
                        "longer here (p %.2g): the experiment stopped early "
                        "and the treated arm was put back\n",
                        r.latency_guardrail_p()));
  } else if (r.state() == v1::EXPERIMENT_STATE_GUARDRAIL) {
    absl::StrAppend(
        &out,
        absl::StrFormat("GUARDRAIL: Locus was significantly harmful here "
                        "(p %.2g below its bound %.2g): the experiment "
                        "stopped early and the treated arm was put back\n",
                        r.guardrail_p(), r.guardrail_bound()));
  }
  return out;
}

// When it started, how long it has run or ran, what is left.
std::string Timing(const v1::ExperimentReport& r) {
  absl::Duration duration = FromProto(r.duration());
  std::string out = absl::StrCat("  started ", FormatWhen(r.started()));
  if (r.state() == v1::EXPERIMENT_STATE_RUNNING) {
    absl::Duration remaining = FromProto(r.remaining());
    absl::StrAppend(&out, ", ", FormatSpan(duration - remaining), " elapsed, ",
                    FormatSpan(remaining), " left of ", FormatSpan(duration));
  } else if (r.has_ended()) {
    absl::StrAppend(&out, ", ended ", FormatWhen(r.ended()), " after ",
                    FormatSpan(FromProto(r.ended()) - FromProto(r.started())),
                    " of ", FormatSpan(duration));
  }
  absl::StrAppend(&out, "; interval ", FormatSpan(FromProto(r.interval())),
                  ", seed ", r.seed(), "\n");
  return out;
}

std::string Connections(const v1::ExperimentReport& r) {
  return absl::StrFormat(
      "  connections %s: largest skew %.0f %% from a worker's fair share "
      "(bound ±10 %%)%s\n",
      r.connections_fair() ? "fair" : "SKEWED", r.connection_skew() * 100,
      r.connections_fair() ? ""
                           : "; the estimate is per CPU-second, so it "
                             "still compares like with like");
}

std::string Units(const v1::ExperimentReport& r) {
  if (r.units().empty()) return "";
  std::vector<const v1::ExperimentUnit*> units;
  for (const v1::ExperimentUnit& u : r.units()) units.push_back(&u);
  // Treated first, then by node and pid: each arm reads as one block.
  std::stable_sort(units.begin(), units.end(), [](auto* a, auto* b) {
    return std::make_tuple(-a->arm(), a->stratum_node(), a->pid()) <
           std::make_tuple(-b->arm(), b->stratum_node(), b->pid());
  });
  std::string out = absl::StrFormat(
      "workers:\n  %-7s %-8s %4s  %-9s %9s %12s %10s  %s\n", "PID", "ARM",
      "NODE", "ACTIVE", "INTERVALS", "BYTES/CPU-S", "CONN-SHARE", "COMM");
  for (const v1::ExperimentUnit* u : units) {
    std::string active =
        u->active() ? "yes" : absl::StrCat("lost@", u->lost_at_interval());
    absl::StrAppend(
        &out,
        absl::StrFormat("  %-7d %-8s %4d  %-9s %9d %12s %9.1f%%  %s\n",
                        u->pid(), ArmName(u->arm()), u->stratum_node(), active,
                        u->intervals(), FormatBytes(u->bytes_per_cpu_second()),
                        u->connection_share() * 100, Printable(u->comm())));
  }
  return out;
}

// The A/B design's estimates, connections, what users feel and sources.
std::string AbBody(const v1::ExperimentReport& r) {
  std::string out =
      absl::StrCat("  ", IntervalsDone(r), "; workers ", r.treated(),
                   " treated, ", r.control(), " control\n");
  const bool live = Live(r);
  absl::StrAppend(&out, "  work per CPU-second         ",
                  EstimateDetail(r.work(), live), "\n");
  if (r.has_work_per_worker()) {
    absl::StrAppend(&out, "    per worker, equal weight  ",
                    EstimateDetail(r.work_per_worker(), live), "\n");
  }
  absl::StrAppend(&out, "  connections per CPU-second  ",
                  EstimateDetail(r.connections(), live), "\n", Connections(r),
                  FormatWhatUsersFeel(r), BurnInAndGuardrail(r));
  if (!r.work_source().empty()) {
    absl::StrAppend(&out, "  work source: ", Printable(r.work_source()), "\n");
  }
  if (!r.pmu().empty()) {
    absl::StrAppend(&out, "  ", r.pmu().rfind("PMU", 0) == 0 ? "" : "PMU: ",
                    Printable(r.pmu()), "\n");
  }
  if (!r.method().empty()) {
    absl::StrAppend(&out, "  method: ", Printable(r.method()), "\n");
  }
  return out;
}

bool IsSwitchback(const v1::ExperimentReport& r) {
  return r.design() == "switchback";
}

// A switchback's estimate: read once, at the planned end; before it, what
// it shows so far.
std::string PairedDetail(const v1::ExperimentEstimate& e, bool live) {
  if (!live || !e.valid()) return EstimateDetail(e, false);
  return absl::StrCat(FormatRatioChange(e),
                      " so far (its interval holds at the planned end)");
}

// A switchback's report: the on / off estimates and one line per block.
std::string SwitchbackBody(const v1::ExperimentReport& r) {
  const absl::Duration block = FromProto(r.block());
  absl::Duration rest;
  std::string out = absl::StrCat(
      "  ", IntervalsDone(r), "; blocks of ", FormatSpan(block), ", ",
      block > absl::ZeroDuration()
          ? absl::IDivDuration(FromProto(r.duration()), 2 * block, &rest)
          : 0,
      " pairs (one on, one off each, in a random order); ",
      r.treated() + r.control(), " workers\n");
  const bool live = Live(r);
  absl::StrAppend(
      &out, "  on / off, paired by block:\n",
      "    host bytes per CPU-second   ", PairedDetail(r.work(), live), "\n",
      "    p99 service time            ", PairedDetail(r.service_p99(), live),
      "\n", "    run-queue wait per CPU-s    ",
      PairedDetail(r.run_queue_wait(), live), "\n");
  if (!r.levers().empty() && r.levers_size() < 4) {
    absl::StrAppend(&out, "  levers: ", absl::StrJoin(r.levers(), ","),
                    " only in the on blocks\n");
  }
  absl::StrAppend(&out, "  burn-in: each block's first ", r.burn_in(),
                  " intervals are left out (the host settling into it)\n");
  if (r.blocks().empty()) return out;
  out +=
      "blocks:\n  BLOCK PAIR LOCUS COUNTED  BYTES/CPU-S        P99 "
      "WAIT/CPU-S  REQUESTS\n";
  for (const v1::ExperimentBlock& b : r.blocks()) {
    const bool open = !b.complete() && b.bytes() == 0 && b.requests() == 0;
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "  %5d %4d %-5s %7d %12s %10s %10s %9d%s\n", b.index(), b.pair(),
            b.on() ? "on" : "off", b.intervals(),
            FormatBytes(b.bytes_per_cpu_second()),
            b.p99_us() > 0 ? absl::StrFormat("%.2f ms", b.p99_us() / 1000)
                           : "-",
            absl::StrFormat("%.4f", b.wait_per_cpu_second()), b.requests(),
            b.complete() ? ""
            : open       ? "  (under way)"
                         : "  (cut short: not counted)"));
  }
  return out;
}

}  // namespace

std::string FormatRatioChange(const v1::ExperimentEstimate& e) {
  if (!e.valid()) {
    return e.why_not().empty()
               ? "n/a"
               : absl::StrCat("n/a (", Printable(e.why_not()), ")");
  }
  return absl::StrFormat("%+.1f %% [%+.1f, %+.1f]", (e.ratio() - 1) * 100,
                         (e.low() - 1) * 100, (e.high() - 1) * 100);
}

std::string ExperimentStateName(v1::ExperimentState state) {
  switch (state) {
    case v1::EXPERIMENT_STATE_RUNNING:
      return "running";
    case v1::EXPERIMENT_STATE_DONE:
      return "done";
    case v1::EXPERIMENT_STATE_STOPPED:
      return "stopped";
    case v1::EXPERIMENT_STATE_GUARDRAIL:
      return "stopped by the guardrail";
    case v1::EXPERIMENT_STATE_INTERRUPTED:
      return "interrupted";
    case v1::EXPERIMENT_STATE_ABORTED:
      return "aborted";
    default:
      return "unknown";
  }
}

std::string FormatExperiment(const v1::ExperimentReport& r) {
  std::string out = Verdict(r);
  absl::StrAppend(&out, "\nexperiment ", Printable(r.id()), ": ",
                  ExperimentStateName(r.state()),
                  r.aa() ? ", A/A (neither arm treated: this host's noise)"
                  : IsSwitchback(r)
                      ? ", switchback (the whole host, Locus on and off by "
                        "block)"
                      : ", A/B",
                  "\n", Timing(r),
                  // Before the figures it qualifies.
                  r.clock().empty()
                      ? ""
                      : absl::StrCat("  TIMING: ", Printable(r.clock()), "\n"),
                  IsSwitchback(r) ? SwitchbackBody(r) : AbBody(r));
  if (!r.reason().empty()) {
    absl::StrAppend(&out, "  reason: ", Printable(r.reason()), "\n");
  }
  if (!r.notes().empty()) {
    out += "notes:\n";
    for (const std::string& note : r.notes()) {
      absl::StrAppend(&out, "  - ", Printable(note), "\n");
    }
  }
  // A switchback's workers are in no arm: its blocks stand for them.
  return IsSwitchback(r) ? out : out + Units(r);
}

std::string ExperimentLine(const v1::ExperimentReport& r) {
  std::string line = absl::StrCat("experiment ", Printable(r.id()), " ",
                                  ExperimentStateName(r.state()),
                                  r.aa()            ? " A/A, "
                                  : IsSwitchback(r) ? " switchback, "
                                                    : " A/B, ",
                                  IntervalsDone(r));
  if (r.state() == v1::EXPERIMENT_STATE_RUNNING) {
    absl::StrAppend(&line, ", ", FormatSpan(FromProto(r.remaining())), " left");
  }
  absl::StrAppend(&line,
                  IsSwitchback(r) ? "; host bytes per CPU-second (on / off) "
                                  : "; work per CPU-second ",
                  FormatRatioChange(r.work()));
  if (r.work().valid() && IsSwitchback(r) && Live(r)) {
    absl::StrAppend(&line, " so far");
  } else if (r.work().valid()) {
    const bool live = Live(r);
    absl::StrAppend(&line,
                    r.work().significant()
                        ? (live ? ", conclusive" : ", significant")
                        : (live ? ", not conclusive" : ", not significant"));
  }
  if (r.service_p99().valid()) {
    absl::StrAppend(&line, "; p99 service time ",
                    FormatRatioChange(r.service_p99()));
  }
  if (r.state() != v1::EXPERIMENT_STATE_RUNNING && !r.verdict().empty()) {
    absl::StrAppend(&line, "; ", Printable(r.verdict()));
  }
  return line;
}

}  // namespace ctl
}  // namespace locus
