// locusctl's connection to locusd: a Unix-socket channel, and messages that
// say what is wrong when the daemon is not there.
#ifndef LOCUS_AGENT_CTL_AGENT_CLIENT_H_
#define LOCUS_AGENT_CTL_AGENT_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "locus/v1/agent.grpc.pb.h"

namespace locus {

// Connects to `socket_path` once, outside gRPC, so that a missing socket or
// a dead daemon is reported as such instead of as a gRPC timeout:
// "is locusd running? socket /run/locus/locusd.sock: No such file or
// directory".
absl::Status CheckAgentSocket(const std::string& socket_path);

std::unique_ptr<v1::Agent::Stub> NewAgentStub(const std::string& socket_path);

// One line for the user about a failed call.
std::string DescribeRpcError(const grpc::Status& status,
                             const std::string& socket_path);

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_AGENT_CLIENT_H_
