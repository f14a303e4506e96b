// The doctor's lines for the tuners Locus shares the host with: irqbalance
// and numad (told what to leave alone, per the policy's coexist section;
// agent/act/neighbours/) and tuned (which restarts irqbalance).
#ifndef LOCUS_AGENT_DOCTOR_DOCTOR_NEIGHBOURS_H_
#define LOCUS_AGENT_DOCTOR_DOCTOR_NEIGHBOURS_H_

#include "agent/doctor/doctor.h"

namespace locus {

DoctorCheck IrqbalanceCheck(const DoctorInputs& in);
DoctorCheck NumadCheck(const DoctorInputs& in);
DoctorCheck TunedCheck(const DoctorInputs& in);

}  // namespace locus

#endif  // LOCUS_AGENT_DOCTOR_DOCTOR_NEIGHBOURS_H_
