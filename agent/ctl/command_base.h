// What every locusctl command that talks to the agent shares: its
// invocation and streams, one unary call within --timeout, printing a
// reply as text or JSON, and failures reported the same way.
#ifndef LOCUS_AGENT_CTL_COMMAND_BASE_H_
#define LOCUS_AGENT_CTL_COMMAND_BASE_H_

#include <cerrno>
#include <chrono>
#include <memory>
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/ctl/agent_client.h"
#include "agent/ctl/commands.h"
#include "agent/ctl/ctl_args.h"
#include "agent/ctl/format.h"
#include "common/printable.h"
#include "locus/v1/agent.grpc.pb.h"

namespace locus {

class CommandBase {
 public:
  CommandBase(const CtlInvocation& inv, std::ostream& out, std::ostream& err)
      : inv_(inv), out_(out), err_(err) {}

 protected:
  // The message often quotes the agent's words (a refusal's reason names a
  // look-alike's path): shown through Printable, on one line.
  int Fail(const std::string& message) {
    err_ << "locusctl: " << Printable(message) << "\n";
    return kExitFailed;
  }
  int Usage(const std::string& message) {
    err_ << "locusctl: " << message << "\n";
    return kExitUsage;
  }
  int RpcFailed(const std::string& call, const grpc::Status& status) {
    return Fail(
        absl::StrCat(call, ": ", DescribeRpcError(status, inv_.socket)));
  }
  // One unary call within --timeout; kExitOk, or the failure reported.
  template <typename Request, typename Response>
  int Call(const std::string& name,
           grpc::Status (v1::Agent::Stub::*call)(grpc::ClientContext*,
                                                 const Request&, Response*),
           const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoNanoseconds(inv_.timeout));
    grpc::Status rpc = (stub_.get()->*call)(&context, request, response);
    return rpc.ok() ? kExitOk : RpcFailed(name, rpc);
  }
  // Prints `message` as JSON or as `format` shows it.
  template <typename Message>
  int Print(const Message& message, std::string (*format)(const Message&)) {
    absl::StatusOr<std::string> shown =
        ctl::TextOrJson(message, inv_.json, format);
    if (!shown.ok()) return Fail(std::string(shown.status().message()));
    errno = 0;
    out_ << *shown << std::flush;
    return out_ ? kExitOk : CannotWrite(err_);
  }

  const CtlInvocation& inv_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_COMMAND_BASE_H_
