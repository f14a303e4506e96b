#include "agent/sensors/task_iterator.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/os_error.h"
#include "common/unique_fd.h"

namespace locus {

absl::StatusOr<std::string> ReadIterOutput(bpf_link* link) {
  UniqueFd fd(bpf_iter_create(bpf_link__fd(link)));
  if (!fd) return LastErrnoStatus("bpf_iter_create");
  std::string out;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = read(fd.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus("reading task iterator");
    if (n == 0) return out;
    out.append(chunk, n);
  }
}

namespace {

// A link that walks the threads of process `pid` alone; null with `err` set
// when the kernel refuses it.
LinkPtr AttachForProcess(bpf_program* program, int32_t pid, int& err) {
  union bpf_iter_link_info info = {};
  info.task.pid = static_cast<__u32>(pid);
  LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
              .link_info_len = sizeof(info));
  LinkPtr link(bpf_program__attach_iter(program, &opts));
  err = link ? 0 : errno;
  return link;
}

}  // namespace

std::vector<bpf_link*> TaskIterator::Links(const TaskScope& scope) {
  std::erase_if(links_, [&](const auto& entry) {
    return !scope ||
           !std::binary_search(scope->begin(), scope->end(), entry.first);
  });
  if (!scope || !per_process_) return {all_};
  std::vector<bpf_link*> links;
  for (int32_t pid : *scope) {
    auto [it, added] = links_.try_emplace(pid);
    int err = 0;
    if (added) it->second = AttachForProcess(program_, pid, err);
    if (it->second) {
      links.push_back(it->second.get());
      continue;
    }
    links_.erase(it);
    if (err == ESRCH || err == ENOENT) continue;  // gone
    // Kernels before 6.1 take no pid: every task from now on.
    per_process_ = false;
    links_.clear();
    return {all_};
  }
  return links;
}

}  // namespace locus
