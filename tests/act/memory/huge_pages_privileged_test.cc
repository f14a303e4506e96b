// The huge-page lookup on this machine's kernel: a child process with a
// MADV_HUGEPAGE region gets one unit per huge page the kernel gave it (as its
// smaps counts them), and move_pages on a unit's address moves the whole
// 2 MiB. Moving needs two nodes with memory: on one (this VM, see
// shared/LAB.md) that part skips; the lab's THP benchmark runs it in a
// 2-node guest.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/memory/huge_pages.h"
#include "agent/act/memory/page_migrator.h"
#include "agent/host/file_util.h"
#include "agent/host/topology.h"
#include "gtest/gtest.h"
#include "tests/lab/memhog_args.h"

namespace locus {
namespace {

constexpr uint64_t kHuge = 2u << 20;
constexpr uint64_t kRegion = 8 * kHuge;

// A child holding kRegion bytes of MADV_HUGEPAGE memory, touched.
class HugeChild {
 public:
  HugeChild() {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      char* raw = static_cast<char*>(mmap(nullptr, kRegion + kHuge,
                                          PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      uintptr_t start = reinterpret_cast<uintptr_t>(raw);
      char* base = raw + (kHuge - start % kHuge) % kHuge;
      madvise(base, kRegion, MADV_HUGEPAGE);
      std::memset(base, 1, kRegion);
      uint64_t addr = reinterpret_cast<uintptr_t>(base);
      if (write(fds[1], &addr, sizeof(addr)) != sizeof(addr)) _exit(1);
      for (;;) pause();
    }
    close(fds[1]);
    if (pid_ > 0 && read(fds[0], &base_, sizeof(base_)) != sizeof(base_)) {
      base_ = 0;
    }
    close(fds[0]);
  }
  ~HugeChild() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  uint64_t base() const { return base_; }
  // AnonHugePages of its region, from its smaps.
  uint64_t HugeBytes() const {
    auto smaps = ReadTextFile("/proc/" + std::to_string(pid_) + "/smaps");
    EXPECT_TRUE(smaps.ok()) << smaps.status();
    if (!smaps.ok()) return 0;
    auto bytes = AnonHugeBytes(*smaps, base_, base_ + kRegion);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return bytes.ok() ? *bytes : 0;
  }

 private:
  pid_t pid_ = -1;
  uint64_t base_ = 0;
};

class HugePagesPrivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (pagemap frames)";
    auto enabled = ReadFirstLine("/sys/kernel/mm/transparent_hugepage/enabled");
    if (!enabled.ok()) GTEST_SKIP() << "no THP: " << enabled.status();
    if (absl::StrContains(*enabled, "[never]")) {
      GTEST_SKIP() << "transparent_hugepage/enabled is never: " << *enabled;
    }
    ASSERT_GT(child_.pid(), 0);
    ASSERT_NE(child_.base(), 0u);
    huge_bytes_ = child_.HugeBytes();
    if (huge_bytes_ == 0) {
      GTEST_SKIP() << "the kernel gave the region no huge page (no free "
                      "2 MiB at first touch)";
    }
  }
  std::vector<PageUnit> Units() {
    PageUnitLookup lookup(reader_.get(), page_size_);
    std::vector<PageUnit> units;
    uint64_t next = 0;
    EXPECT_EQ(
        lookup.Next(child_.pid(), {{child_.base(), child_.base() + kRegion}}, 0,
                    100000, 0, &units, &next),
        0);
    EXPECT_EQ(next, 0u);
    return units;
  }
  // move_pages over `addrs` of the child: nodes (or -errno) per address.
  std::vector<int> Move(std::vector<void*> addrs, const int* nodes) {
    std::vector<int> status(addrs.size(), -1);
    EXPECT_EQ(page_ops_->MovePages(child_.pid(), addrs.size(), addrs.data(),
                                   nodes, status.data()),
              0);
    return status;
  }

  HugeChild child_;
  uint64_t huge_bytes_ = 0;
  const uint64_t page_size_ = sysconf(_SC_PAGESIZE);
  std::unique_ptr<PageFrameReader> reader_ = MakeProcPageFrameReader("/proc");
  std::unique_ptr<PageOps> page_ops_ = MakeKernelPageOps("/proc");
};

TEST_F(HugePagesPrivilegedTest, OneUnitPerHugePageTheKernelGave) {
  std::vector<PageUnit> units = Units();
  uint64_t huge_units = 0, pages = 0;
  for (const PageUnit& unit : units) {
    huge_units += unit.pages == kPagesPerHugePage;
    pages += unit.pages;
    if (unit.pages == kPagesPerHugePage) {
      EXPECT_EQ(unit.addr % kHuge, 0u);
    }
  }
  EXPECT_EQ(huge_units * kHuge, huge_bytes_);  // exactly smaps' count
  EXPECT_EQ(pages * page_size_, kRegion);      // and every page once
  // One move_pages entry per unit finds each of them on a node.
  std::vector<void*> addrs;
  for (const PageUnit& unit : units) {
    addrs.push_back(reinterpret_cast<void*>(unit.addr));
  }
  for (int status : Move(addrs, nullptr)) EXPECT_GE(status, 0);
}

TEST_F(HugePagesPrivilegedTest, MovingAUnitMovesItsWholeHugePage) {
  auto topology = ReadTopology("/sys");
  ASSERT_TRUE(topology.ok()) << topology.status();
  if (topology->nodes.size() < 2) {
    GTEST_SKIP() << "one NUMA node here: no other node to move a huge page "
                    "to (the lab's 2-node guest runs this)";
  }
  std::vector<PageUnit> units = Units();
  std::vector<void*> addrs;
  for (const PageUnit& unit : units) {
    addrs.push_back(reinterpret_cast<void*>(unit.addr));
  }
  const int from = Move({addrs.front()}, nullptr).front();
  ASSERT_GE(from, 0);
  int to = -1;
  for (const Node& node : topology->nodes) {
    if (node.id != from && node.mem_total_bytes > 0) to = node.id;
  }
  ASSERT_GE(to, 0) << "no other node with memory";
  std::vector<int> nodes(addrs.size(), to);
  std::vector<int> status = Move(addrs, nodes.data());
  EXPECT_EQ(MovedBytes(units, status.data(), to, page_size_), kRegion);
  // Every base page went, not only the units' first ones; and they stayed
  // huge where the kernel found huge pages free on the target.
  std::vector<void*> every;
  for (uint64_t a = child_.base(); a < child_.base() + kRegion;
       a += page_size_) {
    every.push_back(reinterpret_cast<void*>(a));
  }
  for (int node : Move(every, nullptr)) EXPECT_EQ(node, to);
  EXPECT_EQ(child_.HugeBytes(), huge_bytes_);
}

// The kernel's page ops over the child's region only, counting the entries
// move_pages is given.
class RegionPageOps : public PageOps {
 public:
  RegionPageOps(PageOps* real, MemRange region)
      : real_(real), region_(region) {}
  int MovePages(int32_t pid, size_t count, void** pages, const int* nodes,
                int* status) override {
    entries += count;
    return real_->MovePages(pid, count, pages, nodes, status);
  }
  int Ranges(int32_t, std::vector<MemRange>* ranges) override {
    *ranges = {region_};
    return 0;
  }
  uint64_t PageSize() override { return real_->PageSize(); }
  PageFrameReader* Frames() override { return real_->Frames(); }
  uint64_t entries = 0;

 private:
  PageOps* real_;
  MemRange region_;
};

TEST_F(HugePagesPrivilegedTest, MigrationPassQueriesOneEntryPerHugePage) {
  ASSERT_NE(page_ops_->Frames(), nullptr) << "root has CAP_SYS_ADMIN";
  RegionPageOps ops(page_ops_.get(), {child_.base(), child_.base() + kRegion});
  MonotonicClock clock;
  PageMigrator migrator(&ops, &clock, MigrationOptions{}, true);
  auto nodes = migrator.QueryNodes(child_.pid(), 0);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  uint64_t pages = 0;
  for (const auto& [node, count] : *nodes) pages += count;
  EXPECT_EQ(pages * page_size_, kRegion);  // counted in base pages
  EXPECT_EQ(ops.entries,
            huge_bytes_ / kHuge + (kRegion - huge_bytes_) / page_size_);
}

}  // namespace
}  // namespace locus
