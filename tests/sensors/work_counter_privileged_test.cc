// bpf/work.bpf.c on the real kernel: this process watches itself, makes
// loopback TCP connections and sends known byte counts with every send
// syscall the program counts, writes to a regular file (not counted), and
// Read() must match exactly; a forked loopback server serves requests of
// known service times, and its request count and histogram must match.
// Needs root (CAP_BPF, CAP_PERFMON).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "agent/sensors/work_counter.h"
#include "agent/sensors/work_counter_bpf.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"
#include "locus/work.h"
#include "tests/common/loopback_listener.h"

namespace locus {
namespace {

// Reads exactly n bytes (reads are not counted).
void Drain(int fd, size_t n) {
  std::vector<char> buf(65536);
  while (n > 0) {
    ssize_t got = read(fd, buf.data(), std::min(n, buf.size()));
    ASSERT_GT(got, 0);
    n -= got;
  }
}

uint64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

class WorkCounterPrivilegedTest : public testing::Test {
 protected:
  void SetUp() override {
    counter_ = MakeWorkCounter({});
    if (counter_->source() != kWorkSourceBpf) {
      GTEST_SKIP() << "BPF work counter not loadable: " << counter_->source();
    }
    ASSERT_TRUE(counter_->Watch({getpid()}).ok());
  }
  void TearDown() override {
    if (counter_) counter_->Stop();
  }

  WorkSample Now() {
    auto read = counter_->Read();
    EXPECT_TRUE(read.ok()) << read.status();
    if (!read.ok() || !read->contains(getpid())) {
      ADD_FAILURE() << "own pid not in Read()";
      return {};
    }
    return read->at(getpid());
  }

  std::unique_ptr<WorkCounter> counter_;
};

TEST_F(WorkCounterPrivilegedTest, CountsSocketSendsAndAcceptsExactly) {
  LoopbackListener l = ListenOnLoopback();
  WorkSample before = Now();

  // Three accepts with accept, two with accept4, one that fails.
  std::vector<UniqueFd> clients, accepted;
  for (int i = 0; i < 5; ++i) clients.push_back(ConnectTo(l));
  UniqueFd server(accept(l.fd.get(), nullptr, nullptr));
  ASSERT_TRUE(server.valid());
  for (int i = 0; i < 2; ++i) {
    accepted.emplace_back(accept(l.fd.get(), nullptr, nullptr));
  }
  for (int i = 0; i < 2; ++i) {
    accepted.emplace_back(accept4(l.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
  }
  for (const UniqueFd& fd : accepted) ASSERT_TRUE(fd.valid());
  ASSERT_EQ(fcntl(l.fd.get(), F_SETFL, O_NONBLOCK), 0);
  ASSERT_LT(accept4(l.fd.get(), nullptr, nullptr, 0), 0);  // EAGAIN

  // A regular file: written, then the source of sendfile.
  char path[] = "/tmp/locus_work_XXXXXX";
  UniqueFd file(mkstemp(path));
  ASSERT_TRUE(file.valid());
  unlink(path);
  std::string data(5000, 'f');
  ASSERT_EQ(write(file.get(), data.data(), data.size()), 5000);
  ASSERT_EQ(pwrite(file.get(), data.data(), 100, 5000), 100);

  // The first accepted connection's peer is one of `clients`; send on the
  // server side of it, from every send syscall.
  uint64_t sent = 0;
  std::string buf(1000, 'x');
  ssize_t n = write(server.get(), buf.data(), 1000);
  ASSERT_EQ(n, 1000);
  sent += n;
  iovec iov[2] = {{buf.data(), 300}, {buf.data(), 200}};
  n = writev(server.get(), iov, 2);
  ASSERT_EQ(n, 500);
  sent += n;
  n = send(server.get(), buf.data(), 700, 0);
  ASSERT_EQ(n, 700);
  sent += n;
  n = sendto(server.get(), buf.data(), 600, 0, nullptr, 0);
  ASSERT_EQ(n, 600);
  sent += n;
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  n = sendmsg(server.get(), &msg, 0);
  ASSERT_EQ(n, 500);
  sent += n;
  off_t offset = 0;
  n = sendfile(server.get(), file.get(), &offset, 5000);
  ASSERT_EQ(n, 5000);
  sent += n;
  // A send that fails adds nothing.
  ASSERT_LT(send(-1, buf.data(), 10, 0), 0);

  WorkSample after = Now();
  EXPECT_EQ(after.bytes_sent - before.bytes_sent, sent);
  EXPECT_EQ(after.accepted - before.accepted, 5u);

  // Drain whichever client is the server's peer (all, to be sure).
  sockaddr_in peer{};
  socklen_t len = sizeof(peer);
  ASSERT_EQ(getpeername(server.get(), reinterpret_cast<sockaddr*>(&peer), &len),
            0);
  for (UniqueFd& c : clients) {
    sockaddr_in local{};
    socklen_t llen = sizeof(local);
    getsockname(c.get(), reinterpret_cast<sockaddr*>(&local), &llen);
    if (local.sin_port == peer.sin_port) Drain(c.get(), sent);
  }
}

TEST_F(WorkCounterPrivilegedTest, ProcessNotWatchedIsNotCounted) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd parent_end(sv[0]), child_end(sv[1]);
  WorkSample before = Now();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string buf(4000, 'c');
    ssize_t n = write(child_end.get(), buf.data(), buf.size());
    _exit(n == 4000 ? 0 : 1);
  }
  Drain(parent_end.get(), 4000);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  WorkSample after = Now();
  EXPECT_EQ(after.bytes_sent, before.bytes_sent);

  // The same write from the watched parent counts.
  std::string buf(4000, 'p');
  ASSERT_EQ(write(child_end.get(), buf.data(), buf.size()), 4000);
  Drain(parent_end.get(), 4000);
  EXPECT_EQ(Now().bytes_sent - after.bytes_sent, 4000u);
}

TEST_F(WorkCounterPrivilegedTest, CpuTimeGrowsWithABusyLoop) {
  uint64_t before = Now().cpu_ns;
  uint64_t start = ProcessCpuNs();
  volatile uint64_t sink = 0;
  while (ProcessCpuNs() - start < 50'000'000) sink = sink + 1;
  uint64_t spent = ProcessCpuNs() - start;
  uint64_t after = Now().cpu_ns;
  EXPECT_GE(after - before, spent / 2) << "spent " << spent;
}

TEST_F(WorkCounterPrivilegedTest, StopForgets) {
  counter_->Stop();
  auto read = counter_->Read();
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->empty());
  // Watching again loads again, from zero.
  ASSERT_TRUE(counter_->Watch({getpid()}).ok());
  EXPECT_EQ(Now().bytes_sent, 0u);
  // A pid that is not alive is left out, not an error.
  ASSERT_TRUE(counter_->Watch({getpid(), 0x3ffffff0}).ok());
  read = counter_->Read();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size(), 1u);
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

// Reads up to and including '\n' (a request or a response), byte counts as
// they come; false at end of stream or on an error.
bool ReadLine(int fd, std::string* line) {
  line->clear();
  char buf[64];
  while (line->empty() || line->back() != '\n') {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return false;
    line->append(buf, n);
  }
  return true;
}

// A forked loopback server: once told to go, it accepts `connections`
// connections one after the other and, on each, answers every request line
// (the milliseconds to take) after sleeping that long, until the client
// closes; then it closes the connection. When all are served it writes the
// service time it measured itself for each request (first byte read to
// response written, ns) to `report` and waits for `go` to close.
class ServerChild {
 public:
  ServerChild(const LoopbackListener& l, int connections) {
    int go[2], report[2];
    EXPECT_EQ(pipe2(go, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(report, O_CLOEXEC), 0);
    pid_ = fork();
    EXPECT_GE(pid_, 0);
    if (pid_ == 0) {
      close(go[1]);
      close(report[0]);
      Serve(l.fd.get(), connections, go[0], report[1]);
    }
    close(go[0]);
    close(report[1]);
    go_ = UniqueFd(go[1]);
    report_ = UniqueFd(report[0]);
  }
  ~ServerChild() {
    go_.reset();
    int status = 0;
    if (pid_ > 0) waitpid(pid_, &status, 0);
  }

  pid_t pid() const { return pid_; }
  void Go() { ASSERT_EQ(write(go_.get(), "g", 1), 1); }
  // Its own measurements, once it has served everything.
  std::vector<uint64_t> ServiceNs() {
    std::vector<uint64_t> out;
    uint64_t ns = 0;
    while (read(report_.get(), &ns, sizeof(ns)) == sizeof(ns)) {
      if (ns == 0) break;
      out.push_back(ns);
    }
    return out;
  }

 private:
  [[noreturn]] static void Serve(int listener, int connections, int go,
                                 int report) {
    char c;
    if (read(go, &c, 1) != 1) _exit(1);
    std::vector<uint64_t> times;
    for (int i = 0; i < connections; ++i) {
      int conn = accept(listener, nullptr, nullptr);
      if (conn < 0) _exit(2);
      std::string line;
      while (ReadLine(conn, &line)) {
        uint64_t start = MonotonicNs();
        int ms = atoi(line.c_str());
        timespec nap = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&nap, nullptr);
        if (write(conn, "ok\n", 3) != 3) _exit(3);
        times.push_back(MonotonicNs() - start);
      }
      close(conn);
    }
    times.push_back(0);
    size_t size = times.size() * sizeof(uint64_t);
    if (write(report, times.data(), size) != static_cast<ssize_t>(size)) {
      _exit(4);
    }
    while (read(go, &c, 1) > 0) {
    }
    _exit(0);
  }

  pid_t pid_ = -1;
  UniqueFd go_, report_;
};

// Sends one request per entry of `ms` on one keep-alive connection, each
// after the previous answer, then closes it.
void Requests(const LoopbackListener& l, const std::vector<int>& ms) {
  UniqueFd c = ConnectTo(l);
  std::string line;
  for (int m : ms) {
    std::string request = std::to_string(m) + "\n";
    ASSERT_EQ(write(c.get(), request.data(), request.size()),
              static_cast<ssize_t>(request.size()));
    ASSERT_TRUE(ReadLine(c.get(), &line));
    ASSERT_EQ(line, "ok\n");
  }
}

// The bucket holding the rank-th smallest (1-based) of the histogram.
int BucketOfRank(const std::vector<uint64_t>& hist, uint64_t rank) {
  uint64_t seen = 0;
  for (size_t b = 0; b < hist.size(); ++b) {
    seen += hist[b];
    if (seen >= rank) return b;
  }
  return -1;
}

int Bucket(uint64_t ns) { return locus_work_bucket(ns / 1000); }

TEST_F(WorkCounterPrivilegedTest, ServiceTimesOfEachRequest) {
  LoopbackListener l = ListenOnLoopback(/*accept_timeout_s=*/5);
  LoopbackListener other = ListenOnLoopback(/*accept_timeout_s=*/5);
  ServerChild server(l, 2);
  ServerChild not_watched(other, 1);
  // This process too: as the client, its connections are not measured.
  ASSERT_TRUE(counter_->Watch({getpid(), server.pid()}).ok());
  server.Go();
  not_watched.Go();

  // N = 6 requests of 20 ms on one connection, M = 5 on another (four of
  // 60 ms, one of 20); the server not watched serves two.
  Requests(l, {20, 20, 20, 20, 20, 20});
  Requests(l, {60, 60, 20, 60, 60});
  Requests(other, {20, 20});
  std::vector<uint64_t> measured = server.ServiceNs();
  ASSERT_EQ(measured.size(), 11u);
  ASSERT_EQ(not_watched.ServiceNs().size(), 2u);

  auto read = counter_->Read();
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->contains(server.pid()));
  EXPECT_FALSE(read->contains(not_watched.pid()));
  ASSERT_TRUE(read->contains(getpid()));
  EXPECT_EQ(read->at(getpid()).requests, 0u);
  const WorkSample& s = read->at(server.pid());
  // Each once, the last of each connection (ended by its close) included.
  EXPECT_EQ(s.requests, 11u);
  ASSERT_EQ(s.service_us.size(), static_cast<size_t>(LOCUS_WORK_BUCKETS));
  uint64_t total = 0;
  for (uint64_t n : s.service_us) total += n;
  EXPECT_EQ(total, 11u);

  // Rank by rank, the kernel's figure is within 10 ms of the server's own:
  // the kernel reads its clock as the syscalls return, the server after
  // they have, and a loaded machine (the sanitizers beside guests) can
  // preempt it for milliseconds in between, either way...
  std::sort(measured.begin(), measured.end());
  constexpr uint64_t kPreempted = 10'000'000;
  for (size_t i = 0; i < measured.size(); ++i) {
    int got = BucketOfRank(s.service_us, i + 1);
    EXPECT_GE(got,
              Bucket(measured[i] > kPreempted ? measured[i] - kPreempted : 0))
        << "rank " << i + 1 << ": server measured " << measured[i] << " ns";
    EXPECT_LE(got, Bucket(measured[i] + kPreempted))
        << "rank " << i + 1 << ": server measured " << measured[i] << " ns";
  }
  // ... and never below the sleep. p50 is a 20 ms request, p99 a 60 ms one
  // (the bounds above leave room for a loaded machine's late wake-ups).
  EXPECT_GE(BucketOfRank(s.service_us, 1), Bucket(20'000'000));
  EXPECT_GE(BucketOfRank(s.service_us, 8), Bucket(60'000'000));
  int p50 = BucketOfRank(s.service_us, 6);
  int p99 = BucketOfRank(s.service_us, 11);
  EXPECT_GE(p50, Bucket(20'000'000));
  EXPECT_LT(p50, Bucket(40'000'000));
  EXPECT_GE(p99, Bucket(60'000'000));
  EXPECT_LT(p99, Bucket(80'000'000));
}

// The fallback on the real /proc: wchar counts file writes too.
TEST(WorkCounterFallbackTest, DisabledBpfCountsWchar) {
  WorkCounterOptions options;
  options.disable_bpf = true;
  std::unique_ptr<WorkCounter> counter = MakeWorkCounter(options);
  EXPECT_EQ(counter->source(),
            std::string(kWorkSourceProcfs) + "; bpf disabled");
  ASSERT_TRUE(counter->Watch({getpid()}).ok());
  char path[] = "/tmp/locus_work_XXXXXX";
  UniqueFd file(mkstemp(path));
  ASSERT_TRUE(file.valid());
  unlink(path);
  std::string data(3000, 'w');
  ASSERT_EQ(write(file.get(), data.data(), data.size()), 3000);
  auto read = counter->Read();
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->contains(getpid()));
  EXPECT_GE(read->at(getpid()).bytes_sent, 3000u);
  EXPECT_EQ(read->at(getpid()).accepted, 0u);
  EXPECT_GT(read->at(getpid()).cpu_ns, 0u);
}

}  // namespace
}  // namespace locus
