// Whether the CPU the agent runs on is emulated: under QEMU's TCG a guest's
// clock advances for vCPUs that are not running, so every time-based figure
// (work per CPU-second, durations, waits) is the emulator's, comparable
// within one run only. CPUID says so: leaf 1 sets ECX bit 31 under any
// hypervisor, and leaf 0x40000000 names it.
#ifndef LOCUS_AGENT_EXPERIMENT_CPU_CLOCK_H_
#define LOCUS_AGENT_EXPERIMENT_CPU_CLOCK_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace locus {

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};
using CpuidFn = std::function<CpuidRegs(uint32_t leaf)>;

// This CPU's CPUID (all zero where there is none: not x86).
CpuidRegs HostCpuid(uint32_t leaf);

// The hypervisor's 12-byte vendor id ("KVMKVMKVM", "TCGTCGTCGTCG", ...,
// trailing NULs dropped); "" on bare metal.
std::string HypervisorVendor(const CpuidFn& cpuid);

// The report's clock line: what the emulator does to time-based figures,
// or "" where the CPU is not emulated (a hardware hypervisor's guest runs
// on the real CPU's clock).
std::string EmulatedClockNote(absl::string_view vendor);

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_CPU_CLOCK_H_
