// Where locusd serves locus.v1.Agent unless told otherwise (--socket).
#ifndef LOCUS_AGENT_METRICS_DEFAULT_SOCKET_H_
#define LOCUS_AGENT_METRICS_DEFAULT_SOCKET_H_

namespace locus {

inline constexpr char kDefaultSocketPath[] = "/run/locus/locusd.sock";

}  // namespace locus

#endif  // LOCUS_AGENT_METRICS_DEFAULT_SOCKET_H_
