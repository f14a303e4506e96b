// The doctor's lines about the servers Locus tunes: whether one runs, how
// it listens (a socket per worker, or per thread, for connection steering)
// and whether a cpuset keeps it on one node.
#ifndef LOCUS_AGENT_DOCTOR_DOCTOR_SERVERS_H_
#define LOCUS_AGENT_DOCTOR_DOCTOR_SERVERS_H_

#include "agent/doctor/doctor.h"

namespace locus {

DoctorCheck ReuseportCheck(const DoctorInputs& in);
DoctorCheck CpusetsCheck(const DoctorInputs& in);

}  // namespace locus

#endif  // LOCUS_AGENT_DOCTOR_DOCTOR_SERVERS_H_
