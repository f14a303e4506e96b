// Kernel BPF feature probing as one cached object (the bpftrace BPFfeature
// habit): each feature is probed at most once, any of them can be forced off
// so that every fallback path runs on every kernel, and the outcome (with the
// errno that rejected a feature) is printable for `locusd --probe`.
#ifndef LOCUS_AGENT_SENSORS_FEATURE_PROBE_H_
#define LOCUS_AGENT_SENSORS_FEATURE_PROBE_H_

#include <array>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

enum class Feature : int {
  kFentry = 0,   // fentry on task_numa_fault
  kTpBtf,        // BTF-typed raw tracepoints (tp_btf/)
  kRawTp,        // raw tracepoints (raw_tp/)
  kIterTask,     // task iterator programs (iter/task)
  kTaskStorage,  // BPF_MAP_TYPE_TASK_STORAGE
  kNumFeatures,
};
inline constexpr int kNumFeatures = static_cast<int>(Feature::kNumFeatures);

// "fentry", "tp_btf", "raw_tp", "iter_task", "task_storage".
absl::string_view FeatureName(Feature f);
std::optional<Feature> FeatureFromName(absl::string_view name);

// Parses a --disable_feature value: comma-separated names, blanks ignored.
absl::StatusOr<std::set<Feature>> ParseFeatureList(absl::string_view csv);

struct ProbeResult {
  bool available = false;
  bool forced_off = false;  // disabled by the operator; never probed
  int error = 0;            // errno that rejected it, 0 when available
  std::string detail;       // what failed ("load", "attach", ...)
};

// Tries one feature against the kernel. Real implementation: LibbpfProber
// (libbpf_prober.h); tests use a fake.
class KernelProber {
 public:
  virtual ~KernelProber() = default;
  virtual ProbeResult Probe(Feature f) = 0;
};

class FeatureSet {
 public:
  // `prober` must outlive this object.
  FeatureSet(KernelProber* prober, std::set<Feature> forced_off);

  // Probes on first use, then answers from the cache.
  const ProbeResult& Get(Feature f);
  bool Has(Feature f) { return Get(f).available; }
  // "available", "disabled by --disable_feature", or "EPERM (...) at load".
  std::string Explain(Feature f);

 private:
  KernelProber* prober_;
  std::set<Feature> forced_off_;
  std::array<std::optional<ProbeResult>, kNumFeatures> cache_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_FEATURE_PROBE_H_
