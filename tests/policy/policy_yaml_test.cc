// The policy file reader: the corpus of valid and invalid files (each invalid
// one names its expected errors in "# expect: LINE:COLUMN: text" header
// lines), the shipped example against DefaultPolicy(), and validation.
#include "policy/policy_yaml.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "policy/default_policy.h"
#include "policy/validate.h"
#include "policy/yaml_errors.h"
#include "tests/common/sanitizers.h"
#include "tests/common/snapshot_builder.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kCorpus =
    std::string(LOCUS_SOURCE_DIR) + "/tests/policy/corpus";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<fs::path> Files(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The host corpus files are checked against: 2 nodes x 4 CPUs (CPUs 0-7).
Topology TestHost() { return testing::MakeHost(2, 4).topology; }

std::vector<std::string> Lines(absl::string_view text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(PolicyCorpusTest, HasAtLeastThirtyInvalidFiles) {
  EXPECT_GE(Files(kCorpus + "/invalid").size(), 30u);
  EXPECT_GE(Files(kCorpus + "/valid").size(), 3u);
}

TEST(PolicyCorpusTest, ValidFilesParse) {
  Topology host = TestHost();
  for (const fs::path& file : Files(kCorpus + "/valid")) {
    absl::StatusOr<v1::Policy> policy =
        ParsePolicyYaml(ReadAll(file), file.filename().string(), &host);
    EXPECT_TRUE(policy.ok()) << file << ": " << policy.status();
  }
}

TEST(PolicyCorpusTest, InvalidFilesReportEveryErrorAtItsLocation) {
  Topology host = TestHost();
  for (const fs::path& file : Files(kCorpus + "/invalid")) {
    SCOPED_TRACE(file.filename().string());
    std::string text = ReadAll(file);
    std::vector<std::string> expected;
    for (const std::string& line : Lines(text)) {
      absl::string_view rest = line;
      if (absl::ConsumePrefix(&rest, "# expect: ")) {
        expected.emplace_back(rest);
      }
    }
    ASSERT_FALSE(expected.empty()) << "no \"# expect:\" header";
    std::string name = file.filename().string();
    absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(text, name, &host);
    ASSERT_FALSE(policy.ok());
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument);
    std::vector<std::string> errors = Lines(policy.status().message());
    ASSERT_EQ(errors.size(), expected.size()) << policy.status().message();
    // Errors come sorted by position; expectations may be in any order.
    for (const std::string& want : expected) {
      // "L:C: text": the location must match exactly, the text as a prefix.
      std::string prefix = absl::StrCat(name, ":", want);
      bool found = std::any_of(
          errors.begin(), errors.end(),
          [&](const std::string& e) { return absl::StartsWith(e, prefix); });
      EXPECT_TRUE(found) << "want " << prefix << "\ngot\n"
                         << policy.status().message();
    }
  }
}

TEST(PolicyYamlTest, ShippedExampleIsTheDefaultPolicyField) {
  const std::string path =
      std::string(LOCUS_SOURCE_DIR) + "/deploy/policy/nginx.yaml";
  // On top of an empty policy: proves the example spells out every field.
  absl::StatusOr<v1::Policy> spelled =
      ParsePolicyYamlOver(v1::Policy(), ReadAll(path), path);
  ASSERT_TRUE(spelled.ok()) << spelled.status();
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(DefaultPolicy(), *spelled)) << diff;

  absl::StatusOr<v1::Policy> loaded = LoadPolicyFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      DefaultPolicy(), *loaded));
}

// The HAProxy example: valid, its threads the workers, the rest default.
TEST(PolicyYamlTest, ShippedHaproxyExampleLoads) {
  const std::string path =
      std::string(LOCUS_SOURCE_DIR) + "/deploy/policy/haproxy.yaml";
  absl::StatusOr<v1::Policy> loaded = LoadPolicyFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->targets().comm(), ElementsAre("haproxy"));
  EXPECT_THAT(loaded->targets().thread_workers(), ElementsAre("haproxy"));
  EXPECT_TRUE(loaded->placement().enabled());
  EXPECT_EQ(loaded->placement().strategy(), v1::Placement::STRATEGY_SPREAD);
  EXPECT_TRUE(loaded->memory().enabled()) << "default: moves none of it";
}

TEST(PolicyYamlTest, DefaultPolicyIsValidOnEveryTestHost) {
  for (int nodes : {1, 2, 4, 8}) {
    EXPECT_TRUE(ValidatePolicyForHost(DefaultPolicy(),
                                      testing::MakeHost(nodes, 2).topology)
                    .ok());
  }
}

TEST(PolicyYamlTest, EmptyFileIsTheDefault) {
  absl::StatusOr<v1::Policy> policy = ParsePolicyYaml("", "empty.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      DefaultPolicy(), *policy));
}

TEST(PolicyYamlTest, KeysOverrideDefaultsAndListsReplaceThem) {
  absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(
      "mode: dry_run\n"
      "targets:\n  comm: [openresty, nginx]\n"
      "placement:\n  strategy: near_nic\n  pin_to: cpu\n  nic: eth1\n"
      "stability:\n  dwell_s: 5\n",
      "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->mode(), v1::Policy::MODE_DRY_RUN);
  EXPECT_THAT(policy->targets().comm(),
              ::testing::ElementsAre("openresty", "nginx"));
  EXPECT_EQ(policy->placement().strategy(), v1::Placement::STRATEGY_NEAR_NIC);
  EXPECT_EQ(policy->placement().pin_to(), v1::Placement::PIN_TO_CPU);
  EXPECT_EQ(policy->placement().nic(), "eth1");
  EXPECT_EQ(policy->stability().dwell_s(), 5u);
  // Untouched keys keep the default.
  EXPECT_EQ(policy->stability().max_moves_per_tick(),
            DefaultPolicy().stability().max_moves_per_tick());
  EXPECT_TRUE(policy->targets().workers_only());
}

TEST(PolicyYamlTest, HostCheckIsOptional) {
  const std::string text = "placement:\n  cpus: \"0-63\"\n";
  EXPECT_TRUE(ParsePolicyYaml(text, "p.yaml").ok());
  Topology host = TestHost();
  absl::StatusOr<v1::Policy> on_host = ParsePolicyYaml(text, "p.yaml", &host);
  ASSERT_FALSE(on_host.ok());
  EXPECT_EQ(on_host.status().message(),
            "p.yaml:2:9: CPUs 8-63 not online on this host (online CPUs: "
            "0-7)");
}

TEST(PolicyYamlTest, ValidateForHostNamesTheField) {
  v1::Policy policy = DefaultPolicy();
  policy.mutable_irqs()->set_cpus("6-9");
  absl::Status status = ValidatePolicyForHost(policy, TestHost());
  EXPECT_EQ(status.message(),
            "irqs.cpus: CPUs 8-9 not online on this host (online CPUs: 0-7)");
  EXPECT_TRUE(ValidatePolicy(policy).ok());
}

TEST(PolicyYamlTest, CoexistDefaultsToSharingAndMustSayWhatToDo) {
  EXPECT_EQ(DefaultPolicy().coexist().irqbalance(),
            v1::Coexist::IRQBALANCE_MODE_BAN);
  EXPECT_EQ(DefaultPolicy().coexist().numad(), v1::Coexist::NUMAD_MODE_EXCLUDE);
  v1::Policy policy = DefaultPolicy();
  policy.mutable_coexist()->clear_irqbalance();
  policy.mutable_coexist()->clear_numad();
  absl::Status status = ValidatePolicy(policy);
  EXPECT_THAT(status.message(),
              HasSubstr("coexist.irqbalance: coexist.irqbalance must be ban "
                        "or off"));
  EXPECT_THAT(status.message(),
              HasSubstr("coexist.numad: coexist.numad must be exclude or off"));
}

TEST(PolicyYamlTest, TheLatencyMarginIsAPolicyKeyOfTenPercent) {
  EXPECT_DOUBLE_EQ(DefaultPolicy().experiment().latency_margin(), 0.10);
  absl::StatusOr<v1::Policy> policy =
      ParsePolicyYaml("experiment:\n  latency_margin: 0.25\n", "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_DOUBLE_EQ(policy->experiment().latency_margin(), 0.25);
  // Out of range, or not a number: located.
  policy = ParsePolicyYaml("experiment:\n  latency_margin: -0.1\n", "p.yaml");
  EXPECT_THAT(policy.status().message(),
              HasSubstr("p.yaml:2:19: latency_margin -0.1 is out of range [0, "
                        "10] (a fraction: 0.1 = 10 %)"));
  policy = ParsePolicyYaml("experiment:\n  latency_margin: .nan\n", "p.yaml");
  EXPECT_THAT(policy.status().message(), HasSubstr("p.yaml:2:"));
}

TEST(PolicyYamlTest, LoadMissingFileIsNotFound) {
  absl::StatusOr<v1::Policy> policy =
      LoadPolicyFile("/nonexistent/locus/policy.yaml");
  EXPECT_EQ(policy.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(policy.status().message(), HasSubstr("/nonexistent/locus"));
}

TEST(PolicyYamlTest, GarbageNeverThrows) {
  // Odd inputs must come back as errors, not exceptions or crashes.
  for (const char* text : {"{", "[", "]]]", "a: [", "!!binary x", "*alias",
                           "&a [*a]", "? : :", "\x01\x02\x03", "mode: !!int 3",
                           "%YAML 9.9\n---\n", "- - - -"}) {
    absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(text, "g.yaml");
    EXPECT_FALSE(policy.ok()) << text;
  }
}

// Caps this process's address space for a scope (not under ASan, which
// reserves far more address space than it uses).
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(rlim_t bytes) {
    if (testing::kAddressSanitizer) return;
    getrlimit(RLIMIT_AS, &saved_);
    struct rlimit capped = saved_;
    capped.rlim_cur = std::min<rlim_t>(bytes, saved_.rlim_max);
    active_ = setrlimit(RLIMIT_AS, &capped) == 0;
  }
  ~AddressSpaceLimit() {
    if (active_) setrlimit(RLIMIT_AS, &saved_);
  }

 private:
  struct rlimit saved_ = {};
  bool active_ = false;
};

TEST(PolicyYamlTest, InputsThatHangYamlCppAreErrors) {
  AddressSpaceLimit limit(4ull << 30);
  // jbeder/yaml-cpp#1040: LoadAll loops allocating on a stray comma.
  absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(",a: 1\n", "c.yaml");
  EXPECT_EQ(policy.status().message(),
            "c.yaml:1:1: unexpected ',' (not valid YAML here)");
  EXPECT_FALSE(ParsePolicyYaml(",", "c.yaml").ok());
  EXPECT_FALSE(ParsePolicyYaml("[:", "c.yaml").ok());
  EXPECT_FALSE(ParsePolicyYaml("{:", "c.yaml").ok());
  EXPECT_FALSE(ParsePolicyYaml("[[:", "c.yaml").ok());
}

TEST(PolicyYamlTest, UserTextCannotBreakTheOneErrorPerLineFormat) {
  absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(
      "\"mo\\nde\": 1\ntargets:\n  comm: [\"a\\tb\\nc\"]\n", "n.yaml");
  EXPECT_EQ(std::string(policy.status().message()),
            "n.yaml:1:1: unknown key \"mo\\nde\" in the policy (did you mean "
            "\"mode\"?); known keys: "
            "version, mode, targets, placement, memory, irqs, stability, "
            "connections, coexist, experiment");
}

TEST(PolicyYamlTest, OversizedFileIsRejectedUnread) {
  std::string big = "# " + std::string(2 << 20, 'x') + "\n";
  absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(big, "big.yaml");
  EXPECT_THAT(std::string(policy.status().message()),
              ::testing::StartsWith("big.yaml:1:1: the policy file is"));
}

// Mutated policy files (bytes inserted, removed, replaced, with a bias to
// YAML's own punctuation): every outcome is a policy or InvalidArgument whose
// every line is "file:line:column: message", never an exception or a crash.
TEST(PolicyYamlTest, MutatedFilesGiveLocatedErrors) {
  // yaml-cpp has had inputs that make it allocate without end; should one
  // come back, fail with bad_alloc here instead of exhausting the machine.
  AddressSpaceLimit limit(4ull << 30);
  std::vector<std::string> seeds;
  for (const fs::path& file : Files(kCorpus + "/valid")) {
    seeds.push_back(ReadAll(file));
  }
  seeds.push_back(
      ReadAll(std::string(LOCUS_SOURCE_DIR) + "/deploy/policy/nginx.yaml"));
  const std::string alphabet = ":-[]{},#&*!|>'\"%@` \t\n0123456789abcxyz.";
  const std::regex located(R"(m\.yaml:[0-9]+:[0-9]+: .+)");
  std::mt19937 rng(7);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = seeds[rng() % seeds.size()];
    for (int k = 1 + rng() % 4; k > 0; --k) {
      size_t at = text.empty() ? 0 : rng() % text.size();
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + at, c);
          break;
        case 1:
          if (!text.empty()) text.erase(at, 1);
          break;
        default:
          if (!text.empty()) text[at] = c;
          break;
      }
    }
    absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(text, "m.yaml");
    if (policy.ok()) continue;
    ++rejected;
    ASSERT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument)
        << text;
    for (const std::string& line : Lines(policy.status().message())) {
      ASSERT_TRUE(std::regex_match(line, located)) << line << "\n" << text;
    }
  }
  EXPECT_GT(rejected, 1000);  // the mutations do break files
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// Files for the reader's refusals, in a scratch directory.
class PolicyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "locus-policy-file-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/policy.yaml";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
  std::string path_;
};

// Peak resident memory of this process so far, in bytes.
size_t PeakRss() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;
}

// Opening a FIFO for reading waits for a writer: the reader must refuse it
// without opening it (and without blocking, which would hang this test).
TEST_F(PolicyFileTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0) << strerror(errno);
  absl::StatusOr<std::string> text = ReadPolicyFile(path_);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(), path_ + ": is a FIFO, not a regular file");
  EXPECT_FALSE(LoadPolicyFile(path_).ok());
}

// A directory is not an absent file: it must not read as an empty policy
// (the built-in default).
TEST_F(PolicyFileTest, DirectoryIsAnErrorNotTheDefault) {
  ASSERT_TRUE(fs::create_directory(path_));
  absl::StatusOr<v1::Policy> policy = LoadPolicyFile(path_);
  EXPECT_EQ(policy.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(policy.status().message(),
            path_ + ": is a directory, not a regular file");
}

TEST_F(PolicyFileTest, LinkToDevZeroIsRefusedUnread) {
  fs::create_symlink("/dev/zero", path_);
  size_t before = PeakRss();
  absl::StatusOr<v1::Policy> policy = LoadPolicyFile(path_);
  EXPECT_EQ(policy.status().message(),
            path_ + ": is a character device, not a regular file");
  EXPECT_LT(PeakRss() - before, 16u << 20);
}

// 1 GiB that costs no disk: refused from its size, before a byte is read.
TEST_F(PolicyFileTest, SparseGigabyteIsRefusedFromItsSize) {
  { std::ofstream create(path_); }
  ASSERT_EQ(truncate(path_.c_str(), 1ll << 30), 0) << strerror(errno);
  size_t before = PeakRss();
  absl::StatusOr<v1::Policy> policy = LoadPolicyFile(path_);
  EXPECT_EQ(policy.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(
      policy.status().message(),
      absl::StrCat(path_, ": larger than 1048576 bytes (1073741824 or more)"));
  EXPECT_LT(PeakRss() - before, 16u << 20);
}

TEST_F(PolicyFileTest, TheLimitItselfIsRead) {
  std::string text = "mode: dry_run\n";
  text.resize(kMaxPolicyBytes, '\n');
  std::ofstream(path_) << text;
  absl::StatusOr<std::string> read = ReadPolicyFile(path_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, text);
  std::ofstream(path_, std::ios::app) << "\n";
  EXPECT_EQ(ReadPolicyFile(path_).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST_F(PolicyFileTest, AbsentIsNotFound) {
  EXPECT_EQ(ReadPolicyFile(path_).status().code(), absl::StatusCode::kNotFound);
}

// Bytes that are not UTF-8, quoted back in an error, come out escaped.
TEST(PolicyErrorTextTest, InvalidUtf8IsEscaped) {
  absl::StatusOr<v1::Policy> policy =
      ParsePolicyYaml("mode: \"dry\xff\"\n\xfe\xed: 1\n", "u.yaml");
  ASSERT_FALSE(policy.ok());
  std::string message(policy.status().message());
  EXPECT_TRUE(IsValidUtf8(message)) << message;
  EXPECT_THAT(message, HasSubstr("u.yaml:1:7: unknown mode \"dry\\xff\""));
  EXPECT_THAT(message, HasSubstr("u.yaml:2:1: unknown key \"\\xfe\\xed\""));
}

// A megabyte of bad keys: the first kMaxReportedErrors in file order, then a
// count; never a text the size of the file.
TEST(PolicyErrorTextTest, ManyErrorsAreCapped) {
  std::string text;
  int keys = 0;
  while (text.size() < (1u << 20) - 32) {
    absl::StrAppend(&text, "bogus_", keys++, ": 1\n");
  }
  absl::StatusOr<v1::Policy> policy = ParsePolicyYaml(text, "many.yaml");
  std::vector<std::string> lines = Lines(policy.status().message());
  ASSERT_EQ(lines.size(), kMaxReportedErrors + 1);
  for (size_t i = 0; i < kMaxReportedErrors; ++i) {
    EXPECT_THAT(lines[i],
                ::testing::StartsWith(absl::StrCat(
                    "many.yaml:", i + 1, ":1: unknown key \"bogus_", i, "\"")));
  }
  EXPECT_EQ(lines.back(),
            absl::StrCat("many.yaml: and ", keys - kMaxReportedErrors,
                         " more error(s) not shown"));
  EXPECT_LT(policy.status().message().size(),
            kMaxReportedErrors * (kMaxErrorBytes + 40) + 100);
}

TEST(PolicyErrorTextTest, LongMessagesAreCut) {
  std::string value(500'000, 'k');
  absl::StatusOr<v1::Policy> policy =
      ParsePolicyYaml(absl::StrCat("mode: \"", value, "\"\n"), "long.yaml");
  std::string message(policy.status().message());
  EXPECT_THAT(message,
              ::testing::StartsWith("long.yaml:1:7: unknown mode \"kkk"));
  EXPECT_THAT(message, ::testing::EndsWith("..."));
  EXPECT_EQ(message.size(),
            std::string("long.yaml:1:7: ").size() + kMaxErrorBytes + 3);
}

// yaml-cpp's own guard says only "bad file"; nesting is refused earlier, at
// the collection that goes too deep.
TEST(PolicyErrorTextTest, DeepNestingGivesItsPlace) {
  absl::StatusOr<v1::Policy> flow =
      ParsePolicyYaml(std::string(5000, '['), "flow.yaml");
  EXPECT_TRUE(std::regex_match(
      std::string(flow.status().message()),
      std::regex(R"(flow\.yaml:1:[0-9]+: nested more than 32 levels deep .*)")))
      << flow.status().message();
  std::string block = "targets:\n";
  for (int i = 1; i < 600; ++i) {
    absl::StrAppend(&block, std::string(i, ' '), "k:\n");
  }
  absl::StatusOr<v1::Policy> nested = ParsePolicyYaml(block, "block.yaml");
  EXPECT_THAT(std::string(nested.status().message()),
              ::testing::StartsWith("block.yaml:"));
  EXPECT_THAT(std::string(nested.status().message()),
              HasSubstr("nested more than 32 levels deep"));
  EXPECT_THAT(std::string(nested.status().message()),
              ::testing::Not(HasSubstr("bad file")));
}

}  // namespace
}  // namespace locus
