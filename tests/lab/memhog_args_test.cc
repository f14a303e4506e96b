#include "tests/lab/memhog_args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

TEST(MemhogArgsTest, ParsesEveryFlag) {
  auto options = ParseMemhogArgs(
      {"--mb=600", "--touch_node=1", "--run_node=0", "--report_ms=50"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->mb, 600u);
  EXPECT_EQ(options->touch_node, 1);
  EXPECT_EQ(options->run_node, 0);
  EXPECT_EQ(options->report_ms, 50);
}

TEST(MemhogArgsTest, ReportPeriodDefaultsTo200ms) {
  auto options = ParseMemhogArgs({"--run_node=0", "--mb=1", "--touch_node=0"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->report_ms, 200);
}

TEST(MemhogArgsTest, NamesTheMissingFlag) {
  EXPECT_THAT(
      ParseMemhogArgs({"--touch_node=1", "--run_node=0"}).status().message(),
      HasSubstr("--mb: required"));
  EXPECT_THAT(ParseMemhogArgs({"--mb=1", "--run_node=0"}).status().message(),
              HasSubstr("--touch_node: required"));
  EXPECT_THAT(ParseMemhogArgs({"--mb=1", "--touch_node=0"}).status().message(),
              HasSubstr("--run_node: required"));
}

TEST(MemhogArgsTest, RejectsBadValues) {
  const std::vector<std::vector<std::string>> bad = {
      {"--mb=0", "--touch_node=0", "--run_node=0"},
      {"--mb=-5", "--touch_node=0", "--run_node=0"},
      {"--mb=1x", "--touch_node=0", "--run_node=0"},
      {"--mb=2000000000", "--touch_node=0", "--run_node=0"},
      {"--mb=1", "--touch_node=-1", "--run_node=0"},
      {"--mb=1", "--touch_node=0", "--run_node=0", "--report_ms=-1"},
      {"--mb", "--touch_node=0", "--run_node=0"},
      {"--mb=1", "--touch_node=0", "--run_node=0", "--size=4"},
      {"--mb=1", "--touch_node=0", "--run_node=0", "extra"},
  };
  for (const auto& args : bad) {
    auto options = ParseMemhogArgs(args);
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument)
        << args[0] << " ... " << args.back();
  }
}

}  // namespace
}  // namespace locus
