// The NUMA sensor's read path on the real kernel, for each source. This host
// has one node and balancing off, so the sensor is made active by its
// options (two nodes, balancing on): the kernel takes no hinting faults, but
// every source must still load, read and say what it read.
#include <set>
#include <string>

#include "agent/sensors/bpf_sensors.h"
#include "agent/sensors/libbpf_prober.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

class NumaSensorPrivileged : public testing::TestWithParam<const char*> {};

TEST_P(NumaSensorPrivileged, ActiveSensorReadsItsSource) {
  LibbpfProber prober;
  absl::StatusOr<std::set<Feature>> off = ParseFeatureList(GetParam());
  ASSERT_TRUE(off.ok()) << off.status();
  FeatureSet features(&prober, *off);
  SourcePlan plan = ChooseSources(features);
  const bool fentry = plan.numa == NumaSource::kFentry;
  SensorOptions o;
  o.cpu_node = {0, 1};
  o.num_nodes = 2;
  o.numa_balancing = true;
  absl::StatusOr<std::unique_ptr<SensorSource>> s = OpenBpfSensors(o, plan);
  ASSERT_TRUE(s.ok()) << s.status();
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<SensorReading> r = (*s)->Read();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->numa_active);
    EXPECT_EQ(r->numa_status,
              std::string("active (") + SourceName(plan.numa) + ")");
    EXPECT_EQ(r->sources.numa, SourceName(plan.numa));
    EXPECT_EQ(r->numa_kind, fentry ? NumaFaultKind::kPagesExact
                                   : NumaFaultKind::kKernelDecayed);
    EXPECT_EQ(r->drops.count("numa.procfs_unreadable"),
              plan.numa == NumaSource::kProcfs ? 1u : 0u);
    EXPECT_EQ(r->drops.count("numa.lru_evicted"), fentry ? 1u : 0u);
    for (const TaskCounters& t : r->tasks) {
      if (t.numa_faults.empty()) continue;
      EXPECT_EQ(t.numa_faults.size(), 2u) << "tid " << t.tid;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sources, NumaSensorPrivileged,
                         testing::Values("", "fentry", "fentry,iter_task"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name = *info.param ? info.param : "all";
                           for (char& c : name)
                             if (c == ',') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace locus
