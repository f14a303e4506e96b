// `locusctl experiment start|status|stop`: the A/B experiment's calls, run
// once the socket is known to answer.
#ifndef LOCUS_AGENT_CTL_EXPERIMENT_COMMAND_H_
#define LOCUS_AGENT_CTL_EXPERIMENT_COMMAND_H_

#include <ostream>

#include "agent/ctl/ctl_args.h"

namespace locus {

// `inv` is an experiment command ParseCtlArgs accepted; returns the exit
// status (commands.h).
int RunExperimentCommand(const CtlInvocation& inv, std::ostream& out,
                         std::ostream& err);

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_EXPERIMENT_COMMAND_H_
