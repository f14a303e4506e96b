// Where the Prometheus registry goes: a /metrics endpoint (metrics_http.h)
// and/or a textfile for node_exporter, both optional and off by default.
// Fed once per tick by the daemon's tick publisher.
#ifndef LOCUS_AGENT_API_METRICS_EXPORT_H_
#define LOCUS_AGENT_API_METRICS_EXPORT_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/api/prometheus_exporter.h"
#include "agent/api/prometheus_textfile.h"
#include "locus/v1/agent.pb.h"

namespace locus {

class MetricsHttp;

struct MetricsExportOptions {
  // ADDR:PORT to serve /metrics on: an IPv4 address or a bracketed IPv6
  // one ("[::]" takes IPv4 too), and a port (0: any free one, for tests).
  // Empty: no endpoint.
  std::string listen;
  // File rewritten after every tick; no directory of its path may be a
  // symlink. Empty: none.
  std::string textfile;

  bool enabled() const { return !listen.empty() || !textfile.empty(); }
};

// Checks an ADDR:PORT for `listen`; the error says what is wrong with it.
// Strict: decimal digits for the port and nothing around the address, so
// that what is served is what was written: no names, no zone ("%lo").
absl::Status CheckListenAddress(const std::string& address);

class MetricsExport {
 public:
  // Binds the endpoint and writes the textfile once, so that an address in
  // use or an unwritable directory is an error at start, not a log line
  // at every tick.
  static absl::StatusOr<std::unique_ptr<MetricsExport>> Start(
      const MetricsExportOptions& options, const BuildInfo& build);
  ~MetricsExport();

  // One tick: updates the registry and rewrites the textfile. A failed
  // write is logged (once until it works again) and the agent goes on.
  void Observe(const v1::Metrics& metrics, const v1::AgentStatus& status);

  // The port the endpoint listens on (the one chosen for port 0); 0 when
  // there is no endpoint.
  int port() const { return port_; }
  const PrometheusExporter& exporter() const { return exporter_; }

 private:
  MetricsExport(const MetricsExportOptions& options, const BuildInfo& build);
  absl::Status Listen(const std::string& address);
  absl::Status WriteTextfile();

  const MetricsExportOptions options_;
  PrometheusExporter exporter_;
  std::unique_ptr<MetricsHttp> http_;
  std::optional<AtomicTextfile> textfile_;  // held open from Start
  int port_ = 0;
  bool textfile_failing_ = false;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_METRICS_EXPORT_H_
