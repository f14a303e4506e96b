// The bytes a client sends on the agent's socket, as the relay meters them
// (agent/api/reset_meter.h): any bytes, split anywhere, count the same
// resets, and a meter trips exactly when they go over its burst.
#include <string_view>

#include "agent/api/reset_meter.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t stride = data[0] % 16 + 1;
  const uint64_t burst = data[1] % 8;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
  locus::RateBucket plenty(0, 1e18);
  locus::ResetMeter whole(0, 1e18);
  LOCUS_FUZZ_CHECK(whole.Feed(bytes, 0, plenty));
  locus::ResetMeter split(0, 1e18);
  for (size_t at = 0; at < bytes.size(); at += stride) {
    LOCUS_FUZZ_CHECK(split.Feed(bytes.substr(at, stride), 0, plenty));
  }
  LOCUS_FUZZ_CHECK(split.resets() == whole.resets());
  locus::ResetMeter bounded(0, static_cast<double>(burst));
  const bool passed = bounded.Feed(bytes, 0, plenty);
  LOCUS_FUZZ_CHECK(passed == (whole.resets() <= burst));
  LOCUS_FUZZ_CHECK(bounded.tripped() == !passed);
  return 0;
}
