// The doctor's "memory tiers" line: the host's tiers and their nodes, and
// who moves pages between them (the kernel's demotion and tiering
// promotion, DAMON's migrate schemes), since Locus leaves a lower tier's
// pages to them.
#ifndef LOCUS_AGENT_DOCTOR_DOCTOR_TIERS_H_
#define LOCUS_AGENT_DOCTOR_DOCTOR_TIERS_H_

#include "agent/doctor/doctor.h"

namespace locus {

DoctorCheck MemoryTiersCheck(const DoctorInputs& in);

}  // namespace locus

#endif  // LOCUS_AGENT_DOCTOR_DOCTOR_TIERS_H_
