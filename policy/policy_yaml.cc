#include "policy/policy_yaml.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/os_error.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"
#include "policy/default_policy.h"
#include "policy/validate.h"
#include "policy/yaml_errors.h"
#include "policy/yaml_reader.h"

namespace locus {
namespace {

// A policy nests three or four levels deep. Deeper input is refused at the
// first collection past this depth, at its line and column, long before
// yaml-cpp's own guard (500 levels) would throw its bare "bad file".
constexpr int kMaxNesting = 32;

// Records where each document starts, and refuses nesting deeper than
// kMaxNesting (throws YAML::ParserException).
class DocumentMarks : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
    depth_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&,
                       YAML::anchor_t, YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& mark) {
    if (++depth_ > kMaxNesting) {
      throw YAML::ParserException(
          mark, absl::StrCat("nested more than ", kMaxNesting,
                             " levels deep (a policy needs a few)"));
    }
  }
  int depth_ = 0;
};

// What is at a path that is not a regular file, for the message.
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something else";
}

absl::Status TooBig(const std::string& path, uint64_t at_least) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": ", at_least, " bytes or more; a policy file is at ",
                   "most ", kMaxPolicyBytes, " bytes"));
}

// A regular file of an acceptable size, judged before reading a byte.
absl::Status CheckFile(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": is ", FileKind(st.st_mode), ", not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxPolicyBytes) {
    return TooBig(path, st.st_size);
  }
  return absl::OkStatus();
}

// Up to kMaxPolicyBytes + 1 bytes: the size fstat gave may be stale (the
// file grows) or meaningless (size 0 in /proc), so the limit holds here too.
absl::StatusOr<std::string> ReadAtMostLimit(int fd, const std::string& path,
                                            size_t size_hint) {
  std::string text(std::min(size_hint, kMaxPolicyBytes) + 1, '\0');
  size_t used = 0;
  while (true) {
    if (used == text.size()) {
      if (used > kMaxPolicyBytes) return TooBig(path, used);
      text.resize(std::min(2 * used, kMaxPolicyBytes + 1));
    }
    ssize_t n = read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus(path);
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  text.resize(used);
  return text;
}

// Not YAML::LoadAll: in yaml-cpp 0.7 it loops forever, allocating, on input
// such as ",a: 1" (jbeder/yaml-cpp#1040, fixed upstream by #1319). The
// documents are counted with a bounded loop instead; false (with an error)
// when there is more than one. May throw YAML::Exception.
bool OneDocument(const std::string& input, YamlErrors& errors) {
  std::istringstream stream(input);
  YAML::Parser parser(stream);
  DocumentMarks marks;
  for (int i = 0; i < 2 && parser.HandleNextDocument(marks); ++i) {
  }
  if (marks.starts.size() <= 1) return true;
  const YAML::Mark& second = marks.starts[1];
  if (second.pos == marks.starts[0].pos) {
    // The parser made no progress: a token it could not place.
    char c = second.pos >= 0 && second.pos < static_cast<int>(input.size())
                 ? input[second.pos]
                 : '?';
    errors.Error(second, absl::StrCat("unexpected '", std::string(1, c),
                                      "' (not valid YAML here)"));
  } else {
    errors.Error(second,
                 "the policy file holds one YAML document, found another");
  }
  return false;
}

// The file's one document; nullopt (with the errors) when it is not YAML,
// too big, or more than one document.
std::optional<YAML::Node> LoadDocument(absl::string_view text,
                                       YamlErrors& errors) {
  if (text.size() > kMaxPolicyBytes) {
    errors.Error(YamlLocation{}, absl::StrCat("the policy file is ",
                                              text.size(), " bytes; at most ",
                                              kMaxPolicyBytes, " are read"));
    return std::nullopt;
  }
  const std::string input(text.data(), text.size());
  try {
    if (!OneDocument(input, errors)) return std::nullopt;
    return YAML::Load(input);
  } catch (const YAML::Exception& e) {
    // Any yaml-cpp failure (a ParserException above all) becomes a value,
    // never an exception.
    errors.Error(e.mark, e.msg);
    return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<v1::Policy> ParsePolicyYamlOver(const v1::Policy& base,
                                               absl::string_view text,
                                               absl::string_view filename,
                                               const Topology* host) {
  YamlErrors errors(filename);
  std::optional<YAML::Node> document = LoadDocument(text, errors);
  if (!document.has_value()) return errors.Result();
  v1::Policy policy = base;
  ReadYamlMessage(*document, &policy, "", errors);
  // Semantic checks run even after structural errors so that one pass shows
  // everything; a field that could not be read is not judged again.
  CheckPolicy(policy, host,
              [&errors](absl::string_view path, absl::string_view message) {
                std::string p(path);
                if (errors.IsBad(p)) return;
                errors.Error(errors.Find(p), message);
              });
  RETURN_IF_ERROR(errors.Result());
  return policy;
}

absl::StatusOr<v1::Policy> ParsePolicyYaml(absl::string_view text,
                                           absl::string_view filename,
                                           const Topology* host) {
  return ParsePolicyYamlOver(DefaultPolicy(), text, filename, host);
}

absl::StatusOr<std::string> ReadPolicyFile(absl::string_view path) {
  const std::string name(path.data(), path.size());
  // stat before open: a FIFO or a device is judged without being opened
  // (opening a FIFO waits for a writer; opening some devices does things).
  struct stat st;
  if (stat(name.c_str(), &st) != 0) return LastErrnoStatus(name);
  RETURN_IF_ERROR(CheckFile(name, st));
  // Whatever was swapped in since is judged again on the open fd; with
  // O_NONBLOCK, even a FIFO opened in that gap does not wait.
  UniqueFd fd(open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) return LastErrnoStatus(name);
  if (fstat(fd.get(), &st) != 0) return LastErrnoStatus(name);
  RETURN_IF_ERROR(CheckFile(name, st));
  return ReadAtMostLimit(fd.get(), name, static_cast<size_t>(st.st_size));
}

absl::StatusOr<v1::Policy> LoadPolicyFile(absl::string_view path,
                                          const Topology* host) {
  ASSIGN_OR_RETURN(std::string text, ReadPolicyFile(path));
  return ParsePolicyYaml(text, path, host);
}

}  // namespace locus
