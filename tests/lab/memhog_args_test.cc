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

TEST(MemhogArgsTest, ThpIsASwitchOffByDefault) {
  const std::vector<std::string> base = {"--mb=1", "--touch_node=0",
                                         "--run_node=0"};
  auto plain = ParseMemhogArgs(base);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->thp);

  std::vector<std::string> args = base;
  args.push_back("--thp");
  auto on = ParseMemhogArgs(args);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->thp);

  args.back() = "--thp=false";
  auto off = ParseMemhogArgs(args);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->thp);

  args.back() = "--thp=sometimes";
  EXPECT_THAT(ParseMemhogArgs(args).status().message(),
              HasSubstr("--thp: not a boolean: 'sometimes'"));
}

TEST(MemhogArgsTest, WaitForTakesAPath) {
  auto options = ParseMemhogArgs(
      {"--mb=1", "--touch_node=0", "--run_node=0", "--wait_for=/tmp/go"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->wait_for, "/tmp/go");
  EXPECT_TRUE(ParseMemhogArgs({"--mb=1", "--touch_node=0", "--run_node=0"})
                  ->wait_for.empty());
  EXPECT_THAT(ParseMemhogArgs(
                  {"--mb=1", "--touch_node=0", "--run_node=0", "--wait_for="})
                  .status()
                  .message(),
              HasSubstr("--wait_for: needs a path"));
}

TEST(MemhogArgsTest, BindNodeAndHotMbDefaultToTouchNodeAndAll) {
  auto plain = ParseMemhogArgs({"--mb=600", "--touch_node=0", "--run_node=1"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->bind_node, -1);
  EXPECT_EQ(plain->hot_mb, -1);

  auto options = ParseMemhogArgs({"--mb=600", "--touch_node=0", "--run_node=1",
                                  "--bind_node=2", "--hot_mb=8"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->bind_node, 2);
  EXPECT_EQ(options->hot_mb, 8);
  EXPECT_EQ(ParseMemhogArgs(
                {"--mb=6", "--touch_node=0", "--run_node=1", "--hot_mb=0"})
                ->hot_mb,
            0);
  EXPECT_EQ(ParseMemhogArgs(
                {"--mb=6", "--touch_node=0", "--run_node=1", "--hot_mb=6"})
                ->hot_mb,
            6);
}

TEST(MemhogArgsTest, RejectsABadBindNodeOrHotMb) {
  EXPECT_THAT(ParseMemhogArgs({"--mb=6", "--touch_node=0", "--run_node=1",
                               "--bind_node=-1"})
                  .status()
                  .message(),
              HasSubstr("--bind_node: -1 is outside"));
  EXPECT_THAT(ParseMemhogArgs(
                  {"--mb=6", "--touch_node=0", "--run_node=1", "--bind_node=x"})
                  .status()
                  .message(),
              HasSubstr("--bind_node: not an integer"));
  EXPECT_THAT(ParseMemhogArgs(
                  {"--mb=6", "--touch_node=0", "--run_node=1", "--hot_mb=7"})
                  .status()
                  .message(),
              HasSubstr("--hot_mb: 7 is more than --mb (6)"));
  EXPECT_THAT(ParseMemhogArgs(
                  {"--mb=6", "--touch_node=0", "--run_node=1", "--hot_mb=-1"})
                  .status()
                  .message(),
              HasSubstr("--hot_mb: -1 is outside"));
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

constexpr char kSmaps[] =
    "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/dbus-daemon\n"
    "Size:                328 kB\n"
    "AnonHugePages:      4096 kB\n"
    "VmFlags: rd ex mr mw me dw\n"
    "7f0000000000-7f0000600000 rw-p 00000000 00:00 0 \n"
    "Size:               6144 kB\n"
    "AnonHugePages:      4096 kB\n"
    "VmFlags: rd wr mr mw me ac hg\n"
    "7f0000600000-7f0000800000 rw-p 00000000 00:00 0 \n"
    "AnonHugePages:      2048 kB\n"
    "7fff00000000-7fff00021000 rw-p 00000000 00:00 0 [stack]\n"
    "AnonHugePages:         0 kB\n";

TEST(AnonHugeBytesTest, SumsTheMappingsOverlappingTheRange) {
  auto both = AnonHugeBytes(kSmaps, 0x7f0000000000, 0x7f0000800000);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(*both, 6ull << 20);
  // A range inside one mapping gets that mapping's figure.
  auto first = AnonHugeBytes(kSmaps, 0x7f0000001000, 0x7f0000002000);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 4ull << 20);
  // The end is exclusive: the next mapping starts there.
  auto upto = AnonHugeBytes(kSmaps, 0x7f0000000000, 0x7f0000600000);
  ASSERT_TRUE(upto.ok()) << upto.status();
  EXPECT_EQ(*upto, 4ull << 20);
  auto none = AnonHugeBytes(kSmaps, 0x1000, 0x2000);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, 0u);
}

TEST(AnonHugeBytesTest, NamesTheLineThatDoesNotParse) {
  const std::string smaps = std::string(kSmaps) +
                            "7fff10000000-7fff10200000 rw-p 0 00:00 0\n"
                            "AnonHugePages:    lots kB\n";
  EXPECT_THAT(
      AnonHugeBytes(smaps, 0x7fff10000000, 0x7fff10200000).status().message(),
      HasSubstr("smaps line 14: cannot parse"));
  // The same line outside the range is not read.
  EXPECT_TRUE(AnonHugeBytes(smaps, 0x1000, 0x2000).ok());
}

}  // namespace
}  // namespace locus
