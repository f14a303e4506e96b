// SPDX-License-Identifier: GPL-2.0
/* Empty programs on the sensors' hooks: the benchmark's baseline, so each
 * sensor's ns/event is compared with the kernel's own per-event cost of
 * running a BPF program there (bpf_stats accounting included). */
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_sched_switch) { return 0; }

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(empty_sched_migrate_task) { return 0; }

SEC("tp_btf/softirq_entry")
int BPF_PROG(empty_softirq_entry) { return 0; }

SEC("tp_btf/softirq_exit")
int BPF_PROG(empty_softirq_exit) { return 0; }

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(empty_irq_handler_entry) { return 0; }

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(empty_irq_handler_exit) { return 0; }
