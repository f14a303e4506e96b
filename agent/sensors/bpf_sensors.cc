#include "agent/sensors/bpf_sensors.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/sensors/abi.h"
#include "agent/sensors/proc_sched.h"
#include "agent/sensors/proc_softirqs.h"
#include "common/status_macros.h"
#include "numa.skel.h"
#include "sched.skel.h"
#include "softirq.skel.h"

namespace locus {
namespace {

static_assert(kDefaultSensorMaxTasks == LOCUS_MAX_TASKS);

// RAII over a generated skeleton (the katran BpfSkeleton habit).
template <typename Skel, void (*Destroy)(Skel*)>
struct SkelPtr {
  Skel* p = nullptr;
  SkelPtr() = default;
  SkelPtr(const SkelPtr&) = delete;
  SkelPtr& operator=(const SkelPtr&) = delete;
  ~SkelPtr() {
    if (p) Destroy(p);
  }
  Skel* operator->() const { return p; }
  explicit operator bool() const { return p != nullptr; }
};
using SchedSkel = SkelPtr<sched_bpf, sched_bpf__destroy>;
using NumaSkel = SkelPtr<numa_bpf, numa_bpf__destroy>;
using SoftirqSkel = SkelPtr<softirq_bpf, softirq_bpf__destroy>;

struct LinkDeleter {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

absl::Status Errno(int err, absl::string_view what) {
  err = err < 0 ? -err : err;
  return absl::UnavailableError(
      absl::StrCat(what, ": ", strerrorname_np(err) ? strerrorname_np(err) : "",
                   " (", strerror(err), ")"));
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string Comm(const char (&comm)[LOCUS_COMM_LEN]) {
  return std::string(comm, strnlen(comm, LOCUS_COMM_LEN));
}

uint32_t PowerOfTwoAtLeast(uint32_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 30)) p <<= 1;
  return p;
}

size_t RoundUpToPage(size_t n) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

// Time of `count` events estimated from the sampled ones.
uint64_t Scale(uint64_t sampled_ns, uint64_t count, uint64_t sampled_count) {
  if (sampled_count == 0) return 0;
  return static_cast<uint64_t>(static_cast<long double>(sampled_ns) * count /
                               sampled_count);
}

void SetAutoload(std::initializer_list<bpf_program*> progs, bool on) {
  for (bpf_program* p : progs) bpf_program__set_autoload(p, on);
}

// Runs a task iterator and hands each fixed-size record to `fn`.
template <typename Record>
absl::Status ReadIter(bpf_link* link,
                      const std::function<void(const Record&)>& fn) {
  int fd = bpf_iter_create(bpf_link__fd(link));
  if (fd < 0) return Errno(errno, "bpf_iter_create");
  std::string buf;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return Errno(err, "reading task iterator");
    }
    if (n == 0) break;
    buf.append(chunk, n);
  }
  close(fd);
  if (buf.size() % sizeof(Record) != 0) {
    return absl::DataLossError(
        absl::StrCat("task iterator returned ", buf.size(),
                     " bytes, not records of ", sizeof(Record)));
  }
  for (size_t off = 0; off < buf.size(); off += sizeof(Record)) {
    Record r;
    memcpy(&r, buf.data() + off, sizeof(r));
    fn(r);
  }
  return absl::OkStatus();
}

// Walks a hash map with get_next_key; returns the number of entries.
template <typename Key, typename Value>
uint64_t ForEachEntry(int map_fd,
                      const std::function<void(const Key&, const Value*)>& fn,
                      size_t values_per_key = 1) {
  std::vector<Value> values(values_per_key);
  Key key{};
  Key next{};
  uint64_t n = 0;
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    key = next;
    prev = &key;
    if (bpf_map_lookup_elem(map_fd, &key, values.data()) != 0) continue;
    ++n;
    fn(key, values.data());
  }
  return n;
}

// Sums a per-CPU u64 array of counters.
std::vector<uint64_t> SumPerCpuCounters(int map_fd, uint32_t entries,
                                        int ncpus) {
  std::vector<uint64_t> out(entries, 0);
  std::vector<uint64_t> per_cpu(ncpus);
  for (uint32_t k = 0; k < entries; ++k) {
    if (bpf_map_lookup_elem(map_fd, &k, per_cpu.data()) != 0) continue;
    for (uint64_t v : per_cpu) out[k] += v;
  }
  return out;
}

class BpfSensors : public SensorSource {
 public:
  BpfSensors(const SensorOptions& options, const SourcePlan& plan)
      : options_(options), plan_(plan) {
    ncpus_ = libbpf_num_possible_cpus();
    if (ncpus_ < 1) ncpus_ = 1;
    num_nodes_ = std::clamp(options_.num_nodes, 1, LOCUS_MAX_NODES);
    sources_.sched = SourceName(plan.sched);
    sources_.numa = SourceName(plan.numa);
    sources_.softirq = SourceName(plan.softirq);
    if (options_.num_nodes < 2) {
      numa_status_ =
          "inactive: single NUMA node, the kernel takes no hinting faults";
    } else if (!options_.numa_balancing) {
      numa_status_ =
          "inactive: kernel.numa_balancing=0, the kernel takes no hinting "
          "faults";
    } else {
      numa_active_ = true;
      numa_status_ = absl::StrCat("active (", sources_.numa, ")");
    }
  }

  absl::Status Open() {
    // The sched object reads the softirq object's per-task figures on
    // tp_btf (OpenSched): one source for both, and softirq loaded first.
    if (plan_.sched != plan_.softirq) {
      return absl::InvalidArgumentError(
          "the sched and softirq sensors need the same source");
    }
    RETURN_IF_ERROR(OpenSoftirq());
    RETURN_IF_ERROR(OpenSched());
    RETURN_IF_ERROR(OpenNuma());
    return absl::OkStatus();
  }

  ~BpfSensors() override {
    if (windows_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(windows_mu_);
        windows_stop_ = true;
      }
      windows_cv_.notify_all();
      windows_.join();
    }
    if (irq_map_) munmap(const_cast<locus_irq_stat*>(irq_map_), irq_map_bytes_);
  }

  SensorSources sources() const override { return sources_; }

  absl::StatusOr<SensorReading> Read() override {
    SensorReading r;
    r.monotonic_ns = MonotonicNs();
    r.sources = sources_;
    r.numa_active = numa_active_;
    r.numa_status = numa_status_;
    r.cpus.resize(ncpus_);
    for (int c = 0; c < ncpus_; ++c) r.cpus[c].cpu = c;
    tasks_.clear();
    tasks_.reserve(tasks_last_);  // not regrown step by step every read
    PruneScopedLinks();
    // First: the per-task softirq figures read with the sched sensor's
    // tasks are scaled by the share of softirqs seen.
    RETURN_IF_ERROR(ReadSoftirqCounts(r));
    RETURN_IF_ERROR(ReadSched(r));
    RETURN_IF_ERROR(ReadSoftirq(r));
    if (numa_active_) RETURN_IF_ERROR(ReadNuma(r));
    if (sched_) {
      // Last, once nothing can fail: a failed read leaves the set for the
      // next one rather than losing it.
      uint64_t lost = r.drops["sched.renamed_lost"];
      r.renamed = DrainRenamed();
      if (lost != renamed_lost_) r.renamed.reset();
      renamed_lost_ = lost;
    }
    tasks_last_ = tasks_.size();
    r.tasks.reserve(tasks_.size());
    for (auto& [tid, t] : tasks_) {
      if (scope_ && !std::binary_search(scope_->begin(), scope_->end(), t.pid))
        continue;  // from a source that reads every task
      r.tasks.push_back(std::move(t));
    }
    std::sort(r.tasks.begin(), r.tasks.end(),
              [](const TaskCounters& a, const TaskCounters& b) {
                return a.tid < b.tid;
              });
    tasks_.clear();
    return r;
  }

  void SetScope(std::optional<std::vector<int32_t>> pids) override {
    if (pids) std::sort(pids->begin(), pids->end());
    scope_ = std::move(pids);
  }

 private:
  // Runs task iterator `prog`: over the threads of each process in scope
  // through a link of its own (kept while the process stays in scope), or
  // over every task through `all`. Walking every task costs a pid lookup
  // each, thousands per read on a busy host, for the few threads wanted.
  template <typename Record>
  absl::Status ReadTaskIter(bpf_program* prog, bpf_link* all,
                            const std::function<void(const Record&)>& fn) {
    if (!scope_ || !scoped_iterators_) return ReadIter<Record>(all, fn);
    for (int32_t pid : *scope_) {
      auto [it, added] = pid_links_.try_emplace({prog, pid});
      if (added) {
        union bpf_iter_link_info info = {};
        info.task.pid = static_cast<__u32>(pid);
        LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
                    .link_info_len = sizeof(info));
        it->second.reset(bpf_program__attach_iter(prog, &opts));
        if (!it->second) {
          int err = errno;
          pid_links_.erase(it);
          if (err == ESRCH || err == ENOENT) continue;  // gone
          // Kernels before 6.1 take no pid: walk every task from now on.
          scoped_iterators_ = false;
          pid_links_.clear();
          return ReadIter<Record>(all, fn);
        }
      }
      RETURN_IF_ERROR(ReadIter<Record>(it->second.get(), fn));
    }
    return absl::OkStatus();
  }

  // Drops the per-process links of processes no longer in scope.
  void PruneScopedLinks() {
    std::erase_if(pid_links_, [&](const auto& entry) {
      return !scope_ || !std::binary_search(scope_->begin(), scope_->end(),
                                            entry.first.second);
    });
  }

  TaskCounters& Task(uint32_t tid, uint32_t pid,
                     const char (&comm)[LOCUS_COMM_LEN]) {
    auto [it, inserted] = tasks_.try_emplace(static_cast<int32_t>(tid));
    TaskCounters& t = it->second;
    if (inserted) {
      t.tid = static_cast<int32_t>(tid);
      t.pid = static_cast<int32_t>(pid);
      t.comm = Comm(comm);
      t.runtime_ns.assign(num_nodes_, 0);
    }
    return t;
  }

  absl::Status OpenSched() {
    if (plan_.sched == TraceSource::kNone) return absl::OkStatus();
    sched_.p = sched_bpf__open();
    if (!sched_) return Errno(errno, "opening sched.bpf.o");
    for (size_t c = 0; c < options_.cpu_node.size() && c < LOCUS_MAX_CPUS;
         ++c) {
      int node = options_.cpu_node[c];
      sched_->rodata->cpu_node[c] = node < 0 ? 0 : node;
    }
    bool btf = plan_.sched == TraceSource::kTpBtf;
    SetAutoload({sched_->progs.switch_btf, sched_->progs.dump_sched,
                 sched_->progs.rename_btf},
                btf);
    // On one node no move crosses a node: the tp_btf migrate program would
    // run on every migration for nothing (the iterator reads the counts).
    SetAutoload({sched_->progs.migrate_btf}, btf && options_.num_nodes > 1);
    SetAutoload({sched_->progs.migrate_raw, sched_->progs.switch_raw,
                 sched_->progs.rename_raw},
                !btf);
    // The unused per-task map is not created: task storage may not exist on
    // the kernels that need the LRU fallback.
    bpf_map__set_autocreate(
        btf ? sched_->maps.task_lru : sched_->maps.task_state, false);
    bpf_map__set_max_entries(sched_->maps.task_lru, options_.max_tasks);
    // The softirq sensor's task storage, read by dump_sched: one task walk
    // for both sensors' per-task figures (Open loaded softirq first).
    if (btf) {
      if (int err = bpf_map__reuse_fd(sched_->maps.softirq_tasks,
                                      bpf_map__fd(softirq_->maps.task_stats)))
        return Errno(err, "sharing the softirq task storage");
    } else {
      bpf_map__set_autocreate(sched_->maps.softirq_tasks, false);
    }
    if (int err = sched_bpf__load(sched_.p)) return Errno(err, "loading sched");
    // Through the live mapping of .bss, before any program runs.
    uint32_t switch_mask = PowerOfTwoAtLeast(options_.switch_sample_every) - 1;
    for (locus_sched_cpu& slot : sched_->bss->cpu_slots) {
      slot.sample_mask = switch_mask;
    }
    if (int err = sched_bpf__attach(sched_.p))
      return Errno(err, "attaching sched");
    return absl::OkStatus();
  }

  absl::Status OpenNuma() {
    if (plan_.numa == NumaSource::kProcfs) return absl::OkStatus();
    numa_.p = numa_bpf__open();
    if (!numa_) return Errno(errno, "opening numa.bpf.o");
    numa_->rodata->nr_node_ids =
        options_.num_nodes < 1 ? 1 : options_.num_nodes;
    bool fentry = plan_.numa == NumaSource::kFentry;
    SetAutoload({numa_->progs.fault_fentry}, fentry);
    SetAutoload({numa_->progs.dump_numa}, !fentry);
    // The iterator reads the kernel's own counters: the LRU (preallocated,
    // ~5 MiB at the default size) is created only for fentry.
    bpf_map__set_autocreate(numa_->maps.fault_lru, fentry);
    bpf_map__set_max_entries(numa_->maps.fault_lru, options_.max_tasks);
    if (int err = numa_bpf__load(numa_.p)) return Errno(err, "loading numa");
    if (int err = numa_bpf__attach(numa_.p))
      return Errno(err, "attaching numa");
    return absl::OkStatus();
  }

  absl::Status OpenSoftirq() {
    if (plan_.softirq == TraceSource::kNone) return absl::OkStatus();
    softirq_.p = softirq_bpf__open();
    if (!softirq_) return Errno(errno, "opening softirq.bpf.o");
    hardirq_period_ = PowerOfTwoAtLeast(options_.hardirq_sample_every);
    // One element per (possible CPU, IRQ number).
    irq_map_entries_ = static_cast<size_t>(ncpus_) * LOCUS_MAX_IRQS;
    bpf_map__set_max_entries(softirq_->maps.irq_stats, irq_map_entries_);
    bool btf = plan_.softirq == TraceSource::kTpBtf;
    SetAutoload(
        {softirq_->progs.softirq_entry_btf, softirq_->progs.softirq_exit_btf,
         softirq_->progs.irq_entry_btf, softirq_->progs.irq_exit_btf},
        btf);
    SetAutoload(
        {softirq_->progs.softirq_entry_raw, softirq_->progs.softirq_exit_raw,
         softirq_->progs.irq_entry_raw, softirq_->progs.irq_exit_raw},
        !btf);
    bpf_map__set_autocreate(
        btf ? softirq_->maps.task_lru : softirq_->maps.task_stats, false);
    bpf_map__set_max_entries(softirq_->maps.task_lru, options_.max_tasks);
    bpf_program* entry = btf ? softirq_->progs.softirq_entry_btf
                             : softirq_->progs.softirq_entry_raw;
    bpf_program* exit = btf ? softirq_->progs.softirq_exit_btf
                            : softirq_->progs.softirq_exit_raw;
    windowed_ = options_.softirq_window_ns > 0 &&
                options_.softirq_window_ns < options_.softirq_window_every_ns;
    if (windowed_) {
      bpf_program__set_autoattach(entry, false);
      bpf_program__set_autoattach(exit, false);
    }
    if (int err = softirq_bpf__load(softirq_.p))
      return Errno(err, "loading softirq");
    // Through the live mapping of .bss, before any program runs.
    uint32_t softirq_mask =
        PowerOfTwoAtLeast(options_.softirq_sample_every) - 1;
    for (locus_softirq_cpu& slot : softirq_->bss->cpu_slots) {
      slot.softirq_mask = softirq_mask;
      slot.hardirq_mask = hardirq_period_ - 1;
    }
    if (int err = softirq_bpf__attach(softirq_.p))
      return Errno(err, "attaching softirq");
    irq_map_bytes_ = RoundUpToPage(irq_map_entries_ * sizeof(locus_irq_stat));
    void* m = mmap(nullptr, irq_map_bytes_, PROT_READ, MAP_SHARED,
                   bpf_map__fd(softirq_->maps.irq_stats), 0);
    if (m == MAP_FAILED) return Errno(errno, "mmap of irq_stats");
    irq_map_ = static_cast<const locus_irq_stat*>(m);
    if (windowed_) {
      // /proc/softirqs counts since boot; readings count since this.
      ASSIGN_OR_RETURN(softirq_base_, ReadProcSoftirqs());
      windows_ =
          std::thread([this, entry, exit] { RunSoftirqWindows(entry, exit); });
    }
    return absl::OkStatus();
  }

  void AddSchedTask(const locus_sched_task& s) {
    TaskCounters& t = Task(s.tid, s.pid, s.comm);
    t.cpu = s.cpu;
    t.migrations = s.migrations;
    t.cross_node_migrations = s.cross_node_migrations;
    for (int n = 0; n < num_nodes_; ++n) t.runtime_ns[n] = s.runtime_ns[n];
    if (plan_.softirq == TraceSource::kTpBtf) {  // see OpenSched
      t.net_rx_softirq_ns = UnseenToo(s.net_rx_ns);
      t.softirq_ns = UnseenToo(s.softirq_ns);
    }
  }

  absl::Status ReadSched(SensorReading& r) {
    if (!sched_) return absl::OkStatus();
    if (plan_.sched == TraceSource::kTpBtf) {
      RETURN_IF_ERROR(ReadTaskIter<locus_sched_task>(
          sched_->progs.dump_sched, sched_->links.dump_sched,
          [&](const locus_sched_task& s) { AddSchedTask(s); }));
    } else {
      uint64_t live = ForEachEntry<uint32_t, locus_sched_task>(
          bpf_map__fd(sched_->maps.task_lru),
          [&](const uint32_t&, const locus_sched_task* s) {
            AddSchedTask(*s);
          });
      lru_live_sched_ = live;
    }
    for (int c = 0; c < ncpus_ && c < LOCUS_MAX_CPUS; ++c) {
      const locus_sched_cpu& slot = sched_->bss->cpu_slots[c];
      r.cpus[c].switches = slot.switches;
      r.cpus[c].busy_ns =
          Scale(slot.sampled_busy_ns, slot.switches, slot.sampled_switches);
      r.cpus[c].untimed_switches =
          Scale(slot.sampled_untimed, slot.switches, slot.sampled_switches);
    }
    std::vector<uint64_t> d = SumPerCpuCounters(bpf_map__fd(sched_->maps.drops),
                                                LOCUS_SCHED_NR_DROPS, ncpus_);
    r.drops["sched.storage_unavailable"] = d[LOCUS_SCHED_DROP_STORAGE];
    r.drops["sched.node_out_of_range"] = d[LOCUS_SCHED_DROP_NODE];
    r.drops["sched.cpu_out_of_range"] = d[LOCUS_SCHED_DROP_CPU];
    r.drops["sched.renamed_lost"] = d[LOCUS_SCHED_RENAMED_LOST];
    if (plan_.sched == TraceSource::kRawTp) {
      // Entries the LRU pushed out: inserted minus still present.
      uint64_t ins = d[LOCUS_SCHED_LRU_INSERTS];
      r.drops["sched.lru_evicted"] =
          ins > lru_live_sched_ ? ins - lru_live_sched_ : 0;
    }
    return absl::OkStatus();
  }

  // Takes (and empties) the set of processes renamed since the last call.
  // A rename between reading a key and deleting it is lost from the set but
  // not missed: its process is in this call's answer.
  std::vector<int32_t> DrainRenamed() {
    int fd = bpf_map__fd(sched_->maps.renamed);
    std::vector<int32_t> pids;
    ForEachEntry<uint32_t, uint8_t>(fd,
                                    [&](const uint32_t& pid, const uint8_t*) {
                                      pids.push_back(static_cast<int32_t>(pid));
                                    });
    for (int32_t pid : pids) bpf_map_delete_elem(fd, &pid);
    std::sort(pids.begin(), pids.end());
    return pids;
  }

  void AddSoftirqTask(const locus_softirq_task& s) {
    TaskCounters& t = Task(s.tid, s.pid, s.comm);
    t.net_rx_softirq_ns = UnseenToo(s.net_rx_ns);
    t.softirq_ns = UnseenToo(s.softirq_ns);
  }

  // A per-task charge from the softirqs seen, scaled to all of them.
  uint64_t UnseenToo(uint64_t ns) const {
    return static_cast<uint64_t>(static_cast<double>(ns) / softirq_traced_);
  }

  // Per CPU and vector: counts (the hooks' own, or /proc/softirqs' when
  // they run in windows) and time, scaled from the timed events to them.
  absl::Status ReadSoftirqCounts(SensorReading& r) {
    if (!softirq_) return absl::OkStatus();
    std::vector<SoftirqCounts> all;
    if (windowed_) {
      ASSIGN_OR_RETURN(all, ReadProcSoftirqs());
      all.resize(std::max<size_t>(all.size(), ncpus_));
    }
    uint64_t seen_total = 0, total = 0;
    for (int c = 0; c < ncpus_ && c < LOCUS_MAX_CPUS; ++c) {
      const locus_softirq_cpu& slot = softirq_->bss->cpu_slots[c];
      for (int v = 0; v < kNumSoftirqVectors; ++v) {
        uint64_t seen = slot.count[v];
        uint64_t count = seen;
        if (windowed_) {
          uint64_t base = c < static_cast<int>(softirq_base_.size())
                              ? softirq_base_[c][v]
                              : 0;
          count = all[c][v] > base ? all[c][v] - base : 0;
        }
        seen_total += seen;
        total += count;
        r.cpus[c].softirq_count[v] = count;
        r.cpus[c].softirq_ns[v] =
            Scale(slot.sampled_ns[v], count, slot.sampled_count[v]);
      }
    }
    softirq_traced_ = seen_total && total > seen_total
                          ? static_cast<double>(seen_total) / total
                          : 1.0;
    r.softirq_traced = softirq_traced_;
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<SoftirqCounts>> ReadProcSoftirqs() const {
    std::string path = absl::StrCat(options_.procfs_root, "/softirqs");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
    absl::StatusOr<std::vector<SoftirqCounts>> counts =
        ParseProcSoftirqs(text.str());
    if (!counts.ok()) {
      return absl::Status(counts.status().code(),
                          absl::StrCat(path, ": ", counts.status().message()));
    }
    return counts;
  }

  // Attaches the softirq entry and exit programs for a window, detaches
  // them, waits out the period, again until the destructor stops it.
  void RunSoftirqWindows(bpf_program* entry, bpf_program* exit) {
    const auto window = std::chrono::nanoseconds(options_.softirq_window_ns);
    const auto rest = std::chrono::nanoseconds(
        options_.softirq_window_every_ns - options_.softirq_window_ns);
    std::unique_lock<std::mutex> lock(windows_mu_);
    while (!windows_stop_) {
      // A softirq whose entry the last window saw but whose exit it did
      // not left its start time in the slot; cleared now, long after the
      // programs last ran, so that the next window's first exit on that
      // CPU does not time the gap between windows.
      for (int c = 0; c < ncpus_ && c < LOCUS_MAX_CPUS; ++c) {
        softirq_->bss->cpu_slots[c].softirq_start_ns = 0;
      }
      LinkPtr exit_link(bpf_program__attach(exit));
      LinkPtr entry_link(bpf_program__attach(entry));
      if (!exit_link || !entry_link) window_failures_++;
      windows_cv_.wait_for(lock, window, [&] { return windows_stop_; });
      entry_link.reset();
      exit_link.reset();
      windows_cv_.wait_for(lock, rest, [&] { return windows_stop_; });
    }
  }

  absl::Status ReadSoftirq(SensorReading& r) {
    if (!softirq_) return absl::OkStatus();
    for (int irq = 0; irq < LOCUS_MAX_IRQS; ++irq) {
      IrqCounters ic;
      ic.irq = irq;
      bool any = false;
      for (int c = 0; c < ncpus_; ++c) {
        const locus_irq_stat& st =
            irq_map_[static_cast<size_t>(c) * LOCUS_MAX_IRQS + irq];
        // Hardirqs are sampled whole (locus/softirq.h): both are estimates,
        // exact when the period is 1.
        ic.count_per_cpu.push_back(st.sampled_count * hardirq_period_);
        ic.ns_per_cpu.push_back(st.sampled_ns * hardirq_period_);
        any |= st.sampled_count != 0;
      }
      if (any) r.irqs.push_back(std::move(ic));
    }
    // tp_btf: the per-task figures come with the sched sensor's tasks
    // (ReadSched); raw_tp: from this object's LRU.
    uint64_t live = 0;
    if (plan_.softirq == TraceSource::kRawTp) {
      live = ForEachEntry<uint32_t, locus_softirq_task>(
          bpf_map__fd(softirq_->maps.task_lru),
          [&](const uint32_t&, const locus_softirq_task* s) {
            AddSoftirqTask(*s);
          });
    }
    std::vector<uint64_t> d = SumPerCpuCounters(
        bpf_map__fd(softirq_->maps.drops), LOCUS_SOFTIRQ_NR_DROPS, ncpus_);
    r.drops["softirq.irq_out_of_range"] = d[LOCUS_SOFTIRQ_DROP_IRQ];
    r.drops["softirq.cpu_out_of_range"] = d[LOCUS_SOFTIRQ_DROP_CPU];
    r.drops["softirq.storage_unavailable"] = d[LOCUS_SOFTIRQ_DROP_STORAGE];
    if (windowed_) r.drops["softirq.window_not_attached"] = window_failures_;
    if (plan_.softirq == TraceSource::kRawTp) {
      uint64_t ins = d[LOCUS_SOFTIRQ_LRU_INSERTS];
      r.drops["softirq.lru_evicted"] = ins > live ? ins - live : 0;
    }
    return absl::OkStatus();
  }

  absl::Status ReadNuma(SensorReading& r) {
    switch (plan_.numa) {
      case NumaSource::kFentry: {
        r.numa_kind = NumaFaultKind::kPagesExact;
        uint64_t live = ForEachEntry<uint32_t, locus_numa_fentry_task>(
            bpf_map__fd(numa_->maps.fault_lru),
            [&](const uint32_t&, const locus_numa_fentry_task* s) {
              TaskCounters& t = Task(s->tid, s->pid, s->comm);
              t.numa_faults.assign(num_nodes_, {});
              for (int n = 0; n < num_nodes_; ++n) {
                NumaNodeFaults& f = t.numa_faults[n];
                f.local = s->local_pages[n];
                f.remote = s->remote_pages[n];
                f.total = f.local + f.remote;
                t.numa_local += f.local;
                t.numa_remote += f.remote;
              }
            });
        std::vector<uint64_t> d = SumPerCpuCounters(
            bpf_map__fd(numa_->maps.drops), LOCUS_NUMA_NR_DROPS, ncpus_);
        r.drops["numa.node_out_of_range"] = d[LOCUS_NUMA_DROP_NODE];
        r.drops["numa.map_full"] = d[LOCUS_NUMA_DROP_MAP];
        uint64_t ins = d[LOCUS_NUMA_LRU_INSERTS];
        r.drops["numa.lru_evicted"] = ins > live ? ins - live : 0;
        return absl::OkStatus();
      }
      case NumaSource::kIterTask:
        r.numa_kind = NumaFaultKind::kKernelDecayed;
        return ReadTaskIter<locus_numa_iter_task>(
            numa_->progs.dump_numa, numa_->links.dump_numa,
            [&](const locus_numa_iter_task& s) {
              TaskCounters& t = Task(s.tid, s.pid, s.comm);
              t.numa_faults.assign(num_nodes_, {});
              for (int n = 0; n < num_nodes_; ++n)
                t.numa_faults[n].total = s.mem_faults[n];
              t.numa_local = s.local;
              t.numa_remote = s.remote;
            });
      case NumaSource::kProcfs: {
        r.numa_kind = NumaFaultKind::kKernelDecayed;
        uint64_t skipped = 0;
        for (const ProcTaskSched& p :
             ReadAllProcSched(options_.procfs_root, &skipped)) {
          if (p.sched.numa_faults.empty()) continue;
          char comm[LOCUS_COMM_LEN] = {};
          memcpy(comm, p.sched.comm.data(),
                 std::min<size_t>(p.sched.comm.size(), LOCUS_COMM_LEN));
          TaskCounters& t = Task(p.tid, p.pid, comm);
          t.numa_faults.assign(num_nodes_, {});
          for (const ProcSchedNodeFaults& f : p.sched.numa_faults) {
            if (f.node < 0 || f.node >= num_nodes_) continue;
            t.numa_faults[f.node].total = f.task_private + f.task_shared;
          }
        }
        r.drops["numa.procfs_unreadable"] = skipped;
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  SensorOptions options_;
  SourcePlan plan_;
  int ncpus_ = 1;
  int num_nodes_ = 1;
  bool numa_active_ = false;
  std::string numa_status_;
  SensorSources sources_;
  SchedSkel sched_;
  NumaSkel numa_;
  SoftirqSkel softirq_;
  uint64_t lru_live_sched_ = 0;
  size_t irq_map_entries_ = 0;
  uint64_t hardirq_period_ = 1;
  uint64_t renamed_lost_ = 0;  // LOCUS_SCHED_RENAMED_LOST at the last read
  size_t irq_map_bytes_ = 0;
  const locus_irq_stat* irq_map_ = nullptr;
  absl::flat_hash_map<int32_t, TaskCounters> tasks_;
  size_t tasks_last_ = 0;                      // tasks_.size() at the last read
  std::optional<std::vector<int32_t>> scope_;  // sorted
  bool scoped_iterators_ = true;
  std::map<std::pair<bpf_program*, int32_t>, LinkPtr> pid_links_;
  // Softirq hooks attached in windows (SensorOptions::softirq_window_ns).
  bool windowed_ = false;
  std::vector<SoftirqCounts> softirq_base_;  // /proc/softirqs at open
  double softirq_traced_ = 1;                // share seen, at the last read
  std::atomic<uint64_t> window_failures_{0};
  std::mutex windows_mu_;
  std::condition_variable windows_cv_;
  bool windows_stop_ = false;  // guarded by windows_mu_
  std::thread windows_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SensorSource>> OpenBpfSensors(
    const SensorOptions& options, const SourcePlan& plan) {
  auto sensors = std::make_unique<BpfSensors>(options, plan);
  RETURN_IF_ERROR(sensors->Open());
  return std::unique_ptr<SensorSource>(std::move(sensors));
}

absl::StatusOr<std::unique_ptr<SensorSource>> OpenBpfSensors(
    const SensorOptions& options, FeatureSet& features) {
  return OpenBpfSensors(options, ChooseSources(features));
}

}  // namespace locus
