// A doctor line with its verdict, as the checks in doctor*.cc build them.
#ifndef LOCUS_AGENT_DOCTOR_DOCTOR_VERDICT_H_
#define LOCUS_AGENT_DOCTOR_DOCTOR_VERDICT_H_

#include <string>
#include <utility>

#include "agent/doctor/doctor.h"

namespace locus::doctor_internal {

inline DoctorCheck Ok(std::string name, std::string detail) {
  return {std::move(name), Verdict::kOk, std::move(detail), ""};
}
inline DoctorCheck Warn(std::string name, std::string detail, std::string fix) {
  return {std::move(name), Verdict::kWarn, std::move(detail), std::move(fix)};
}
inline DoctorCheck Fail(std::string name, std::string detail, std::string fix) {
  return {std::move(name), Verdict::kFail, std::move(detail), std::move(fix)};
}

}  // namespace locus::doctor_internal

#endif  // LOCUS_AGENT_DOCTOR_DOCTOR_VERDICT_H_
