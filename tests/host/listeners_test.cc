#include "agent/host/listeners.h"

#include <sys/socket.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr uint64_t kNetnsA = 4026531840;
constexpr uint64_t kNetnsB = 4026532770;

// Rows as this machine's 6.18 kernel prints them.
constexpr char kTcp[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
    "retrnsmt   uid  timeout inode\n"
    "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 "
    "00000000     0        0 1060 1 000000001994a085 100 0 0 10 0\n"
    "   1: 0100007F:1F90 0100007F:A153 01 00000000:00000000 00:00000000 "
    "00000000     0        0 104511 1 0000000000000000 20 4 0 10 -1\n"
    "   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 "
    "00000000    33        0 104508 1 000000005ac38826 100 0 0 10 0\n";

std::string AddressOf(const TcpListenRow& listener) {
  return ListenAddressString(listener.address);
}

TEST(ParseTcpTableTest, ListenersOnlyWithAddressPortAndInode) {
  TcpTable table = ParseTcpTable(kTcp, AF_INET);
  EXPECT_THAT(table.errors, IsEmpty());
  ASSERT_EQ(table.listeners.size(), 2u);
  EXPECT_EQ(AddressOf(table.listeners[0]), "0.0.0.0:2024");
  EXPECT_EQ(table.listeners[0].inode, 1060u);
  EXPECT_EQ(AddressOf(table.listeners[1]), "127.0.0.1:8081");
  EXPECT_EQ(table.listeners[1].address.bytes[0], 127);  // network order
  EXPECT_EQ(table.listeners[1].address.port, 8081);
  EXPECT_EQ(table.listeners[1].inode, 104508u);
}

TEST(ParseTcpTableTest, Ipv6WordsAreEachInHostOrder) {
  const std::string rest =
      " 00000000000000000000000000000000:0000 0A 00000000:00000000 "
      "00:00000000 00000000     0        0 ";
  TcpTable table = ParseTcpTable(
      "  sl  local_address                         remote_address\n"
      "   0: 00000000000000000000000001000000:01BB" +
          rest +
          "11 1 0\n"
          "   1: B80D0120000000000000000005000000:20FB" +
          rest +
          "12 1 0\n"
          "   2: 0000000000000000FFFF00000100007F:0050" +
          rest + "13 1 0\n",
      AF_INET6);
  EXPECT_THAT(table.errors, IsEmpty());
  ASSERT_EQ(table.listeners.size(), 3u);
  EXPECT_EQ(AddressOf(table.listeners[0]), "[::1]:443");
  EXPECT_EQ(AddressOf(table.listeners[1]), "[2001:db8::5]:8443");
  EXPECT_EQ(AddressOf(table.listeners[2]), "[::ffff:127.0.0.1]:80");
  EXPECT_EQ(table.listeners[2].inode, 13u);
}

TEST(ParseTcpTableTest, MalformedRowsAreReportedByLineAndSkipped) {
  const std::string good =
      "   0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 "
      "00000000     0        0 77 1 0\n";
  const std::string text =
      good + "   1: 00000000:0050 00000000:0000 0A\n" +        // truncated
      "   2: 00000000:0050 00000000:0000 0A 0 0 0 0 0 0\n" +   // inode 0
      "   3: 0000:0050 00000000:0000 0A 0 0 0 0 0 9\n" +       // short address
      "   4: 00000000:00500 00000000:0000 0A 0 0 0 0 0 9\n" +  // long port
      "   5: 00000000:0050 00000000:0000 0X 0 0 0 0 0 9\n" +   // state
      "   6: 00000000000000000000000000000000:0050 0 0A 0 0 0 0 0 9\n" +
      "garbage\n" + good;
  TcpTable table = ParseTcpTable(text, AF_INET);
  ASSERT_EQ(table.listeners.size(), 2u);
  EXPECT_THAT(
      table.errors,
      ElementsAre(HasSubstr("line 2: only 4 fields"),
                  HasSubstr("line 3: bad inode '0'"),
                  HasSubstr("line 4: bad local address '0000:0050'"),
                  HasSubstr("line 5: bad local address"),
                  HasSubstr("line 6: bad state '0X'"),
                  HasSubstr("line 7: bad local address"),  // IPv6 in tcp
                  HasSubstr("line 8: only 1 fields")));
}

TEST(ParseEpollFdinfoTest, TargetsWithHexInodes) {
  EpollSet set = ParseEpollFdinfo(
      "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1038\n"
      "tfd:        3 events:       19 data:                3  pos:0 "
      "ino:1983c sdev:9\n"
      "tfd:       12 events:       19 data:                c  pos:0 "
      "ino:ff sdev:9\n");
  EXPECT_THAT(set.errors, IsEmpty());
  ASSERT_EQ(set.targets.size(), 2u);
  EXPECT_EQ(set.targets[0].fd, 3);
  EXPECT_EQ(set.targets[0].inode, 104508u);
  EXPECT_EQ(set.targets[1].fd, 12);
  EXPECT_EQ(set.targets[1].inode, 255u);
}

TEST(ParseEpollFdinfoTest, BadTfdLinesAreReportedByLine) {
  EpollSet set = ParseEpollFdinfo(
      "pos:\t0\n"
      "tfd:        3 events: 19 data: 3 pos:0 ino:zz sdev:9\n"
      "tfd:        4 events: 19 data: 3 pos:0\n"
      "tfd: events: 19 data: 3 pos:0 ino:10 sdev:9\n"
      "tfd:        5 events: 19 data: 3 pos:0 ino:0x10 sdev:9\n"
      "tfd:        6 events: 19 data: 3 pos:0 ino:10 sdev:9\n");
  ASSERT_EQ(set.targets.size(), 1u);
  EXPECT_EQ(set.targets[0].inode, 16u);
  EXPECT_THAT(
      set.errors,
      ElementsAre(HasSubstr("line 2: bad tfd line"), HasSubstr("line 3:"),
                  HasSubstr("line 4:"), HasSubstr("line 5:")));
}

TEST(ParseFdLinkTest, SocketsEpollsAndTheRest) {
  auto socket = ParseFdLink("socket:[104508]");
  ASSERT_TRUE(socket.ok());
  EXPECT_EQ(socket->kind, FdLink::Kind::kSocket);
  EXPECT_EQ(socket->inode, 104508u);
  auto epoll = ParseFdLink("anon_inode:[eventpoll]");
  ASSERT_TRUE(epoll.ok());
  EXPECT_EQ(epoll->kind, FdLink::Kind::kEpoll);
  for (const char* other : {"/dev/null", "pipe:[77]", "anon_inode:[eventfd]",
                            "/var/log/socket:[1]", "anon_inode:inotify"}) {
    auto link = ParseFdLink(other);
    ASSERT_TRUE(link.ok()) << other;
    EXPECT_EQ(link->kind, FdLink::Kind::kOther) << other;
  }
  for (const char* bad :
       {"socket:[]", "socket:[12", "socket:[x1]", "socket:[-1]", "socket:"}) {
    auto link = ParseFdLink(bad);
    ASSERT_FALSE(link.ok()) << bad;
    EXPECT_THAT(link.status().message(), HasSubstr("bad socket link")) << bad;
  }
}

TEST(ParseNetNsLinkTest, InodeOrError) {
  auto inode = ParseNetNsLink("net:[4026531840]");
  ASSERT_TRUE(inode.ok());
  EXPECT_EQ(*inode, 4026531840u);
  for (const char* bad :
       {"net:[]", "mnt:[4026531840]", "net:4026531840", "net:[+1]", ""}) {
    EXPECT_FALSE(ParseNetNsLink(bad).ok()) << bad;
  }
}

class ListenGroupsTest : public ::testing::Test {
 protected:
  std::vector<ListenGroup> Read(const NginxInstance& instance) {
    auto groups = ReadListenGroups(root_, instance, &errors_);
    EXPECT_TRUE(groups.ok()) << groups.status();
    return groups.ok() ? *groups : std::vector<ListenGroup>{};
  }
  static std::string Where(const ListenGroup& group) {
    return ListenAddressString(group.key.address);
  }
  const std::string root_ = FixturePath("listeners/proc");
  std::vector<std::string> errors_;
};

TEST_F(ListenGroupsTest, ReuseportGroupsWithOwnersAndDupSources) {
  // 103 is gone, 104 exited between its ns link and its fd directory.
  auto groups = Read({100, {101, 102, 103, 104}});
  ASSERT_EQ(groups.size(), 4u);
  const ListenGroup& http = groups[0];
  EXPECT_EQ(Where(http), "0.0.0.0:80");
  EXPECT_EQ(http.key.netns, kNetnsA);
  EXPECT_EQ(http.key.address.family, AF_INET);
  EXPECT_TRUE(http.reuseport());
  ASSERT_EQ(http.sockets.size(), 3u);
  EXPECT_EQ(http.sockets[0].inode, 5001u);
  EXPECT_EQ(http.sockets[0].owner_pid, 101);
  EXPECT_EQ(http.sockets[1].inode, 5002u);
  EXPECT_EQ(http.sockets[1].owner_pid, 102);
  EXPECT_EQ(http.sockets[2].inode, 5003u);
  EXPECT_EQ(http.sockets[2].owner_pid, 0) << "its worker exited";
  for (const GroupSocket& socket : http.sockets) {
    EXPECT_EQ(socket.dup_pid, 100) << "the master outlives workers";
  }
  // The master holds 5001 as fd 6 and 16: the lowest is given.
  EXPECT_EQ(http.sockets[0].dup_fd, 6);
  EXPECT_EQ(http.sockets[2].dup_fd, 8);

  const ListenGroup& https = groups[2];
  EXPECT_EQ(Where(https), "[::]:443");
  EXPECT_EQ(https.key.address.family, AF_INET6);
  ASSERT_EQ(https.sockets.size(), 3u);
  EXPECT_EQ(https.sockets[0].owner_pid, 101);
  EXPECT_EQ(https.sockets[1].owner_pid, 102);
  EXPECT_EQ(https.sockets[1].dup_fd, 10);
  EXPECT_EQ(https.sockets[2].owner_pid, 0);
}

TEST_F(ListenGroupsTest, AListenerWithoutReuseportIsAGroupOfOne) {
  auto groups = Read({100, {101, 102}});
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(Where(groups[1]), "127.0.0.1:8080");
  EXPECT_FALSE(groups[1].reuseport());
  ASSERT_EQ(groups[1].sockets.size(), 1u);
  EXPECT_EQ(groups[1].sockets[0].inode, 5020u);
  EXPECT_EQ(groups[1].sockets[0].owner_pid, 0) << "in every worker's epoll";
  EXPECT_EQ(groups[1].sockets[0].dup_pid, 100);
  EXPECT_EQ(groups[1].sockets[0].dup_fd, 12);
  // Held by the master alone, never polled.
  EXPECT_EQ(Where(groups[3]), "[2001:db8::5]:8443");
  EXPECT_FALSE(groups[3].reuseport());
  EXPECT_EQ(groups[3].sockets[0].dup_fd, 13);
}

TEST_F(ListenGroupsTest, OnlyTcpListenersTheInstanceHolds) {
  for (const ListenGroup& group : Read({100, {101, 102}})) {
    EXPECT_NE(group.key.address.port, 22) << "sshd's, not nginx's";
    for (const GroupSocket& socket : group.sockets) {
      EXPECT_NE(socket.inode, 9001u) << "a client connection";
      EXPECT_NE(socket.inode, 5040u) << "a UDP socket";
    }
  }
}

TEST_F(ListenGroupsTest, MalformedContentIsReportedWithItsPlace) {
  Read({100, {101, 102, 103, 104}});
  EXPECT_THAT(
      errors_,
      UnorderedElementsAre(
          HasSubstr("listeners/proc/100/fd/17: bad socket link 'socket:[abc]'"),
          HasSubstr("listeners/proc/100/net/tcp: line 9: only 5 fields"),
          HasSubstr("listeners/proc/100/net/tcp: line 10: bad local address"),
          HasSubstr("listeners/proc/100/net/tcp: line 11: bad state 'ZZ'"),
          HasSubstr("listeners/proc/100/net/tcp: line 12: bad inode '50x2'"),
          HasSubstr("listeners/proc/102/fdinfo/15: line 8: bad tfd line")))
      << "gone processes (103, 104) are no errors";
}

TEST_F(ListenGroupsTest, WithoutItsMasterWorkersOwnAndLendTheirSockets) {
  auto groups = Read({103, {101, 102}});  // 103: gone
  ASSERT_EQ(groups.size(), 3u) << "8443 was the master's alone";
  const ListenGroup& http = groups[0];
  ASSERT_EQ(http.sockets.size(), 3u);
  EXPECT_EQ(http.sockets[0].dup_pid, 101);
  EXPECT_EQ(http.sockets[1].dup_pid, 102) << "its owner";
  EXPECT_EQ(http.sockets[1].dup_fd, 7);
  EXPECT_EQ(http.sockets[2].dup_pid, 101) << "any holder";
}

TEST_F(ListenGroupsTest, OtherNamespaceAndASocketTheMasterClosed) {
  auto groups = Read({200, {201, 202}});
  EXPECT_THAT(errors_, IsEmpty()) << "no tcp6 there: IPv6 is off";
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].key.netns, kNetnsB);
  EXPECT_EQ(Where(groups[0]), "0.0.0.0:80");
  ASSERT_EQ(groups[0].sockets.size(), 2u);
  EXPECT_EQ(groups[0].sockets[0].owner_pid, 201);
  EXPECT_EQ(groups[0].sockets[0].dup_pid, 200);
  EXPECT_EQ(groups[0].sockets[1].owner_pid, 202);
  EXPECT_EQ(groups[0].sockets[1].dup_pid, 202);
  EXPECT_EQ(groups[0].sockets[1].dup_fd, 7);
}

TEST_F(ListenGroupsTest, TheSamePortInTwoNamespacesIsTwoGroups) {
  auto groups = Read({100, {101, 201}});
  std::vector<std::pair<uint64_t, std::string>> keys;
  for (const ListenGroup& group : groups) {
    if (group.key.address.port == 80) {
      keys.emplace_back(group.key.netns, Where(group));
    }
  }
  EXPECT_THAT(keys, ElementsAre(std::pair(kNetnsA, "0.0.0.0:80"),
                                std::pair(kNetnsB, "0.0.0.0:80")));
  EXPECT_EQ(groups.back().key.netns, kNetnsB);
  ASSERT_EQ(groups.back().sockets.size(), 1u) << "only 201's holds";
  EXPECT_EQ(groups.back().sockets[0].owner_pid, 201);
}

TEST_F(ListenGroupsTest, AnInstanceWhollyGoneIsNoError) {
  auto groups = Read({103, {104}});
  EXPECT_THAT(groups, IsEmpty());
  EXPECT_THAT(errors_, IsEmpty());
}

}  // namespace
}  // namespace locus
