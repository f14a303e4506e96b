// agent/core/refusal_log.h: look-alikes are logged, but no one can flood the
// log with them: a few lines per kind and minute, then a count, and a
// bounded part of each reason.
#include "agent/core/refusal_log.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/core/event_log.h"
#include "agent/core/explain_history.h"
#include "common/log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr uint64_t kSecond = 1'000'000'000;

class CapturingSink : public LogSink {
 public:
  CapturingSink() { SetLogSink(this); }
  ~CapturingSink() override { SetLogSink(nullptr); }
  void Write(const LogEntry& entry) override { entries.push_back(entry); }
  std::vector<LogEntry> entries;
};

std::string Field(const LogEntry& entry, absl::string_view name) {
  for (const LogField& f : entry.fields) {
    if (f.name == name) return f.value;
  }
  return "";
}

TEST(RefusalKindTest, TheFirstProblemNamedIsTheKind) {
  EXPECT_EQ(RefusalKind("not trusted as a target: its executable /tmp/nginx "
                        "is owned by uid 1000, not root"),
            "executable not owned by root");
  EXPECT_EQ(RefusalKind("not trusted as a target: its executable /x/nginx "
                        "may be written by group or others"),
            "executable writable by others");
  EXPECT_EQ(RefusalKind("not trusted as a target: pid 7 was started by uid "
                        "1000, not root"),
            "master not started by root");
  EXPECT_EQ(RefusalKind("not trusted as a target: its executable "
                        "(/proc/7/exe): No such file or directory"),
            "executable unreadable");
  // A path that mimics another kind's words does not make a kind of its own.
  EXPECT_EQ(RefusalKind("not trusted as a target: its executable /tmp/ was "
                        "started by uid 0/nginx is owned by uid 1000, not "
                        "root"),
            "master not started by root");
  EXPECT_EQ(RefusalKind("something new"), "other");
}

// The flood: 300 short-lived look-alikes with a 3.8 KB path in 7 s.
TEST(RefusalLogTest, FiveLinesPerKindThenOneCountPerMinute) {
  CapturingSink sink;
  RefusalLog log;
  const std::string path = "/tmp/" + std::string(3800, 'd') + "/nginx";
  for (int i = 0; i < 300; ++i) {
    RefusedProcess p{1000 + i, "nginx",
                     absl::StrCat("not trusted as a target: its executable ",
                                  path, " is owned by uid 1000, not root")};
    log.Report({p}, i * 7 * kSecond / 300);
  }
  ASSERT_THAT(sink.entries, SizeIs(RefusalLog::kBurst));
  size_t bytes = 0;
  for (const LogEntry& e : sink.entries) {
    EXPECT_EQ(e.message_id, MessageId(EventKind::kRefusal));
    EXPECT_LE(e.message.size(), kMaxRefusalReasonBytes + 64) << e.message;
    EXPECT_THAT(e.message, HasSubstr("\xe2\x80\xa6(+"));
    bytes += e.message.size();
  }
  EXPECT_LT(bytes, 4096u);
  log.Report({}, 30 * kSecond);  // the minute is not over
  ASSERT_THAT(sink.entries, SizeIs(RefusalLog::kBurst));
  log.Report({}, 60 * kSecond);
  ASSERT_THAT(sink.entries, SizeIs(RefusalLog::kBurst + 1));
  const LogEntry& summary = sink.entries.back();
  EXPECT_EQ(summary.message_id, MessageId(EventKind::kRefusal));
  EXPECT_EQ(summary.level, LogLevel::kWarning);
  EXPECT_THAT(summary.message,
              HasSubstr("295 more processes refused as targets (executable "
                        "not owned by root) in the last 60 s"));
  EXPECT_EQ(Field(summary, "LOCUS_COUNT"), "295");
  EXPECT_EQ(Field(summary, "LOCUS_REFUSAL_KIND"),
            "executable not owned by root");
  log.Report({}, 200 * kSecond);  // nothing held back: nothing to say
  EXPECT_THAT(sink.entries, SizeIs(RefusalLog::kBurst + 1));
}

TEST(RefusalLogTest, KindsAreCappedApart) {
  CapturingSink sink;
  RefusalLog log(1, 60 * kSecond);
  log.Report({{1, "nginx", "its executable /a is owned by uid 1"},
              {2, "nginx", "its executable /b is owned by uid 1"},
              {3, "nginx", "pid 3 was started by uid 1, not root"}},
             0);
  ASSERT_THAT(sink.entries, SizeIs(2));
  EXPECT_THAT(sink.entries[0].message, HasSubstr("pid 1 "));
  EXPECT_THAT(sink.entries[1].message, HasSubstr("pid 3 "));
}

}  // namespace
}  // namespace locus
