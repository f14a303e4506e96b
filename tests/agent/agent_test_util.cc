#include "tests/agent/agent_test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace locus {

absl::StatusOr<v1::AgentStatus> FakeController::GetStatus() {
  absl::MutexLock lock(&mu_);
  v1::AgentStatus s;
  s.set_version("0.1.0-test");
  s.set_mode(mode_);
  s.set_tick(42);
  s.set_tick_period_ns(1'000'000'000);
  s.mutable_policy()->set_path("/etc/locus/policy.yaml");
  s.mutable_policy()->set_version(3);
  s.set_targets(1);
  s.set_threads(4);
  s.set_numa_nodes(2);
  v1::SensorSource* src = s.add_sensors();
  src->set_sensor("numa_faults");
  src->set_source("procfs");
  src->set_ok(true);
  src->set_detail("fentry: EPERM");
  return s;
}

absl::StatusOr<v1::ExplainResponse> FakeController::Explain(
    const v1::ExplainRequest& request) {
  v1::ExplainResponse r;
  if (request.subject_case() == v1::ExplainRequest::kTid &&
      request.tid() == 1234) {
    r.set_subject("thread 1234 (nginx worker)");
    r.mutable_task()->set_tid(1234);
    r.mutable_task()->set_node(1);
    v1::Decision* d = r.add_decisions();
    d->set_tick(40);
    v1::Action* a = d->mutable_action();
    a->mutable_pin_thread()->set_tid(1234);
    a->mutable_pin_thread()->set_pid(1200);
    a->mutable_pin_thread()->set_node(1);
    a->mutable_pin_thread()->add_cpus(2);
    a->mutable_pin_thread()->add_cpus(3);
    a->set_reason("82% remote faults on node 1");
    a->set_outcome(v1::ACTION_OUTCOME_DRY_RUN);
    return r;
  }
  if (request.subject_case() == v1::ExplainRequest::kIrq &&
      request.irq() == 45) {
    r.set_subject("irq 45 (virtio1-input.0)");
    r.mutable_irq()->set_irq(45);
    r.add_decisions()->set_note("converged");
    return r;
  }
  return absl::NotFoundError("the agent has no record of that thread or IRQ");
}

absl::StatusOr<v1::SetModeResponse> FakeController::SetMode(
    const v1::SetModeRequest& request) {
  absl::MutexLock lock(&mu_);
  ++set_mode_calls_;
  v1::SetModeResponse r;
  r.set_previous(mode_);
  mode_ = request.mode();
  r.set_mode(mode_);
  return r;
}

absl::StatusOr<v1::RestoreResponse> FakeController::Restore(
    const v1::RestoreRequest&) {
  absl::MutexLock lock(&mu_);
  ++restore_calls_;
  v1::RestoreResponse r;
  r.set_restored(2);
  return r;
}

absl::StatusOr<v1::ProbeReport> FakeController::Probe() {
  v1::ProbeReport r;
  r.set_kernel("6.18.0-test");
  v1::ProbeFeature* f = r.add_features();
  f->set_name("fentry");
  f->set_available(false);
  f->set_detail("EPERM");
  f = r.add_features();
  f->set_name("tp_btf");
  f->set_available(true);
  return r;
}

absl::StatusOr<v1::ExperimentReport> FakeController::StartExperiment(
    const v1::StartExperimentRequest& request) {
  absl::MutexLock lock(&mu_);
  start_requests_.push_back(request);
  if (start_reply_.has_value()) return *start_reply_;
  v1::ExperimentReport r;
  r.set_id("exp-test");
  r.set_state(v1::EXPERIMENT_STATE_RUNNING);
  r.set_aa(request.aa());
  r.set_seed(request.seed() != 0 ? request.seed() : 7);
  *r.mutable_duration() = request.duration();
  *r.mutable_interval() = request.interval();
  *r.mutable_remaining() = request.duration();
  r.set_design(request.design());
  *r.mutable_block() = request.block();
  r.set_treated(4);
  r.set_control(4);
  r.set_reason(request.reason());
  return r;
}

absl::StatusOr<v1::ExperimentReport> FakeController::GetExperiment() {
  absl::MutexLock lock(&mu_);
  ++get_experiment_calls_;
  return get_reply_;
}

absl::StatusOr<v1::ExperimentReport> FakeController::StopExperiment(
    const v1::StopExperimentRequest& request) {
  absl::MutexLock lock(&mu_);
  stop_requests_.push_back(request);
  return stop_reply_;
}

void FakeController::set_start_reply(
    absl::StatusOr<v1::ExperimentReport> reply) {
  absl::MutexLock lock(&mu_);
  start_reply_ = std::move(reply);
}
void FakeController::set_get_reply(absl::StatusOr<v1::ExperimentReport> reply) {
  absl::MutexLock lock(&mu_);
  get_reply_ = std::move(reply);
}
void FakeController::set_stop_reply(
    absl::StatusOr<v1::ExperimentReport> reply) {
  absl::MutexLock lock(&mu_);
  stop_reply_ = std::move(reply);
}
std::vector<v1::StartExperimentRequest> FakeController::start_requests() const {
  absl::MutexLock lock(&mu_);
  return start_requests_;
}
std::vector<v1::StopExperimentRequest> FakeController::stop_requests() const {
  absl::MutexLock lock(&mu_);
  return stop_requests_;
}
int FakeController::get_experiment_calls() const {
  absl::MutexLock lock(&mu_);
  return get_experiment_calls_;
}

int FakeController::set_mode_calls() const {
  absl::MutexLock lock(&mu_);
  return set_mode_calls_;
}
int FakeController::restore_calls() const {
  absl::MutexLock lock(&mu_);
  return restore_calls_;
}
v1::AgentMode FakeController::mode() const {
  absl::MutexLock lock(&mu_);
  return mode_;
}

v1::Metrics SyntheticMetrics(uint64_t tick, int tasks) {
  v1::Metrics m;
  m.set_tick(tick);
  absl::Time now = absl::Now();
  m.mutable_time()->set_seconds(absl::ToUnixSeconds(now));
  m.set_tick_period_ns(1'000'000'000);
  m.set_tick_duration_ns(2'500'000);
  m.set_mode(v1::AGENT_MODE_DRY_RUN);
  for (int n = 0; n < 2; ++n) {
    v1::NodeMetrics* node = m.add_nodes();
    node->set_node(n);
    node->add_cpus(2 * n);
    node->add_cpus(2 * n + 1);
    node->set_cpu_busy(0.25 + 0.5 * n);
    node->set_faults_local(800 + n);
    node->set_faults_remote(200);
    node->set_local_fault_ratio(0.8);
    node->set_pages_migrated(41);
  }
  for (int i = 0; i < tasks; ++i) {
    v1::TaskMetrics* t = m.add_tasks();
    t->set_pid(1200);
    t->set_tid(1200 + i);
    t->set_comm("nginx");
    t->set_role(i == 0 ? v1::TASK_ROLE_MASTER : v1::TASK_ROLE_WORKER);
    t->set_node(i % 2);
    t->set_cpu(i % 4);
    t->set_faults_local(100 + i);
    t->set_faults_remote(i);
    t->set_migrations(3);
  }
  v1::IrqMetrics* irq = m.add_irqs();
  irq->set_irq(45);
  irq->set_name("virtio1-input.0");
  irq->set_device_node(0);
  irq->add_cpus(0);
  irq->add_count_per_cpu(1000);
  irq->set_count(1000);
  v1::Action* a = m.add_actions();
  a->set_tick(tick);
  a->mutable_pin_thread()->set_pid(1200);
  a->mutable_pin_thread()->set_tid(1201);
  a->mutable_pin_thread()->set_node(1);
  a->mutable_pin_thread()->add_cpus(2);
  a->set_reason("82% remote faults on node 1");
  a->set_outcome(v1::ACTION_OUTCOME_DRY_RUN);
  m.mutable_policy()->set_version(3);
  return m;
}

v1::ExperimentReport SampleExperimentReport() {
  v1::ExperimentReport r;
  r.set_id("exp-20261202-173012");
  r.set_state(v1::EXPERIMENT_STATE_DONE);
  r.set_seed(42);
  r.mutable_started()->set_seconds(1'795'000'000);
  r.mutable_ended()->set_seconds(1'795'001'800);
  r.mutable_duration()->set_seconds(1800);
  r.mutable_interval()->set_seconds(10);
  r.set_intervals(180);
  r.set_treated(2);
  r.set_control(2);
  v1::ExperimentEstimate* work = r.mutable_work();
  work->set_metric("bytes_per_cpu_second");
  work->set_valid(true);
  work->set_ratio(1.031);
  work->set_low(1.012);
  work->set_high(1.050);
  work->set_significant(true);
  work->set_detectable(0.04);
  v1::ExperimentEstimate* conns = r.mutable_connections();
  conns->set_metric("connections_per_cpu_second");
  conns->set_valid(true);
  conns->set_ratio(0.995);
  conns->set_low(0.97);
  conns->set_high(1.021);
  conns->set_detectable(0.05);
  r.set_verdict("Locus: +3.1 % work per CPU-second [1.2, 5.0], significant");
  r.set_method("cluster bootstrap over workers, stratified by node");
  r.set_connection_skew(0.08);
  r.set_connections_fair(true);
  r.set_work_source("bpf: socket sends and accepts per process");
  r.set_pmu("PMU: none (perf_event_paranoid 3)");
  r.set_guardrail_p(0.41);
  r.set_guardrail_bound(0.0001);
  r.add_notes("worker 1203 exited at interval 90: its intervals stop there");
  r.set_reason("ran its whole duration");
  struct Unit {
    int pid;
    const char* comm;
    v1::ExperimentArm arm;
    int node;
    bool active;
    double rate;
    double share;
  };
  for (const Unit& u :
       {Unit{1201, "nginx", v1::EXPERIMENT_ARM_TREATED, 0, true, 2.5e9, 0.26},
        Unit{1202, kHostileComm, v1::EXPERIMENT_ARM_CONTROL, 0, true, 2.4e9,
             0.25},
        Unit{1203, "nginx", v1::EXPERIMENT_ARM_TREATED, 1, false, 2.6e9, 0.23},
        Unit{1204, "nginx", v1::EXPERIMENT_ARM_CONTROL, 1, true, 2.5e9,
             0.26}}) {
    v1::ExperimentUnit* unit = r.add_units();
    unit->set_pid(u.pid);
    unit->set_comm(u.comm);
    unit->set_arm(u.arm);
    unit->set_stratum_node(u.node);
    unit->set_instance(1200);
    unit->set_active(u.active);
    unit->set_intervals(u.active ? 180 : 90);
    unit->set_lost_at_interval(u.active ? 0 : 90);
    unit->set_bytes_per_cpu_second(u.rate);
    unit->set_connection_share(u.share);
  }
  v1::ExperimentInterval* last = r.add_series();
  last->set_index(179);
  last->set_treated_bytes_per_cpu_second(2.55e9);
  last->set_control_bytes_per_cpu_second(2.45e9);
  return r;
}

FakePublisher::FakePublisher(MetricsHub* hub, absl::Duration period, int tasks)
    : hub_(hub), period_(period), tasks_(tasks) {
  thread_ = std::thread([this] { Run(); });
}

FakePublisher::~FakePublisher() { Stop(); }

void FakePublisher::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void FakePublisher::Run() {
  absl::Time next = absl::Now();
  absl::Time last = absl::InfinitePast();
  uint64_t tick = 0;
  while (!stop_) {
    // Built before timing: the loop's own work is not the hub's cost.
    v1::Metrics m = SyntheticMetrics(++tick, tasks_);
    {
      absl::MutexLock lock(&mu_);
      if (experiment_.has_value()) *m.mutable_experiment() = *experiment_;
    }
    absl::Time start = absl::Now();
    hub_->Publish(std::move(m));
    absl::Time end = absl::Now();
    ++ticks_;
    {
      absl::MutexLock lock(&mu_);
      max_publish_ = std::max(max_publish_, end - start);
      if (last != absl::InfinitePast()) {
        max_interval_ = std::max(max_interval_, start - last);
      }
    }
    last = start;
    next += period_;
    absl::SleepFor(next - absl::Now());
  }
}

void FakePublisher::SetExperiment(const v1::ExperimentReport& report) {
  absl::MutexLock lock(&mu_);
  experiment_ = report;
}

absl::Duration FakePublisher::max_publish_time() const {
  absl::MutexLock lock(&mu_);
  return max_publish_;
}

absl::Duration FakePublisher::max_interval() const {
  absl::MutexLock lock(&mu_);
  return max_interval_;
}

TempDir::TempDir() {
  std::string pattern = "/tmp/locus-agent-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         absl::Duration timeout) {
  ProcessResult result;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.err = "pipe failed";
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.err = absl::StrCat("posix_spawn ", argv[0], " failed: ", rc);
    return result;
  }
  absl::Time deadline = absl::Now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    int wait_ms =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (wait_ms <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (poll(fds, 2, wait_ms) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!killed && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (killed) absl::StrAppend(&result.err, "\n[killed after timeout]");
  return result;
}

ProcessResult RunProcessAs(const std::vector<std::string>& setpriv_options,
                           const std::vector<std::string>& argv) {
  if (setpriv_options.empty()) return RunProcess(argv);
  std::vector<std::string> full = {"/usr/bin/setpriv"};
  full.insert(full.end(), setpriv_options.begin(), setpriv_options.end());
  full.push_back("--");
  full.insert(full.end(), argv.begin(), argv.end());
  return RunProcess(full);
}

std::vector<std::string> SplitLines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

}  // namespace locus
