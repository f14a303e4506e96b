#include "agent/sensors/baseline_programs.h"

#include <errno.h>
#include <string.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "empty.skel.h"

namespace locus {
namespace {

class SkeletonBaseline : public BaselinePrograms {
 public:
  explicit SkeletonBaseline(empty_bpf* skel) : skel_(skel) {}
  ~SkeletonBaseline() override { empty_bpf__destroy(skel_); }

 private:
  empty_bpf* skel_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<BaselinePrograms>> LoadBaselinePrograms() {
  empty_bpf* skel = empty_bpf__open_and_load();
  if (!skel) {
    return absl::UnavailableError(
        absl::StrCat("loading empty.bpf.o: ", strerror(errno)));
  }
  auto owner = std::make_unique<SkeletonBaseline>(skel);
  if (int err = empty_bpf__attach(skel)) {
    return absl::UnavailableError(
        absl::StrCat("attaching empty.bpf.o: ", strerror(-err)));
  }
  return std::unique_ptr<BaselinePrograms>(std::move(owner));
}

}  // namespace locus
