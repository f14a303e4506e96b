#include "agent/core/mode.h"

#include <string>

#include "absl/flags/marshalling.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

TEST(ModeTest, NamesRoundTrip) {
  for (Mode mode : {v1::Policy::MODE_UNSPECIFIED, v1::Policy::MODE_ENFORCE,
                    v1::Policy::MODE_DRY_RUN}) {
    EXPECT_EQ(ParseModeName(ModeName(mode)), mode);
  }
  EXPECT_EQ(ModeName(v1::Policy::MODE_DRY_RUN), "dry_run");
  EXPECT_EQ(ModeName(v1::Policy::MODE_ENFORCE), "enforce");
}

TEST(ModeTest, ParsesAsAFlag) {
  Mode mode = v1::Policy::MODE_UNSPECIFIED;
  std::string error;
  ASSERT_TRUE(absl::ParseFlag("dry_run", &mode, &error)) << error;
  EXPECT_EQ(mode, v1::Policy::MODE_DRY_RUN);
  ASSERT_TRUE(absl::ParseFlag("", &mode, &error)) << error;
  EXPECT_EQ(mode, v1::Policy::MODE_UNSPECIFIED) << "empty: the policy's";
  EXPECT_EQ(absl::UnparseFlag(v1::Policy::MODE_ENFORCE), "enforce");
}

TEST(ModeTest, RefusesOtherSpellingsSayingWhichAreValid) {
  Mode mode = v1::Policy::MODE_ENFORCE;
  std::string error;
  for (const char* bad : {"dry-run", "DRY_RUN", "MODE_DRY_RUN", "off"}) {
    EXPECT_FALSE(absl::ParseFlag(bad, &mode, &error)) << bad;
    EXPECT_THAT(error, HasSubstr("must be enforce or dry_run"));
    EXPECT_THAT(error, HasSubstr(bad));
  }
  EXPECT_EQ(mode, v1::Policy::MODE_ENFORCE) << "unchanged";
}

TEST(ModeTest, APolicyNamingNoModeEnforces) {
  v1::Policy policy;
  EXPECT_EQ(PolicyMode(policy), v1::Policy::MODE_ENFORCE);
  policy.set_mode(v1::Policy::MODE_DRY_RUN);
  EXPECT_EQ(PolicyMode(policy), v1::Policy::MODE_DRY_RUN);
  policy.set_mode(v1::Policy::MODE_ENFORCE);
  EXPECT_EQ(PolicyMode(policy), v1::Policy::MODE_ENFORCE);
}

}  // namespace
}  // namespace locus
