// An owning bpftool skeleton (katran's BpfSkeleton habit): open, load and
// attach return a Status naming the object and the errno, and the object,
// its maps, programs and links go when the owner does.
#ifndef LOCUS_AGENT_SENSORS_BPF_SKELETON_H_
#define LOCUS_AGENT_SENSORS_BPF_SKELETON_H_

#include <bpf/libbpf.h>

#include <cerrno>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/sensors/libbpf_log.h"
#include "common/os_error.h"

namespace locus {

// T is a skeleton struct with bpftool's C++ wrappers (T::open, T::load,
// T::attach, T::destroy), e.g. sched_bpf from sched.skel.h.
template <typename T>
class BpfSkeleton {
 public:
  // `name` is the object's, as errors say it: "loading sched: ...".
  explicit BpfSkeleton(std::string name) : name_(std::move(name)) {}
  ~BpfSkeleton() {
    if (skel_) T::destroy(skel_);
  }
  // Programs and links point into the skeleton: it stays where it is.
  BpfSkeleton(const BpfSkeleton&) = delete;
  BpfSkeleton& operator=(const BpfSkeleton&) = delete;

  // Opens the object; its maps and programs can be set up until Load.
  absl::Status Open() {
    RouteLibbpfLogs();
    if (skel_) return absl::FailedPreconditionError(name_ + " is open");
    skel_ = T::open();
    if (!skel_)
      return LastErrnoStatus(absl::StrCat("opening ", name_, ".bpf.o"));
    return absl::OkStatus();
  }
  // Creates the maps and loads the programs into the kernel.
  absl::Status Load() {
    return Check(skel_ ? T::load(skel_) : -EBADF, "loading");
  }
  // Attaches every program that has autoattach on.
  absl::Status Attach() {
    return Check(skel_ ? T::attach(skel_) : -EBADF, "attaching");
  }

  T* operator->() const { return skel_; }

 private:
  // libbpf returns -errno.
  absl::Status Check(int err, absl::string_view verb) const {
    if (err == 0) return absl::OkStatus();
    return ErrnoStatus(absl::StrCat(verb, " ", name_), err < 0 ? -err : err);
  }

  std::string name_;
  T* skel_ = nullptr;
};

// A link attached by hand rather than by T::attach, detached with its owner.
struct LinkDeleter {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

// Loads `programs` with the object or leaves them out (a source that is not
// the chosen one).
inline void SetAutoload(std::initializer_list<bpf_program*> programs, bool on) {
  for (bpf_program* p : programs) bpf_program__set_autoload(p, on);
}

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_BPF_SKELETON_H_
