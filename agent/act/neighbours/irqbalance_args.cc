#include "agent/act/neighbours/irqbalance_args.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace locus {
namespace {

constexpr int kDefaultInterval = 10;  // SLEEP_INTERVAL
// Short options that take a value, from its optstring.
constexpr absl::string_view kShortWithValue = "ipsclmte";
constexpr absl::string_view kShortWithout = "odfjV";

struct LongOption {
  absl::string_view name;
  bool value;
  char short_name;
};
constexpr LongOption kLongOptions[] = {
    {"oneshot", false, 'o'},     {"debug", false, 'd'},
    {"foreground", false, 'f'},  {"powerthresh", true, 'p'},
    {"banirq", true, 'i'},       {"deepestcache", true, 'c'},
    {"policyscript", true, 'l'}, {"pid", true, 's'},
    {"journal", false, 'j'},     {"banmod", true, 'm'},
    {"interval", true, 't'},     {"version", false, 'V'},
    {"migrateval", true, 'e'},
};

// getopt_long's match: the exact name, else the one option `name` is a
// prefix of; nullptr when none or several (irqbalance exits on those).
const LongOption* FindLong(absl::string_view name) {
  const LongOption* found = nullptr;
  for (const LongOption& option : kLongOptions) {
    if (option.name == name) return &option;
    if (!name.empty() && absl::StartsWith(option.name, name)) {
      if (found != nullptr) return nullptr;
      found = &option;
    }
  }
  return found;
}

// strtol as irqbalance calls it (leading blanks, a sign, digits, the rest
// ignored); 0 below 1 (it exits on those), clamped above.
int Interval(absl::string_view text) {
  const long value = std::strtol(std::string(text).c_str(), nullptr, 10);
  if (value < 1) return 0;
  return value > INT32_MAX ? INT32_MAX : static_cast<int>(value);
}

}  // namespace

int IrqbalanceIntervalArg(const std::vector<std::string>& argv) {
  int interval = kDefaultInterval;
  for (size_t i = 1; i < argv.size(); ++i) {
    absl::string_view word = argv[i];
    if (word == "--") break;  // the rest are not options
    // GNU getopt moves words that are not options out of the way.
    if (word.size() < 2 || word[0] != '-') continue;
    std::optional<absl::string_view> value;
    char option = 0;
    if (absl::StartsWith(word, "--")) {
      absl::string_view name = word.substr(2);
      std::optional<absl::string_view> attached;
      if (size_t eq = name.find('='); eq != absl::string_view::npos) {
        attached = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      const LongOption* long_option = FindLong(name);
      if (long_option == nullptr) return 0;
      if (!long_option->value) continue;
      option = long_option->short_name;
      value = attached;
    } else {
      size_t at = 1;
      while (at < word.size() && absl::StrContains(kShortWithout, word[at])) {
        ++at;
      }
      if (at == word.size()) continue;
      if (!absl::StrContains(kShortWithValue, word[at])) return 0;
      option = word[at];
      if (at + 1 < word.size()) value = word.substr(at + 1);
    }
    if (!value.has_value()) {
      if (i + 1 == argv.size()) return 0;
      value = argv[++i];
    }
    if (option == 't') {
      interval = Interval(*value);
      if (interval == 0) return 0;
    }
  }
  return interval;
}

}  // namespace locus
