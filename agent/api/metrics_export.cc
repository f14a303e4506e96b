#include "agent/api/metrics_export.h"

#include <arpa/inet.h>

#include <exception>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/api/prometheus_textfile.h"
#include "common/log.h"
#include "prometheus/exposer.h"

namespace locus {

absl::Status CheckListenAddress(const std::string& address) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", address, "': ", why,
                     " (want ADDR:PORT, e.g. 127.0.0.1:9477 or [::1]:9477)"));
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return bad("no port");
  std::string host = address.substr(0, colon);
  uint32_t port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port > 65535) {
    return bad("the port is not a number from 0 to 65535");
  }
  unsigned char buf[sizeof(in6_addr)];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    std::string v6 = host.substr(1, host.size() - 2);
    if (inet_pton(AF_INET6, v6.c_str(), buf) == 1) return absl::OkStatus();
    return bad("not an IPv6 address in brackets");
  }
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
    exposer_ = std::make_unique<prometheus::Exposer>(address, 2);
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
  return WriteTextfileAtomically(options_.textfile, exporter_.Text());
}

void MetricsExport::Observe(const v1::Metrics& metrics,
                            const v1::AgentStatus& status) {
  exporter_.Observe(metrics, status);
  if (options_.textfile.empty()) return;
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
