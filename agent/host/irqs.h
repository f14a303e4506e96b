// Interrupts: per-CPU counts from /proc/interrupts, affinity from
// /proc/irq/N/, and which NIC queue each serves (from the NIC's msi_irqs and
// the IRQ's name).
#ifndef LOCUS_AGENT_HOST_IRQS_H_
#define LOCUS_AGENT_HOST_IRQS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/host/host_paths.h"
#include "policy/snapshot.h"

namespace locus {

// One numeric line of /proc/interrupts.
struct InterruptLine {
  int irq = 0;
  std::vector<uint64_t> counts;  // indexed by CPU number (from the header)
  std::string name;              // action name(s), e.g. "virtio2-input.0"
};

// Parses /proc/interrupts. Columns are named by the header ("CPU0 CPU2"
// when CPU 1 is offline), so counts land on the right CPU. Non-numeric rows
// (NMI, LOC, ...) are skipped; a malformed numeric row is reported in
// `errors` and skipped. Fails only without a CPU header.
absl::StatusOr<std::vector<InterruptLine>> ParseInterrupts(
    absl::string_view text, std::vector<std::string>* errors);

// NIC queue index from an IRQ name: "virtio1-input.0" -> 0,
// "eth0-TxRx-3" -> 3, "eth0-rx-2" -> 2; -1 when the name has none
// ("virtio1-config").
int QueueFromIrqName(absl::string_view name);

// What ReadIrqs keeps from one call to the next. Each IRQ costs three
// file reads (node, smp_affinity_list, effective_affinity_list) and each
// NIC four lookups in sysfs: on a host with hundreds of IRQs, most of a
// tick. The NICs and the IRQs that serve none (the policy moves only a
// NIC's; their affinity is reported, not acted on) are read in full every
// `refresh_every` calls and reused in between. A NIC's IRQs, whose affinity
// the agent and other tools change, and IRQs new since the last full read
// are read on every call; counts always are.
struct IrqReadCache {
  int refresh_every = 1;
  int calls = 0;
  struct Nic {
    std::string name;
    int node = -1;
  };
  std::map<int, Nic> nic_of_irq;   // from each NIC's msi_irqs
  std::vector<std::string> nics;   // names in /sys/class/net
  std::map<int, IrqSample> quiet;  // IRQs of no NIC, as last read in full
};

// Reads every IRQ: name, NIC and queue, device node, smp_affinity_list,
// effective_affinity_list, and *total* counts per CPU since boot (see
// IrqCountDeltas). `managed` are IRQs the IRQ actuator found kernel-managed
// (a write returned EIO); nothing in procfs says so without writing.
// Per-IRQ problems go to `errors` and that field stays at its default.
// With a `cache`, reuses what it may (see IrqReadCache).
absl::StatusOr<std::vector<IrqSample>> ReadIrqs(
    const HostPaths& paths, const std::set<int>& managed,
    std::vector<std::string>* errors, IrqReadCache* cache = nullptr);

// Turns `current` totals into deltas since `previous` (matched by IRQ
// number; an IRQ new since then, or a counter that went backwards, counts
// from zero).
void IrqCountDeltas(const std::vector<IrqSample>& previous,
                    std::vector<IrqSample>* current);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_IRQS_H_
