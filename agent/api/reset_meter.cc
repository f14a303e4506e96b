#include "agent/api/reset_meter.h"

#include <algorithm>

namespace locus {

bool ResetMeter::Feed(std::string_view bytes, uint64_t now_ns,
                      RateBucket& shared) {
  if (tripped_) return false;
  size_t at = 0;
  while (at < bytes.size()) {
    if (preface_left_ > 0) {
      size_t n = std::min(preface_left_, bytes.size() - at);
      preface_left_ -= n;
      at += n;
    } else if (payload_left_ > 0) {
      uint64_t n = std::min<uint64_t>(payload_left_, bytes.size() - at);
      payload_left_ -= n;
      at += n;
    } else {
      size_t n = std::min(kHeaderBytes - header_have_, bytes.size() - at);
      std::copy_n(bytes.data() + at, n, header_ + header_have_);
      header_have_ += n;
      at += n;
      if (header_have_ < kHeaderBytes) break;
      header_have_ = 0;
      payload_left_ = (uint64_t{header_[0]} << 16) |
                      (uint64_t{header_[1]} << 8) | header_[2];
      if (header_[3] != kRstStream) continue;
      ++resets_;
      // Both buckets are asked, so a connection under its own budget still
      // pays into the shared one.
      const bool own = own_.Take(now_ns);
      if (!(shared.Take(now_ns) && own)) {
        tripped_ = true;
        return false;
      }
    }
  }
  return true;
}

}  // namespace locus
