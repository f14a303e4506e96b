// Structured logging: each event kind's MESSAGE_ID and LOCUS_* fields
// (agent/core/event_log.h), the JSON lines of --log_format=json, the
// verbosity, and how stderr is recognised as journald's stream.
#include "common/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "agent/core/event_log.h"
#include "agent/daemon/log_sinks.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

class FakeSink : public LogSink {
 public:
  void Write(const LogEntry& entry) override { entries.push_back(entry); }
  std::vector<LogEntry> entries;
};

// Installs a FakeSink for one test and puts everything back after it.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { SetLogSink(&sink_); }
  void TearDown() override {
    SetLogSink(nullptr);
    SetLogVerbosity(0);
  }
  FakeSink sink_;
};

std::map<std::string, std::string> Fields(const LogEntry& entry) {
  std::map<std::string, std::string> fields;
  for (const LogField& field : entry.fields) fields[field.name] = field.value;
  return fields;
}

Action Pin(int32_t pid, int32_t tid, int node) {
  Action action;
  action.op = PinThread{pid, tid, node, {0, 1}};
  action.from_node = 0;
  return action;
}

TEST(EventLogTest, EveryKindHasItsOwn128BitId) {
  std::set<std::string> ids;
  for (EventKind kind :
       {EventKind::kAction, EventKind::kRevert, EventKind::kExternalChange,
        EventKind::kRefusal, EventKind::kRestore, EventKind::kExperimentStart,
        EventKind::kExperimentStop, EventKind::kExperimentVerdict}) {
    std::string id(MessageId(kind));
    EXPECT_THAT(id, SizeIs(32)) << EventKindName(kind);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos)
        << id;
    ids.insert(id);
  }
  EXPECT_THAT(ids, SizeIs(8));
}

TEST(EventLogTest, AnExperimentEntryNamesItsExperimentAndOutcome) {
  LogEntry entry = ExperimentEntry(EventKind::kExperimentStop, "exp-1",
                                   "guardrail", "stopped early");
  EXPECT_EQ(entry.message_id, MessageId(EventKind::kExperimentStop));
  EXPECT_EQ(entry.level, LogLevel::kWarning);
  EXPECT_THAT(entry.fields,
              Contains(AllOf(Field(&LogField::name, "LOCUS_EXPERIMENT"),
                             Field(&LogField::value, "exp-1"))));
  EXPECT_EQ(ExperimentEntry(EventKind::kExperimentVerdict, "exp-1",
                            "significant", "x")
                .level,
            LogLevel::kInfo);
}

TEST(EventLogTest, AnAppliedPinNamesTheThreadItsNodeAndOutcome) {
  ActionResult applied;
  applied.outcome = Outcome::kApplied;
  LogEntry entry = ActionEntry(Pin(1234, 1240, 1), applied, "the line");
  EXPECT_EQ(entry.message, "the line");
  EXPECT_EQ(entry.message_id, MessageId(EventKind::kAction));
  EXPECT_EQ(entry.level, LogLevel::kInfo);
  EXPECT_THAT(
      Fields(entry),
      ElementsAre(Pair("LOCUS_ACTION", "pin_thread"),
                  Pair("LOCUS_FROM_NODE", "0"), Pair("LOCUS_NODE", "1"),
                  Pair("LOCUS_OUTCOME", "applied"), Pair("LOCUS_PID", "1234"),
                  Pair("LOCUS_TID", "1240")));
}

TEST(EventLogTest, ARefusedActionIsAWarningWithItsOutcome) {
  ActionResult refused;
  refused.outcome = Outcome::kForbidden;
  Action irq;
  irq.op = SetIrqAffinity{42, {1}};
  LogEntry entry = ActionEntry(irq, refused, "x");
  EXPECT_EQ(entry.level, LogLevel::kWarning);
  auto fields = Fields(entry);
  EXPECT_EQ(fields["LOCUS_IRQ"], "42");
  EXPECT_EQ(fields["LOCUS_ACTION"], "set_irq_affinity");
  EXPECT_EQ(fields["LOCUS_OUTCOME"], OutcomeName(Outcome::kForbidden));
  EXPECT_FALSE(fields.contains("LOCUS_TID"));
}

TEST(EventLogTest, AMigrationNamesBothNodes) {
  Action move;
  move.op = MigratePages{77, 0, 1, 64 << 20};
  ActionResult dry;
  dry.outcome = Outcome::kDryRun;
  auto fields = Fields(ActionEntry(move, dry, "x"));
  EXPECT_EQ(fields["LOCUS_PID"], "77");
  EXPECT_EQ(fields["LOCUS_NODE"], "1");
  EXPECT_EQ(fields["LOCUS_FROM_NODE"], "0");
  EXPECT_EQ(fields["LOCUS_OUTCOME"], OutcomeName(Outcome::kDryRun));
}

TEST(EventLogTest, RevertsExternalChangesRefusalsAndRestores) {
  LogEntry revert = RevertEntry(Pin(1, 2, 1), absl::OkStatus(), "r");
  EXPECT_EQ(revert.message_id, MessageId(EventKind::kRevert));
  EXPECT_EQ(Fields(revert)["LOCUS_OUTCOME"], "reverted");
  EXPECT_EQ(Fields(revert)["LOCUS_TID"], "2");
  EXPECT_EQ(Fields(RevertEntry(Pin(1, 2, 1), absl::InternalError("no"),
                               "r"))["LOCUS_OUTCOME"],
            "revert-failed");

  ExternalEvent thread{EntityKey{EntityKind::kTask, 10}, "moved", 11};
  LogEntry external = ExternalChangeEntry(thread, "e");
  EXPECT_EQ(external.message_id, MessageId(EventKind::kExternalChange));
  EXPECT_EQ(Fields(external)["LOCUS_PID"], "10");
  EXPECT_EQ(Fields(external)["LOCUS_TID"], "11");
  ExternalEvent irq{EntityKey{EntityKind::kIrq, 30}, "moved"};
  EXPECT_EQ(Fields(ExternalChangeEntry(irq, "e"))["LOCUS_IRQ"], "30");

  LogEntry refusal = RefusalEntry(RefusedProcess{55, "nginx", "why"}, "f");
  EXPECT_EQ(refusal.message_id, MessageId(EventKind::kRefusal));
  EXPECT_EQ(Fields(refusal)["LOCUS_PID"], "55");
  EXPECT_EQ(Fields(refusal)["LOCUS_COMM"], "nginx");

  LogEntry failed = RestoreEntry(true, "could not");
  EXPECT_EQ(failed.message_id, MessageId(EventKind::kRestore));
  EXPECT_EQ(failed.level, LogLevel::kError);
}

TEST_F(LogTest, PlainLinesAndEventsReachTheInstalledSink) {
  LogWarning("disk ", 3, " full");
  ActionResult applied;
  applied.outcome = Outcome::kApplied;
  Log(ActionEntry(Pin(1, 2, 1), applied, "pinned"));
  ASSERT_THAT(sink_.entries, SizeIs(2));
  EXPECT_EQ(sink_.entries[0].message, "disk 3 full");
  EXPECT_EQ(sink_.entries[0].level, LogLevel::kWarning);
  EXPECT_THAT(sink_.entries[0].message_id, IsEmpty());
  EXPECT_EQ(sink_.entries[1].message_id, MessageId(EventKind::kAction));
}

TEST_F(LogTest, DebugLinesFollowTheVerbosity) {
  VLog(1, "hidden");
  SetLogVerbosity(1);
  VLog(1, "shown");
  VLog(2, "hidden too");
  ASSERT_THAT(sink_.entries, SizeIs(1));
  EXPECT_EQ(sink_.entries[0].message, "shown");
  EXPECT_EQ(sink_.entries[0].level, LogLevel::kDebug);
}

google::protobuf::Struct Parse(const std::string& line) {
  google::protobuf::Struct object;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(line, &object).ok())
      << line;
  return object;
}

TEST(JsonLogLineTest, OneObjectPerLineWithTheJournalFields) {
  ActionResult applied;
  applied.outcome = Outcome::kApplied;
  LogEntry entry =
      ActionEntry(Pin(1234, 1240, 1), applied, "say \"why\"\n\tthen → what \\");
  absl::Time at = absl::FromCivil(absl::CivilSecond(2024, 5, 6, 7, 8, 9),
                                  absl::UTCTimeZone());
  std::string line = JsonLogLine(entry, at);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per entry";
  auto fields = Parse(line).fields();
  EXPECT_EQ(fields["MESSAGE"].string_value(), entry.message);
  EXPECT_EQ(fields["MESSAGE_ID"].string_value(), MessageId(EventKind::kAction));
  EXPECT_EQ(fields["PRIORITY"].number_value(), 6);
  EXPECT_EQ(fields["LEVEL"].string_value(), "info");
  EXPECT_EQ(fields["LOCUS_TID"].number_value(), 1240);
  EXPECT_EQ(fields["LOCUS_OUTCOME"].string_value(), "applied");
  EXPECT_EQ(fields["time"].string_value(), "2024-05-06T07:08:09.000000Z");
}

TEST(JsonLogLineTest, BytesThatAreNotUtf8StillMakeValidJson) {
  LogEntry entry;
  entry.message = "comm \xff\xfe end";
  entry.fields.push_back(LogField{"LOCUS_COMM", "a\x80z", false});
  auto fields = Parse(JsonLogLine(entry, absl::UnixEpoch())).fields();
  EXPECT_THAT(fields["MESSAGE"].string_value(), ::testing::StartsWith("comm "));
  EXPECT_THAT(fields["MESSAGE"].string_value(), ::testing::EndsWith(" end"));
  EXPECT_THAT(fields["LOCUS_COMM"].string_value(), ::testing::StartsWith("a"));
  EXPECT_FALSE(fields.contains("MESSAGE_ID"));
}

// A refused look-alike's path, as a local user may name its directory: a
// newline, a screen clear, a forged journal line.
constexpr char kForgedPath[] =
    "/tmp/x\n\x1b[2J\nMESSAGE_ID=cf9be3c65a5b481c9480b1caca005f50 "
    "everything restored; bye/nginx";

TEST(TextLogLineTest, OutsideTextStaysOneInertLine) {
  RefusedProcess look_alike{4242, "nginx",
                            absl::StrCat("not trusted as a target: its "
                                         "executable ",
                                         kForgedPath, " is owned by uid 1000")};
  LogEntry entry = RefusalEntry(look_alike, "pid 4242: " + look_alike.reason);
  for (bool journald : {false, true}) {
    const std::string line = TextLogLine(entry, journald);
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_THAT(
        line, ::testing::HasSubstr("/tmp/x\\n\\x1b[2J\\nMESSAGE_ID=cf9be3c6"));
  }
  EXPECT_EQ(TextLogLine(entry, true).substr(0, 3), "<4>");
  EXPECT_EQ(TextLogLine(entry, false).substr(0, 9), "warning: ");
  LogEntry plain{LogLevel::kInfo, "caf\xc3\xa9 \xff", {}, {}};
  EXPECT_EQ(TextLogLine(plain, false), "caf\xc3\xa9 \\xff\n");
}

// JSON escapes as JSON does, once: the message reads back byte for byte.
TEST(JsonLogLineTest, OutsideTextIsEscapedOnceAsJson) {
  LogEntry entry;
  entry.message = kForgedPath;
  const std::string line = JsonLogLine(entry, absl::UnixEpoch());
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
  EXPECT_EQ(line.find("\\\\"), std::string::npos) << "escaped twice";
  EXPECT_EQ(Parse(line).fields().at("MESSAGE").string_value(), kForgedPath);
}

TEST(LogFormatTest, TextOrJsonOnly) {
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  absl::StatusOr<LogFormat> bad = ParseLogFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("--log_format"));
}

// systemd.exec(5): JOURNAL_STREAM is "DEV:INO" of the stream it gave the
// service; a process whose stderr is something else only inherited it.
TEST(StderrIsJournalTest, OnlyWhenTheVariableNamesStderr) {
  struct stat st {};
  ASSERT_EQ(fstat(2, &st), 0);
  std::string mine = absl::StrCat(st.st_dev, ":", st.st_ino);
  ASSERT_EQ(setenv("JOURNAL_STREAM", mine.c_str(), 1), 0);
  EXPECT_TRUE(StderrIsJournal());
  std::string other = absl::StrCat(st.st_dev, ":", st.st_ino + 1);
  ASSERT_EQ(setenv("JOURNAL_STREAM", other.c_str(), 1), 0);
  EXPECT_FALSE(StderrIsJournal());
  ASSERT_EQ(setenv("JOURNAL_STREAM", "garbage", 1), 0);
  EXPECT_FALSE(StderrIsJournal());
  ASSERT_EQ(unsetenv("JOURNAL_STREAM"), 0);
  EXPECT_FALSE(StderrIsJournal());
  // Nor does a text or JSON format pick the journal then.
  EXPECT_EQ(MakeLogSink(LogFormat::kText, "t"), nullptr);
  EXPECT_NE(MakeLogSink(LogFormat::kJson, "t"), nullptr);
}

#ifdef LOCUS_JOURNAL_SINK_CHECK
// journalctl's JSON for the entries matching `match`, once it has one.
std::string Journalctl(const std::string& match) {
  std::string out;
  for (int attempt = 0; attempt < 50 && out.empty(); ++attempt) {
    if (attempt > 0) usleep(100'000);
    std::FILE* pipe = popen(
        absl::StrCat("journalctl --no-pager -o json ", match).c_str(), "r");
    if (pipe == nullptr) break;
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
    pclose(pipe);
  }
  return out;
}

// The entry as journald stores it, found the way an operator finds a
// thread's story. Needs a journald, which this host does not run: built
// only into journal_sink_check, which tests/daemon/journald_test.sh runs
// under a private journald (ctest: daemon.journald), so that the unit run
// has no test that skips here.
TEST(JournalSinkTest, EntriesAreFoundByMessageIdAndThread) {
  if (access("/run/systemd/journal/socket", W_OK) != 0) {
    GTEST_SKIP() << "journald is not running here (no "
                    "/run/systemd/journal/socket); journald_test.sh starts "
                    "a private one";
  }
  JournalSink sink("locus-log-test");
  int32_t tid = getpid();  // unique enough among this journal's entries
  ActionResult applied;
  applied.outcome = Outcome::kApplied;
  sink.Write(ActionEntry(Pin(tid, tid, 1), applied, "pinned, with \"why\""));
  std::string json = Journalctl(absl::StrCat(
      "MESSAGE_ID=", MessageId(EventKind::kAction), " LOCUS_TID=", tid));
  ASSERT_FALSE(json.empty()) << "journalctl found nothing";
  auto fields = Parse(json.substr(0, json.find('\n'))).fields();
  EXPECT_EQ(fields["MESSAGE"].string_value(), "pinned, with \"why\"");
  EXPECT_EQ(fields["PRIORITY"].string_value(), "6");
  EXPECT_EQ(fields["SYSLOG_IDENTIFIER"].string_value(), "locus-log-test");
  EXPECT_EQ(fields["LOCUS_OUTCOME"].string_value(), "applied");
  EXPECT_EQ(fields["LOCUS_NODE"].string_value(), "1");
  EXPECT_EQ(fields["_TRANSPORT"].string_value(), "journal");
}
#endif  // LOCUS_JOURNAL_SINK_CHECK

}  // namespace
}  // namespace locus
