// The emulation mark from a fixture CPUID: the hypervisor bit of leaf 1 and
// the vendor id of leaf 0x40000000, in EBX, ECX, EDX order.
#include "agent/experiment/cpu_clock.h"

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

CpuidFn FixtureCpuid(bool hypervisor, const char (&vendor)[13]) {
  return [=](uint32_t leaf) {
    CpuidRegs r;
    if (leaf == 1) r.ecx = hypervisor ? 1u << 31 : 0;
    if (leaf == 0x40000000) {
      std::memcpy(&r.ebx, vendor, 4);
      std::memcpy(&r.ecx, vendor + 4, 4);
      std::memcpy(&r.edx, vendor + 8, 4);
    }
    return r;
  };
}

TEST(CpuClockTest, QemuTcgIsEmulatedAndSaidSo) {
  const std::string vendor =
      HypervisorVendor(FixtureCpuid(true, "TCGTCGTCGTCG"));
  EXPECT_EQ(vendor, "TCGTCGTCGTCG");
  EXPECT_THAT(EmulatedClockNote(vendor), HasSubstr("emulated CPU"));
  EXPECT_THAT(EmulatedClockNote(vendor),
              HasSubstr("compares within this run only"));
}

TEST(CpuClockTest, HardwareAndHardwareHypervisorsAreNotMarked) {
  // KVM pads its id with NULs; bare metal leaves the hypervisor bit clear
  // whatever leaf 0x40000000 happens to hold.
  const std::string kvm =
      HypervisorVendor(FixtureCpuid(true, "KVMKVMKVM\0\0\0"));
  EXPECT_EQ(kvm, "KVMKVMKVM");
  EXPECT_THAT(EmulatedClockNote(kvm), IsEmpty());
  EXPECT_THAT(HypervisorVendor(FixtureCpuid(false, "TCGTCGTCGTCG")), IsEmpty());
  EXPECT_THAT(EmulatedClockNote(""), IsEmpty());
}

}  // namespace
}  // namespace locus
