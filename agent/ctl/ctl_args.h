// locusctl's command line: global options, one command, its arguments and
// options, parsed into a value so that usage errors are testable without
// running anything. Flags may come before or after the command.
#ifndef LOCUS_AGENT_CTL_CTL_ARGS_H_
#define LOCUS_AGENT_CTL_CTL_ARGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/ctl/experiment_args.h"

namespace locus {

struct CtlInvocation {
  std::string socket;  // --socket; default /run/locus/locusd.sock
  absl::Duration timeout = absl::Seconds(5);  // --timeout, unary calls
  std::string command;                        // empty with --help alone
  std::vector<std::string> args;              // positionals after the command
  bool help = false;          // --help / -h, or the "help" command
  bool version = false;       // --version
  int count = 0;              // --count (watch, top): stop after N messages
  bool json = false;          // --json (watch, status, explain, probe, ...)
  ExperimentArgs experiment;  // --duration, --aa, ... (experiment)
};

// `args` excludes argv[0]. INVALID_ARGUMENT carries a message for the user;
// with help set the caller prints Usage(command) instead of running.
absl::StatusOr<CtlInvocation> ParseCtlArgs(
    const std::vector<std::string>& args);

// Help for one command (for `experiment`, of its subcommand when it names
// one), or the overview for an empty or unknown command.
std::string CtlUsage(const std::string& command,
                     const std::string& subcommand = "");

// Splits "--name=value" / "--name value" at args[i]; `i` advances past a
// value it used. False when args[i] is not that option with a value.
bool TakeOptionValue(const std::vector<std::string>& args, size_t& i,
                     const std::string& name, std::string* value);

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_CTL_ARGS_H_
