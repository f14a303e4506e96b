#include "agent/act/neighbours/irqbalance_protocol.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Replies of Debian 12's /usr/sbin/irqbalance 1.9.2 (--foreground, 2 CPUs),
// recorded through its socket: started with --banirq=40, after "settings
// ban irqs 38 40", after "settings ban irqs NONE".
constexpr char kBanirq40[] =
    "SLEEP 10 IRQ 40 LOAD 0 DIFF 0 CLASS 0 BANNED 00000000";
constexpr char kBanned38And40[] =
    "SLEEP 10 IRQ 38 LOAD 0 DIFF 0 CLASS 0 IRQ 40 LOAD 0 DIFF 0 CLASS 0 "
    "BANNED 00000000";
constexpr char kNone[] = "SLEEP 10 BANNED 00000000";

TEST(ParseIrqbalanceSetupTest, RecordedReplies) {
  auto one = ParseIrqbalanceSetup(kBanirq40);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->sleep_seconds, 10);
  EXPECT_THAT(one->banned_irqs, ElementsAre(40));
  EXPECT_EQ(one->banned_cpus, "00000000");

  auto two = ParseIrqbalanceSetup(kBanned38And40);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_THAT(two->banned_irqs, ElementsAre(38, 40));

  auto none = ParseIrqbalanceSetup(kNone);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(none->banned_irqs, IsEmpty());
}

TEST(ParseIrqbalanceSetupTest, OtherValuesIrqbalancePrints) {
  // Load and count deltas are 64-bit, the class may be any int, the mask
  // has a comma-separated word per 32 CPUs, the list keeps insertion
  // order, and --banirq=4294967295 is printed as -1.
  auto setup = ParseIrqbalanceSetup(
      "SLEEP 3 IRQ 120 LOAD 18446744073709551615 DIFF 7 CLASS -1 "
      "IRQ 9 LOAD 0 DIFF 0 CLASS 5 IRQ -1 LOAD 0 DIFF 0 CLASS 0 "
      "BANNED 0000000f,ffff0000");
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_EQ(setup->sleep_seconds, 3);
  EXPECT_THAT(setup->banned_irqs, ElementsAre(-1, 9, 120));
  EXPECT_EQ(setup->banned_cpus, "0000000f,ffff0000");
}

TEST(ParseIrqbalanceSetupTest, MalformedRepliesSayWhat) {
  struct Case {
    const char* reply;
    const char* why;
  };
  const Case cases[] = {
      {"", "is empty"},
      {"BANNED 00000000", "does not start with 'SLEEP"},
      {"SLEEP ten BANNED 00000000", "does not start with 'SLEEP"},
      {"SLEEP 0 BANNED 00000000", "does not start with 'SLEEP"},
      {"SLEEP 10", "has no 'BANNED <cpu mask>' at word 3"},
      {"SLEEP 10 BANNED", "has no 'BANNED <cpu mask>'"},
      {"SLEEP 10 BANNED 0000zz00", "has no 'BANNED <cpu mask>'"},
      {"SLEEP 10 IRQ 38 LOAD 0 DIFF 0 BANNED 00000000",
       "no 'IRQ n LOAD n DIFF n CLASS n' entry at word 3"},
      {"SLEEP 10 IRQ x LOAD 0 DIFF 0 CLASS 0 BANNED 00000000",
       "entry at word 3"},
      {"SLEEP 10 IRQ 38 LOAD -1 DIFF 0 CLASS 0 BANNED 00000000",
       "entry at word 3"},
      {"SLEEP 10 IRQ 38 LOAD 0 DIFF 0 CLASS 0 IRQ 38 LOAD 0 DIFF 0 CLASS 0 "
       "BANNED 00000000",
       "lists IRQ 38 twice"},
      {"SLEEP 10 BANNED 00000000 IRQ 38", "goes on after the CPU mask"},
      {"SLEEP 10 STATS BANNED 00000000", "has no 'BANNED <cpu mask>'"},
  };
  for (const Case& c : cases) {
    auto setup = ParseIrqbalanceSetup(c.reply);
    ASSERT_FALSE(setup.ok()) << c.reply;
    EXPECT_EQ(setup.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(setup.status().message(), HasSubstr(c.why)) << c.reply;
  }
}

TEST(ParseIrqbalanceSetupTest, QuotesTheReplyEscaped) {
  auto setup = ParseIrqbalanceSetup("SLEEP 10 \x1b[2J\nBANNED");
  ASSERT_FALSE(setup.ok());
  EXPECT_THAT(setup.status().message(), HasSubstr("\\x1b[2J"));
  EXPECT_THAT(std::string(setup.status().message()),
              ::testing::Not(HasSubstr("\x1b")));
  // A long reply is quoted in part.
  std::string junk(100000, 'x');
  auto long_one = ParseIrqbalanceSetup(junk);
  ASSERT_FALSE(long_one.ok());
  EXPECT_LT(long_one.status().message().size(), 1000u);
}

TEST(FormatBanIrqsTest, ListAndNone) {
  EXPECT_EQ(*FormatBanIrqs({}), "settings ban irqs NONE");
  EXPECT_EQ(*FormatBanIrqs({40, 38}), "settings ban irqs 38 40");
  EXPECT_EQ(*FormatBanIrqs({1}), "settings ban irqs 1");
}

TEST(FormatBanIrqsTest, RefusesIrqZeroAndNegative) {
  auto zero = FormatBanIrqs({0, 38});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.status().message(), HasSubstr("IRQ 0"));
  EXPECT_FALSE(FormatBanIrqs({-1}).ok());
}

TEST(FormatBanIrqsTest, AtMost499BytesNeverCut) {
  // "settings ban irqs " is 18 bytes; 481 bytes of numbers fit.
  std::set<int> irqs;
  std::string numbers;
  for (int irq = 1000; numbers.size() + 5 <= 481; ++irq) {
    irqs.insert(irq);
    numbers += (numbers.empty() ? "" : " ") + std::to_string(irq);
  }
  // 96 four-digit IRQs: 96 * 5 - 1 = 479 bytes of numbers, 497 in all.
  auto fits = FormatBanIrqs(irqs);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(*fits, "settings ban irqs " + numbers);
  EXPECT_LE(fits->size(), kMaxIrqbalanceCommandBytes);

  irqs.insert(9);  // + 2 bytes: 499, the most that fits
  auto exactly = FormatBanIrqs(irqs);
  ASSERT_TRUE(exactly.ok()) << exactly.status();
  EXPECT_EQ(exactly->size(), 499u);

  irqs.insert(8);  // 501
  auto over = FormatBanIrqs(irqs);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(over.status().message(),
              HasSubstr("98 IRQs make a command of 501 bytes"));
}

}  // namespace
}  // namespace locus
