/* Bounds shared by the BPF programs and the agent. */
#ifndef LOCUS_BPF_LIMITS_H_
#define LOCUS_BPF_LIMITS_H_

/* Size of the CPU->node load-time map (a power of two); CPUs at or above it
 * count as node 0. */
#define LOCUS_MAX_CPUS 1024
/* Nodes tracked per task; faults and runtime on higher nodes are dropped and
 * counted. */
#define LOCUS_MAX_NODES 16
/* Per-task LRU maps (fallback paths); IRQ numbers tracked per CPU. */
#define LOCUS_MAX_TASKS 16384
#define LOCUS_MAX_IRQS 2048
/* Processes renamed between two reads of the sched sensor that it keeps;
 * more, and the agent re-reads every name. */
#define LOCUS_MAX_RENAMED 1024
#define LOCUS_NR_SOFTIRQS 10
#define LOCUS_COMM_LEN 16

/* Declares, beside an enum of drop counters, the name the agent reports
 * each under, in enum order (nullptr: reported some other way). C++ only,
 * the programs have no use for them; agent/sensors/abi.h checks there is
 * one per counter. */
#ifdef __cplusplus
#define LOCUS_DROP_NAMES(table, ...) \
  inline constexpr const char *table[] = {__VA_ARGS__}
#else
#define LOCUS_DROP_NAMES(table, ...)
#endif

#endif /* LOCUS_BPF_LIMITS_H_ */
