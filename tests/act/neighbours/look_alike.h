// A user's process named like a neighbour daemon (issue #39): a root-owned
// copy of /usr/bin/sleep, named `comm`, in a directory anyone may enter,
// run as nobody through setpriv. Its binary is as root's as the real
// daemon's: only who runs it tells them apart. Needs root.
#ifndef LOCUS_TESTS_ACT_NEIGHBOURS_LOOK_ALIKE_H_
#define LOCUS_TESTS_ACT_NEIGHBOURS_LOOK_ALIKE_H_

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "tests/common/process_util.h"

namespace locus {

class LookAlike {
 public:
  explicit LookAlike(const std::string& comm) {
    std::string pattern = "/tmp/locus-look-alike-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return;
    dir_ = pattern;
    chmod(dir_.c_str(), 0755);
    const std::string binary = dir_ + "/" + comm;
    std::filesystem::copy_file("/usr/bin/sleep", binary);
    chmod(binary.c_str(), 0755);
    pid_ = Spawn({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                  "--clear-groups", binary, "600"},
                 dir_ + "/log");
    // Named once setpriv has exec'd it.
    const std::string comm_file = absl::StrCat("/proc/", pid_, "/comm");
    if (!WaitUntil(
            [&] {
              return absl::StripAsciiWhitespace(ReadAll(comm_file)) == comm;
            },
            absl::Seconds(10))) {
      Stop(pid_, SIGKILL);
      pid_ = -1;
    }
  }
  ~LookAlike() {
    if (pid_ > 0) Stop(pid_, SIGKILL);
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  LookAlike(const LookAlike&) = delete;
  LookAlike& operator=(const LookAlike&) = delete;

  // -1 when it could not be started.
  pid_t pid() const { return pid_; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_NEIGHBOURS_LOOK_ALIKE_H_
