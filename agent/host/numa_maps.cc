#include "agent/host/numa_maps.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/topology.h"

namespace locus {

absl::StatusOr<std::vector<uint64_t>> ParseNumaMaps(absl::string_view text,
                                                    const Topology& topology,
                                                    uint64_t page_size) {
  if (page_size == 0) return absl::InvalidArgumentError("page size 0");
  std::vector<uint64_t> pages(topology.nodes.size(), 0);
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t kernel_page_kb = page_size / 1024;
    std::vector<std::pair<int, uint64_t>> counts;
    for (absl::string_view field : fields) {
      if (absl::ConsumePrefix(&field, "kernelpagesize_kB=")) {
        if (!absl::SimpleAtoi(field, &kernel_page_kb) || kernel_page_kb == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", line_number, ": bad kernelpagesize_kB"));
        }
        continue;
      }
      if (field.size() < 3 || field[0] != 'N') continue;
      size_t eq = field.find('=');
      int node = 0;
      uint64_t count = 0;
      if (eq == absl::string_view::npos ||
          !absl::SimpleAtoi(field.substr(1, eq - 1), &node)) {
        continue;  // not a node field
      }
      if (!absl::SimpleAtoi(field.substr(eq + 1), &count)) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": bad '", field, "'"));
      }
      counts.emplace_back(node, count);
    }
    for (const auto& [node, count] : counts) {
      int index = NodeIndex(topology, node);
      if (index < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", line_number, ": pages on unknown node ", node));
      }
      pages[static_cast<size_t>(index)] +=
          count * (kernel_page_kb * 1024 / page_size);
    }
  }
  return pages;
}

}  // namespace locus
