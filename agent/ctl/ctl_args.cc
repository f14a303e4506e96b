#include "agent/ctl/ctl_args.h"

#include <cmath>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/defaults.h"
#include "common/status_macros.h"

namespace locus {
namespace {

struct CommandSpec {
  int min_args;
  int max_args;
  bool count;
  bool json;
  const char* synopsis;
  const char* help;
};

const std::map<std::string, CommandSpec>& Commands() {
  static const auto* commands = new std::map<std::string, CommandSpec>{
      {"status",
       {0, 0, false, true, "status [--json]",
        "Shows the agent's mode, tick, policy, targets and sensor sources.\n"}},
      {"watch",
       {0, 0, true, true, "watch [--count=N] [--json]",
        "Prints the metrics stream, one line per tick (with the actions,\n"
        "reverts and external changes of that tick below it). --json prints\n"
        "each message as one JSON object per line. --count stops after N\n"
        "messages. A line 'dropped N' means this client read too slowly.\n"}},
      {"top",
       {0, 0, true, false, "top [--count=N]",
        "Live view of nodes, target threads and IRQs with locality figures,\n"
        "refreshed each tick. q or Ctrl-C quits; --count stops after N "
        "ticks.\n"}},
      {"explain",
       {1, 1, false, true, "explain TID|irq:N [--json]",
        "Shows the agent's last decisions about one thread or IRQ, and "
        "why.\n"}},
      {"policy",
       {2, 2, false, false, "policy check FILE",
        "Checks a policy file without the daemon: every problem is printed\n"
        "as FILE:LINE:COLUMN: message. Exit status 0 when the file is "
        "valid.\n"}},
      {"mode",
       {1, 1, false, false, "mode enforce|dry_run|policy",
        "Switches the agent between acting (enforce) and only reporting\n"
        "(dry_run), overriding the policy file's mode (and --mode) until\n"
        "'mode policy', which follows the policy file's mode again (and its\n"
        "reloads). 'status' says where the mode comes from. Needs root or\n"
        "the socket's group.\n"}},
      {"restore",
       {0, 0, false, false, "restore",
        "Undoes every change the agent made (from its journal), and switches\n"
        "to dry_run first so that it does not act again: a runtime override,\n"
        "until 'mode policy' or 'mode enforce'. Needs root or the socket's\n"
        "group.\n"}},
      {"log-level",
       {1, 1, false, false, "log-level N",
        "Sets the agent's log verbosity until the next call or a restart:\n"
        "0 info and up (the default), 1 the agent's debug lines too, 2 also\n"
        "libbpf's. Needs root or the socket's group.\n"}},
      {"doctor",
       {0, 0, false, false, "doctor",
        "Checks on this host, without the daemon, whether Locus can help and\n"
        "what stands in the way: capabilities, BTF, BPF sources, NUMA nodes,\n"
        "AutoNUMA, irqbalance and numad, ptrace_scope, the kubelet's CPU\n"
        "manager, the policy file, the journal, another locusd; then whether\n"
        "an agent answers on the socket, and its mode. One line per check,\n"
        "OK, WARN or FAIL, with the fix. Exit status 1 when a check fails.\n"
        "Run it as root, as locusd runs.\n"}},
      {"probe",
       {0, 0, false, true, "probe [--json]",
        "Shows the kernel features the agent probed and which source each\n"
        "sensor runs on.\n"}},
      {"experiment",
       {1, 1024, false, true, kExperimentSynopsis, kExperimentHelp}},
  };
  return *commands;
}

// The options that only some commands take, as seen on the command line.
struct SeenOptions {
  bool count = false;
  bool json = false;
};

// The option at args[i] into `inv`; `i` advances past a value it used.
absl::Status ParseOption(const std::vector<std::string>& args, size_t& i,
                         CtlInvocation& inv, SeenOptions& seen) {
  const std::string& arg = args[i];
  std::string value;
  if (arg == "--help" || arg == "-h") {
    inv.help = true;
  } else if (arg == "--version") {
    inv.version = true;
  } else if (arg == "--json") {
    inv.json = seen.json = true;
  } else if (TakeOptionValue(args, i, "socket", &value)) {
    if (value.empty()) return absl::InvalidArgumentError("--socket is empty");
    inv.socket = value;
  } else if (TakeOptionValue(args, i, "count", &value)) {
    if (!absl::SimpleAtoi(value, &inv.count) || inv.count < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--count wants a positive number, not '", value, "'"));
    }
    seen.count = true;
  } else if (TakeOptionValue(args, i, "timeout", &value)) {
    double seconds = 0;
    // SimpleAtod takes "nan" and "inf": neither is a deadline.
    if (!absl::SimpleAtod(value, &seconds) || !std::isfinite(seconds) ||
        seconds <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--timeout wants a finite number of seconds greater "
                       "than 0, not '",
                       value, "'"));
    }
    inv.timeout = absl::Seconds(seconds);
  } else if (arg == "--socket" || arg == "--count" || arg == "--timeout") {
    return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
  } else {
    ASSIGN_OR_RETURN(bool taken, TakeExperimentOption(args, i, inv.experiment));
    if (!taken) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", arg, "'"));
    }
  }
  return absl::OkStatus();
}

// The command exists and, unless help is asked for, its arguments and
// options fit it.
absl::Status CheckCommand(const CtlInvocation& inv, const SeenOptions& seen) {
  auto it = Commands().find(inv.command);
  if (it == Commands().end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown command '", inv.command, "'"));
  }
  if (inv.help) return absl::OkStatus();
  RETURN_IF_ERROR(CheckExperimentArgs(inv.command, inv.args, inv.experiment));
  const CommandSpec& spec = it->second;
  int n = static_cast<int>(inv.args.size());
  if (n < spec.min_args || n > spec.max_args) {
    return absl::InvalidArgumentError(
        absl::StrCat("usage: locusctl ", spec.synopsis));
  }
  if (seen.count && !spec.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--count does not apply to ", inv.command));
  }
  if (seen.json && !spec.json) {
    return absl::InvalidArgumentError(
        absl::StrCat("--json does not apply to ", inv.command));
  }
  if (inv.command == "policy" && inv.args[0] != "check") {
    return absl::InvalidArgumentError("usage: locusctl policy check FILE");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CtlInvocation> ParseCtlArgs(
    const std::vector<std::string>& args) {
  CtlInvocation inv;
  inv.socket = kDefaultSocketPath;
  SeenOptions seen;
  bool positional_only = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (positional_only || arg.empty() || arg[0] != '-' || arg == "-") {
      if (inv.command.empty()) {
        inv.command = arg;
      } else {
        inv.args.push_back(arg);
      }
    } else if (arg == "--") {
      positional_only = true;
    } else {
      RETURN_IF_ERROR(ParseOption(args, i, inv, seen));
    }
  }
  if (inv.command == "help") {
    inv.help = true;
    inv.command = inv.args.empty() ? "" : inv.args[0];
    // "help experiment start": the subcommand stays, for its own help.
    if (!inv.args.empty()) inv.args.erase(inv.args.begin());
  }
  if (inv.command.empty()) {
    if (inv.help || inv.version) return inv;
    return absl::InvalidArgumentError("no command given");
  }
  RETURN_IF_ERROR(CheckCommand(inv, seen));
  return inv;
}

bool TakeOptionValue(const std::vector<std::string>& args, size_t& i,
                     const std::string& name, std::string* value) {
  const std::string& arg = args[i];
  std::string prefix = absl::StrCat("--", name);
  if (arg == prefix) {
    if (i + 1 >= args.size()) return false;
    *value = args[++i];
    return true;
  }
  if (absl::StartsWith(arg, prefix + "=")) {
    *value = arg.substr(prefix.size() + 1);
    return true;
  }
  return false;
}

std::string CtlUsage(const std::string& command,
                     const std::string& subcommand) {
  const std::string global = absl::StrCat(
      "Global options:\n"
      "  --socket=PATH   the agent's socket (default ",
      kDefaultSocketPath,
      ")\n"
      "  --timeout=SECS  deadline of one call (default 5)\n"
      "  --help          help for the command\n"
      "  --version       locusctl's version and build\n");
  auto it = Commands().find(command);
  if (command == "experiment") {
    std::string usage = ExperimentSubcommandUsage(subcommand);
    if (!usage.empty()) return absl::StrCat(usage, "\n", global);
  }
  if (it != Commands().end()) {
    return absl::StrCat("usage: locusctl [--socket=PATH] ", it->second.synopsis,
                        "\n\n", it->second.help, "\n", global);
  }
  std::string out =
      "usage: locusctl [--socket=PATH] COMMAND [ARGS]\n\n"
      "Talks to locusd, the NUMA tuning agent.\n\nCommands:\n";
  for (const auto& [name, spec] : Commands()) {
    absl::StrAppend(&out, "  ", spec.synopsis, "\n");
  }
  absl::StrAppend(&out, "\n", global,
                  "\n'locusctl COMMAND --help' explains one command.\n");
  return out;
}

}  // namespace locus
