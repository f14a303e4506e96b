// A process as a fixture /proc shows it to the neighbours' finder
// (process_finder.h): its stat line (its name and state), its status's Uid
// line, and its exe link, which stat() follows to the binary.
#ifndef LOCUS_TESTS_ACT_NEIGHBOURS_FIXTURE_PROCESS_H_
#define LOCUS_TESTS_ACT_NEIGHBOURS_FIXTURE_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace locus {

// A binary of root's that no one else may write, on any Debian.
inline constexpr char kRootBinary[] = "/usr/bin/true";

struct FixtureProcess {
  int pid = 0;
  std::string comm;
  uid_t uid = 0;   // real
  uid_t euid = 0;  // effective
  std::string exe = kRootBinary;
  char state = 'S';
  // Field 22, clock ticks since boot: another process under a reused pid
  // has another.
  uint64_t start_time = 8649819;
};

// A /proc/PID/stat line as the kernel writes it (52 fields).
inline std::string FixtureStatLine(int pid, const std::string& comm, char state,
                                   uint64_t start_time = 8649819) {
  return absl::StrCat(
      pid, " (", comm, ") ", std::string(1, state),
      " 1 77 77 0 -1 4194560 101 0 0 0 5 7 0 0 20 0 1 0 ", start_time,
      " 3133440 390 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 "
      "0 0 1 1 1 1 1 1 1 0\n");
}

// Writes `p` under `procfs_root` (replacing what was there).
inline void WriteFixtureProcess(const std::string& procfs_root,
                                const FixtureProcess& p) {
  const std::filesystem::path dir =
      std::filesystem::path(procfs_root) / std::to_string(p.pid);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "stat", std::ios::trunc)
      << FixtureStatLine(p.pid, p.comm, p.state, p.start_time);
  std::ofstream(dir / "status", std::ios::trunc)
      << "Name:\t" << p.comm << "\nUmask:\t0022\nState:\tS (sleeping)\n"
      << "Uid:\t" << p.uid << "\t" << p.euid << "\t" << p.euid << "\t" << p.euid
      << "\nGid:\t0\t0\t0\t0\n";
  std::error_code ignored;
  std::filesystem::remove(dir / "exe", ignored);
  std::filesystem::create_symlink(p.exe, dir / "exe");
}

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_NEIGHBOURS_FIXTURE_PROCESS_H_
