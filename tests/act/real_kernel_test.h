// The fixture of tests that drive the actuators against this machine's
// kernel: root, at least two online CPUs, a journal in a scratch tree.
#ifndef LOCUS_TESTS_ACT_REAL_KERNEL_TEST_H_
#define LOCUS_TESTS_ACT_REAL_KERNEL_TEST_H_

#include <unistd.h>

#include <memory>
#include <vector>

#include "agent/act/actuators.h"
#include "gtest/gtest.h"
#include "tests/common/process_util.h"
#include "tests/host/temp_tree.h"

namespace locus {

class RealKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    online_ = OnlineCpus();
    if (online_.size() < 2) GTEST_SKIP() << "needs 2 online CPUs";
    options_.journal.path = tree_.root() + "/lib/locus/journal";
  }

  // Actuators over `ops`, or nullptr (the failure recorded).
  std::unique_ptr<Actuators> MakeWith(KernelOps ops) {
    auto actuators = Actuators::Create(options_, std::move(ops));
    EXPECT_TRUE(actuators.ok()) << actuators.status();
    return actuators.ok() ? *std::move(actuators) : nullptr;
  }

  TempTree tree_;
  ActuatorOptions options_;
  std::vector<int> online_;
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_REAL_KERNEL_TEST_H_
