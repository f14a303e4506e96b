// Errors found in a policy file, each at its line and column, and where each
// field was written, so that semantic checks (which speak in field paths)
// can point into the file too. Internal to locus_policy_yaml.
#ifndef LOCUS_POLICY_YAML_ERRORS_H_
#define LOCUS_POLICY_YAML_ERRORS_H_

#include <yaml-cpp/mark.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace locus {

// A place in the file, 0-based as yaml-cpp counts.
struct YamlLocation {
  int line = 0;
  int column = 0;
};

class YamlErrors {
 public:
  explicit YamlErrors(absl::string_view filename)
      : filename_(filename.data(), filename.size()) {}

  void Error(YamlLocation at, absl::string_view message);
  void Error(const YAML::Mark& mark, absl::string_view message);

  // An error about the value of field `path`, which later checks then skip.
  template <typename At>
  void FieldError(const std::string& path, At at, absl::string_view message) {
    bad_.insert(path);
    Error(at, message);
  }
  bool IsBad(const std::string& path) const { return bad_.count(path) > 0; }

  void Remember(const std::string& path, const YAML::Mark& mark);
  // Where `path` was written; else its closest written parent; else 1:1.
  YamlLocation Find(std::string path) const;

  // OK without errors; else InvalidArgument with one "file:line:column:
  // message" line per error (1-based, like compilers), in file order.
  absl::Status Result() const;

 private:
  struct ErrorLine {
    YamlLocation at;
    std::string message;
  };

  std::string filename_;
  std::vector<ErrorLine> errors_;
  std::map<std::string, YamlLocation> locations_;
  std::set<std::string> bad_;
};

}  // namespace locus

#endif  // LOCUS_POLICY_YAML_ERRORS_H_
