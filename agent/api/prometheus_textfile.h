// The registry as a file for node_exporter's textfile collector, on hosts
// that allow the agent no listening port. The collector reads every *.prom
// file of its directory at each scrape, so the file is replaced whole:
// written under a name the collector ignores, in the same directory (a
// rename never crosses file systems), then renamed over the old one.
#ifndef LOCUS_AGENT_API_PROMETHEUS_TEXTFILE_H_
#define LOCUS_AGENT_API_PROMETHEUS_TEXTFILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace locus {

// Replaces `path` with `text` atomically: a reader sees the old file or the
// new one, never a part. The file is mode 0644 (node_exporter runs as
// another user). On error `path` is unchanged and no temporary is left.
absl::Status WriteTextfileAtomically(const std::string& path,
                                     absl::string_view text);

}  // namespace locus

#endif  // LOCUS_AGENT_API_PROMETHEUS_TEXTFILE_H_
