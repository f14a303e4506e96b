// locusd's one-shot modes, --probe and --observe: everything but flag
// parsing, so main stays thin and the modes are callable from tests.
#ifndef LOCUS_AGENT_MAIN_ONE_SHOT_H_
#define LOCUS_AGENT_MAIN_ONE_SHOT_H_

#include <cstdint>
#include <ostream>
#include <set>
#include <string>

#include "agent/sensors/feature_probe.h"
#include "agent/sensors/sensor_source.h"
#include "common/defaults.h"

namespace locus {

struct OneShotOptions {
  std::string sysfs_root = kDefaultSysfsRoot;
  std::string procfs_root = kDefaultProcfsRoot;
  std::set<Feature> disabled_features;
  bool json = false;
  double observe_seconds = 0;
  // Sampling knobs; the roots and topology are filled in from the host.
  SensorOptions sensors;
};

// Both return the process exit code: 0 on success, 1 when the process lacks
// a capability (named on `err`) or the sensors fail to load.
int RunProbe(const OneShotOptions& options, std::ostream& out,
             std::ostream& err);
int RunObserve(const OneShotOptions& options, std::ostream& out,
               std::ostream& err);

}  // namespace locus

#endif  // LOCUS_AGENT_MAIN_ONE_SHOT_H_
