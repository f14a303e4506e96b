#include "policy/policy_yaml.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_read.h"
#include "common/status_macros.h"
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
  // The shared reader judges what is at the path before reading a byte: a
  // FIFO or a device is refused unopened, a huge file by its size.
  return ReadRegularFile(std::string(path.data(), path.size()),
                         {.max_bytes = kMaxPolicyBytes});
}

absl::StatusOr<v1::Policy> LoadPolicyFile(absl::string_view path,
                                          const Topology* host) {
  ASSIGN_OR_RETURN(std::string text, ReadPolicyFile(path));
  return ParsePolicyYaml(text, path, host);
}

}  // namespace locus
