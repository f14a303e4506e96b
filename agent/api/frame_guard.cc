#include "agent/api/frame_guard.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

constexpr int kMaxEvents = 64;
constexpr uint64_t kCutLogEveryNs = 1'000'000'000;

// What a side of a connection asked epoll for, kept to skip no-op updates.
struct Interest {
  uint32_t events = 0;
  bool added = false;
};

}  // namespace

struct FrameGuard::Conn {
  // One direction: bytes read from `from`, waiting to be written to `to`.
  struct Flow {
    std::string bytes;
    bool eof = false;   // `from` has nothing more to say
    bool shut = false;  // and `to` was told so (shutdown SHUT_WR)
  };
  Conn(UniqueFd c, UniqueFd r, std::string p, const FrameGuardOptions& o)
      : client(std::move(c)),
        relay(std::move(r)),
        peer(std::move(p)),
        meter(o.resets_per_second, o.reset_burst) {}
  // gRPC has closed its end, and what it wrote last was offered to the
  // client once: nothing more can happen here, and a client that never
  // reads or closes must not keep its descriptors past gRPC's (the
  // connection table counts gRPC's).
  bool done() const { return out.eof; }

  UniqueFd client;
  UniqueFd relay;  // gRPC's end of the pair is the other one
  std::string peer;
  ResetMeter meter;
  Flow in;   // client -> gRPC, metered
  Flow out;  // gRPC -> client
  Interest client_interest, relay_interest;
  bool dead = false;
};

FrameGuard::FrameGuard(FrameGuardOptions options)
    : options_(options),
      shared_(options.total_resets_per_second, options.total_reset_burst) {}

absl::StatusOr<std::unique_ptr<FrameGuard>> FrameGuard::Start(
    FrameGuardOptions options) {
  std::unique_ptr<FrameGuard> guard(new FrameGuard(options));
  RETURN_IF_ERROR(guard->Init());
  return guard;
}

absl::Status FrameGuard::Init() {
  epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) return LastErrnoStatus("epoll_create1");
  wake_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) return LastErrnoStatus("eventfd");
  epoll_event ev = {};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev) != 0) {
    return LastErrnoStatus("epoll_ctl");
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

FrameGuard::~FrameGuard() { Stop(); }

void FrameGuard::Stop() {
  if (stopped_.exchange(true)) return;
  if (thread_.joinable()) {
    (void)!eventfd_write(wake_.get(), 1);
    thread_.join();
  }
  conns_.clear();
  absl::MutexLock lock(&mu_);
  pending_.clear();
}

absl::StatusOr<FrameGuard::Pair> FrameGuard::NewPair() const {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
                 ends) != 0) {
    return LastErrnoStatus("socketpair");
  }
  Pair pair{UniqueFd(ends[0]), UniqueFd(ends[1])};
  setsockopt(pair.grpc_end.get(), SOL_SOCKET, SO_SNDBUF,
             &options_.pair_send_buffer_bytes,
             sizeof(options_.pair_send_buffer_bytes));
  return pair;
}

void FrameGuard::Relay(UniqueFd client, UniqueFd relay_end, std::string peer) {
  auto conn = std::make_unique<Conn>(std::move(client), std::move(relay_end),
                                     std::move(peer), options_);
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;  // closes both
    pending_.push_back(std::move(conn));
  }
  (void)!eventfd_write(wake_.get(), 1);
}

void FrameGuard::Loop() {
  epoll_event events[kMaxEvents];
  while (!stopped_) {
    int n = epoll_wait(epoll_.get(), events, kMaxEvents, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      LogError(ErrnoMessage("agent socket relay: epoll_wait", errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      auto* c = static_cast<Conn*>(events[i].data.ptr);
      if (c == nullptr) {
        eventfd_t unused;
        (void)!eventfd_read(wake_.get(), &unused);
        AdoptPending();
      } else if (!c->dead) {
        // A hang-up or error on either side ends the connection, after
        // what can still move has been offered once: the client is gone,
        // or gRPC closed its end (whose last bytes may still be waiting).
        const bool hung_up = events[i].events & (EPOLLHUP | EPOLLERR);
        c->dead = !Pump(*c) || hung_up;
        if (!c->dead) Watch(*c);
      }
    }
    // Closing the descriptors takes them out of the epoll set.
    std::erase_if(conns_, [](const auto& c) { return c->dead; });
  }
}

void FrameGuard::AdoptPending() {
  std::vector<std::unique_ptr<Conn>> fresh;
  {
    absl::MutexLock lock(&mu_);
    fresh.swap(pending_);
  }
  for (auto& c : fresh) {
    Watch(*c);
    conns_.push_back(std::move(c));
  }
}

namespace {

// Reads what `flow` has room for from `from`, then writes what it holds to
// `to`. `check` sees each read before it is kept; false from it, or an
// error on either socket, ends the connection.
template <typename Check>
bool Move(int from, int to, size_t capacity, std::string& bytes, bool& eof,
          bool& shut, Check check) {
  char buf[16 * 1024];
  while (!eof && bytes.size() < capacity) {
    ssize_t n = recv(from, buf, std::min(sizeof(buf), capacity - bytes.size()),
                     MSG_DONTWAIT);
    if (n > 0) {
      if (!check(std::string_view(buf, static_cast<size_t>(n)))) return false;
      bytes.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      eof = true;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      break;
    } else {
      return false;
    }
  }
  while (!bytes.empty()) {
    ssize_t n =
        send(to, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      bytes.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      return false;
    }
  }
  if (eof && bytes.empty() && !shut) {
    shutdown(to, SHUT_WR);
    shut = true;
  }
  return true;
}

}  // namespace

bool FrameGuard::Pump(Conn& c) {
  const size_t cap = options_.buffer_bytes;
  auto metered = [&](std::string_view bytes) {
    if (c.meter.Feed(bytes, MonotonicNs(), shared_)) return true;
    cut_off_.fetch_add(1);
    const uint64_t now = MonotonicNs();
    if (now - last_cut_log_ns_ >= kCutLogEveryNs) {
      last_cut_log_ns_ = now;
      LogWarning("agent socket: closed a connection of ", c.peer, " after ",
                 c.meter.resets(), " stream resets, over ",
                 options_.resets_per_second, "/s (HTTP/2 rapid reset); ",
                 cut_off_.load(), " connections closed for it since start");
    }
    return false;
  };
  auto unmetered = [](std::string_view) { return true; };
  return Move(c.client.get(), c.relay.get(), cap, c.in.bytes, c.in.eof,
              c.in.shut, metered) &&
         Move(c.relay.get(), c.client.get(), cap, c.out.bytes, c.out.eof,
              c.out.shut, unmetered) &&
         !c.done();
}

// Asks epoll for what each side can do next: read while there is room and
// the side has not ended, write while bytes wait for it. A side with nothing
// to do stays in the set with no events, so that its hang-up (always
// reported) still ends the connection: gRPC closing its end while the
// client reads nothing must not leave the client's descriptors here.
void FrameGuard::Watch(Conn& c) {
  const size_t cap = options_.buffer_bytes;
  auto set = [&](int fd, Interest& have, bool read, bool write) {
    uint32_t want = (read ? EPOLLIN : 0u) | (write ? EPOLLOUT : 0u);
    if (have.added && want == have.events) return;
    epoll_event ev = {};
    ev.events = want;
    ev.data.ptr = &c;
    if (epoll_ctl(epoll_.get(), have.added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd,
                  &ev) == 0) {
      have.added = true;
      have.events = want;
    }
  };
  set(c.client.get(), c.client_interest, !c.in.eof && c.in.bytes.size() < cap,
      !c.out.bytes.empty());
  set(c.relay.get(), c.relay_interest, !c.out.eof && c.out.bytes.size() < cap,
      !c.in.bytes.empty());
}

}  // namespace locus
