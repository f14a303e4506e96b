#include "policy/policy_yaml.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "policy/default_policy.h"
#include "policy/validate.h"

namespace locus {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

struct Location {
  int line = 0;  // 0-based, as yaml-cpp counts
  int column = 0;
};

Location FromMark(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line, mark.column};
}

// Collects errors with locations and remembers where each field was written,
// so semantic checks (which speak in field paths) can point into the file.
class Reader {
 public:
  explicit Reader(absl::string_view filename)
      : filename_(filename.data(), filename.size()) {}

  void Error(Location at, absl::string_view message) {
    errors_.push_back({at.line, at.column, std::string(message)});
  }
  void Error(const YAML::Mark& mark, absl::string_view message) {
    Error(FromMark(mark), message);
  }

  // An error about the value of field `path`, which later checks then skip.
  template <typename At>
  void FieldError(const std::string& path, At at, absl::string_view message) {
    bad_.insert(path);
    Error(at, message);
  }
  bool IsBad(const std::string& path) const { return bad_.count(path) > 0; }

  void Remember(const std::string& path, const YAML::Mark& mark) {
    locations_[path] = FromMark(mark);
  }

  // Where `path` was written; else its closest written parent; else 1:1.
  Location Find(std::string path) const {
    while (true) {
      auto it = locations_.find(path);
      if (it != locations_.end()) return it->second;
      size_t cut = path.find_last_of(".[");
      if (cut == std::string::npos) return {};
      path.resize(cut);
    }
  }

  void ReadMessage(const YAML::Node& node, Message* message,
                   const std::string& path);

  absl::Status Result() const {
    if (errors_.empty()) return absl::OkStatus();
    std::vector<ErrorLine> sorted = errors_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const ErrorLine& a, const ErrorLine& b) {
                       return std::tie(a.line, a.column) <
                              std::tie(b.line, b.column);
                     });
    std::vector<std::string> lines;
    for (const ErrorLine& e : sorted) {
      lines.push_back(OneLine(absl::StrCat(filename_, ":", e.line + 1, ":",
                                           e.column + 1, ": ", e.message)));
    }
    return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
  }

 private:
  struct ErrorLine {
    int line;
    int column;
    std::string message;
  };

  void ReadField(const YAML::Node& value, Message* message,
                 const FieldDescriptor* field, const std::string& path);
  void ReadScalar(const YAML::Node& value, Message* message,
                  const FieldDescriptor* field, const std::string& path);

  std::string filename_;
  std::vector<ErrorLine> errors_;
  std::map<std::string, Location> locations_;
  std::set<std::string> bad_;
};

std::string Kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return absl::StrCat("\"", node.Scalar(), "\"");
    default:
      return "an undefined value";
  }
}

// Levenshtein distance, for "did you mean" on misspelt keys.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "PinTo" -> "PIN_TO_": the prefix of the enum's value names.
std::string EnumPrefix(const EnumDescriptor* type) {
  std::string prefix;
  for (char c : type->name()) {
    if (absl::ascii_isupper(c) && !prefix.empty()) prefix += '_';
    prefix += absl::ascii_toupper(c);
  }
  return prefix + "_";
}

std::vector<std::string> EnumChoices(const EnumDescriptor* type) {
  std::string prefix = EnumPrefix(type);
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() == 0) continue;
    names.push_back(
        absl::AsciiStrToLower(type->value(i)->name().substr(prefix.size())));
  }
  return names;
}

// A policy is a page of YAML; anything much bigger is a mistake (or an
// attack on the parser).
constexpr size_t kMaxPolicyBytes = 1 << 20;

// Records where each document starts; nothing else.
class DocumentMarks : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

bool IsPlainScalar(const YAML::Node& node) {
  // yaml-cpp tags quoted scalars "!" and plain ones "?": a quoted "5" is the
  // string 5, not the number.
  return node.Tag() != "!";
}

bool LooksLikeInteger(absl::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

void Reader::ReadMessage(const YAML::Node& node, Message* message,
                         const std::string& path) {
  const std::string section = path.empty() ? "the policy" : path;
  if (node.IsNull()) return;  // "irqs:" with everything commented out
  if (!node.IsMap()) {
    FieldError(
        path, node.Mark(),
        absl::StrCat("expected a mapping for ", section, ", got ", Kind(node)));
    return;
  }
  const google::protobuf::Descriptor* type = message->GetDescriptor();
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const YAML::Node& value = entry.second;
    if (!key.IsScalar()) {
      Error(key.Mark(), absl::StrCat("keys in ", section,
                                     " must be plain names, got ", Kind(key)));
      continue;
    }
    const std::string& name = key.Scalar();
    const FieldDescriptor* field = type->FindFieldByName(name);
    if (field == nullptr) {
      std::string message_text =
          absl::StrCat("unknown key \"", name, "\" in ", section);
      std::vector<std::string> known;
      for (int i = 0; i < type->field_count(); ++i) {
        const std::string& candidate = type->field(i)->name();
        known.push_back(candidate);
        if (EditDistance(name, candidate) <= 2) {
          absl::StrAppend(&message_text, " (did you mean \"", candidate,
                          "\"?)");
        }
      }
      absl::StrAppend(&message_text,
                      "; known keys: ", absl::StrJoin(known, ", "));
      Error(key.Mark(), message_text);
      continue;
    }
    if (!seen.insert(name).second) {
      Error(key.Mark(),
            absl::StrCat("duplicate key \"", name, "\" in ", section));
      continue;
    }
    std::string child = path.empty() ? name : absl::StrCat(path, ".", name);
    // A missing value ("key:") is reported at its key, not the next line.
    YAML::Mark at =
        value.IsNull() || value.Mark().is_null() ? key.Mark() : value.Mark();
    Remember(child, at);
    ReadField(value, message, field, child);
  }
}

void Reader::ReadField(const YAML::Node& value, Message* message,
                       const FieldDescriptor* field, const std::string& path) {
  const Reflection* reflection = message->GetReflection();
  if (field->is_repeated()) {
    if (!value.IsNull() && !value.IsSequence()) {
      FieldError(path, value.Mark(),
                 absl::StrCat("expected a sequence for ", path,
                              " (e.g. [a, b]), got ", Kind(value)));
      return;
    }
    // A list in the file replaces the default list; "key:" empties it.
    reflection->ClearField(message, field);
    for (size_t i = 0; i < value.size(); ++i) {
      std::string element = absl::StrCat(path, "[", i, "]");
      Remember(element, value[i].Mark());
      ReadScalar(value[i], message, field, element);
    }
    return;
  }
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    ReadMessage(value, reflection->MutableMessage(message, field), path);
    return;
  }
  ReadScalar(value, message, field, path);
}

void Reader::ReadScalar(const YAML::Node& value, Message* message,
                        const FieldDescriptor* field, const std::string& path) {
  const Reflection* reflection = message->GetReflection();
  const bool repeated = field->is_repeated();
  absl::string_view what;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      what = "true or false";
      break;
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      what = "an integer";
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      what = "a number";
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      what = "a name";
      break;
    default:
      what = "a string";
      break;
  }
  if (!value.IsScalar()) {
    FieldError(
        path,
        value.IsNull() || value.Mark().is_null() ? Find(path)
                                                 : FromMark(value.Mark()),
        absl::StrCat("expected ", what, " for ", path, ", got ", Kind(value)));
    return;
  }
  const std::string& text = value.Scalar();
  const bool plain = IsPlainScalar(value);
  auto wrong = [&]() {
    FieldError(path, value.Mark(),
               absl::StrCat("expected ", what, " for ", path, ", got ",
                            plain ? "" : "quoted ", Kind(value)));
  };

  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (!plain || (text != "true" && text != "false")) return wrong();
      bool b = text == "true";
      repeated ? reflection->AddBool(message, field, b)
               : reflection->SetBool(message, field, b);
      return;
    }
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v = 0;
      if (!plain || !LooksLikeInteger(text)) return wrong();
      bool is32 = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32;
      if (!absl::SimpleAtoi(text, &v) ||
          (is32 && (v < INT32_MIN || v > INT32_MAX))) {
        FieldError(path, value.Mark(),
                   absl::StrCat(path, " value ", text, " does not fit in ",
                                is32 ? "32" : "64", " bits"));
        return;
      }
      if (is32) {
        repeated ? reflection->AddInt32(message, field, v)
                 : reflection->SetInt32(message, field, v);
      } else {
        repeated ? reflection->AddInt64(message, field, v)
                 : reflection->SetInt64(message, field, v);
      }
      return;
    }
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v = 0;
      if (!plain || !LooksLikeInteger(text)) return wrong();
      if (text[0] == '-') {
        FieldError(path, value.Mark(),
                   absl::StrCat(path, " must not be negative, got ", text));
        return;
      }
      bool is32 = field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
      if (!absl::SimpleAtoi(text, &v) || (is32 && v > UINT32_MAX)) {
        FieldError(path, value.Mark(),
                   absl::StrCat(path, " value ", text, " does not fit in ",
                                is32 ? "32" : "64", " bits"));
        return;
      }
      if (is32) {
        repeated ? reflection->AddUInt32(message, field, v)
                 : reflection->SetUInt32(message, field, v);
      } else {
        repeated ? reflection->AddUInt64(message, field, v)
                 : reflection->SetUInt64(message, field, v);
      }
      return;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v = 0;
      if (!plain || !absl::SimpleAtod(text, &v) || !std::isfinite(v)) {
        return wrong();
      }
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        repeated ? reflection->AddDouble(message, field, v)
                 : reflection->SetDouble(message, field, v);
      } else {
        repeated ? reflection->AddFloat(message, field, v)
                 : reflection->SetFloat(message, field, v);
      }
      return;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumDescriptor* type = field->enum_type();
      const EnumValueDescriptor* found = nullptr;
      if (!text.empty() && text == absl::AsciiStrToLower(text)) {
        found = type->FindValueByName(
            absl::StrCat(EnumPrefix(type), absl::AsciiStrToUpper(text)));
      }
      if (found == nullptr || found->number() == 0) {
        FieldError(path, value.Mark(),
                   absl::StrCat("unknown ", field->name(), " \"", text,
                                "\" (expected ",
                                absl::StrJoin(EnumChoices(type), " or "), ")"));
        return;
      }
      repeated ? reflection->AddEnumValue(message, field, found->number())
               : reflection->SetEnumValue(message, field, found->number());
      return;
    }
    default:
      repeated ? reflection->AddString(message, field, text)
               : reflection->SetString(message, field, text);
      return;
  }
}

}  // namespace

absl::StatusOr<v1::Policy> ParsePolicyYamlOver(const v1::Policy& base,
                                               absl::string_view text,
                                               absl::string_view filename,
                                               const Topology* host) {
  Reader reader(filename);
  if (text.size() > kMaxPolicyBytes) {
    reader.Error(Location{}, absl::StrCat("the policy file is ", text.size(),
                                          " bytes; at most ", kMaxPolicyBytes,
                                          " are read"));
    return reader.Result();
  }
  const std::string input(text.data(), text.size());
  YAML::Node document;
  try {
    // Not YAML::LoadAll: in yaml-cpp 0.7 it loops forever, allocating, on
    // input such as ",a: 1" (jbeder/yaml-cpp#1040, fixed upstream by #1319).
    // The documents are counted with a bounded loop instead.
    std::istringstream stream(input);
    YAML::Parser parser(stream);
    DocumentMarks marks;
    for (int i = 0; i < 2 && parser.HandleNextDocument(marks); ++i) {
    }
    if (marks.starts.size() > 1) {
      const YAML::Mark& second = marks.starts[1];
      if (second.pos == marks.starts[0].pos) {
        // The parser made no progress: a token it could not place.
        char c = second.pos >= 0 && second.pos < static_cast<int>(input.size())
                     ? input[second.pos]
                     : '?';
        reader.Error(second, absl::StrCat("unexpected '", std::string(1, c),
                                          "' (not valid YAML here)"));
      } else {
        reader.Error(second,
                     "the policy file holds one YAML document, found another");
      }
      return reader.Result();
    }
    document = YAML::Load(input);
  } catch (const YAML::ParserException& e) {
    reader.Error(e.mark, e.msg);
    return reader.Result();
  } catch (const YAML::Exception& e) {
    // Any other yaml-cpp failure still becomes a value, never an exception.
    reader.Error(e.mark, e.msg);
    return reader.Result();
  }
  v1::Policy policy = base;
  reader.ReadMessage(document, &policy, "");
  // Semantic checks run even after structural errors so that one pass shows
  // everything; a field that could not be read is not judged again.
  CheckPolicy(policy, host,
              [&reader](absl::string_view path, absl::string_view message) {
                std::string p(path);
                if (reader.IsBad(p)) return;
                reader.Error(reader.Find(p), message);
              });
  absl::Status status = reader.Result();
  if (!status.ok()) return status;
  return policy;
}

absl::StatusOr<v1::Policy> ParsePolicyYaml(absl::string_view text,
                                           absl::string_view filename,
                                           const Topology* host) {
  return ParsePolicyYamlOver(DefaultPolicy(), text, filename, host);
}

absl::StatusOr<v1::Policy> LoadPolicyFile(absl::string_view path,
                                          const Topology* host) {
  std::string name(path.data(), path.size());
  std::ifstream in(name, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string message = absl::StrCat(name, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES) return absl::PermissionDeniedError(message);
    return absl::UnavailableError(message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::UnavailableError(absl::StrCat(name, ": read failed"));
  }
  return ParsePolicyYaml(text.str(), name, host);
}

}  // namespace locus
