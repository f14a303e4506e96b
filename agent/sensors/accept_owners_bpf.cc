#include "agent/sensors/accept_owners_bpf.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "accepts.skel.h"
#include "agent/sensors/bpf_skeleton.h"
#include "common/os_error.h"
#include "common/status_macros.h"
#include "locus/accepts.h"

namespace locus {
namespace {

// The owner's layout as the program writes it: four u32, no padding.
static_assert(sizeof(locus_accept_owner) == 4 * sizeof(__u32));
static_assert(offsetof(locus_accept_owner, tgid) == 0);
static_assert(offsetof(locus_accept_owner, tid) == 4);
static_assert(offsetof(locus_accept_owner, shared) == 8);

using AcceptsSkeleton = BpfSkeleton<accepts_bpf>;

absl::StatusOr<std::unique_ptr<AcceptsSkeleton>> LoadAndAttach() {
  auto skel = std::make_unique<AcceptsSkeleton>("accepts");
  RETURN_IF_ERROR(skel->Open());
  RETURN_IF_ERROR(skel->Load());
  RETURN_IF_ERROR(skel->Attach());
  return skel;
}

class BpfAcceptOwners : public AcceptOwners {
 public:
  absl::Status Watch(const std::vector<int32_t>& processes) override {
    if (processes.empty()) {
      skel_.reset();  // detaches the program and frees the maps
      watched_.clear();
      return absl::OkStatus();
    }
    absl::flat_hash_set<int32_t> wanted;
    for (int32_t tgid : processes) {
      if (tgid <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("accepts: no process ", tgid));
      }
      wanted.insert(tgid);
    }
    if (wanted.size() > LOCUS_ACCEPTS_MAX_PROCESSES) {
      return absl::InvalidArgumentError(
          absl::StrCat("accepts: ", wanted.size(), " processes, at most ",
                       LOCUS_ACCEPTS_MAX_PROCESSES));
    }
    if (!skel_) {
      ASSIGN_OR_RETURN(skel_, LoadAndAttach());
      watched_.clear();  // a fresh program knows none of them
    }
    // Stop recording a dropped process before forgetting its sockets.
    absl::flat_hash_set<int32_t> dropped;
    for (int32_t tgid : watched_) {
      if (wanted.contains(tgid)) continue;
      uint32_t key = tgid;
      bpf_map__delete_elem((*skel_)->maps.watched, &key, sizeof(key), 0);
      dropped.insert(tgid);
    }
    for (int32_t tgid : dropped) watched_.erase(tgid);
    if (!dropped.empty()) {
      std::vector<uint64_t> gone;
      for (const auto& [inode, owner] : Entries()) {
        if (dropped.contains(static_cast<int32_t>(owner.tgid))) {
          gone.push_back(inode);
        }
      }
      Forget(gone);
    }
    for (int32_t tgid : wanted) {
      if (watched_.contains(tgid)) continue;
      uint32_t key = tgid;
      uint8_t one = 1;
      int err = bpf_map__update_elem((*skel_)->maps.watched, &key, sizeof(key),
                                     &one, sizeof(one), BPF_ANY);
      if (err != 0) {
        return ErrnoStatus(absl::StrCat("accepts: watching process ", tgid),
                           -err);
      }
      watched_.insert(tgid);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<absl::flat_hash_map<uint64_t, AcceptOwner>> Read() override {
    absl::flat_hash_map<uint64_t, AcceptOwner> out;
    if (!skel_) return out;
    // An accept that passed the program's `watched` check just as Watch
    // dropped its process can record it after Watch cleaned up: such
    // entries are forgotten here.
    std::vector<uint64_t> stale;
    for (const auto& [inode, owner] : Entries()) {
      auto tgid = static_cast<int32_t>(owner.tgid);
      if (!watched_.contains(tgid)) {
        stale.push_back(inode);
        continue;
      }
      out[inode] = {tgid, static_cast<int32_t>(owner.tid), owner.shared != 0};
    }
    Forget(stale);
    return out;
  }

  void Forget(const std::vector<uint64_t>& inodes) override {
    if (!skel_) return;
    for (uint64_t inode : inodes) {
      // ENOENT (never recorded, or forgotten already) is what was asked.
      bpf_map__delete_elem((*skel_)->maps.owners, &inode, sizeof(inode), 0);
    }
  }

  std::string source() const override { return kAcceptOwnersSourceBpf; }

 private:
  // Every entry of `owners`. Only the agent deletes, so the walk is not
  // restarted under it; the program's inserts may or may not be seen. At
  // most max_entries steps whatever happens.
  std::vector<std::pair<uint64_t, locus_accept_owner>> Entries() const {
    std::vector<std::pair<uint64_t, locus_accept_owner>> entries;
    bpf_map* map = (*skel_)->maps.owners;
    uint64_t key = 0;
    const void* prev = nullptr;
    for (int i = 0; i < LOCUS_ACCEPTS_MAX_SOCKETS; ++i) {
      if (bpf_map__get_next_key(map, prev, &key, sizeof(key)) != 0) break;
      prev = &key;
      locus_accept_owner owner = {};
      if (bpf_map__lookup_elem(map, &key, sizeof(key), &owner, sizeof(owner),
                               0) == 0) {
        entries.emplace_back(key, owner);
      }
    }
    return entries;
  }

  absl::flat_hash_set<int32_t> watched_;  // what `watched` holds
  std::unique_ptr<AcceptsSkeleton> skel_;
};

// Learns nothing, and says why.
class NoAcceptOwners : public AcceptOwners {
 public:
  explicit NoAcceptOwners(std::string why) : why_(std::move(why)) {}

  absl::Status Watch(const std::vector<int32_t>& processes) override {
    if (processes.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(why_);
  }
  absl::StatusOr<absl::flat_hash_map<uint64_t, AcceptOwner>> Read() override {
    return absl::flat_hash_map<uint64_t, AcceptOwner>();
  }
  void Forget(const std::vector<uint64_t>&) override {}
  std::string source() const override { return why_; }

 private:
  std::string why_;
};

}  // namespace

std::unique_ptr<AcceptOwners> MakeAcceptOwners(bool disable_bpf) {
  if (disable_bpf) return std::make_unique<NoAcceptOwners>("bpf disabled");
  absl::StatusOr<std::unique_ptr<AcceptsSkeleton>> probe = LoadAndAttach();
  if (!probe.ok()) {
    return std::make_unique<NoAcceptOwners>(
        absl::StrCat("bpf unavailable: ", probe.status().message()));
  }
  return std::make_unique<BpfAcceptOwners>();
}

}  // namespace locus
