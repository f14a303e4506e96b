#include "agent/act/journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

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

TEST(JournalTest, NotARegularFileIsAnError) {
  auto journal = Journal::Open(JournalOptions{"/dev/null"});
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(std::string(journal.status().message()), HasSubstr("/dev/null"));
}

}  // namespace
}  // namespace locus
