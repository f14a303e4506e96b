#include "agent/sensors/feature_probe.h"

#include <string.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace locus {
namespace {

constexpr absl::string_view kNames[kNumFeatures] = {
    "fentry", "tp_btf", "raw_tp", "iter_task", "task_storage",
};

// strerrorname_np needs glibc 2.32; Debian 12 has 2.36.
std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return absl::StrCat(name ? name : absl::StrCat("errno ", err), " (",
                      strerror(err), ")");
}

}  // namespace

absl::string_view FeatureName(Feature f) {
  int i = static_cast<int>(f);
  if (i < 0 || i >= kNumFeatures) return "unknown";
  return kNames[i];
}

std::optional<Feature> FeatureFromName(absl::string_view name) {
  for (int i = 0; i < kNumFeatures; ++i) {
    if (kNames[i] == name) return static_cast<Feature>(i);
  }
  return std::nullopt;
}

absl::StatusOr<std::set<Feature>> ParseFeatureList(absl::string_view csv) {
  std::set<Feature> out;
  for (absl::string_view part : absl::StrSplit(csv, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    std::optional<Feature> f = FeatureFromName(part);
    if (!f) {
      std::string known;
      for (absl::string_view n : kNames) absl::StrAppend(&known, " ", n);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown feature '", part, "'; known:", known));
    }
    out.insert(*f);
  }
  return out;
}

FeatureSet::FeatureSet(KernelProber* prober, std::set<Feature> forced_off)
    : prober_(prober), forced_off_(std::move(forced_off)) {}

const ProbeResult& FeatureSet::Get(Feature f) {
  std::optional<ProbeResult>& slot = cache_[static_cast<int>(f)];
  if (!slot) {
    if (forced_off_.count(f)) {
      ProbeResult off;
      off.forced_off = true;
      slot = off;
    } else {
      slot = prober_->Probe(f);
    }
  }
  return *slot;
}

std::string FeatureSet::Explain(Feature f) {
  const ProbeResult& r = Get(f);
  if (r.available) return "available";
  if (r.forced_off) return "disabled by --disable_feature";
  std::string out = r.error ? ErrnoName(r.error) : "unavailable";
  if (!r.detail.empty()) absl::StrAppend(&out, " at ", r.detail);
  return out;
}

}  // namespace locus
