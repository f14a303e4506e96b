#include "tests/agent/scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace locus {

socklen_t LoopbackAddress(int family, int port, sockaddr_storage& storage) {
  storage = {};
  if (family == AF_INET6) {
    auto* addr = reinterpret_cast<sockaddr_in6*>(&storage);
    addr->sin6_family = AF_INET6;
    addr->sin6_port = htons(static_cast<uint16_t>(port));
    addr->sin6_addr = in6addr_loopback;
    return sizeof(*addr);
  }
  auto* addr = reinterpret_cast<sockaddr_in*>(&storage);
  addr->sin_family = AF_INET;
  addr->sin_port = htons(static_cast<uint16_t>(port));
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sizeof(*addr);
}

std::string Scrape(int port, bool ipv6) {
  sockaddr_storage storage;
  const socklen_t len =
      LoopbackAddress(ipv6 ? AF_INET6 : AF_INET, port, storage);
  int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  std::string request = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (connect(fd, reinterpret_cast<sockaddr*>(&storage), len) != 0 ||
      write(fd, request.data(), request.size()) !=
          static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string response;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) {
    response.append(buf, n);
  }
  close(fd);
  size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return out;
}

std::map<std::string, std::string> Types(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    std::string name, type;
    words >> name >> type;
    out[name] = type;
  }
  return out;
}

}  // namespace locus
