#include "agent/ctl/experiment_pool.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/ctl/commands.h"
#include "common/file_read.h"
#include "common/printable.h"
#include "google/protobuf/util/json_util.h"
#include "policy/experiment_pool.h"

namespace locus {
namespace {

// A record larger than this is not one report (the agent's own cap).
constexpr size_t kMaxReportBytes = 16 << 20;

// Another host's file: a regular file of bounded size (a FIFO or a device
// is refused, never waited on). Messages name the path raw: the caller
// escapes them.
absl::StatusOr<v1::ExperimentReport> ReadReport(const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadRegularFile(path, {.max_bytes = kMaxReportBytes});
  if (!text.ok()) return text.status();
  v1::ExperimentReport report;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(*text, &report, options)
           .ok())
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not an experiment report (JSON)"));
  return report;
}

// "+1.7 % [+0.1, +3.2]" of a log ratio and its interval bounds (ratios).
std::string Change(double log_ratio, double low, double high) {
  return absl::StrFormat("%+.1f %% [%+.1f, %+.1f]",
                         (std::exp(log_ratio) - 1) * 100, (low - 1) * 100,
                         (high - 1) * 100);
}

}  // namespace

absl::StatusOr<std::string> FormatPooled(
    const std::vector<std::pair<std::string, v1::ExperimentReport>>& reports) {
  std::vector<experiment::HostResult> hosts;
  std::string rows, left_out;
  // One design's estimand at a time: a switchback's is the whole host on
  // against off, an A/B's treated workers against control ones.
  std::optional<bool> switchback;
  for (const auto& [name, r] : reports) {
    const bool is_switchback = r.design() == "switchback";
    if (switchback.has_value() && *switchback != is_switchback) {
      return absl::InvalidArgumentError(absl::StrCat(
          Printable(name), ": a ", is_switchback ? "switchback" : "A/B",
          " experiment among ", *switchback ? "switchbacks" : "A/B ones",
          ": they estimate different things; pool each design apart"));
    }
    switchback = is_switchback;
    // Only treatment effects measured over their planned duration pool: an
    // A/A run treated nothing, and a stopped one's interval is not the one
    // it planned.
    if (r.aa() || r.state() != v1::EXPERIMENT_STATE_DONE) {
      absl::StrAppend(&left_out, "  ", Printable(name),
                      r.aa() ? ": an A/A run (nothing was treated)\n"
                             : ": it did not run its whole duration\n");
      continue;
    }
    const v1::ExperimentEstimate& w = r.work();
    if (!w.valid() || !(w.se() > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": no estimate with a standard error (",
          w.valid() ? "a record from before they were kept" : w.why_not(),
          ")"));
    }
    const std::string host = r.host().empty() ? name : r.host();
    hosts.push_back({host, w.log_ratio(), w.se()});
    absl::StrAppend(
        &rows,
        absl::StrFormat("  %-24s %-22s %+6.1f %%  SE %.4f  df %.0f\n",
                        Printable(host), Printable(r.id()),
                        (std::exp(w.log_ratio()) - 1) * 100, w.se(), w.df()));
  }
  const experiment::PooledEstimate p = experiment::Pool(hosts);
  if (!p.valid) return absl::InvalidArgumentError(p.why_not);
  return absl::StrCat(
      switchback.value_or(false) ? "host bytes per CPU-second, on / off"
                                 : "work per CPU-second",
      ", pooled over ", p.hosts, " hosts:\n",
      "  fixed effect (one effect everywhere)   ",
      Change(p.fixed, p.fixed_low, p.fixed_high), "\n",
      "  random effects (DerSimonian-Laird)     ",
      Change(p.random, p.random_low, p.random_high),
      " <- act on this one when hosts differ\n",
      absl::StrFormat("  between hosts: I² %.0f %% (Q %.2f on %d df), tau "
                      "%.1f %%, spread of the hosts' estimates %.1f %%\n",
                      p.i2 * 100, p.q, p.hosts - 1, std::sqrt(p.tau2) * 100,
                      p.spread * 100),
      "hosts:\n", rows, left_out.empty() ? "" : "left out:\n", left_out);
}

int RunExperimentPool(const std::vector<std::string>& files, std::ostream& out,
                      std::ostream& err) {
  std::vector<std::pair<std::string, v1::ExperimentReport>> reports;
  for (const std::string& file : files) {
    absl::StatusOr<v1::ExperimentReport> report = ReadReport(file);
    if (!report.ok()) {
      err << "locusctl: " << Printable(std::string(report.status().message()))
          << "\n";
      return kExitFailed;
    }
    reports.emplace_back(file, *std::move(report));
  }
  absl::StatusOr<std::string> text = FormatPooled(reports);
  if (!text.ok()) {
    err << "locusctl: " << Printable(std::string(text.status().message()))
        << "\n";
    return kExitFailed;
  }
  out << *text << std::flush;
  return out ? kExitOk : kExitFailed;
}

}  // namespace locus
