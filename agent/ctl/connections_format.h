// Connection steering as text: per reuseport group, whether it is steered
// and, per node, where its new connections went. `status` shows the totals
// since the program was attached, `watch` and `top` the last tick's.
#ifndef LOCUS_AGENT_CTL_CONNECTIONS_FORMAT_H_
#define LOCUS_AGENT_CTL_CONNECTIONS_FORMAT_H_

#include <string>
#include <vector>

#include "google/protobuf/repeated_ptr_field.h"
#include "locus/v1/agent.pb.h"

namespace locus::ctl {

using ConnectionGroups =
    google::protobuf::RepeatedPtrField<v1::ConnectionGroup>;

// "connections netns 4026531840 0.0.0.0:80: steered, 4 sockets\n" and one
// "  node 0: 2 workers, 99.9% local (1234 local, 0 spilled, 1 fell back)"
// line per node; `totals`: the *_total counters, else the tick's.
std::vector<std::string> ConnectionLines(const ConnectionGroups& groups,
                                         bool totals);

}  // namespace locus::ctl

#endif  // LOCUS_AGENT_CTL_CONNECTIONS_FORMAT_H_
