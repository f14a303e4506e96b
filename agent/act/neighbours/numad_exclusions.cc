#include "agent/act/neighbours/numad_exclusions.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace locus {
namespace {

std::string Who(int32_t pid) { return absl::StrCat("numad (pid ", pid, ")"); }

}  // namespace

void NumadExclusions::Tick(const std::set<int32_t>& wanted) {
  Reconcile(wanted);
  state_.look_alikes = ops_.LookAlikes();
}

void NumadExclusions::Reconcile(const std::set<int32_t>& wanted) {
  problems_.clear();
  absl::StatusOr<std::optional<NumadInstance>> found = ops_.Find();
  if (!found.ok()) {
    // One runs that Locus cannot reach: what was sent stays journaled, to
    // be handed back once it can be.
    state_.running = true;
    state_.pid = 0;
    state_.problem = std::string(found.status().message());
    return;
  }
  if (!found->has_value()) {
    const uint64_t restarts = state_.restarts;
    state_ = NumadState();
    state_.restarts = restarts;
    if (absl::Status status = journal_.ForgetNumadExclusionsWhere(
            [](int32_t, int32_t) { return true; });
        !status.ok()) {
      Problem(std::string(status.message()));
    }
    state_.problem = absl::StrJoin(problems_, "; ");
    return;
  }
  const NumadInstance numad = **found;
  if (last_pid_ != 0 && numad.pid != last_pid_) ++state_.restarts;
  last_pid_ = numad.pid;
  // A copy: the journal's map changes below.
  const std::map<int32_t, int32_t> journaled =
      journal_.contents().numad_exclusions;
  for (const auto& [pid, owner] : journaled) {
    if (wanted.count(pid)) {
      // Sent to an earlier numad, whose lists went with it.
      if (owner != numad.pid) Exclude(numad, pid);
    } else if (owner == numad.pid) {
      Release(numad, pid);
    } else if (absl::Status status = journal_.ForgetNumadExclusion(pid);
               !status.ok()) {
      Problem(std::string(status.message()));
    }
  }
  for (int32_t pid : wanted) {
    if (!journaled.count(pid)) Exclude(numad, pid);
  }
  state_.running = true;
  state_.pid = numad.pid;
  state_.excluded.clear();
  for (const auto& [pid, owner] : journal_.contents().numad_exclusions) {
    if (owner == numad.pid) state_.excluded.insert(pid);
  }
  state_.problem = absl::StrJoin(problems_, "; ");
}

// Journal first: a crash between the two leaves a record whose removal is
// harmless, never an exclusion nobody knows of.
void NumadExclusions::Exclude(const NumadInstance& numad, int32_t pid) {
  if (absl::Status status = journal_.RecordNumadExclusion(numad.pid, pid);
      !status.ok()) {
    Problem(absl::StrCat("pid ", pid, " not handed to ", Who(numad.pid), ": ",
                         status.message()));
    return;
  }
  if (absl::Status status = ops_.Send(numad, kNumadExclude, pid);
      !status.ok()) {
    Problem(std::string(status.message()));
    // Not sent: forgotten, so that the next tick records and sends again.
    if (absl::Status forget = journal_.ForgetNumadExclusion(pid);
        !forget.ok()) {
      Problem(std::string(forget.message()));
    }
  }
}

void NumadExclusions::Release(const NumadInstance& numad, int32_t pid) {
  if (ops_.ProcessExists(pid)) {
    if (absl::Status status = ops_.Send(numad, kNumadRemove, pid);
        !status.ok()) {
      Problem(std::string(status.message()));
      return;  // kept: sent again next tick
    }
  }
  if (absl::Status status = journal_.ForgetNumadExclusion(pid); !status.ok()) {
    Problem(std::string(status.message()));
  }
}

void NumadExclusions::Problem(const std::string& problem) {
  problems_.push_back(problem);
}

void RestoreNumadExclusions(const std::map<int32_t, int32_t>& exclusions,
                            NumadOps& ops, std::vector<std::string>* messages,
                            std::vector<std::string>* errors,
                            std::map<int32_t, int32_t>* kept) {
  if (exclusions.empty()) return;
  const absl::StatusOr<std::optional<NumadInstance>> found = ops.Find();
  for (const std::string& refused : ops.LookAlikes()) {
    messages->push_back(refused);
  }
  for (const auto& [pid, owner] : exclusions) {
    const std::string what =
        absl::StrCat("pid ", pid, ": exclusion from ", Who(owner));
    if (!found.ok()) {
      errors->push_back(
          absl::StrCat(what, " not lifted: ", found.status().message()));
      (*kept)[pid] = owner;
    } else if (!found->has_value() || (*found)->pid != owner) {
      messages->push_back(absl::StrCat(
          what, ": that numad no longer runs; nothing to hand back"));
    } else if (!ops.ProcessExists(pid)) {
      messages->push_back(
          absl::StrCat(what, ": the worker ended; nothing to hand back"));
    } else if (absl::Status status = ops.Send(**found, kNumadRemove, pid);
               !status.ok()) {
      errors->push_back(absl::StrCat(what, " not lifted: ", status.message()));
      (*kept)[pid] = owner;
    } else {
      messages->push_back(absl::StrCat(what, " lifted: numad may move it"));
    }
  }
}

}  // namespace locus
