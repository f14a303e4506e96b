#include "agent/ctl/experiment_feel_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/ctl/experiment_format.h"
#include "common/printable.h"

namespace locus {
namespace ctl {
namespace {

// "850 us", "12.3 ms", "1.20 s".
std::string FormatMicros(double us) {
  if (us < 1000) return absl::StrFormat("%.0f us", us);
  if (us < 1e6) return absl::StrFormat("%.1f ms", us / 1e3);
  return absl::StrFormat("%.2f s", us / 1e6);
}

std::string Quantiles(const v1::ExperimentArmFigures& f) {
  if (f.requests() == 0) return "no requests seen";
  return absl::StrCat("p50 ", FormatMicros(f.p50_us()), ", p99 ",
                      FormatMicros(f.p99_us()), " over ", f.requests(),
                      " requests");
}

// Per request where requests are seen, else per CPU-second and connection.
std::string Waits(const v1::ExperimentArmFigures& f) {
  std::string out = absl::StrFormat("run-queue wait %.3f s per CPU-second",
                                    f.wait_per_cpu_second());
  if (f.requests() > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("; per request %s waiting, %.2f voluntary + "
                              "%.2f involuntary switches, %.0f bytes",
                              FormatMicros(f.wait_us_per_request()),
                              f.voluntary_switches_per_request(),
                              f.involuntary_switches_per_request(),
                              f.bytes_per_request()));
  } else if (f.connections() > 0) {
    absl::StrAppend(&out, absl::StrFormat("; %.0f bytes per connection",
                                          f.bytes_per_connection()));
  }
  return out;
}

}  // namespace

std::string FormatWhatUsersFeel(const v1::ExperimentReport& r) {
  if (!r.has_treated_figures() && !r.has_control_figures()) return "";
  std::string out;
  absl::StrAppend(&out, "  service time, treated/control:\n");
  absl::StrAppend(&out, "    p50 ", FormatRatioChange(r.service_p50()),
                  "   p99 ", FormatRatioChange(r.service_p99()), "\n");
  absl::StrAppend(&out, "    treated: ", Quantiles(r.treated_figures()), "\n");
  absl::StrAppend(&out, "    control: ", Quantiles(r.control_figures()), "\n");
  if (!r.service_source().empty()) {
    absl::StrAppend(&out, "    source: ", Printable(r.service_source()), "\n");
  }
  absl::StrAppend(&out, "  run-queue wait per CPU-second, treated/control: ",
                  FormatRatioChange(r.run_queue_wait()), "\n");
  absl::StrAppend(&out, "    treated: ", Waits(r.treated_figures()), "\n");
  absl::StrAppend(&out, "    control: ", Waits(r.control_figures()), "\n");
  absl::StrAppend(
      &out,
      absl::StrFormat("  host: the workers sent %.1f MB per second; CPUs %s\n",
                      r.host_bytes_per_second() / 1e6,
                      r.host_cpu_busy() < 0
                          ? "busy: not read"
                          : absl::StrFormat("%.0f %% busy (softirq included)",
                                            r.host_cpu_busy() * 100)));
  if (r.traffic_differs()) {
    absl::StrAppend(&out,
                    "  TRAFFIC DIFFERS: the arms' bytes per request differ by "
                    "more than 10 %: they do not serve alike requests, so "
                    "their latencies compare unlike work\n");
  }
  absl::StrAppend(
      &out,
      absl::StrFormat("  latency guardrail: stops when treated p99 or "
                      "run-queue wait is significantly over %.0f %% of "
                      "control; last look p %.2g\n",
                      (1 + r.latency_margin()) * 100, r.latency_guardrail_p()));
  return out;
}

}  // namespace ctl
}  // namespace locus
