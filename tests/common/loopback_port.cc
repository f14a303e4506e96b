#include "tests/common/loopback_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tests/common/process_util.h"

namespace locus {
namespace {

constexpr int kLowest = 10000;

bool Binds(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;  // as servers set it, so an earlier server's TIME_WAIT is no bar
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok =
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

int UnusedLoopbackPort() {
  int first_ephemeral = 32768;  // the kernel's default
  std::vector<std::string> range =
      absl::StrSplit(ReadAll("/proc/sys/net/ipv4/ip_local_port_range"),
                     absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  int low = 0;
  if (!range.empty() && absl::SimpleAtoi(range[0], &low) && low > kLowest + 100)
    first_ephemeral = low;
  const int span = first_ephemeral - kLowest;
  const int start = static_cast<int>((getpid() * 7L) % span);
  for (int i = 0; i < span; ++i) {
    const int port = kLowest + (start + i) % span;
    if (Binds(port)) return port;
  }
  return 0;
}

}  // namespace locus
