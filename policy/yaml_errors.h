// Errors found in a policy file, each at its line and column, and where each
// field was written, so that semantic checks (which speak in field paths)
// can point into the file too. Internal to locus_policy_yaml.
//
// What is reported is bounded whatever the file: the first
// kMaxReportedErrors errors in file order, each cut to kMaxErrorBytes, then
// one line counting the rest. The text ends up in status, every metrics
// message and the log; a large broken file must not make any of them large.
// It is also valid UTF-8 with no control characters, whatever bytes the file
// held, so that it can go into protobuf strings and onto terminals.
#ifndef LOCUS_POLICY_YAML_ERRORS_H_
#define LOCUS_POLICY_YAML_ERRORS_H_

#include <yaml-cpp/mark.h>

#include <cstddef>
#include <cstdint>
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

inline constexpr size_t kMaxReportedErrors = 20;
inline constexpr size_t kMaxErrorBytes = 400;  // the message, after the place

class YamlErrors {
 public:
  explicit YamlErrors(absl::string_view filename);

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
  // message" line per error (1-based, like compilers), in file order, and
  // "file: and N more errors" when some were left out.
  absl::Status Result() const;

 private:
  struct ErrorLine {
    YamlLocation at;
    uint64_t order;  // among errors at one place, the first reported first
    std::string message;
  };
  static bool Before(const ErrorLine& a, const ErrorLine& b);

  std::string filename_;
  std::vector<ErrorLine> errors_;  // the first in file order, at most
                                   // kMaxReportedErrors
  uint64_t total_ = 0;             // every error reported
  std::map<std::string, YamlLocation> locations_;
  std::set<std::string> bad_;
};

}  // namespace locus

#endif  // LOCUS_POLICY_YAML_ERRORS_H_
