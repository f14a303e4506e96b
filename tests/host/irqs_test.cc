#include "agent/host/irqs.h"

#include "agent/host/host_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(InterruptsTest, ParsesRowsByHeaderColumns) {
  std::vector<std::string> errors;
  auto rows = ParseInterrupts(
      "           CPU0       CPU2\n"
      " 24:          1          5  IO-APIC   5-edge      ACPI:Ged\n"
      " 38:          0        705 PCI-MSIX-0000:00:03.0   1-edge      "
      "virtio2-input.0\n"
      " 51:  7 7  IR-PCI-MSI 1048577-edge ehci_hcd:usb1, uhci_hcd:usb2\n"
      " 52:  7\n"
      "NMI:          0          0   Non-maskable interrupts\n"
      "ERR:          0\n",
      &errors);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].irq, 24);
  // CPU 1 is offline: the second column is CPU 2.
  EXPECT_THAT((*rows)[0].counts, ElementsAre(1, 0, 5));
  EXPECT_EQ((*rows)[0].name, "ACPI:Ged");
  EXPECT_EQ((*rows)[1].name, "virtio2-input.0");
  EXPECT_EQ((*rows)[2].name, "ehci_hcd:usb1, uhci_hcd:usb2");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("irq 52"));
}

TEST(InterruptsTest, NoHeader) {
  std::vector<std::string> errors;
  EXPECT_FALSE(ParseInterrupts("", &errors).ok());
  EXPECT_FALSE(ParseInterrupts(" 24: 1 2\n", &errors).ok());
}

TEST(InterruptsTest, QueueFromName) {
  EXPECT_EQ(QueueFromIrqName("virtio1-input.0"), 0);
  EXPECT_EQ(QueueFromIrqName("virtio1-output.12"), 12);
  EXPECT_EQ(QueueFromIrqName("eth0-TxRx-3"), 3);
  EXPECT_EQ(QueueFromIrqName("ens5-rx-2"), 2);
  EXPECT_EQ(QueueFromIrqName("virtio1-config"), -1);
  EXPECT_EQ(QueueFromIrqName("virtio1"), -1);
  EXPECT_EQ(QueueFromIrqName("7"), -1);
}

TEST(ReadIrqsTest, FixtureTree) {
  HostPaths paths{FixturePath("numa2/sys"), FixturePath("numa2/proc")};
  std::vector<std::string> errors;
  auto irqs = ReadIrqs(paths, {39}, &errors);
  ASSERT_TRUE(irqs.ok()) << irqs.status();
  ASSERT_EQ(irqs->size(), 6u);
  std::map<int, IrqSample> by_irq;
  for (const IrqSample& irq : *irqs) by_irq[irq.irq] = irq;

  const IrqSample& rx = by_irq[38];
  EXPECT_EQ(rx.name, "virtio2-input.0");
  EXPECT_EQ(rx.net_device, "eth0");
  EXPECT_EQ(rx.queue, 0);
  EXPECT_EQ(rx.device_node, 1);  // from the PCI function's numa_node
  EXPECT_THAT(rx.affinity, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(rx.effective, ElementsAre(2));
  EXPECT_THAT(rx.count_per_cpu, ElementsAre(100, 101, 102, 103));
  EXPECT_FALSE(rx.managed);
  EXPECT_TRUE(by_irq[39].managed);
  EXPECT_EQ(by_irq[37].net_device, "eth0");
  EXPECT_EQ(by_irq[37].queue, -1);           // config vector
  EXPECT_EQ(by_irq[50].net_device, "eth1");  // by name only
  EXPECT_EQ(by_irq[50].queue, 3);
  EXPECT_EQ(by_irq[24].net_device, "");
  EXPECT_EQ(by_irq[24].device_node, 0);  // from /proc/irq/24/node
  EXPECT_EQ(by_irq[24].queue, -1);
  // IRQ 51's smp_affinity_list is malformed: named, the rest is there.
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("numa2/proc/irq/51/smp_affinity_list"));
  EXPECT_THAT(by_irq[51].affinity, IsEmpty());
  EXPECT_THAT(by_irq[51].effective, ElementsAre(3));
}

TEST(ReadIrqsTest, OfflineCpuHasNoColumn) {
  HostPaths paths{FixturePath("numa4/sys"), FixturePath("numa4/proc")};
  std::vector<std::string> errors;
  auto irqs = ReadIrqs(paths, {}, &errors);
  ASSERT_TRUE(irqs.ok()) << irqs.status();
  EXPECT_EQ((*irqs)[0].count_per_cpu.size(), 5u);
  EXPECT_EQ((*irqs)[2].device_node, 2);
}

TEST(ReadIrqsTest, CacheRereadsNicIrqsEachCallAndTheRestEveryFew) {
  TempTree tree;
  tree.CopyFixture("numa2");
  HostPaths paths{tree.root() + "/sys", tree.root() + "/proc"};
  IrqReadCache cache;
  cache.refresh_every = 3;
  std::vector<std::string> errors;
  auto read = [&](int irq) {
    auto irqs = ReadIrqs(paths, {}, &errors, &cache);
    EXPECT_TRUE(irqs.ok()) << irqs.status();
    for (const IrqSample& s : *irqs) {
      if (s.irq == irq) return s;
    }
    ADD_FAILURE() << "no irq " << irq;
    return IrqSample{};
  };
  EXPECT_THAT(read(24).affinity, ElementsAre(0, 1, 2, 3));  // a full read
  // Another tool moves IRQ 24 (no NIC's) and 38 (eth0's); 24 fires again.
  tree.Write("proc/irq/24/smp_affinity_list", "1\n");
  tree.Write("proc/irq/38/smp_affinity_list", "2\n");
  tree.Write("proc/interrupts",
             "  CPU0 CPU1 CPU2 CPU3\n"
             " 24: 9 0 0 0 IO-APIC 5-edge ACPI:Ged\n"
             " 38: 100 101 102 103 PCI-MSIX 1-edge virtio2-input.0\n");
  IrqSample acpi = read(24);
  EXPECT_THAT(acpi.affinity, ElementsAre(0, 1, 2, 3));  // reused
  EXPECT_THAT(acpi.count_per_cpu, ElementsAre(9, 0, 0, 0));
  EXPECT_EQ(acpi.device_node, 0);
  IrqSample rx = read(38);  // a NIC's: read at once
  EXPECT_THAT(rx.affinity, ElementsAre(2));
  EXPECT_EQ(rx.net_device, "eth0");
  EXPECT_EQ(rx.device_node, 1);
  EXPECT_THAT(read(24).affinity, ElementsAre(1));  // the 4th call: in full
  // The fixture's malformed IRQ 51 was read, and reported, once.
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("irq/51/smp_affinity_list"));
}

TEST(ReadIrqsTest, Deltas) {
  std::vector<IrqSample> before(2), now(3);
  before[0].irq = 1;
  before[0].count_per_cpu = {10, 20};
  before[1].irq = 2;
  before[1].count_per_cpu = {5, 5};
  now[0].irq = 1;
  now[0].count_per_cpu = {15, 20};
  now[1].irq = 2;
  now[1].count_per_cpu = {1, 9};  // went backwards on CPU 0
  now[2].irq = 3;
  now[2].count_per_cpu = {4, 4};
  IrqCountDeltas(before, &now);
  EXPECT_THAT(now[0].count_per_cpu, ElementsAre(5, 0));
  EXPECT_THAT(now[1].count_per_cpu, ElementsAre(0, 4));
  EXPECT_THAT(now[2].count_per_cpu, ElementsAre(4, 4));
}

TEST(HostModelTest, RefreshFillsSnapshotFromFixture) {
  TempTree tree;
  tree.CopyFixture("numa2");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  HostModel model(options);
  model.SetManagedIrqs({38});
  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  EXPECT_EQ(snapshot.topology.nodes.size(), 2u);
  EXPECT_EQ(snapshot.targets.size(), 4u);
  ASSERT_EQ(snapshot.irqs.size(), 6u);
  EXPECT_TRUE(snapshot.irqs[2].managed);
  // First refresh: no deltas yet.
  EXPECT_THAT(snapshot.irqs[2].count_per_cpu, ElementsAre(0, 0, 0, 0));
  tree.Write("proc/interrupts",
             "  CPU0 CPU1 CPU2 CPU3\n"
             " 38: 110 101 102 203 PCI-MSIX 1-edge virtio2-input.0\n");
  errors.clear();
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  ASSERT_EQ(snapshot.irqs.size(), 1u);
  EXPECT_THAT(snapshot.irqs[0].count_per_cpu, ElementsAre(10, 0, 0, 100));
  // Without /proc/interrupts the rest of the model still loads.
  tree.Remove("proc/interrupts");
  errors.clear();
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  EXPECT_EQ(snapshot.targets.size(), 4u);
  EXPECT_THAT(snapshot.irqs, IsEmpty());
  ASSERT_FALSE(errors.empty());
  EXPECT_THAT(errors.back(), HasSubstr("proc/interrupts"));
}

// The model re-reads the IRQs of no NIC at the cadence of its thread lists.
TEST(HostModelTest, IrqsOfNoNicFollowTheScanCadence) {
  TempTree tree;
  tree.CopyFixture("numa2");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  options.targets.refresh_every = 2;
  HostModel model(options);
  auto affinity_of_24 = [&] {
    Snapshot snapshot;
    std::vector<std::string> errors;
    EXPECT_TRUE(model.Refresh(&snapshot, &errors).ok());
    for (const IrqSample& irq : snapshot.irqs) {
      if (irq.irq == 24) return irq.affinity;
    }
    return std::vector<int>{};
  };
  EXPECT_THAT(affinity_of_24(), ElementsAre(0, 1, 2, 3));
  tree.Write("proc/irq/24/smp_affinity_list", "1\n");
  EXPECT_THAT(affinity_of_24(), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(affinity_of_24(), ElementsAre(1));
}

TEST(HostModelTest, NewSelectorsApplyFromNextRefresh) {
  HostModelOptions options;
  options.paths = {FixturePath("numa2/sys"), FixturePath("numa2/proc")};
  HostModel model(options);
  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  EXPECT_EQ(snapshot.targets.size(), 4u);
  TargetScanOptions envoy;
  envoy.selector = TargetSelector{};
  envoy.selector.comms = {"envoy"};
  model.set_targets(envoy);
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  ASSERT_EQ(snapshot.targets.size(), 1u);
  EXPECT_EQ(snapshot.targets[0].pid, 200);
}

TEST(HostModelTest, ThisHost) {
  HostModel model(HostModelOptions{});
  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  EXPECT_FALSE(snapshot.topology.nodes.empty());
  EXPECT_FALSE(snapshot.irqs.empty());
  for (const std::string& error : errors) ADD_FAILURE() << error;
}

}  // namespace
}  // namespace locus
