// Stands between each client connection and gRPC: the client's socket stays
// here, gRPC gets one end of a socketpair, and one thread relays the bytes
// both ways, metering the client's stream resets (reset_meter.h) on the way
// in. gRPC 1.51 has no bound on streams reset as soon as opened; this is it.
//
// Each connection costs three descriptors (the client's, and both ends of
// the pair), which LimitsForNofile counts. The relay holds at most
// `buffer_bytes` per direction and stops reading a side whose peer does not
// read, so a client that stops reading still stops gRPC's writes as before.
#ifndef LOCUS_AGENT_API_FRAME_GUARD_H_
#define LOCUS_AGENT_API_FRAME_GUARD_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/api/reset_meter.h"
#include "common/unique_fd.h"

namespace locus {

struct FrameGuardOptions {
  // Stream resets a connection may send: a burst, then a rate.
  double resets_per_second = 16;
  double reset_burst = 32;
  // All connections together, so that many connections each under their
  // own budget cannot queue more calls than a handful of bursts.
  double total_resets_per_second = 64;
  double total_reset_burst = 128;
  size_t buffer_bytes = 16 * 1024;  // per direction and connection
  // Send buffer of the pair's end gRPC writes to: what waits there is stale
  // for a reader that paused, so it stays small.
  int pair_send_buffer_bytes = 32 * 1024;
};

class FrameGuard {
 public:
  static absl::StatusOr<std::unique_ptr<FrameGuard>> Start(
      FrameGuardOptions options);
  ~FrameGuard();  // Stop()
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;

  // The end of a new socketpair that stands for a client: hand it to gRPC,
  // then Relay the client to its other end. Apart so that the caller can
  // admit (or refuse) the connection by the fd gRPC will hold.
  struct Pair {
    UniqueFd grpc_end;
    UniqueFd relay_end;
  };
  absl::StatusOr<Pair> NewPair() const;
  // Starts relaying between `client` and `relay_end` (both taken). `peer`
  // names the client in the log when it is cut off.
  void Relay(UniqueFd client, UniqueFd relay_end, std::string peer);

  // Ends the relay thread and closes every connection it held. Idempotent.
  void Stop();

  // Connections closed for resetting streams too fast, since start.
  uint64_t cut_off() const { return cut_off_.load(); }

 private:
  struct Conn;
  explicit FrameGuard(FrameGuardOptions options);
  absl::Status Init();
  void Loop();
  void AdoptPending();
  // Moves what can move on `c`; false when it is done and may go.
  bool Pump(Conn& c);
  void Watch(Conn& c);

  const FrameGuardOptions options_;
  UniqueFd epoll_;
  UniqueFd wake_;  // eventfd: a new connection, or Stop
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Conn>> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Conn>> conns_;  // relay thread only
  RateBucket shared_;                         // relay thread only
  std::atomic<uint64_t> cut_off_{0};
  uint64_t last_cut_log_ns_ = 0;
  std::atomic<bool> stopped_{false};
  std::thread thread_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_FRAME_GUARD_H_
