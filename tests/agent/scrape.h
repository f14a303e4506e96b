// GET /metrics from 127.0.0.1:PORT (or [::1]:PORT) over a plain socket, as
// a scraper does.
#ifndef LOCUS_TESTS_AGENT_SCRAPE_H_
#define LOCUS_TESTS_AGENT_SCRAPE_H_

#include <sys/socket.h>

#include <map>
#include <string>

namespace locus {

// The loopback address of `family` (AF_INET: 127.0.0.1, AF_INET6: ::1) at
// `port` in `storage`; its length.
socklen_t LoopbackAddress(int family, int port, sockaddr_storage& storage);

// The response's body; empty when nothing answers.
std::string Scrape(int port, bool ipv6 = false);

// Every sample of an exposition text: "name{labels}" -> value.
std::map<std::string, double> Samples(const std::string& text);
// Every family's type: "name" -> "counter", "gauge", "histogram", ...
std::map<std::string, std::string> Types(const std::string& text);

}  // namespace locus

#endif  // LOCUS_TESTS_AGENT_SCRAPE_H_
