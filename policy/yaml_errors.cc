#include "policy/yaml_errors.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/validate.h"

namespace locus {
namespace {

YamlLocation FromMark(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line, mark.column};
}

}  // namespace

void YamlErrors::Error(YamlLocation at, absl::string_view message) {
  errors_.push_back({at, std::string(message)});
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
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ErrorLine& a, const ErrorLine& b) {
                     return std::tie(a.at.line, a.at.column) <
                            std::tie(b.at.line, b.at.column);
                   });
  std::vector<std::string> lines;
  for (const ErrorLine& e : sorted) {
    lines.push_back(OneLine(absl::StrCat(filename_, ":", e.at.line + 1, ":",
                                         e.at.column + 1, ": ", e.message)));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace locus
