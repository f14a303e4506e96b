#include "policy/yaml_errors.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/printable.h"
#include "common/utf8.h"
#include "policy/validate.h"

namespace locus {
namespace {

YamlLocation FromMark(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line, mark.column};
}

// One line of valid UTF-8, at most kMaxErrorBytes (plus "..."). Only a
// bounded head of `text` is looked at: a message may quote a 1 MB scalar.
std::string Shorten(absl::string_view text) {
  std::string line = Printable(text.substr(0, kMaxErrorBytes + 1));
  if (text.size() <= kMaxErrorBytes && line.size() <= kMaxErrorBytes) {
    return line;
  }
  return absl::StrCat(Utf8Prefix(line, kMaxErrorBytes), "...");
}

}  // namespace

YamlErrors::YamlErrors(absl::string_view filename)
    : filename_(Printable(filename)) {}

bool YamlErrors::Before(const ErrorLine& a, const ErrorLine& b) {
  return std::tie(a.at.line, a.at.column, a.order) <
         std::tie(b.at.line, b.at.column, b.order);
}

void YamlErrors::Error(YamlLocation at, absl::string_view message) {
  ErrorLine error{at, total_++, Shorten(message)};
  if (errors_.size() < kMaxReportedErrors) {
    errors_.push_back(std::move(error));
    return;
  }
  // Full: this one is kept only if it comes before the last one kept.
  auto last = std::max_element(errors_.begin(), errors_.end(), Before);
  if (Before(error, *last)) *last = std::move(error);
}

void YamlErrors::Error(const YAML::Mark& mark, absl::string_view message) {
  Error(FromMark(mark), message);
}

void YamlErrors::Remember(const std::string& path, const YAML::Mark& mark) {
  locations_[path] = FromMark(mark);
}

YamlLocation YamlErrors::Find(std::string path) const {
  while (true) {
    auto it = locations_.find(path);
    if (it != locations_.end()) return it->second;
    size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) return {};
    path.resize(cut);
  }
}

absl::Status YamlErrors::Result() const {
  if (errors_.empty()) return absl::OkStatus();
  std::vector<ErrorLine> sorted = errors_;
  std::sort(sorted.begin(), sorted.end(), Before);
  std::vector<std::string> lines;
  for (const ErrorLine& e : sorted) {
    lines.push_back(absl::StrCat(filename_, ":", e.at.line + 1, ":",
                                 e.at.column + 1, ": ", e.message));
  }
  if (total_ > sorted.size()) {
    lines.push_back(absl::StrCat(filename_, ": and ", total_ - sorted.size(),
                                 " more error(s) not shown"));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace locus
