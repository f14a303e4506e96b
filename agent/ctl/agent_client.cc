#include "agent/ctl/agent_client.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/os_error.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

// The stream of a busy host with thousands of threads is large; requests
// are small and the server bounds them.
constexpr int kMaxReceiveBytes = 64 * 1024 * 1024;

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED:
      return "cancelled";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "invalid argument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "deadline exceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "not found";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "permission denied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "resource exhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "failed precondition";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "not implemented by this locusd";
    case grpc::StatusCode::UNAVAILABLE:
      return "unavailable";
    default:
      return absl::StrCat("error ", static_cast<int>(code));
  }
}

}  // namespace

absl::Status CheckAgentSocket(const std::string& socket_path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path '", socket_path, "' is not usable"));
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return LastErrnoStatus("socket");
  int rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  if (rc == 0) return absl::OkStatus();
  std::string message = ErrnoMessage(absl::StrCat("socket ", socket_path), err);
  if (err == EACCES) {
    return absl::PermissionDeniedError(absl::StrCat(
        message, " (the socket is for root and its group; try sudo)"));
  }
  return absl::UnavailableError(absl::StrCat("is locusd running? ", message));
}

std::unique_ptr<v1::Agent::Stub> NewAgentStub(const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  // Without BDP probing the receive window stays at HTTP/2's 64 KiB instead
  // of growing to megabytes: a reader that falls behind (a paused terminal)
  // then loses old ticks at the agent, counted in-band, instead of being
  // shown data that sat minutes in buffers.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  return v1::Agent::NewStub(
      grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                grpc::InsecureChannelCredentials(), args));
}

std::string DescribeRpcError(const grpc::Status& status,
                             const std::string& socket_path) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return absl::StrCat("is locusd running? socket ", socket_path, ": ",
                        status.error_message());
  }
  return absl::StrCat(CodeName(status.error_code()), ": ",
                      status.error_message());
}

}  // namespace locus
