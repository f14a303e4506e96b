// Which implementation each sensor uses, decided from the probed features,
// with the reason every better one was passed over. Pure logic over a
// FeatureSet, so the fallback order is unit-tested with a fake prober.
#ifndef LOCUS_AGENT_SENSORS_SOURCE_PLAN_H_
#define LOCUS_AGENT_SENSORS_SOURCE_PLAN_H_

#include <string>
#include <vector>

#include "agent/sensors/feature_probe.h"

namespace locus {

// sched and softirq: tp_btf programs with task storage read by iter/task,
// else raw_tp programs with tid-keyed LRU hashes. SourceName() names them by
// value: a new source goes last, with its name.
enum class TraceSource { kNone, kTpBtf, kRawTp };
// numa: fentry/task_numa_fault, else iter/task over task->numa_faults, else
// /proc/PID/task/TID/sched. Named by value as TraceSource is.
enum class NumaSource { kFentry, kIterTask, kProcfs };

struct SensorChoice {
  std::string sensor;                 // "sched", "numa", "softirq"
  std::string source;                 // "tp_btf", "raw_tp", "none", ...
  std::vector<std::string> rejected;  // "fentry: EPERM (...) at load"
};

struct SourcePlan {
  TraceSource sched = TraceSource::kNone;
  NumaSource numa = NumaSource::kProcfs;
  TraceSource softirq = TraceSource::kNone;
  std::vector<SensorChoice> choices;  // sched, numa, softirq
};

SourcePlan ChooseSources(FeatureSet& features);

const char* SourceName(TraceSource s);
const char* SourceName(NumaSource s);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_SOURCE_PLAN_H_
