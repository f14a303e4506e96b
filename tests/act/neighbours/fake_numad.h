// A numad for tests of agent/act/neighbours/numad_exclusions.h without
// root: its exclusion list as numad keeps it (an 'x' adds, an 'r' removes),
// a restart under a new pid (empty lists), and failures to find or send.
#ifndef LOCUS_TESTS_ACT_NEIGHBOURS_FAKE_NUMAD_H_
#define LOCUS_TESTS_ACT_NEIGHBOURS_FAKE_NUMAD_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/act/neighbours/numad_ops.h"
#include "agent/journal/journal.h"

namespace locus {

class FakeNumad : public NumadOps {
 public:
  struct Sent {
    int32_t numad_pid = 0;
    std::string command;                   // "x 41"
    std::map<int32_t, int32_t> journaled;  // the journal's at that moment
  };

  bool running = true;
  int32_t pid = 200;
  std::set<int32_t> excluded;  // numad's exclude_pid_list
  std::set<int32_t> alive;     // pids ProcessExists says run
  absl::Status find_error;
  absl::Status send_error;
  const Journal* journal = nullptr;
  std::vector<Sent> sent;

  void Restart(int32_t new_pid) {
    pid = new_pid;
    excluded.clear();
    running = true;
  }

  absl::StatusOr<std::optional<NumadInstance>> Find() override {
    if (!find_error.ok()) return find_error;
    if (!running) return std::optional<NumadInstance>();
    return std::optional<NumadInstance>(NumadInstance{pid});
  }

  absl::Status Send(const NumadInstance& numad, char command,
                    int32_t target) override {
    if (!send_error.ok()) return send_error;
    if (!running || numad.pid != pid) {
      return absl::NotFoundError("msgsnd: no such queue reader");
    }
    sent.push_back({pid, absl::StrCat(std::string(1, command), " ", target),
                    journal ? journal->contents().numad_exclusions
                            : std::map<int32_t, int32_t>()});
    if (command == kNumadExclude) excluded.insert(target);
    if (command == kNumadRemove) excluded.erase(target);
    return absl::OkStatus();
  }

  bool ProcessExists(int32_t target) override { return alive.count(target); }
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_NEIGHBOURS_FAKE_NUMAD_H_
