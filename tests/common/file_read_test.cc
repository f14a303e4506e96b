// The one reader of files the agent does not write (common/file_read.h):
// whatever stands at the path, it never blocks, refuses anything but a
// regular file, holds at most its limit, and says why with the path.
#include "common/file_read.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

size_t PeakRss() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;
}

class FileReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "locus-read-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/file";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The read on another thread: a reader that blocks fails the test (a
  // writer then opens the FIFO so that the thread can end) instead of
  // hanging it.
  absl::StatusOr<std::string> ReadWithin(const std::string& path,
                                         FileReadOptions options = {}) {
    auto read = std::async(std::launch::async,
                           [&] { return ReadRegularFile(path, options); });
    if (read.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ADD_FAILURE() << path << ": the read blocked";
      int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      read.wait();
      if (fd >= 0) close(fd);
    }
    return read.get();
  }

  std::string dir_;
  std::string path_;
};

TEST_F(FileReadTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0) << strerror(errno);
  absl::StatusOr<std::string> text = ReadWithin(path_);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(), path_ + ": is a FIFO, not a regular file");
  // Even one a writer holds open (the open would not wait then): the type
  // is judged on the descriptor too.
  int writer = open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  EXPECT_FALSE(ReadWithin(path_).ok());
  close(writer);
}

TEST_F(FileReadTest, ADirectoryIsRefused) {
  absl::StatusOr<std::string> text = ReadWithin(dir_);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(),
            dir_ + ": is a directory, not a regular file");
}

TEST_F(FileReadTest, DevZeroIsRefusedUnreadEvenThroughALink) {
  const size_t before = PeakRss();
  EXPECT_EQ(ReadWithin("/dev/zero").status().message(),
            "/dev/zero: is a character device, not a regular file");
  fs::create_symlink("/dev/zero", path_);
  EXPECT_EQ(ReadWithin(path_).status().message(),
            path_ + ": is a character device, not a regular file");
  EXPECT_LT(PeakRss() - before, 4u << 20);
}

// 200 MiB that cost no disk, as a kubelet state or cpuset file: refused
// from its size, with no more memory than a page or two.
TEST_F(FileReadTest, ASparseHugeFileIsRefusedWithBoundedMemory) {
  { std::ofstream create(path_); }
  ASSERT_EQ(truncate(path_.c_str(), 200ll << 20), 0) << strerror(errno);
  const size_t before = PeakRss();
  absl::StatusOr<std::string> text = ReadWithin(path_);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(text.status().message(),
            absl::StrCat(path_, ": larger than ", kDefaultMaxReadBytes,
                         " bytes (209715200 or more)"));
  EXPECT_LT(PeakRss() - before, 4u << 20);
}

// Kernel pseudo-files say 0 or 4096 bytes whatever they hold: read to the
// end, and the limit still holds while reading.
TEST_F(FileReadTest, ProcAndSysPseudoFilesAreReadToTheEndWithinTheLimit) {
  absl::StatusOr<std::string> status = ReadWithin("/proc/self/status");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_THAT(*status, StartsWith("Name:"));
  EXPECT_THAT(*status, HasSubstr("\nVmRSS:"));
  absl::StatusOr<std::string> online =
      ReadWithin("/sys/devices/system/cpu/online");
  ASSERT_TRUE(online.ok()) << online.status();
  EXPECT_FALSE(online->empty());
  absl::StatusOr<std::string> maps =
      ReadWithin("/proc/self/maps", {.max_bytes = 16});
  EXPECT_EQ(maps.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(maps.status().message(),
            "/proc/self/maps: larger than 16 bytes (17 or more)");
}

TEST_F(FileReadTest, TheLimitItselfIsReadAndOneMoreIsNot) {
  const std::string text(10000, 'x');
  std::ofstream(path_) << text;
  EXPECT_EQ(ReadWithin(path_, {.max_bytes = 10000}).value(), text);
  EXPECT_EQ(ReadWithin(path_, {.max_bytes = 9999}).status().code(),
            absl::StatusCode::kOutOfRange);
  std::ofstream(path_, std::ios::trunc);
  EXPECT_EQ(ReadWithin(path_).value(), "");
}

// Only nothing at the path is NotFound: the caller's cue for "absent".
TEST_F(FileReadTest, NothingThereIsNotFoundButALinkToNothingIsThere) {
  EXPECT_EQ(ReadWithin(path_).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(dir_ + "/plain") << "x";
  EXPECT_EQ(ReadWithin(dir_ + "/plain/under").status().code(),
            absl::StatusCode::kNotFound);
  fs::create_symlink(dir_ + "/nowhere", path_);
  absl::StatusOr<std::string> text = ReadWithin(path_);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(),
            absl::StrCat(path_, ": a symbolic link to ", dir_,
                         "/nowhere, which names nothing"));
}

TEST_F(FileReadTest, ALinkIsRefusedWhenLinksAreNotFollowed) {
  std::ofstream(dir_ + "/target") << "data";
  fs::create_symlink(dir_ + "/target", path_);
  EXPECT_EQ(ReadWithin(path_).value(), "data");
  absl::StatusOr<std::string> text = ReadWithin(path_, {.follow_links = false});
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(),
            path_ + ": is a symbolic link, not a regular file");
}

TEST_F(FileReadTest, AnUnreadableFileSaysWhy) {
  std::ofstream(path_) << "x";
  ASSERT_EQ(chmod(path_.c_str(), 0), 0);
  auto says_why = [&] {
    absl::StatusOr<std::string> text = ReadWithin(path_);
    return text.status().code() == absl::StatusCode::kPermissionDenied &&
           absl::StartsWith(text.status().message(), path_ + ": ");
  };
  if (geteuid() != 0) {
    EXPECT_TRUE(says_why());
    return;
  }
  // Root reads a file of mode 0: the reader is asked as nobody, in a child.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    _exit(setresgid(65534, 65534, 65534) == 0 &&
                  setresuid(65534, 65534, 65534) == 0 && says_why()
              ? 0
              : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "as nobody, reading a file of mode 0 is not PermissionDenied with "
         "its path";
}

}  // namespace
}  // namespace locus
