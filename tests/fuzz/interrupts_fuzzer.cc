// /proc/interrupts, and the NIC queue taken from each IRQ's name.
#include <map>

#include "agent/host/irqs.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> errors;
  absl::StatusOr<std::vector<locus::InterruptLine>> rows =
      locus::ParseInterrupts(locus::fuzz::AsText(data, size), &errors);
  if (!rows.ok()) return 0;
  std::vector<locus::IrqSample> samples;
  std::map<int, int> seen;
  const size_t width = rows->empty() ? 0 : rows->front().counts.size();
  for (locus::InterruptLine& row : *rows) {
    // Every row is as wide as the highest CPU in the header.
    LOCUS_FUZZ_CHECK(row.counts.size() == width);
    LOCUS_FUZZ_CHECK(locus::QueueFromIrqName(row.name) >= -1);
    ++seen[row.irq];
    locus::IrqSample sample;
    sample.irq = row.irq;
    sample.count_per_cpu = std::move(row.counts);
    samples.push_back(std::move(sample));
  }
  // Counts against themselves: no change (for IRQ numbers seen once).
  std::vector<locus::IrqSample> deltas = samples;
  locus::IrqCountDeltas(samples, &deltas);
  for (const locus::IrqSample& sample : deltas) {
    if (seen[sample.irq] != 1) continue;
    for (uint64_t count : sample.count_per_cpu) LOCUS_FUZZ_CHECK(count == 0);
  }
  return 0;
}
