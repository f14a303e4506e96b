// SPDX-License-Identifier: GPL-2.0
/* Empty programs on the sensors' hooks: the benchmark's baseline, so each
 * sensor's ns/event is compared with the kernel's own per-event cost of
 * running a BPF program there (bpf_stats accounting included). Names stay
 * under 16 characters so bpftool shows them whole. */
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(e_sched_switch) { return 0; }

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(e_migrate) { return 0; }

SEC("tp_btf/softirq_entry")
int BPF_PROG(e_sirq_entry) { return 0; }

SEC("tp_btf/softirq_exit")
int BPF_PROG(e_sirq_exit) { return 0; }

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(e_irq_entry) { return 0; }

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(e_irq_exit) { return 0; }
