#include "agent/api/metrics_export.h"

#include <arpa/inet.h>

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/api/listen_sockets.h"
#include "agent/api/metrics_http.h"
#include "common/log.h"

namespace locus {

namespace {

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

}  // namespace

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
  absl::StatusOr<TcpListener> listener = ListenTcp(address);
  if (!listener.ok()) {
    return absl::UnavailableError(
        absl::StrCat("metrics endpoint: ", listener.status().message()));
  }
  port_ = listener->port;
  absl::StatusOr<std::unique_ptr<MetricsHttp>> http =
      MetricsHttp::Start(std::move(listener->fd), exporter_.registry());
  if (!http.ok()) return http.status();
  http_ = std::move(*http);
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
