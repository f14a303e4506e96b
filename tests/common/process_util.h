// Real processes for tests that drive the kernel or locusd as a program:
// spawning with output to a file, stopping with a signal, and reading what
// the kernel says about their threads afterwards.
#ifndef LOCUS_TESTS_COMMON_PROCESS_UTIL_H_
#define LOCUS_TESTS_COMMON_PROCESS_UTIL_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace locus {

// fork + execv of `argv` (argv[0] a path), stdout and stderr appended to
// `log`. Returns the child's pid, or -1.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log);

// Sends `signal` and reaps: the exit code, or -signal when killed by one.
int Stop(pid_t pid, int signal);

// A forked child that only waits (one thread); killed and reaped when this
// goes away.
class IdleChild {
 public:
  IdleChild();
  ~IdleChild();
  IdleChild(const IdleChild&) = delete;
  IdleChild& operator=(const IdleChild&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// The kernel's CPU mask of one thread (sched_getaffinity); empty when the
// thread is gone.
std::vector<int> ThreadAffinity(pid_t tid);

// Thread ids of a process (/proc/PID/task), ascending.
std::vector<pid_t> ThreadsOf(pid_t pid);

// The live (not zombie) children of `parent`, from /proc/*/stat.
std::set<pid_t> ChildrenOf(pid_t parent);

// Affinity of every thread of every process in `pids`, by tid.
std::map<pid_t, std::vector<int>> AffinityOfAll(const std::vector<pid_t>& pids);

// /sys/devices/system/cpu/online.
std::vector<int> OnlineCpus();

// The whole file (ReadTextFile), or "" when it cannot be read.
std::string ReadAll(const std::string& path);

// Polls `done` every `every` until it holds (true) or `timeout` passes.
bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration every = absl::Milliseconds(50));

// A 16 KiB tmpfs mounted at `path` (created) with mount(2) `flags`
// (MS_RDONLY: read-only), detached when this goes away; error() is the
// errno of a failed mount, 0 once mounted.
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& path, unsigned long flags);
  ~SmallTmpfs();
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  int error() const { return error_; }

 private:
  std::string path_;
  int error_ = 0;
};

// A field of /proc/PID/status in kB (VmRSS, VmHWM); 0 when unreadable.
uint64_t StatusKb(pid_t pid, const std::string& field);

}  // namespace locus

#endif  // LOCUS_TESTS_COMMON_PROCESS_UTIL_H_
