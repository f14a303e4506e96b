// The arithmetic of sampled events: the BPF programs time one event in a
// power of two of them, and the agent scales what they timed up to all.
#ifndef LOCUS_AGENT_SENSORS_SAMPLING_H_
#define LOCUS_AGENT_SENSORS_SAMPLING_H_

#include <cstdint>

namespace locus {

// A sampling period as the programs take it: a power of two (their test is
// a mask), at most 2^30.
inline uint32_t PowerOfTwoAtLeast(uint32_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 30)) p <<= 1;
  return p;
}

// Time of `count` events estimated from `sampled_count` of them, which
// took `sampled_ns`.
inline uint64_t Scale(uint64_t sampled_ns, uint64_t count,
                      uint64_t sampled_count) {
  if (sampled_count == 0) return 0;
  return static_cast<uint64_t>(static_cast<long double>(sampled_ns) * count /
                               sampled_count);
}

// A charge from the events seen scaled to all of them, `traced` being the
// share seen (SensorReading::softirq_traced).
inline uint64_t UnseenToo(uint64_t ns, double traced) {
  return static_cast<uint64_t>(static_cast<double>(ns) / traced);
}

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_SAMPLING_H_
