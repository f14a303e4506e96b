// The registry as a file for node_exporter's textfile collector, on hosts
// that allow the agent no listening port. The collector reads every *.prom
// file of its directory at each scrape, so the file is replaced whole:
// written under a name the collector ignores, in the same directory (a
// rename never crosses file systems), then renamed over the old one.
//
// The directory is opened once and every write goes through its
// descriptor (openat, renameat): the agent runs as root, and a path
// resolved again at each tick would let whoever can rename a directory on
// it (a user's own directory, say) swap it for a symlink and have root
// create the file anywhere.
#ifndef LOCUS_AGENT_API_PROMETHEUS_TEXTFILE_H_
#define LOCUS_AGENT_API_PROMETHEUS_TEXTFILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/unique_fd.h"

namespace locus {

class AtomicTextfile {
 public:
  enum class Symlinks {
    // Every directory of the path is opened with O_NOFOLLOW: a symlink
    // anywhere on it is an error, so nobody who controls a directory on the
    // path can point the file elsewhere, at start or later.
    kRefuse,
    // The directory is resolved as open(2) does, once.
    kFollow,
  };

  // Opens the directory `path` is in. Errors: a missing or non-directory
  // component, a symlink (kRefuse), a ".." component, or a path that ends
  // in "/" (no file name).
  static absl::StatusOr<AtomicTextfile> Open(const std::string& path,
                                             Symlinks symlinks);

  // Replaces the file with `text` atomically: a reader sees the old file or
  // the new one, never a part. The file is mode 0644 (node_exporter runs as
  // another user). On error the file is unchanged and no temporary is left.
  absl::Status Write(absl::string_view text) const;

  const std::string& path() const { return path_; }

 private:
  AtomicTextfile(UniqueFd dir, std::string name, std::string path)
      : dir_(std::move(dir)), name_(std::move(name)), path_(std::move(path)) {}

  UniqueFd dir_;      // O_PATH descriptor of the directory
  std::string name_;  // the file's name in it
  std::string path_;  // as given, for messages
};

// Open(path, kFollow) then Write(text), for one-off writes (experiment
// records).
absl::Status WriteTextfileAtomically(const std::string& path,
                                     absl::string_view text);

}  // namespace locus

#endif  // LOCUS_AGENT_API_PROMETHEUS_TEXTFILE_H_
