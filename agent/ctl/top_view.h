// The screen of `locusctl top` for one tick, as plain lines: a pure function
// of the Metrics message, so the layout is testable without a terminal.
#ifndef LOCUS_AGENT_CTL_TOP_VIEW_H_
#define LOCUS_AGENT_CTL_TOP_VIEW_H_

#include <string>
#include <vector>

#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

// At most `rows` lines, none wider than `cols` (0: no limit). Threads are
// sorted by remote faults, the worst first.
std::vector<std::string> RenderTop(const v1::Metrics& metrics, int rows,
                                   int cols);

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_TOP_VIEW_H_
