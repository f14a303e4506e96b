// The layout checks are static_asserts in agent/sensors/abi.h: this file
// failing to compile is the test. The runtime checks pin what C++ code relies
// on.
#include "agent/sensors/abi.h"

#include <type_traits>

#include "gtest/gtest.h"

namespace locus {
namespace {

TEST(AbiTest, RecordsAreTriviallyCopyable) {
  // Records are memcpy'd out of iterator output and map values.
  EXPECT_TRUE(std::is_trivially_copyable_v<locus_sched_task>);
  EXPECT_TRUE(std::is_trivially_copyable_v<locus_numa_iter_task>);
  EXPECT_TRUE(std::is_trivially_copyable_v<locus_numa_fentry_task>);
  EXPECT_TRUE(std::is_trivially_copyable_v<locus_softirq_task>);
  EXPECT_TRUE(std::is_trivially_copyable_v<locus_softirq_cpu>);
  EXPECT_TRUE(std::is_trivially_copyable_v<locus_irq_stat>);
}

TEST(AbiTest, SizesAsTheKernelSeesThem) {
  EXPECT_EQ(sizeof(locus_sched_task), 200u);
  EXPECT_EQ(sizeof(locus_numa_iter_task), 320u);
  EXPECT_EQ(sizeof(locus_softirq_cpu), 320u);
  EXPECT_EQ(sizeof(locus_softirq_task), 40u);
  EXPECT_EQ(LOCUS_MAX_CPUS & (LOCUS_MAX_CPUS - 1), 0)
      << "sched.bpf.c masks CPU ids with LOCUS_MAX_CPUS - 1";
}

}  // namespace
}  // namespace locus
