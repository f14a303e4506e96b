// Task iterator programs (iter/task) as the sensors read them: one run of a
// link gives fixed-size records, one per task. Scoped to a few processes,
// each process is walked through a link of its own instead of every task on
// the host being walked for the few threads wanted.
#ifndef LOCUS_AGENT_SENSORS_TASK_ITERATOR_H_
#define LOCUS_AGENT_SENSORS_TASK_ITERATOR_H_

#include <bpf/libbpf.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/sensors/bpf_skeleton.h"
#include "agent/sensors/task_table.h"
#include "common/status_macros.h"

namespace locus {

// Everything one run of an iterator link writes.
absl::StatusOr<std::string> ReadIterOutput(bpf_link* link);

// Runs an iterator link and hands each Record it wrote to `fn`.
template <typename Record>
absl::Status ReadIter(bpf_link* link,
                      absl::FunctionRef<void(const Record&)> fn) {
  ASSIGN_OR_RETURN(std::string out, ReadIterOutput(link));
  if (out.size() % sizeof(Record) != 0) {
    return absl::DataLossError(
        absl::StrCat("task iterator returned ", out.size(),
                     " bytes, not records of ", sizeof(Record)));
  }
  for (size_t off = 0; off < out.size(); off += sizeof(Record)) {
    Record r;
    std::memcpy(&r, out.data() + off, sizeof(r));
    fn(r);
  }
  return absl::OkStatus();
}

// One iter/task program, read over the processes in scope through a link
// per process (kept while the process stays in scope), or over every task.
class TaskIterator {
 public:
  // `all` is the program's link over every task; both belong to a skeleton
  // that outlives this.
  TaskIterator(bpf_program* program, bpf_link* all)
      : program_(program), all_(all) {}

  template <typename Record>
  absl::Status Read(const TaskScope& scope,
                    absl::FunctionRef<void(const Record&)> fn) {
    for (bpf_link* link : Links(scope)) {
      RETURN_IF_ERROR(ReadIter<Record>(link, fn));
    }
    return absl::OkStatus();
  }

 private:
  // The links to run for `scope`: new processes get theirs, those gone
  // from it lose theirs.
  std::vector<bpf_link*> Links(const TaskScope& scope);

  bpf_program* program_;
  bpf_link* all_;
  // Cleared when the kernel takes no pid for an iterator (before 6.1).
  bool per_process_ = true;
  std::map<int32_t, LinkPtr> links_;  // by pid
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_TASK_ITERATOR_H_
