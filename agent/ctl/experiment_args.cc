#include "agent/ctl/experiment_args.h"

#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/ctl/ctl_args.h"
#include "common/status_macros.h"
#include "policy/experiment_arms.h"
#include "policy/experiment_plan.h"

namespace locus {
namespace {

struct Subcommand {
  std::set<std::string> options;  // besides --json, which all take
  const char* synopsis;
  const char* help;
};

const char kStartHelp[] =
    "Starts an A/B experiment over the target workers: each is assigned\n"
    "at random (stratified by node and server instance) to the treated\n"
    "arm, which the policy tunes as usual, or the control arm, which the\n"
    "agent leaves as the kernel and the server placed it. Both arms serve\n"
    "the same traffic at the same time. Prints the report at the start.\n"
    "\n"
    "  --duration=D   how long it runs (default 30m); at least two\n"
    "                 intervals after the burn-in. Durations as 90s, 10m,\n"
    "                 1h30m.\n"
    "  --interval=D   how often each worker's work and CPU time are read\n"
    "                 (default 10s)\n"
    "  --aa           A/A: neither arm is treated; the interval's width\n"
    "                 is the resolution of this host's noise\n"
    "  --seed=N       the randomisation's seed (default: drawn; the\n"
    "                 report says which, to repeat an assignment)\n"
    "  --pre=D        a pre-period first (default none; 10m recommended):\n"
    "                 the arms are drawn and read, nothing applied; each\n"
    "                 worker's pre-period is the covariate that takes its\n"
    "                 persistent difference out (CUPED)\n"
    "  --min-effect=P%  the smallest effect it must detect: the duration\n"
    "                 is sized from this host's last experiment (or a\n"
    "                 --duration given is checked), or the start is\n"
    "                 refused with what it could detect\n"
    "  --latency-margin=P%  the latency guardrail's margin (default: the\n"
    "                 policy's experiment.latency_margin, 10%):\n"
    "                 the run stops when the treated arm's p99 service\n"
    "                 time or run-queue wait is significantly more than\n"
    "                 (100 + P) % of the control's\n"
    "  --levers=L,... only these act on the treated arm (default all):\n"
    "                 threads (pins), pages (page moves), irqs (held: a\n"
    "                 NIC queue carries both arms), connections\n"
    "                 (steering); one left out acts on neither arm\n"
    "  --burn-in=N    intervals left out after each worker's arm is set\n"
    "                 (put back or moved, pages migrating; default 2), or\n"
    "                 at the start of each block; the report counts them\n"
    "  --design=ab|switchback  ab (default): the two arms above, at once.\n"
    "                 switchback: the whole host alternates between Locus\n"
    "                 on (its levers, IRQs included) and off (everything\n"
    "                 put back, as on restore) in pairs of blocks, one of\n"
    "                 each in a random order; the estimate compares each\n"
    "                 pair's on block with its off block (host bytes per\n"
    "                 CPU-second, p99 service time, run-queue wait). For\n"
    "                 host-wide levers (IRQs), where the arms would\n"
    "                 interfere, and for \"all workers tuned vs none\"\n"
    "  --block=D      a switchback's block (default 5m): whole intervals,\n"
    "                 two at least after the burn-in; the duration holds\n"
    "                 two pairs of blocks at least\n"
    "  --reason=TEXT  why, for the agent's log\n"
    "\n"
    "Refused while one runs, in dry run, or with too few workers. Needs\n"
    "root or the socket's group.\n";

const std::map<std::string, Subcommand>& Subcommands() {
  static const auto* subcommands = new std::map<std::string, Subcommand>{
      {"start",
       {{"--duration", "--interval", "--aa", "--seed", "--reason", "--burn-in",
         "--pre", "--min-effect", "--latency-margin", "--levers", "--design",
         "--block"},
        "experiment start [--duration=D] [--interval=D] [--pre=D] "
        "[--min-effect=P%] [--latency-margin=P%] [--levers=L,...] "
        "[--design=ab|switchback] [--block=D] [--aa] [--seed=N] "
        "[--burn-in=N] [--reason=TEXT] "
        "[--json]",
        kStartHelp}},
      {"status",
       {{},
        "experiment status [--json]",
        "Shows the running experiment, or the last one's report after it\n"
        "ended: the verdict first, then the estimates of treated/control with\n"
        "their 95 % confidence intervals, the smallest effect this many\n"
        "workers and intervals can detect, the connection shares, the\n"
        "guardrail, and one line per worker. --json prints the report as\n"
        "one JSON object.\n"}},
      {"pool",
       {{},
        "experiment pool FILE...",
        "Pools one experiment's reports from many hosts (each host's\n"
        "'experiment status --json', or its record beside the journal,\n"
        "/var/lib/locus/journal.experiment) into the fleet's answer: the\n"
        "fixed-effect estimate (inverse-variance weights: one effect\n"
        "everywhere) and the random-effects one (DerSimonian-Laird: the\n"
        "effect varies by host; act on it when I² is large), with I², the\n"
        "between-host tau and the hosts' spread. Reads files only.\n"}},
      {"stop",
       {{"--reason"},
        "experiment stop [--reason=TEXT] [--json]",
        "Ends the running experiment now, with its estimate so far, and puts\n"
        "every worker back under the policy. Needs root or the socket's\n"
        "group.\n"}},
  };
  return *subcommands;
}

absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& name,
                                                     const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration() ||
      d > absl::Seconds(experiment::kMaxExperimentSeconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name,
                     " wants a duration greater than 0 and at most 30 days "
                     "(720h) such as 90s, 10m or 1h30m, not '",
                     text, "'"));
  }
  return d;
}

// "3%" or "3" as the fraction 0.03, where `fits` the percentage; else an
// error that says what `option` wants.
absl::StatusOr<double> FractionOf(const std::string& option,
                                  const std::string& value,
                                  bool (*fits)(double), const char* wants) {
  std::string number = value;
  if (!number.empty() && number.back() == '%') number.pop_back();
  double percent = 0;
  if (!absl::SimpleAtod(number, &percent) || !fits(percent)) {
    return absl::InvalidArgumentError(
        absl::StrCat(option, " wants ", wants, ", not '", value, "'"));
  }
  return percent / 100;
}

}  // namespace

const char kExperimentSynopsis[] =
    "experiment start|status|stop|pool [--duration=D] [--interval=D] "
    "[--pre=D] [--min-effect=P%] [--latency-margin=P%] [--levers=L,...] "
    "[--design=ab|switchback] [--block=D] [--aa] [--seed=N] "
    "[--burn-in=N] [--reason=TEXT] [--json] [FILE...]";
const char kExperimentHelp[] =
    "Measures whether Locus helps this host, on its live traffic: a\n"
    "randomised A/B test. The target workers are split at random into a\n"
    "treated arm, which the policy tunes, and a control arm, left as the\n"
    "kernel placed it; both serve the same traffic at the same time. The\n"
    "estimate is the treated/control ratio of work (bytes sent) per\n"
    "CPU-second, with its 95 % confidence interval. Or a switchback\n"
    "(--design=switchback): the whole host alternates between Locus on and\n"
    "off, block by block.\n"
    "\n"
    "  start   starts one (--duration, default 30m; --interval, default\n"
    "          10s; --aa: neither arm treated, to measure the noise;\n"
    "          --seed, --reason). Needs root or the socket's group.\n"
    "  status  the running one, or the last one's report: the verdict,\n"
    "          the estimates, the workers. --json: the report as JSON.\n"
    "  stop    ends the running one now (--reason). Needs root or the\n"
    "          socket's group.\n"
    "  pool    pools reports from many hosts (FILE...): fixed and random\n"
    "          effects, I².\n"
    "\n"
    "'locusctl experiment SUBCOMMAND --help' says more about each.\n";

namespace {

// "threads,connections": the levers' names, checked as the agent will.
absl::StatusOr<std::vector<std::string>> LeverList(const std::string& value) {
  std::vector<std::string> names = absl::StrSplit(value, ',');
  // Names here; what the design allows in CheckExperimentArgs.
  if (absl::Status levers = ParseLevers(names, /*switchback=*/true).status();
      !levers.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", levers.message()));
  }
  return names;
}

// One option's value into `out`, checked.
absl::Status SetOption(const std::string& option, const std::string& value,
                       ExperimentArgs& out) {
  if (option == "--duration") {
    ASSIGN_OR_RETURN(out.duration, ParsePositiveDuration(option, value));
  } else if (option == "--interval") {
    ASSIGN_OR_RETURN(out.interval, ParsePositiveDuration(option, value));
  } else if (option == "--min-effect") {
    ASSIGN_OR_RETURN(
        out.min_effect,
        FractionOf(
            option, value, [](double p) { return p > 0 && p < 100; },
            "a percentage between 0 and 100 such as 3%"));
  } else if (option == "--latency-margin") {
    ASSIGN_OR_RETURN(
        out.latency_margin,
        FractionOf(
            option, value, [](double p) { return p >= 0 && p <= 1000; },
            "a percentage from 0 to 1000 such as 10%"));
  } else if (option == "--levers") {
    ASSIGN_OR_RETURN(out.levers, LeverList(value));
  } else if (option == "--design") {
    if (value != "ab" && value != "switchback") {
      return absl::InvalidArgumentError(
          absl::StrCat("--design wants ab or switchback, not '", value, "'"));
    }
    out.design = value;
  } else if (option == "--block") {
    ASSIGN_OR_RETURN(out.block, ParsePositiveDuration(option, value));
  } else if (option == "--pre") {
    ASSIGN_OR_RETURN(out.pre, ParsePositiveDuration(option, value));
  } else if (option == "--burn-in") {
    if (!absl::SimpleAtoi(value, &out.burn_in) || out.burn_in < 0 ||
        out.burn_in > 1000) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--burn-in wants a number of intervals from 0 to 1000, not '", value,
          "'"));
    }
  } else if (option == "--seed") {
    if (!absl::SimpleAtoi(value, &out.seed)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--seed wants a number from 0 to 2^64-1, not '", value, "'"));
    }
  } else {
    out.reason = value;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> TakeExperimentOption(const std::vector<std::string>& args,
                                          size_t& i, ExperimentArgs& out) {
  const std::string& arg = args[i];
  std::string value;
  if (arg == "--aa") {
    out.aa = true;
    out.given.insert(arg);
    return true;
  }
  for (const char* name :
       {"duration", "interval", "seed", "reason", "burn-in", "pre",
        "min-effect", "latency-margin", "levers", "design", "block"}) {
    const std::string option = absl::StrCat("--", name);
    if (!TakeOptionValue(args, i, name, &value)) {
      if (arg == option) {
        return absl::InvalidArgumentError(
            absl::StrCat(option, " needs a value"));
      }
      continue;
    }
    out.given.insert(option);
    RETURN_IF_ERROR(SetOption(option, value, out));
    return true;
  }
  return false;
}

absl::Status CheckExperimentArgs(const std::string& command,
                                 const std::vector<std::string>& positionals,
                                 const ExperimentArgs& args) {
  if (command != "experiment") {
    if (args.given.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(*args.given.begin(), " does not apply to ", command));
  }
  auto it = positionals.empty() ? Subcommands().end()
                                : Subcommands().find(positionals[0]);
  if (it == Subcommands().end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "experiment wants start, status, stop or pool",
        positionals.empty() ? std::string()
                            : absl::StrCat(", not '", positionals[0], "'")));
  }
  // Only pool takes files; it needs one at least.
  if ((positionals[0] == "pool") != (positionals.size() > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("usage: locusctl ", it->second.synopsis));
  }
  for (const std::string& option : args.given) {
    if (it->second.options.count(option) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          option, " does not apply to experiment ", positionals[0]));
    }
  }
  const bool switchback = args.design == "switchback";
  if (args.given.count("--block") != 0 && !switchback) {
    return absl::InvalidArgumentError(
        "--block is a switchback's: add --design=switchback");
  }
  if (absl::Status levers = ParseLevers(args.levers, switchback).status();
      !args.levers.empty() && !levers.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", levers.message()));
  }
  // Both given: the agent would refuse it anyway, but only after a round
  // trip and in its own words.
  if (args.duration > absl::ZeroDuration() &&
      args.interval > absl::ZeroDuration() &&
      args.duration < 2 * args.interval) {
    return absl::InvalidArgumentError(
        absl::StrCat("--duration=", absl::FormatDuration(args.duration),
                     " is shorter than two intervals of --interval=",
                     absl::FormatDuration(args.interval)));
  }
  return absl::OkStatus();
}

std::string ExperimentSubcommandUsage(const std::string& subcommand) {
  auto it = Subcommands().find(subcommand);
  if (it == Subcommands().end()) return "";
  return absl::StrCat("usage: locusctl [--socket=PATH] ", it->second.synopsis,
                      "\n\n", it->second.help);
}

}  // namespace locus
