// The OS layer of common/: errno as a Status, the owning fd, the clocks.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/clock.h"
#include "common/os_error.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

TEST(OsErrorTest, StatusCarriesCodeAndWhat) {
  absl::Status gone = ErrnoStatus("open /proc/1/stat", ENOENT);
  EXPECT_TRUE(absl::IsNotFound(gone));
  EXPECT_EQ(gone.message(), "open /proc/1/stat: No such file or directory");
  EXPECT_TRUE(absl::IsPermissionDenied(ErrnoStatus("x", EACCES)));
  EXPECT_TRUE(absl::IsPermissionDenied(ErrnoStatus("x", EPERM)));
}

TEST(OsErrorTest, ErrnoOfReadsBackTheKind) {
  EXPECT_EQ(ErrnoOf(absl::OkStatus()), 0);
  EXPECT_EQ(ErrnoOf(ErrnoStatus("x", ENOENT)), ENOENT);
  EXPECT_EQ(ErrnoOf(ErrnoStatus("x", EACCES)), EPERM);
  EXPECT_EQ(ErrnoOf(absl::InternalError("x")), EIO);
}

TEST(OsErrorTest, LastErrnoStatusReadsErrno) {
  errno = 0;
  ASSERT_LT(::open("/nonexistent/locus", O_RDONLY | O_CLOEXEC), 0);
  EXPECT_TRUE(absl::IsNotFound(LastErrnoStatus("open")));
}

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFdTest, ClosesWhenItGoes) {
  int raw;
  {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    raw = fd.get();
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MoveTransfersAndReleaseKeepsOpen) {
  UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int raw = a.get();
  UniqueFd b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(b.get(), raw);
  int released = b.release();
  EXPECT_FALSE(b.valid());
  EXPECT_TRUE(IsOpen(released));
  ::close(released);
}

TEST(UniqueFdTest, ResetClosesTheOldOne) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int old = fd.get();
  fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_NE(fd.get(), old);  // opened before the old one was closed
  EXPECT_FALSE(IsOpen(old));
  EXPECT_TRUE(IsOpen(fd.get()));
}

TEST(ClockTest, RealClockMovesForward) {
  uint64_t a = RealClock()->NowNs();
  uint64_t b = MonotonicNs();
  EXPECT_GT(a, 0u);
  EXPECT_GE(b, a);
}

TEST(ClockTest, FakeClockMovesOnlyWhenTold) {
  FakeClock clock(5);
  EXPECT_EQ(clock.NowNs(), 5u);
  clock.Advance(10);
  EXPECT_EQ(clock.NowNs(), 15u);
  clock.Set(3);
  EXPECT_EQ(clock.NowNs(), 3u);
}

}  // namespace
}  // namespace locus
