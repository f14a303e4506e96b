// The options of `locusctl experiment start|status|stop`: parsed strictly
// (a duration is absl's "30m", "1h30m", "90s", never a bare number), so
// that a typo is a usage error before anything reaches the agent.
#ifndef LOCUS_AGENT_CTL_EXPERIMENT_ARGS_H_
#define LOCUS_AGENT_CTL_EXPERIMENT_ARGS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace locus {

struct ExperimentArgs {
  // Zero when not given: the agent's default (30 minutes, 10 seconds), so
  // that the defaults live in one place.
  absl::Duration duration = absl::ZeroDuration();
  absl::Duration interval = absl::ZeroDuration();
  bool aa = false;
  uint64_t seed = 0;  // 0: the agent draws one (the report says which)
  int burn_in = -1;   // intervals; -1: the agent's default (2)
  absl::Duration pre = absl::ZeroDuration();  // none
  double min_effect = 0;  // a fraction; 0: not pre-registered
  // A fraction; unset: the agent's default.
  std::optional<double> latency_margin;
  std::vector<std::string> levers;  // empty: all
  std::string design;               // empty: the agent's default (ab)
  absl::Duration block = absl::ZeroDuration();  // a switchback's; 0: 5m
  std::string reason;
  std::set<std::string> given;  // "--duration", "--aa", ...: seen on the line
};

// Takes args[i] when it is one of the experiment's options (advancing `i`
// past a value it used). False when it is not one; INVALID_ARGUMENT, naming
// the option and the value, when its value is bad.
absl::StatusOr<bool> TakeExperimentOption(const std::vector<std::string>& args,
                                          size_t& i, ExperimentArgs& out);

// `command` with its positionals fits the experiment options given: the
// subcommand exists, takes each of them, and the duration holds two
// intervals.
absl::Status CheckExperimentArgs(const std::string& command,
                                 const std::vector<std::string>& positionals,
                                 const ExperimentArgs& args);

// The synopsis and help of `experiment` as a whole (ctl_args.cc's table).
extern const char kExperimentSynopsis[];
extern const char kExperimentHelp[];

// The help of one subcommand ("start", "status", "stop"); empty for any
// other.
std::string ExperimentSubcommandUsage(const std::string& subcommand);

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_EXPERIMENT_ARGS_H_
