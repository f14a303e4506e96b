#include "policy/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"

namespace locus {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

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

std::string UnknownKey(const google::protobuf::Descriptor* type,
                       const std::string& name, const std::string& section) {
  std::string text = absl::StrCat("unknown key \"", name, "\" in ", section);
  std::vector<std::string> known;
  for (int i = 0; i < type->field_count(); ++i) {
    const std::string& candidate = type->field(i)->name();
    known.push_back(candidate);
    // The distance is at least the difference in length: a long key (it
    // may be megabytes) is not compared at all.
    size_t apart = name.size() > candidate.size()
                       ? name.size() - candidate.size()
                       : candidate.size() - name.size();
    if (apart <= 2 && EditDistance(name, candidate) <= 2) {
      absl::StrAppend(&text, " (did you mean \"", candidate, "\"?)");
    }
  }
  absl::StrAppend(&text, "; known keys: ", absl::StrJoin(known, ", "));
  return text;
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

bool IsPlainScalar(const YAML::Node& node) {
  // yaml-cpp tags quoted scalars "!" and plain ones "?": a quoted "5" is the
  // string 5, not the number.
  return node.Tag() != "!";
}

bool LooksLikeInteger(absl::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

// What a field of this type takes, as messages say it.
absl::string_view Expected(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return "an integer";
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return "a number";
    case FieldDescriptor::CPPTYPE_ENUM:
      return "a name";
    default:
      return "a string";
  }
}

// Reflection's SetInt32, AddInt32 and the like.
template <typename T>
using Setter = void (Reflection::*)(Message*, const FieldDescriptor*, T) const;

// One scalar on its way into a field; a repeated field gets it added.
struct Scalar {
  const YAML::Node& value;
  Message* message;
  const FieldDescriptor* field;
  const std::string& path;
  const std::string& text;
  bool plain;  // not quoted

  bool Is(FieldDescriptor::CppType type) const {
    return field->cpp_type() == type;
  }
  template <typename T>
  void Store(Setter<T> set, Setter<T> add, std::type_identity_t<T> v) const {
    const Reflection* reflection = message->GetReflection();
    (reflection->*(field->is_repeated() ? add : set))(message, field, v);
  }
};

// Reads YAML into messages; keeps no state but the errors it reports.
class Reader {
 public:
  explicit Reader(YamlErrors& errors) : errors_(errors) {}

  void ReadMessage(const YAML::Node& node, Message* message,
                   const std::string& path);

 private:
  void ReadField(const YAML::Node& value, Message* message,
                 const FieldDescriptor* field, const std::string& path);
  void ReadScalar(const YAML::Node& value, Message* message,
                  const FieldDescriptor* field, const std::string& path);
  void ReadBool(const Scalar& s);
  void ReadInteger(const Scalar& s);
  template <typename T, typename Wide>
  void StoreInteger(const Scalar& s, Setter<T> set, Setter<T> add);
  void ReadFloat(const Scalar& s);
  void ReadEnum(const Scalar& s);
  void Wrong(const Scalar& s);

  YamlErrors& errors_;
};

void Reader::ReadMessage(const YAML::Node& node, Message* message,
                         const std::string& path) {
  const std::string section = path.empty() ? "the policy" : path;
  if (node.IsNull()) return;  // "irqs:" with everything commented out
  if (!node.IsMap()) {
    errors_.FieldError(
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
      errors_.Error(key.Mark(),
                    absl::StrCat("keys in ", section,
                                 " must be plain names, got ", Kind(key)));
      continue;
    }
    const std::string& name = key.Scalar();
    const FieldDescriptor* field = type->FindFieldByName(name);
    if (field == nullptr) {
      errors_.Error(key.Mark(), UnknownKey(type, name, section));
      continue;
    }
    if (!seen.insert(name).second) {
      errors_.Error(key.Mark(),
                    absl::StrCat("duplicate key \"", name, "\" in ", section));
      continue;
    }
    std::string child = path.empty() ? name : absl::StrCat(path, ".", name);
    // A missing value ("key:") is reported at its key, not the next line.
    errors_.Remember(child, value.IsNull() || value.Mark().is_null()
                                ? key.Mark()
                                : value.Mark());
    ReadField(value, message, field, child);
  }
}

void Reader::ReadField(const YAML::Node& value, Message* message,
                       const FieldDescriptor* field, const std::string& path) {
  const Reflection* reflection = message->GetReflection();
  if (field->is_repeated()) {
    if (!value.IsNull() && !value.IsSequence()) {
      errors_.FieldError(path, value.Mark(),
                         absl::StrCat("expected a sequence for ", path,
                                      " (e.g. [a, b]), got ", Kind(value)));
      return;
    }
    // A list in the file replaces the default list; "key:" empties it.
    reflection->ClearField(message, field);
    for (size_t i = 0; i < value.size(); ++i) {
      std::string element = absl::StrCat(path, "[", i, "]");
      errors_.Remember(element, value[i].Mark());
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
  if (!value.IsScalar()) {
    std::string text = absl::StrCat("expected ", Expected(field), " for ", path,
                                    ", got ", Kind(value));
    if (value.IsNull() || value.Mark().is_null()) {
      errors_.FieldError(path, errors_.Find(path), text);
    } else {
      errors_.FieldError(path, value.Mark(), text);
    }
    return;
  }
  const Scalar s{value, message,        field,
                 path,  value.Scalar(), IsPlainScalar(value)};
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return ReadBool(s);
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return ReadInteger(s);
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return ReadFloat(s);
    case FieldDescriptor::CPPTYPE_ENUM:
      return ReadEnum(s);
    default:
      return s.Store<std::string>(&Reflection::SetString,
                                  &Reflection::AddString, s.text);
  }
}

void Reader::ReadBool(const Scalar& s) {
  if (!s.plain || (s.text != "true" && s.text != "false")) return Wrong(s);
  s.Store<bool>(&Reflection::SetBool, &Reflection::AddBool, s.text == "true");
}

void Reader::ReadInteger(const Scalar& s) {
  if (!s.plain || !LooksLikeInteger(s.text)) return Wrong(s);
  switch (s.field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return StoreInteger<int32_t, int64_t>(s, &Reflection::SetInt32,
                                            &Reflection::AddInt32);
    case FieldDescriptor::CPPTYPE_INT64:
      return StoreInteger<int64_t, int64_t>(s, &Reflection::SetInt64,
                                            &Reflection::AddInt64);
    case FieldDescriptor::CPPTYPE_UINT32:
      return StoreInteger<uint32_t, uint64_t>(s, &Reflection::SetUInt32,
                                              &Reflection::AddUInt32);
    default:
      return StoreInteger<uint64_t, uint64_t>(s, &Reflection::SetUInt64,
                                              &Reflection::AddUInt64);
  }
}

// Parses the text as a `Wide` integer and stores it if it fits in `T`.
template <typename T, typename Wide>
void Reader::StoreInteger(const Scalar& s, Setter<T> set, Setter<T> add) {
  if (std::is_unsigned_v<T> && s.text[0] == '-') {
    errors_.FieldError(
        s.path, s.value.Mark(),
        absl::StrCat(s.path, " must not be negative, got ", s.text));
    return;
  }
  Wide v = 0;
  if (!absl::SimpleAtoi(s.text, &v) || !std::in_range<T>(v)) {
    errors_.FieldError(
        s.path, s.value.Mark(),
        absl::StrCat(s.path, " value ", s.text, " does not fit in ",
                     sizeof(T) * 8, " bits"));
    return;
  }
  s.Store<T>(set, add, static_cast<T>(v));
}

void Reader::ReadFloat(const Scalar& s) {
  double v = 0;
  if (!s.plain || !absl::SimpleAtod(s.text, &v) || !std::isfinite(v)) {
    return Wrong(s);
  }
  if (s.Is(FieldDescriptor::CPPTYPE_DOUBLE)) {
    s.Store<double>(&Reflection::SetDouble, &Reflection::AddDouble, v);
  } else {
    s.Store<float>(&Reflection::SetFloat, &Reflection::AddFloat, v);
  }
}

void Reader::ReadEnum(const Scalar& s) {
  const EnumDescriptor* type = s.field->enum_type();
  const EnumValueDescriptor* found = nullptr;
  if (!s.text.empty() && s.text == absl::AsciiStrToLower(s.text)) {
    found = type->FindValueByName(
        absl::StrCat(EnumPrefix(type), absl::AsciiStrToUpper(s.text)));
  }
  if (found == nullptr || found->number() == 0) {
    errors_.FieldError(
        s.path, s.value.Mark(),
        absl::StrCat("unknown ", s.field->name(), " \"", s.text,
                     "\" (expected ", absl::StrJoin(EnumChoices(type), " or "),
                     ")"));
    return;
  }
  s.Store<int>(&Reflection::SetEnumValue, &Reflection::AddEnumValue,
               found->number());
}

void Reader::Wrong(const Scalar& s) {
  errors_.FieldError(
      s.path, s.value.Mark(),
      absl::StrCat("expected ", Expected(s.field), " for ", s.path, ", got ",
                   s.plain ? "" : "quoted ", Kind(s.value)));
}

}  // namespace

void ReadYamlMessage(const YAML::Node& node, Message* message,
                     const std::string& path, YamlErrors& errors) {
  Reader(errors).ReadMessage(node, message, path);
}

}  // namespace locus
