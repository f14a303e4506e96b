#include "agent/doctor/doctor_neighbours.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "agent/act/neighbours/host_tuners.h"

namespace locus {
namespace {

std::string Who(const char* name, int pid) {
  return absl::StrCat(name, " (pid ", pid, ")");
}

// The look-alikes refused, one line each after what was found: a warning
// (someone started them), whatever else holds.
DoctorCheck WithLookAlikes(DoctorCheck check, const NeighbourFound& found) {
  if (found.look_alikes.empty()) return check;
  for (const std::string& line : found.look_alikes) {
    absl::StrAppend(&check.detail, "\n", line);
  }
  if (check.verdict == Verdict::kOk) {
    check.verdict = Verdict::kWarn;
    check.fix = absl::StrCat(
        "find who started the process(es) named ", check.name,
        " (ps -o user,pid,args -p PID) and stop them; Locus ignores them");
  }
  return check;
}

DoctorCheck IrqbalanceShares(const DoctorInputs& in) {
  const char* name = "irqbalance";
  const NeighbourFound& found = in.irqbalance;
  if (found.pid == 0) {
    return {name, Verdict::kOk, "not running: Locus alone moves the NIC IRQs",
            ""};
  }
  const std::string who = Who(name, found.pid);
  if (in.coexist.irqbalance() == v1::Coexist::IRQBALANCE_MODE_OFF) {
    return {name, Verdict::kWarn,
            absl::StrCat(who,
                         " runs and coexist.irqbalance is off: it moves "
                         "back the IRQs Locus steers, and Locus backs "
                         "off each one it sees changed"),
            "remove `irqbalance: off` from the policy's coexist section "
            "(the default bans Locus's IRQs through irqbalance's socket)"};
  }
  if (!found.unreachable.empty()) {
    return {name, Verdict::kFail,
            absl::StrCat(who, " runs with no control socket Locus can use: ",
                         found.unreachable,
                         "\nLocus steers no IRQ until it can ban it"),
            "restart irqbalance through its unit (`systemctl restart "
            "irqbalance` creates /run/irqbalance), or set coexist.irqbalance: "
            "off and ban the NIC's IRQs yourself (irqbalance --banirq=N)"};
  }
  const std::string shares =
      absl::StrCat(who, " runs: Locus bans the IRQs it steers through ",
                   found.reach.empty() ? "its socket" : found.reach,
                   " and gives them back when it stops");
  if (found.sigpipe_kills) {
    return {name, Verdict::kWarn,
            absl::StrCat(shares,
                         "\nit does not ignore SIGPIPE (it was not started by "
                         "systemd): were locusd killed (-9) while irqbalance "
                         "owes it an answer, irqbalance 1.9 would die when "
                         "it answers"),
            "start irqbalance through its unit (`systemctl start irqbalance`: "
            "systemd ignores SIGPIPE for it)"};
  }
  return {name, Verdict::kOk, shares, ""};
}

DoctorCheck NumadShares(const DoctorInputs& in) {
  const char* name = "numad";
  const NeighbourFound& found = in.numad;
  if (found.pid == 0) {
    return {name, Verdict::kOk, "not running: no one else moves processes", ""};
  }
  const std::string who = Who(name, found.pid);
  if (in.coexist.numad() == v1::Coexist::NUMAD_MODE_OFF) {
    return {name, Verdict::kWarn,
            absl::StrCat(who,
                         " runs and coexist.numad is off: it may move "
                         "the workers Locus places (CPUs and pages), "
                         "and Locus backs off each thread it sees "
                         "moved"),
            "remove `numad: off` from the policy's coexist section (the "
            "default puts Locus's workers on numad's exclusion list)"};
  }
  if (!found.unreachable.empty()) {
    return {name, Verdict::kFail,
            absl::StrCat(
                who, " runs, but Locus cannot reach it: ", found.unreachable),
            "restart numad as root (`systemctl restart numad`), or set "
            "coexist.numad: off and exclude the workers yourself (numad -x "
            "PID)"};
  }
  return {name, Verdict::kOk,
          absl::StrCat(who,
                       " runs: Locus puts the workers it places on its "
                       "exclusion list through ",
                       found.reach.empty() ? "its message queue" : found.reach,
                       " and takes them off when it stops"),
          ""};
}

}  // namespace

DoctorCheck IrqbalanceCheck(const DoctorInputs& in) {
  return WithLookAlikes(IrqbalanceShares(in), in.irqbalance);
}

DoctorCheck NumadCheck(const DoctorInputs& in) {
  return WithLookAlikes(NumadShares(in), in.numad);
}

DoctorCheck TunedCheck(const DoctorInputs& in) {
  const char* name = "tuned";
  if (!in.tuned.has_value()) return {name, Verdict::kOk, "not running", ""};
  return {name, Verdict::kOk,
          absl::StrCat(Who(name, in.tuned->pid), " runs ",
                       TunedSentence(in.tuned_profile)),
          ""};
}

}  // namespace locus
