// Counts the RST_STREAM frames a client sends on an HTTP/2 connection, as
// its bytes pass, against a rate.
//
// Why: a stream opened and reset at once ("rapid reset", CVE-2023-44487)
// costs the client two small frames and costs gRPC 1.51 a queued call of
// about 10 kB until a handler thread picks it up, with no limit on how many
// wait. A real client resets a stream when it gives up on a call (a
// deadline, ^C on `locusctl watch`): a few a second at most. A connection
// that resets faster than its budget, or while every connection together
// is over theirs, is closed before the frame that went over reaches gRPC.
#ifndef LOCUS_AGENT_API_RESET_METER_H_
#define LOCUS_AGENT_API_RESET_METER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/rate_bucket.h"

namespace locus {

class ResetMeter {
 public:
  ResetMeter(double per_second, double burst) : own_(per_second, burst) {}

  // Scans the next bytes the client sent, at time `now_ns`. False once an
  // RST_STREAM frame found this connection's bucket or `shared` (every
  // connection's) empty: the connection is to be closed before any of these
  // bytes pass, and the meter stays tripped.
  bool Feed(std::string_view bytes, uint64_t now_ns, RateBucket& shared);
  bool tripped() const { return tripped_; }
  uint64_t resets() const { return resets_; }

 private:
  // The 24-byte client preface, then frames: a 9-byte header (length 24
  // bits, type, flags, stream id) and `length` bytes of payload.
  static constexpr size_t kPrefaceBytes = 24;
  static constexpr size_t kHeaderBytes = 9;
  static constexpr uint8_t kRstStream = 3;

  RateBucket own_;
  size_t preface_left_ = kPrefaceBytes;
  unsigned char header_[kHeaderBytes] = {};
  size_t header_have_ = 0;
  uint64_t payload_left_ = 0;
  uint64_t resets_ = 0;
  bool tripped_ = false;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_RESET_METER_H_
