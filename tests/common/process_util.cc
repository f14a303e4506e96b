#include "tests/common/process_util.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/host/cpu_mask.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"

namespace locus {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int Stop(pid_t pid, int signal) {
  kill(pid, signal);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

IdleChild::IdleChild() {
  pid_ = fork();
  if (pid_ == 0) {
    for (;;) pause();
  }
}

IdleChild::~IdleChild() {
  if (pid_ > 0) Stop(pid_, SIGKILL);
}

std::vector<int> ThreadAffinity(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(tid, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<pid_t> ThreadsOf(pid_t pid) {
  std::vector<pid_t> tids;
  auto names = ListDirectory("/proc/" + std::to_string(pid) + "/task");
  if (!names.ok()) return tids;
  for (const std::string& name : *names) {
    pid_t tid = 0;
    if (absl::SimpleAtoi(name, &tid)) tids.push_back(tid);
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::set<pid_t> ChildrenOf(pid_t parent) {
  std::set<pid_t> children;
  absl::StatusOr<std::vector<std::string>> names = ListDirectory("/proc");
  if (!names.ok()) return children;
  for (const std::string& name : *names) {
    absl::StatusOr<std::string> text = ReadTextFile("/proc/" + name + "/stat");
    if (!text.ok()) continue;
    absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
    if (stat.ok() && stat->ppid == parent && stat->state != 'Z')
      children.insert(stat->pid);
  }
  return children;
}

std::map<pid_t, std::vector<int>> AffinityOfAll(
    const std::vector<pid_t>& pids) {
  std::map<pid_t, std::vector<int>> out;
  for (pid_t pid : pids) {
    for (pid_t tid : ThreadsOf(pid)) out[tid] = ThreadAffinity(tid);
  }
  return out;
}

std::vector<int> OnlineCpus() {
  auto text = ReadFirstLine("/sys/devices/system/cpu/online");
  if (!text.ok()) return {};
  auto cpus = ParseCpuList(*text);
  return cpus.ok() ? *cpus : std::vector<int>{};
}

SmallTmpfs::SmallTmpfs(const std::string& path, unsigned long flags)
    : path_(path) {
  std::filesystem::create_directories(path);
  if (mount("tmpfs", path.c_str(), "tmpfs", flags, "size=16k") != 0) {
    error_ = errno;
  }
}

SmallTmpfs::~SmallTmpfs() {
  if (error_ == 0) umount2(path_.c_str(), MNT_DETACH);
}

std::string ReadAll(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  return text.ok() ? *std::move(text) : std::string();
}

bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration every) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (done()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(every);
  }
}

uint64_t StatusKb(pid_t pid, const std::string& field) {
  std::string text = ReadAll("/proc/" + std::to_string(pid) + "/status");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, field + ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    absl::ConsumeSuffix(&line, " kB");
    uint64_t kb = 0;
    return absl::SimpleAtoi(line, &kb) ? kb : 0;
  }
  return 0;
}

}  // namespace locus
