#include "agent/sensors/baseline_programs.h"

#include "agent/sensors/bpf_skeleton.h"
#include "common/status_macros.h"
#include "empty.skel.h"

namespace locus {
namespace {

class SkeletonBaseline : public BaselinePrograms {
 public:
  absl::Status Start() {
    RETURN_IF_ERROR(skel_.Open());
    RETURN_IF_ERROR(skel_.Load());
    return skel_.Attach();
  }

 private:
  BpfSkeleton<empty_bpf> skel_{"empty"};
};

}  // namespace

absl::StatusOr<std::unique_ptr<BaselinePrograms>> LoadBaselinePrograms() {
  auto programs = std::make_unique<SkeletonBaseline>();
  RETURN_IF_ERROR(programs->Start());
  return std::unique_ptr<BaselinePrograms>(std::move(programs));
}

}  // namespace locus
