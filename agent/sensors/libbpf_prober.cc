#include "agent/sensors/libbpf_prober.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>

#include <memory>

#include "agent/sensors/libbpf_log.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

// r0 = 0; exit: enough for the verifier and the attach path.
constexpr bpf_insn kReturnZero[] = {
    {.code = BPF_ALU64 | BPF_MOV | BPF_K,
     .dst_reg = BPF_REG_0,
     .src_reg = 0,
     .off = 0,
     .imm = 0},
    {.code = BPF_JMP | BPF_EXIT,
     .dst_reg = 0,
     .src_reg = 0,
     .off = 0,
     .imm = 0},
};

ProbeResult Fail(int err, const char* detail) {
  ProbeResult r;
  r.error = err;
  r.detail = detail;
  return r;
}

ProbeResult Ok() {
  ProbeResult r;
  r.available = true;
  return r;
}

// Loads a BTF-attached tracing program against `name` of `kind` in vmlinux
// BTF, then attaches it (for iterators: creates the link).
ProbeResult ProbeTracing(bpf_attach_type attach, const char* name,
                         int btf_kind) {
  struct BtfDeleter {
    void operator()(btf* b) const { btf__free(b); }
  };
  std::unique_ptr<btf, BtfDeleter> vmlinux(btf__load_vmlinux_btf());
  if (!vmlinux) return Fail(errno, "reading vmlinux BTF");
  int id = btf__find_by_name_kind(vmlinux.get(), name, btf_kind);
  if (id < 0) return Fail(-id, "finding the BTF target");
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach,
              .attach_btf_id = static_cast<__u32>(id));
  UniqueFd prog(bpf_prog_load(BPF_PROG_TYPE_TRACING, "locus_probe", "GPL",
                              kReturnZero, 2, &opts));
  if (!prog) return Fail(-prog.get(), "load");
  UniqueFd link(attach == BPF_TRACE_ITER
                    ? bpf_link_create(prog.get(), 0, BPF_TRACE_ITER, nullptr)
                    : bpf_raw_tracepoint_open(nullptr, prog.get()));
  if (!link) return Fail(-link.get(), "attach");
  return Ok();
}

ProbeResult ProbeRawTp() {
  UniqueFd prog(bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "locus_probe",
                              "GPL", kReturnZero, 2, nullptr));
  if (!prog) return Fail(-prog.get(), "load");
  UniqueFd link(bpf_raw_tracepoint_open("sched_switch", prog.get()));
  if (!link) return Fail(-link.get(), "attach");
  return Ok();
}

ProbeResult ProbeMap(bpf_map_type type) {
  int r = libbpf_probe_bpf_map_type(type, nullptr);
  if (r == 1) return Ok();
  return Fail(r < 0 ? -r : EOPNOTSUPP, "map create");
}

}  // namespace

ProbeResult LibbpfProber::Probe(Feature f) {
  RouteLibbpfLogs();
  switch (f) {
    case Feature::kFentry:
      return ProbeTracing(BPF_TRACE_FENTRY, "task_numa_fault", BTF_KIND_FUNC);
    case Feature::kTpBtf:
      return ProbeTracing(BPF_TRACE_RAW_TP, "btf_trace_sched_switch",
                          BTF_KIND_TYPEDEF);
    case Feature::kRawTp:
      return ProbeRawTp();
    case Feature::kIterTask:
      return ProbeTracing(BPF_TRACE_ITER, "bpf_iter_task", BTF_KIND_FUNC);
    case Feature::kTaskStorage:
      return ProbeMap(BPF_MAP_TYPE_TASK_STORAGE);
    case Feature::kNumFeatures:
      break;
  }
  return Fail(EINVAL, "unknown feature");
}

}  // namespace locus
