#include "agent/journal/journal.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A record line: body, CRC, newline.
std::string Line(const std::string& body) {
  char crc[16];
  snprintf(crc, sizeof(crc), "%08x", Crc32(body));
  return body + " " + crc + "\n";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Crc32Test, KnownValue) {
  // The standard check value of CRC-32/IEEE.
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
}

TEST(JournalTest, RecordsSurviveReopen) {
  TempTree tree;
  JournalOptions options{tree.root() + "/state/locus/journal"};
  {
    auto journal = Journal::Open(options);
    ASSERT_TRUE(journal.ok()) << journal.status();
    ASSERT_TRUE((*journal)->RecordThread({100, 101, 5555, {0, 1}}).ok());
    ASSERT_TRUE((*journal)->RecordIrq({38, {0, 1}}).ok());
    // A second record for the same thread keeps the first original.
    ASSERT_TRUE((*journal)->RecordThread({100, 101, 5555, {1}}).ok());
    ASSERT_TRUE((*journal)->RecordThread({100, 102, 5556, {0}}).ok());
    ASSERT_TRUE((*journal)->ForgetThread(102).ok());
  }
  struct stat st;
  ASSERT_EQ(stat(options.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  const JournalContents& contents = (*journal)->contents();
  EXPECT_EQ(contents.corrupt_records, 0);
  EXPECT_FALSE(contents.truncated_tail);
  ASSERT_EQ(contents.threads.size(), 1u);
  EXPECT_EQ(contents.threads.at(101).pid, 100);
  EXPECT_EQ(contents.threads.at(101).start_time, 5555u);
  EXPECT_THAT(contents.threads.at(101).cpus, ElementsAre(0, 1));
  ASSERT_EQ(contents.irqs.size(), 1u);
  EXPECT_THAT(contents.irqs.at(38).cpus, ElementsAre(0, 1));
  // The file is plain text, one record a line.
  EXPECT_THAT(Slurp(options.path), HasSubstr("T 100 101 5555 0-1 "));
}

TEST(JournalTest, TruncatedTailIsDetectedAndCompleteRecordsKept) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  {
    auto journal = Journal::Open(options);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->RecordThread({1, 2, 3, {0}}).ok());
    ASSERT_TRUE((*journal)->RecordIrq({40, {1}}).ok());
    ASSERT_TRUE((*journal)->RecordIrq({41, {0, 1}}).ok());
  }
  // A crash in the middle of the last append: part of its line is missing.
  std::string text = Slurp(options.path);
  std::filesystem::resize_file(options.path, text.size() - 5);
  auto contents = ReadJournal(options.path);
  ASSERT_TRUE(contents.ok());
  EXPECT_TRUE(contents->truncated_tail);
  EXPECT_EQ(contents->threads.size(), 1u);
  EXPECT_EQ(contents->irqs.count(40), 1u);
  EXPECT_EQ(contents->irqs.count(41), 0u);
  ASSERT_EQ(contents->problems.size(), 1u);
  EXPECT_THAT(contents->problems[0], HasSubstr(options.path + ":3:"));
}

TEST(JournalTest, CorruptRecordIsSkippedOthersKept) {
  std::string good1 = "T 1 2 3 0-1";
  std::string good2 = "I 9 1";
  auto line = [](const std::string& body) {
    char crc[16];
    snprintf(crc, sizeof(crc), "%08x", Crc32(body));
    return body + " " + crc + "\n";
  };
  std::string bad = line("I 7 0");
  bad[2] = '8';  // bit rot: the checksum no longer matches
  JournalContents contents =
      ParseJournal(line(good1) + bad + "garbage\n" + line(good2), "j");
  EXPECT_EQ(contents.corrupt_records, 2);
  EXPECT_FALSE(contents.truncated_tail);
  EXPECT_EQ(contents.threads.count(2), 1u);
  EXPECT_EQ(contents.irqs.count(9), 1u);
  EXPECT_EQ(contents.irqs.count(7), 0u);
  EXPECT_EQ(contents.irqs.count(8), 0u);
  EXPECT_THAT(contents.problems[0], HasSubstr("j:2: checksum mismatch"));
}

TEST(JournalTest, ZeroFilledTailIsCorruptNotFatal) {
  std::string body = "I 3 0";
  char crc[16];
  snprintf(crc, sizeof(crc), "%08x", Crc32(body));
  std::string text = body + " " + crc + "\n" + std::string(20, '\0') + "\n";
  JournalContents contents = ParseJournal(text, "j");
  EXPECT_EQ(contents.irqs.count(3), 1u);
  EXPECT_EQ(contents.corrupt_records, 1);
}

TEST(JournalTest, UnwritableLocationRefusesRecords) {
  TempTree tree;
  tree.Write("file", "x");
  // The journal's directory would have to be a regular file: ENOTDIR.
  auto journal = Journal::Open(JournalOptions{tree.root() + "/file/journal"});
  ASSERT_TRUE(journal.ok()) << journal.status();
  absl::Status status = (*journal)->RecordThread({1, 2, 3, {0}});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("not acting"));
  EXPECT_THAT(std::string(status.message()), HasSubstr(tree.root() + "/file"));
  EXPECT_FALSE((*journal)->HasThread(2));
}

TEST(JournalTest, ClearDeletesTheFile) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  ASSERT_TRUE((*journal)->RecordIrq({5, {0}}).ok());
  ASSERT_EQ(access(options.path.c_str(), F_OK), 0);
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_NE(access(options.path.c_str(), F_OK), 0);
  EXPECT_FALSE((*journal)->HasIrq(5));
  // And it can be written again afterwards.
  ASSERT_TRUE((*journal)->RecordIrq({6, {1}}).ok());
  auto contents = ReadJournal(options.path);
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents->irqs.size(), 1u);
  EXPECT_EQ(contents->irqs.count(6), 1u);
}

TEST(JournalTest, MissingFileIsEmpty) {
  auto contents = ReadJournal("/nonexistent/locus/journal");
  ASSERT_TRUE(contents.ok());
  EXPECT_THAT(contents->threads, IsEmpty());
}

TEST(JournalTest, PiecesOfAnySizeReplayAsTheWhole) {
  const std::string text = Line("T 1 2 3 0-1") + "junk\n" + Line("I 9 1") +
                           Line("-T 2") + "\n" + Line("I 4 0") + "I 5 0 tor";
  const JournalContents whole = ParseJournal(text, "j");
  for (size_t piece = 1; piece <= 7; ++piece) {
    JournalParser parser("j");
    for (size_t at = 0; at < text.size(); at += piece) {
      parser.Feed(absl::string_view(text).substr(at, piece));
    }
    JournalContents pieces = std::move(parser).Finish();
    EXPECT_EQ(pieces.threads.size(), whole.threads.size()) << piece;
    EXPECT_EQ(pieces.irqs.size(), whole.irqs.size()) << piece;
    EXPECT_EQ(pieces.corrupt_records, whole.corrupt_records) << piece;
    EXPECT_EQ(pieces.truncated_tail, whole.truncated_tail) << piece;
    EXPECT_EQ(pieces.problems, whole.problems) << piece;
  }
  EXPECT_EQ(whole.irqs.size(), 2u);
  EXPECT_THAT(whole.threads, IsEmpty());
  EXPECT_EQ(whole.corrupt_records, 1);
  EXPECT_TRUE(whole.truncated_tail);
}

// 5 MB of junk lines, a record among them: every damaged line is counted,
// only the first few named, and the record still replays.
TEST(JournalTest, JunkIsCountedAndItsProblemsCapped) {
  TempTree tree;
  const std::string path = tree.root() + "/journal";
  const int junk_lines = 5 * 1024 * 1024 / 50;
  {
    std::ofstream out(path);
    for (int i = 0; i < junk_lines; ++i) {
      out << std::string(49, 'x') << "\n";
      if (i == junk_lines / 2) out << Line("I 7 0-1");
    }
  }
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->corrupt_records, junk_lines);
  EXPECT_EQ(contents->irqs.count(7), 1u);
  ASSERT_EQ(contents->problems.size(), kMaxJournalProblems + 1u);
  EXPECT_THAT(contents->problems.front(), HasSubstr(path + ":1: "));
  EXPECT_THAT(contents->problems.back(),
              HasSubstr(absl::StrCat("and ", junk_lines - kMaxJournalProblems,
                                     " more damaged record(s)")));
}

// A line without end is not held in memory whole: past kMaxJournalLine it is
// one damaged record, and the lines after it still count.
TEST(JournalTest, OverlongLineIsOneDamagedRecord) {
  const std::string text = std::string(3 * kMaxJournalLine, 'x') + "\n" +
                           Line("I 3 0") +
                           std::string(kMaxJournalLine + 1, 'y');
  JournalContents contents = ParseJournal(text, "j");
  // The overlong tail is damage too, not a torn append: no append is longer
  // than a record.
  EXPECT_EQ(contents.corrupt_records, 2);
  EXPECT_EQ(contents.irqs.count(3), 1u);
  EXPECT_FALSE(contents.truncated_tail);
  ASSERT_EQ(contents.problems.size(), 2u);
  EXPECT_THAT(contents.problems[0], HasSubstr("j:1: record longer than"));
  EXPECT_THAT(contents.problems[1],
              HasSubstr("j:3: more than 65536 bytes without a newline at the "
                        "end: not a record"));
  EXPECT_TRUE(contents.dropped_content());
}

// 5 MB of random bytes and no newline: damage, never "a torn last record",
// and the file is kept as journal.bad.<time> when the journal is cleared.
TEST(JournalTest, MegabytesWithoutANewlineAreKeptAsBad) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  std::string junk(5 << 20, '\0');
  uint32_t x = 12345;
  for (char& c : junk) {
    x = x * 1103515245u + 12345u;
    const char byte = static_cast<char>(x >> 16);
    c = byte == '\n' ? 'n' : byte;
  }
  tree.Write("journal", junk);
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok()) << journal.status();
  EXPECT_FALSE((*journal)->contents().truncated_tail);
  EXPECT_EQ((*journal)->contents().corrupt_records, 1);
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_NE(access(options.path.c_str(), F_OK), 0);
  EXPECT_THAT((*journal)->kept_copy(), HasSubstr(options.path + ".bad."));
  EXPECT_EQ(Slurp((*journal)->kept_copy()), junk);
}

// Whatever reading drops, even a record torn by a crash mid-append, may be
// what an operator needs: the file is kept, never deleted.
TEST(JournalTest, ATornLastRecordIsKeptAsBadToo) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  const std::string text = Line("I 5 0") + "I 6 0-1 1a2b";
  tree.Write("journal", text);
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  EXPECT_TRUE((*journal)->contents().truncated_tail);
  EXPECT_EQ((*journal)->contents().corrupt_records, 0);
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_THAT((*journal)->kept_copy(), HasSubstr(options.path + ".bad."));
  EXPECT_EQ(Slurp((*journal)->kept_copy()), text);
}

TEST(JournalTest, DamagedJournalIsSetAsideNotDeleted) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  const std::string text = Line("I 5 0") + "garbage\n";
  tree.Write("journal", text);
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  EXPECT_EQ((*journal)->contents().corrupt_records, 1);
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_NE(access(options.path.c_str(), F_OK), 0);
  const std::string kept = (*journal)->kept_copy();
  EXPECT_THAT(kept, HasSubstr(options.path + ".bad."));
  EXPECT_EQ(Slurp(kept), text);
  // A second damaged journal in the same second gets a name of its own.
  tree.Write("journal", text);
  journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_NE((*journal)->kept_copy(), kept);
  EXPECT_EQ(Slurp((*journal)->kept_copy()), text);
  // A healthy journal is deleted, nothing kept.
  ASSERT_TRUE((*journal)->RecordIrq({6, {0}}).ok());
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_EQ((*journal)->kept_copy(), "");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tree.root()),
                          std::filesystem::directory_iterator()),
            2);
}

// Through a link to the file or to its directory, the journal is the file
// itself: read, appended to and deleted there, the link left alone.
TEST(JournalTest, LinksResolveToTheRealFile) {
  TempTree tree;
  std::filesystem::create_directories(tree.root() + "/real");
  const std::string real = tree.root() + "/real/journal";
  std::filesystem::create_directory_symlink("real", tree.root() + "/dirlink");
  std::filesystem::create_symlink("real/journal", tree.root() + "/filelink");
  auto resolved = ResolveJournalPath(tree.root() + "/dirlink/journal");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, real);
  resolved = ResolveJournalPath(tree.root() + "/filelink");
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(*resolved, real);  // dangling: where the journal will be
  auto journal = Journal::Open(JournalOptions{tree.root() + "/filelink"});
  ASSERT_TRUE(journal.ok());
  EXPECT_EQ((*journal)->path(), real);
  ASSERT_TRUE((*journal)->RecordIrq({5, {0}}).ok());
  EXPECT_THAT(Slurp(real), HasSubstr("I 5 0 "));
  ASSERT_TRUE((*journal)->Clear().ok());
  EXPECT_NE(access(real.c_str(), F_OK), 0);
  EXPECT_TRUE(std::filesystem::is_symlink(tree.root() + "/filelink"));
  // A loop is an error, not a hang.
  std::filesystem::create_symlink("loop", tree.root() + "/loop");
  EXPECT_FALSE(ResolveJournalPath(tree.root() + "/loop").ok());
}

// The journal's lock is on the file itself: while a Journal has it, no
// other Journal opens it, by its name or by a hard link (flock conflicts
// between open files, so a second one in this process stands in for a
// second daemon). Nothing is read, restored or deleted through the link.
TEST(JournalTest, AHardLinkToAHeldJournalIsRefused) {
  TempTree tree;
  const std::string path = tree.root() + "/journal";
  const std::string link = tree.root() + "/hardlink";
  auto first = Journal::Open(JournalOptions{path});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->RecordIrq({5, {0}}).ok());
  ASSERT_EQ(::link(path.c_str(), link.c_str()), 0);
  for (const std::string& name : {link, path}) {
    auto second = Journal::Open(JournalOptions{name});
    ASSERT_FALSE(second.ok()) << name;
    EXPECT_TRUE(absl::IsFailedPrecondition(second.status()));
    EXPECT_THAT(std::string(second.status().message()),
                HasSubstr(absl::StrCat("another locusd (pid ", getpid(),
                                       ") is running with this journal")));
  }
  EXPECT_TRUE(std::filesystem::exists(link));
  ASSERT_TRUE((*first)->RecordIrq({6, {1}}).ok()) << "the first goes on";
  first->reset();
  // Let go with the first: the next one reads what it left, by either name.
  auto next = Journal::Open(JournalOptions{link});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ((*next)->contents().irqs.size(), 2u);
}

// A file created by the first record is locked before the record goes in,
// and again after a Clear, when the next record creates a new one.
TEST(JournalTest, ANewFileIsLockedFromItsFirstRecord) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  auto first = Journal::Open(options);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(Journal::Open(options).ok()) << "no file yet, nothing to lock";
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE((*first)->RecordIrq({5, {0}}).ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(Journal::Open(options).status()))
        << "round " << round;
    ASSERT_TRUE((*first)->Clear().ok());
    EXPECT_TRUE(Journal::Open(options).ok()) << "round " << round;
  }
}

TEST(JournalTest, FifoIsAnErrorNotAHang) {
  TempTree tree;
  const std::string path = tree.root() + "/journal";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto contents = ReadJournal(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_THAT(std::string(contents.status().message()),
              HasSubstr("not a regular file"));
}

TEST(JournalTest, NotARegularFileIsAnError) {
  auto journal = Journal::Open(JournalOptions{"/dev/null"});
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(std::string(journal.status().message()), HasSubstr("/dev/null"));
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

ListenKey Steered(int family, const char* address, uint16_t port,
                  uint64_t netns = 4026531840) {
  ListenKey key;
  key.netns = netns;
  key.address.family = family;
  key.address.port = port;
  inet_pton(family, address, key.address.bytes.data());
  return key;
}

TEST(JournalSteeredTest, RecordsOfBothFamiliesSurviveReopenUntilForgotten) {
  TempTree tree;
  JournalOptions options;
  options.path = tree.root() + "/journal";
  const ListenKey v4 = Steered(AF_INET, "127.0.0.1", 80);
  const ListenKey v6 = Steered(AF_INET6, "::1", 443);
  {
    auto journal = Journal::Open(options);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->RecordSteered(v4).ok());
    ASSERT_TRUE((*journal)->RecordSteered(v6).ok());
    ASSERT_TRUE((*journal)->RecordSteered(v4).ok());  // once only
  }
  EXPECT_EQ(Slurp(options.path),
            Line("R 4026531840 127.0.0.1:80") + Line("R 4026531840 [::1]:443"));
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  EXPECT_THAT((*journal)->contents().steered, ElementsAre(v4, v6));
  ASSERT_TRUE((*journal)->ForgetSteered(v6).ok());
  EXPECT_THAT(ReadJournal(options.path)->steered, ElementsAre(v4));
}

TEST(JournalSteeredTest, DamagedSteeringRecordsAreCountedNotReplayed) {
  std::string rotten = Line("R 7 10.0.0.1:8080");
  rotten[4] = '2';  // bit rot: the checksum no longer matches
  JournalContents contents = ParseJournal(
      Line("R 7 10.0.0.1:80") + rotten + Line("R 7 10.0.0.1:99999") +
          Line("R 7 localhost:80") + Line("R x [::]:80") +
          Line("-R 7 10.0.0.1") + Line("R 7 [::]:80") + "R 7 [::]:81 1",
      "j");
  EXPECT_EQ(contents.corrupt_records, 5);
  EXPECT_TRUE(contents.truncated_tail);
  EXPECT_THAT(contents.steered, ElementsAre(Steered(AF_INET, "10.0.0.1", 80, 7),
                                            Steered(AF_INET6, "::", 80, 7)));
  EXPECT_THAT(contents.problems[0], HasSubstr("j:2: checksum mismatch"));
  EXPECT_THAT(contents.problems[1], HasSubstr("j:3: bad steering record"));
}

TEST(JournalSteeredTest, ForgetRecordRemovesTheGroup) {
  JournalContents contents =
      ParseJournal(Line("R 7 [fe80::1]:80") + Line("-R 7 [fe80::1]:80"), "j");
  EXPECT_EQ(contents.corrupt_records, 0);
  EXPECT_THAT(contents.steered, IsEmpty());
}

TEST(JournalSteeredTest, AGroupOfNoIpFamilyIsRefused) {
  TempTree tree;
  JournalOptions options;
  options.path = tree.root() + "/journal";
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  EXPECT_FALSE((*journal)->RecordSteered(ListenKey{}).ok());
  EXPECT_NE(access(options.path.c_str(), F_OK), 0);
}

TEST(JournalNeighbourTest, BansAndExclusionsSurviveReopenUntilForgotten) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  {
    auto journal = Journal::Open(options);
    ASSERT_TRUE(journal.ok()) << journal.status();
    ASSERT_TRUE((*journal)->RecordIrqbalanceBan(812, 38).ok());
    ASSERT_TRUE((*journal)->RecordIrqbalanceBan(812, 39).ok());
    ASSERT_TRUE((*journal)->RecordNumadExclusion(77, 4001).ok());
    ASSERT_TRUE((*journal)->RecordNumadExclusion(77, 4002).ok());
    ASSERT_TRUE((*journal)
                    ->ForgetIrqbalanceBansWhere(
                        [](int32_t irq, int32_t) { return irq == 39; })
                    .ok());
    ASSERT_TRUE((*journal)->ForgetNumadExclusion(4002).ok());
    // irqbalance restarted: the ban is given again under its new pid.
    ASSERT_TRUE((*journal)->RecordIrqbalanceBan(900, 38).ok());
    EXPECT_TRUE((*journal)->HasIrqbalanceBan(38));
    EXPECT_FALSE((*journal)->HasIrqbalanceBan(39));
    EXPECT_TRUE((*journal)->HasNumadExclusion(4001));
  }
  EXPECT_EQ(Slurp(options.path), Line("B 812 38") + Line("B 812 39") +
                                     Line("N 77 4001") + Line("N 77 4002") +
                                     Line("-B 39") + Line("-N 4002") +
                                     Line("B 900 38"));
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  const JournalContents& contents = (*journal)->contents();
  EXPECT_EQ(contents.corrupt_records, 0);
  EXPECT_EQ(contents.irqbalance_bans, (std::map<int, int32_t>{{38, 900}}));
  EXPECT_EQ(contents.numad_exclusions,
            (std::map<int32_t, int32_t>{{4001, 77}}));
}

TEST(JournalNeighbourTest, ForgettingWhereDropsTheMatchingEntriesOnly) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  ASSERT_TRUE((*journal)->RecordNumadExclusion(77, 4001).ok());
  ASSERT_TRUE((*journal)->RecordNumadExclusion(78, 4002).ok());
  ASSERT_TRUE((*journal)->RecordNumadExclusion(77, 4003).ok());
  // An earlier numad's entries go; the running one's stay.
  ASSERT_TRUE((*journal)
                  ->ForgetNumadExclusionsWhere(
                      [](int32_t, int32_t owner) { return owner != 78; })
                  .ok());
  EXPECT_EQ((*journal)->contents().numad_exclusions,
            (std::map<int32_t, int32_t>{{4002, 78}}));
  ASSERT_TRUE(
      (*journal)
          ->ForgetNumadExclusionsWhere([](int32_t, int32_t) { return true; })
          .ok());
  EXPECT_EQ(Slurp(options.path), Line("N 77 4001") + Line("N 78 4002") +
                                     Line("N 77 4003") + Line("-N 4001") +
                                     Line("-N 4003") + Line("-N 4002"));
}

TEST(JournalNeighbourTest, ARecordGivenTwiceIsWrittenOnce) {
  TempTree tree;
  JournalOptions options{tree.root() + "/journal"};
  auto journal = Journal::Open(options);
  ASSERT_TRUE(journal.ok());
  ASSERT_TRUE((*journal)->RecordNumadExclusion(77, 4001).ok());
  ASSERT_TRUE((*journal)->RecordNumadExclusion(77, 4001).ok());
  ASSERT_TRUE((*journal)->ForgetNumadExclusion(4001).ok());
  ASSERT_TRUE((*journal)->ForgetNumadExclusion(4001).ok());
  EXPECT_EQ(Slurp(options.path), Line("N 77 4001") + Line("-N 4001"));
}

TEST(JournalNeighbourTest, NoProcessNoRecord) {
  TempTree tree;
  auto journal = Journal::Open({tree.root() + "/journal"});
  ASSERT_TRUE(journal.ok());
  EXPECT_THAT((*journal)->RecordIrqbalanceBan(0, 38).message(),
              HasSubstr("names no process"));
  EXPECT_FALSE((*journal)->RecordNumadExclusion(77, -1).ok());
  EXPECT_TRUE((*journal)->contents().irqbalance_bans.empty());
}

TEST(JournalNeighbourTest, DamagedNeighbourRecordsAreCountedNotReplayed) {
  const JournalContents contents =
      ParseJournal(Line("B 812") + Line("B x 38") + Line("N 77 0") +
                       Line("-B") + Line("B 812 38") + Line("N 77 4001"),
                   "journal");
  EXPECT_EQ(contents.corrupt_records, 4);
  EXPECT_EQ(contents.irqbalance_bans, (std::map<int, int32_t>{{38, 812}}));
  EXPECT_EQ(contents.numad_exclusions,
            (std::map<int32_t, int32_t>{{4001, 77}}));
}

}  // namespace
}  // namespace locus
