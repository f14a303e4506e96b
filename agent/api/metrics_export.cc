#include "agent/api/metrics_export.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "CivetServer.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "civetweb.h"
#include "common/log.h"
#include "prometheus/exposer.h"

namespace locus {

namespace {

// civetweb gives a connection a worker thread from accept to close, and a
// thread waits on a client that sends nothing until the request timeout
// (civetweb's 30 s by default): two silent clients took both threads and
// every scrape timed out. The time to read a request's headers is bounded
// from its first read, not reset by each byte, so a slow drip gains nothing
// over silence. civetweb 1.15 has no per-peer cap and no hook at accept
// that could refuse a connection (init_connection cannot), so the bound is
// threads and that timeout: K slow connections delay a scrape by about
// K / kServerThreads x kRequestTimeoutMs.
constexpr char kServerThreads[] = "16";
constexpr char kRequestTimeoutMs[] = "3000";
// Keep-alive answers pipelined requests in order instead of dropping all
// but the first; an idle kept connection gives its thread back soon.
constexpr char kKeepAliveTimeoutMs[] = "1000";

std::vector<std::string> ServerOptions(const std::string& address) {
  const std::pair<std::string, std::string> options[] = {
      {"listening_ports", address},
      {"num_threads", kServerThreads},
      {"request_timeout_ms", kRequestTimeoutMs},
      {"enable_keep_alive", "yes"},
      {"keep_alive_timeout_ms", kKeepAliveTimeoutMs},
      // The path is compared as sent: decoded, "/metrics%00" was "/metrics".
      {"decode_url", "no"},
  };
  std::vector<std::string> flat;
  for (const auto& [name, value] : options) {
    flat.push_back(name);
    flat.push_back(value);
  }
  return flat;
}

// Exactly /metrics (any query): civetweb routes a handler's URI as a
// prefix, so "/metricsx" and "/metrics/x" reached prometheus-cpp's.
int OnlyMetricsPath(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (request != nullptr && request->local_uri_raw != nullptr &&
      std::strcmp(request->local_uri_raw, "/metrics") == 0) {
    return 0;  // civetweb goes on to the exposer's handler
  }
  mg_send_http_error(conn, 404, "%s", "only /metrics is served here\n");
  return 404;
}

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

}  // namespace

bool MetricsEndpointHasIpv6() {
  return (mg_check_feature(MG_FEATURES_IPV6) & MG_FEATURES_IPV6) != 0;
}

absl::Status CheckListenAddress(const std::string& address) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", address, "': ", why,
                     " (want ADDR:PORT, e.g. 127.0.0.1:9477)"));
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return bad("no port");
  std::string host = address.substr(0, colon);
  absl::string_view digits = absl::string_view(address).substr(colon + 1);
  // Digits only: SimpleAtoi took "+1" and " 1" for port 1.
  uint32_t port = 0;
  if (!AllDigits(digits) || digits.size() > 5 ||
      !absl::SimpleAtoi(digits, &port) || port > 65535) {
    return bad("the port is not a number from 0 to 65535");
  }
  unsigned char buf[sizeof(in6_addr)];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    std::string v6 = host.substr(1, host.size() - 2);
    if (inet_pton(AF_INET6, v6.c_str(), buf) != 1) {
      return bad("not an IPv6 address in brackets");
    }
    if (!MetricsEndpointHasIpv6()) {
      return bad(
          "IPv6 is not available: the civetweb library serving /metrics was "
          "built without it (Debian 12's is); use an IPv4 address, or "
          "--metrics_textfile");
    }
    return absl::OkStatus();
  }
  // inet_pton takes exactly four dotted decimals: no names, no spaces.
  if (inet_pton(AF_INET, host.c_str(), buf) != 1) {
    return bad("not an IPv4 address (names are not resolved)");
  }
  return absl::OkStatus();
}

MetricsExport::MetricsExport(const MetricsExportOptions& options,
                             const BuildInfo& build)
    : options_(options), exporter_(build) {}

MetricsExport::~MetricsExport() = default;

absl::StatusOr<std::unique_ptr<MetricsExport>> MetricsExport::Start(
    const MetricsExportOptions& options, const BuildInfo& build) {
  std::unique_ptr<MetricsExport> out(new MetricsExport(options, build));
  if (!options.listen.empty()) {
    if (absl::Status listening = out->Listen(options.listen); !listening.ok()) {
      return listening;
    }
  }
  if (!options.textfile.empty()) {
    absl::StatusOr<AtomicTextfile> file = AtomicTextfile::Open(
        options.textfile, AtomicTextfile::Symlinks::kRefuse);
    if (!file.ok()) {
      return absl::Status(
          file.status().code(),
          absl::StrCat("metrics textfile: ", file.status().message()));
    }
    out->textfile_.emplace(std::move(*file));
    if (absl::Status written = out->WriteTextfile(); !written.ok()) {
      return absl::Status(written.code(), absl::StrCat("metrics textfile: ",
                                                       written.message()));
    }
  }
  return out;
}

absl::Status MetricsExport::Listen(const std::string& address) {
  if (absl::Status checked = CheckListenAddress(address); !checked.ok()) {
    return checked;
  }
  // civetweb reports a bind failure as an exception from the constructor.
  try {
    CivetCallbacks callbacks;  // copied by the server
    callbacks.begin_request = &OnlyMetricsPath;
    exposer_ = std::make_unique<prometheus::Exposer>(ServerOptions(address),
                                                     &callbacks);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("metrics endpoint ", address, ": ", e.what(),
                     " (address in use, or not one of this host's)"));
  }
  exposer_->RegisterCollectable(exporter_.registry());
  std::vector<int> ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? 0 : ports.front();
  LogInfo("metrics: serving http://", address.substr(0, address.rfind(':')),
          ":", port_, "/metrics");
  return absl::OkStatus();
}

absl::Status MetricsExport::WriteTextfile() {
  return textfile_->Write(exporter_.Text());
}

void MetricsExport::Observe(const v1::Metrics& metrics,
                            const v1::AgentStatus& status) {
  exporter_.Observe(metrics, status);
  if (!textfile_) return;
  absl::Status written = WriteTextfile();
  if (!written.ok() && !textfile_failing_) {
    LogWarning("metrics textfile: ", written.message(),
               "; trying again every tick");
  } else if (written.ok() && textfile_failing_) {
    LogInfo("metrics textfile: ", options_.textfile, " written again");
  }
  textfile_failing_ = !written.ok();
}

}  // namespace locus
