// locusd --probe / --observe end to end on the real kernel, as root.
#include <sstream>
#include <string>

#include "agent/main/one_shot.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using testing::ContainsRegex;
using testing::HasSubstr;
using testing::Not;

TEST(OneShotPrivileged, ProbeJsonNamesEverySensorAndFeature) {
  OneShotOptions o;
  o.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunProbe(o, out, err), 0) << err.str();
  for (const char* key :
       {"\"name\":\"fentry\"", "\"name\":\"tp_btf\"", "\"name\":\"raw_tp\"",
        "\"name\":\"iter_task\"", "\"name\":\"task_storage\"",
        "\"sensor\":\"sched\",\"source\":", "\"sensor\":\"numa\",\"source\":",
        "\"sensor\":\"softirq\",\"source\":"}) {
    EXPECT_THAT(out.str(), HasSubstr(key));
  }
}

TEST(OneShotPrivileged, ForcedOffFeatureIsReportedWithItsReason) {
  OneShotOptions o;
  o.disabled_features = {Feature::kTpBtf};
  std::ostringstream out, err;
  ASSERT_EQ(RunProbe(o, out, err), 0) << err.str();
  EXPECT_THAT(out.str(),
              ContainsRegex("\n  sched +raw_tp +ok +tp_btf: needs tp_btf, "
                            "disabled by --disable_feature\n"));
}

TEST(OneShotPrivileged, ObservePrintsOneSnapshot) {
  OneShotOptions o;
  o.observe_seconds = 0.2;
  std::ostringstream out, err;
  ASSERT_EQ(RunObserve(o, out, err), 0) << err.str();
  std::string j = out.str();
  EXPECT_THAT(j, HasSubstr("\"window_ns\":200000000"));
  EXPECT_THAT(j, HasSubstr("\"sources\":{\"sched\":\"tp_btf\""));
  EXPECT_THAT(j, HasSubstr("\"tasks\":[{\"tid\":"));
  EXPECT_THAT(j, HasSubstr("\"NET_RX\":{"));
  EXPECT_THAT(j, HasSubstr("\"drops\":{"));
  // One node here: NUMA says so instead of printing zero faults.
  EXPECT_THAT(j, HasSubstr("\"active\":false"));
  EXPECT_THAT(j, Not(HasSubstr("\"numa_faults\"")));
}

}  // namespace
}  // namespace locus
