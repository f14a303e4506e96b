// irqbalance's sleep interval as its command line set it (1.9.2,
// parse_command_line: getopt_long over "odfjVi:p:s:c:l:m:t:e:"), read
// before it can be asked: a rescan holds its loop for that interval, so a
// restore that starts inside one must wait that long for its first answer,
// before "setup" can say the interval (irqbalance_bans.h).
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_ARGS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_ARGS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace locus {

// `argv` as /proc/PID/cmdline holds it (argv[0] first): the last
// `-t N`, `-tN`, `--interval=N`, `--interval N` (or any prefix of
// "interval", as getopt_long takes it), irqbalance's default of 10 when
// none, or 0 when the value is not one irqbalance would have started with
// (it exits on those). Short options may share a word ("-ft40").
int IrqbalanceIntervalArg(const std::vector<std::string>& argv);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_ARGS_H_
