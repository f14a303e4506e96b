#include "agent/api/reset_meter.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/agent/http2_frames.h"

namespace locus {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

std::string Preface() { return std::string(kHttp2Preface) + Frame(kSettings); }

TEST(ResetMeter, ResetsWithinTheBurstPassAndTheNextTrips) {
  ResetMeter meter(/*per_second=*/1, /*burst=*/4);
  RateBucket shared(100, 100);
  std::string bytes = Preface();
  for (uint32_t id = 1; id <= 8; id += 2) bytes += Headers(id) + RstStream(id);
  EXPECT_TRUE(meter.Feed(bytes, 0, shared));
  EXPECT_EQ(meter.resets(), 4u);
  EXPECT_FALSE(meter.Feed(Headers(9) + RstStream(9), 0, shared));
  EXPECT_TRUE(meter.tripped());
  // Tripped for good, whatever follows.
  EXPECT_FALSE(meter.Feed(Frame(kSettings), 100 * kSecond, shared));
}

TEST(ResetMeter, ASlowResetterIsNeverCutOff) {
  ResetMeter meter(/*per_second=*/2, /*burst=*/2);
  RateBucket shared(100, 100);
  ASSERT_TRUE(meter.Feed(Preface(), 0, shared));
  for (uint32_t i = 0; i < 100; ++i) {
    uint32_t id = 2 * i + 1;
    EXPECT_TRUE(meter.Feed(Headers(id) + RstStream(id), i * kSecond, shared))
        << "reset " << i;
  }
  EXPECT_EQ(meter.resets(), 100u);
}

// Frames split at every byte boundary count the same; a payload that holds
// the RST_STREAM type byte is not a frame header.
TEST(ResetMeter, FramesSplitAnywhereAndPayloadBytesAreNotMistakenForFrames) {
  std::string fake_header(9, '\0');
  fake_header[3] = 3;  // RST_STREAM's type, inside a DATA payload
  std::string stream =
      Preface() + Frame(kData, 0, 1, fake_header + fake_header);
  for (uint32_t id = 1; id <= 5; id += 2) stream += Headers(id) + RstStream(id);
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    ResetMeter meter(0, 3);
    RateBucket shared(0, 100);
    EXPECT_TRUE(meter.Feed(stream.substr(0, cut), 0, shared)) << cut;
    EXPECT_TRUE(meter.Feed(stream.substr(cut), 0, shared)) << cut;
    EXPECT_EQ(meter.resets(), 3u) << "cut at " << cut;
  }
  for (size_t step = 1; step <= 9; ++step) {
    ResetMeter meter(0, 3);
    RateBucket shared(0, 100);
    for (size_t at = 0; at < stream.size(); at += step) {
      ASSERT_TRUE(meter.Feed(stream.substr(at, step), 0, shared));
    }
    EXPECT_EQ(meter.resets(), 3u) << "fed " << step << " bytes at a time";
  }
}

// Connections each within their own budget still share one: together they
// cannot queue more than the shared burst.
TEST(ResetMeter, TheSharedBucketBoundsManyConnectionsTogether) {
  RateBucket shared(/*per_second=*/0, /*burst=*/10);
  int tripped = 0;
  uint64_t passed = 0;
  for (int c = 0; c < 8; ++c) {
    ResetMeter meter(/*per_second=*/0, /*burst=*/4);
    std::string bytes = Preface();
    for (uint32_t id = 1; id <= 7; id += 2)
      bytes += Headers(id) + RstStream(id);
    if (meter.Feed(bytes, 0, shared)) {
      passed += meter.resets();
    } else {
      ++tripped;
    }
  }
  EXPECT_EQ(passed, 8u);  // two whole connections of 4
  EXPECT_EQ(tripped, 6);
}

}  // namespace
}  // namespace locus
