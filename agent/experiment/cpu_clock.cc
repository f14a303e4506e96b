#include "agent/experiment/cpu_clock.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/printable.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace locus {
namespace {

constexpr uint32_t kHypervisorPresentEcx = 1u << 31;  // leaf 1
constexpr uint32_t kHypervisorLeaf = 0x40000000;
// QEMU's Tiny Code Generator: the CPU is emulated instruction by
// instruction. Every other vendor (KVM, Hyper-V, Xen, VMware) runs the
// guest on the hardware.
constexpr absl::string_view kTcgVendor = "TCGTCGTCGTCG";

}  // namespace

CpuidRegs HostCpuid(uint32_t leaf) {
  CpuidRegs r;
#if defined(__x86_64__) || defined(__i386__)
  __cpuid(leaf, r.eax, r.ebx, r.ecx, r.edx);
#else
  (void)leaf;
#endif
  return r;
}

std::string HypervisorVendor(const CpuidFn& cpuid) {
  if ((cpuid(1).ecx & kHypervisorPresentEcx) == 0) return "";
  const CpuidRegs r = cpuid(kHypervisorLeaf);
  char vendor[12];
  std::memcpy(vendor, &r.ebx, 4);
  std::memcpy(vendor + 4, &r.ecx, 4);
  std::memcpy(vendor + 8, &r.edx, 4);
  return std::string(vendor, strnlen(vendor, sizeof(vendor)));
}

std::string EmulatedClockNote(absl::string_view vendor) {
  if (vendor != kTcgVendor) return "";
  return absl::StrCat(
      "emulated CPU (hypervisor '", Printable(vendor),
      "', QEMU's TCG): its clock advances for vCPUs that are not running, so "
      "every time-based figure here (work per CPU-second, durations) "
      "compares within this run only");
}

}  // namespace locus
