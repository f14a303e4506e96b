#include "agent/host/proc_parse.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kStat[] =
    "4242 (nginx: worker) S 4200 4200 4200 0 -1 4194560 100 0 0 0 12 3 0 0 "
    "20 0 1 0 987654 12345678 1234 18446744073709551615 1 1 0 0 0 0 0 0 0 0 "
    "0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(ProcStatTest, Parses) {
  auto stat = ParseProcStat(kStat);
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->comm, "nginx: worker");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 4200);
  EXPECT_EQ(stat->cpu_ticks, 12u + 3u);
  EXPECT_EQ(stat->start_time, 987654u);
  EXPECT_EQ(stat->processor, 1);
}

TEST(ProcStatTest, CommWithParenthesesAndSpaces) {
  std::string text = kStat;
  text.replace(text.find("(nginx: worker)"), 15, "(a) b (c)");
  auto stat = ParseProcStat(text);
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->comm, "a) b (c");
  EXPECT_EQ(stat->processor, 1);
}

TEST(ProcStatTest, TruncatedIsAnError) {
  auto stat = ParseProcStat("4242 (nginx) S 4200 4200");
  ASSERT_FALSE(stat.ok());
  EXPECT_THAT(std::string(stat.status().message()), HasSubstr("truncated"));
  EXPECT_FALSE(ParseProcStat("").ok());
  EXPECT_FALSE(ParseProcStat("4242 nginx S").ok());
}

TEST(StatusTest, CpusAllowedList) {
  auto cpus = ParseStatusCpusAllowed(
      "Name:\tnginx\nCpus_allowed:\tf\nCpus_allowed_list:\t0-1,3\n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 3));
  EXPECT_FALSE(ParseStatusCpusAllowed("Name:\tnginx\n").ok());
}

TEST(StatusTest, ValuesOfOneKeyAndHexMasks) {
  const char* text =
      "Name:\tirqbalance\nUid:\t0\t1000\t0\t0\nSigIgn:\t0000000000001000\n"
      "SigIgnX:\tzz\nCapEff:\t000001ffffffffff\n";
  EXPECT_THAT(ParseStatusValues(text, "Uid"),
              ElementsAre("0", "1000", "0", "0"));
  EXPECT_THAT(ParseStatusValues(text, "Gid"), ElementsAre());
  // A key is the whole name before the colon, not a prefix of another.
  EXPECT_THAT(ParseStatusValues(text, "Sig"), ElementsAre());
  auto ignored = ParseStatusMask(text, "SigIgn");
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  EXPECT_EQ(*ignored, 0x1000u);  // SIGPIPE (13) is bit 12
  auto caps = ParseStatusMask(text, "CapEff");
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(*caps, 0x1ffffffffffu);
  EXPECT_THAT(std::string(ParseStatusMask(text, "SigIgnX").status().message()),
              HasSubstr("bad SigIgnX line"));
  EXPECT_THAT(std::string(ParseStatusMask(text, "SigBlk").status().message()),
              HasSubstr("no SigBlk line"));
  auto uid = ParseStatusRealUid(text);
  ASSERT_TRUE(uid.ok());
  EXPECT_EQ(*uid, 0u);
}

TEST(SchedstatTest, ParsesTheThreeCounters) {
  auto stat = ParseSchedstat("5956542 12244576 3\n");
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->run_ns, 5956542u);
  EXPECT_EQ(stat->wait_ns, 12244576u);
  EXPECT_EQ(stat->slices, 3u);
}

TEST(SchedstatTest, TruncatedIsAnError) {
  EXPECT_FALSE(ParseSchedstat("5956542 12244576").ok());
  EXPECT_FALSE(ParseSchedstat("5956542 x 3").ok());
  EXPECT_FALSE(ParseSchedstat("").ok());
  EXPECT_FALSE(ParseSchedstat("-5 1 2\n").ok());
}

TEST(StatusSwitchesTest, ReadsBothCounters) {
  auto switches = ParseStatusSwitches(
      "Name:\tnginx\nvoluntary_ctxt_switches:\t4017\n"
      "nonvoluntary_ctxt_switches:\t22\n");
  ASSERT_TRUE(switches.ok()) << switches.status();
  EXPECT_EQ(switches->voluntary, 4017u);
  EXPECT_EQ(switches->involuntary, 22u);
}

TEST(StatusSwitchesTest, AMissingOrBadLineIsNamed) {
  auto missing = ParseStatusSwitches("voluntary_ctxt_switches:\t1\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "no nonvoluntary_ctxt_switches line");
  auto bad = ParseStatusSwitches(
      "voluntary_ctxt_switches:\t-1\nnonvoluntary_ctxt_switches:\t2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bad voluntary_ctxt_switches line");
}

TEST(CmdlineTest, JoinsArguments) {
  EXPECT_EQ(ParseCmdline(std::string("nginx: worker process\0\0\0", 24)),
            "nginx: worker process");
  EXPECT_EQ(ParseCmdline(std::string("/usr/bin/envoy\0-c\0x.yaml\0", 25)),
            "/usr/bin/envoy -c x.yaml");
  EXPECT_EQ(ParseCmdline(""), "");
  EXPECT_THAT(ParseCmdlineArgs(std::string("irqbalance\0-t\0"
                                           "40\0",
                                           17)),
              ElementsAre("irqbalance", "-t", "40"));
  EXPECT_THAT(ParseCmdlineArgs(""), ::testing::IsEmpty());
}

TEST(CgroupTest, PathAndUnit) {
  EXPECT_EQ(ParseCgroupPath("0::/system.slice/nginx.service\n"),
            "/system.slice/nginx.service");
  EXPECT_EQ(ParseCgroupPath("3:cpuset:/\n1:name=systemd:/system.slice/a."
                            "service\n"),
            "/system.slice/a.service");
  EXPECT_EQ(ParseCgroupPath("3:cpuset:/\n"), "");
  EXPECT_EQ(SystemdUnitOf("/system.slice/nginx.service"), "nginx.service");
  EXPECT_EQ(SystemdUnitOf("/system.slice/nginx.service/workers"),
            "nginx.service");
  EXPECT_EQ(SystemdUnitOf("/user.slice/user-0.slice/session-1.scope"),
            "session-1.scope");
  EXPECT_EQ(SystemdUnitOf("/"), "");
}

// The unit is the system manager's: the first component below the slices,
// never a name further down, which a user's manager or a container chose.
TEST(CgroupTest, UnitIsTheSystemManagersNeverOneBelowIt) {
  EXPECT_EQ(SystemdUnitOf("/system.slice/foo.slice/nginx.service"),
            "nginx.service");
  EXPECT_EQ(SystemdUnitOf("/nginx.service"), "nginx.service");
  EXPECT_EQ(SystemdUnitOf("/user.slice/user-1000.slice/user@1000.service/"
                          "app.slice/nginx.service"),
            "user@1000.service");
  EXPECT_EQ(SystemdUnitOf("/system.slice/other.service/nginx.service"),
            "other.service");
  EXPECT_EQ(SystemdUnitOf("/machine.slice/libpod-1.scope/system.slice/"
                          "nginx.service"),
            "libpod-1.scope");
  EXPECT_EQ(SystemdUnitOf("/system.slice/nginx.service.d/x.service"), "");
  EXPECT_EQ(SystemdUnitOf("/../../system.slice/nginx.service"), "");
  EXPECT_EQ(SystemdUnitOf("/pinned/nginx.service"), "");
  EXPECT_TRUE(IsUserManagerUnit("user@1000.service"));
  EXPECT_FALSE(IsUserManagerUnit("user-1000.slice"));
  EXPECT_FALSE(IsUserManagerUnit("nginx.service"));
}

TEST(ProcLocksTest, TheGrantedFlockOfTheFileNamesItsHolder) {
  const std::string locks =
      "1: POSIX  ADVISORY  WRITE 700 fe:00:42 0 EOF\n"
      "2: FLOCK  ADVISORY  WRITE 15573 fe:01:42 0 EOF\n"
      "2: -> FLOCK  ADVISORY  WRITE 16011 fe:01:42 0 EOF\n"
      "3: FLOCK  ADVISORY  WRITE 800 103:02:77 0 EOF\n"
      "garbage\n";
  EXPECT_EQ(ParseFlockHolder(locks, 0xfe, 0x01, 42), 15573);
  EXPECT_EQ(ParseFlockHolder(locks, 0x103, 0x02, 77), 800);
  EXPECT_EQ(ParseFlockHolder(locks, 0xfe, 0x00, 42), std::nullopt);
  EXPECT_EQ(ParseFlockHolder(locks, 0xfe, 0x01, 43), std::nullopt);
  EXPECT_EQ(ParseFlockHolder("", 0, 0, 0), std::nullopt);
}

TEST(CgroupTest, LinesSplitAtTheFirstTwoColons) {
  std::vector<CgroupLine> lines =
      ParseCgroupLines("3:cpuset,cpu:/pinned\n0::/odd:name\nnot a line\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].hierarchy, "3");
  EXPECT_EQ(lines[0].controllers, "cpuset,cpu");
  EXPECT_EQ(lines[0].path, "/pinned");
  EXPECT_EQ(lines[1].controllers, "");
  EXPECT_EQ(lines[1].path, "/odd:name");
  EXPECT_EQ(ParseCgroupPath("0::/odd:name\n"), "/odd:name");
}

TEST(MigratableRangesTest, PrivateWritableResidentAndNotHuge) {
  constexpr char kMaps[] =
      "1000-3000 rw-p 00000000 00:00 0 [heap]\n"
      "4000-5000 r--p 00000000 08:01 1 /usr/bin/x\n"
      "6000-7000 rw-s 00000000 00:01 5 /dev/shm/x\n"
      "8000-9000 rw-p 00000000 00:00 0 [vvar]\n"
      "a000-b000 rw-p 00000000 00:00 0\n"
      "c000-10000 rw-p 00000000 00:00 0\n"
      "f000-e000 rw-p 00000000 00:00 0\n"
      "zz-10 rw-p 00000000 00:00 0\n"
      "20000-21000 rw\n";
  std::vector<MemRange> all =
      ParseMigratableRanges(kMaps, std::nullopt, 0x3000);
  ASSERT_EQ(all.size(), 2u);  // c000-10000 is larger than 0x3000 bytes
  EXPECT_EQ(all[0].start, 0x1000u);
  EXPECT_EQ(all[0].end, 0x3000u);
  EXPECT_EQ(all[1].start, 0xa000u);
  std::vector<MemRange> resident = ParseMigratableRanges(
      kMaps, "1000 default heap\na000 default anon=1 N1=1\n", 0x10000);
  ASSERT_EQ(resident.size(), 1u);
  EXPECT_EQ(resident[0].start, 0xa000u);
}

}  // namespace
}  // namespace locus
