#include "tests/common/locusd_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/ctl/agent_client.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

void Deadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace

std::string FaultPolicy(const std::string& comm, const std::string& mode,
                        int max_moves) {
  return absl::StrCat("mode: ", mode, R"(
targets:
  comm: [)",
                      comm, R"(]
  workers_only: true
placement:
  enabled: true
  strategy: spread
  pin_to: node
memory:
  enabled: false
irqs:
  enabled: false
stability:
  min_gain: 0.05
  dwell_s: 1
  hold_down_s: 1
  max_moves_per_tick: )",
                      max_moves, "\n");
}

LocusdProcess::LocusdProcess(std::string locusd_path, std::string dir)
    : locusd_path_(std::move(locusd_path)),
      dir_(std::move(dir)),
      journal_(dir_ + "/journal") {}

LocusdProcess::~LocusdProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

void LocusdProcess::Start(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {locusd_path_,
                                   std::string("--sysfs_root=") +
                                       LOCUS_SOURCE_DIR +
                                       "/tests/fixtures/split2/sys",
                                   "--socket=" + socket(),
                                   "--journal=" + journal_,
                                   "--policy=" + policy(),
                                   "--tick=100ms"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  pid_ = Spawn(argv, log_path());
}

bool LocusdProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

bool LocusdProcess::WaitReady(absl::Duration timeout) {
  return WaitUntil(
             [&] {
               if (!running()) return true;
               return Status().ok();
             },
             timeout, absl::Milliseconds(50)) &&
         running();
}

std::unique_ptr<v1::Agent::Stub> LocusdProcess::Stub() {
  return NewAgentStub(socket());
}

absl::StatusOr<v1::AgentStatus> LocusdProcess::Status() {
  if (access(socket().c_str(), F_OK) != 0) {
    return absl::UnavailableError("no socket yet");
  }
  grpc::ClientContext context;
  Deadline(&context, absl::Seconds(5));
  v1::AgentStatus status;
  grpc::Status rpc = Stub()->GetStatus(&context, {}, &status);
  if (!rpc.ok()) return FromGrpc(rpc);
  return status;
}

absl::StatusOr<std::vector<v1::Metrics>> LocusdProcess::Watch(
    int count, absl::Duration timeout) {
  grpc::ClientContext context;
  Deadline(&context, timeout);
  v1::SubscribeRequest request;
  request.set_max_messages(count);
  request.set_client_name("fault test");
  auto stub = Stub();
  auto reader = stub->Subscribe(&context, request);
  std::vector<v1::Metrics> out;
  v1::Metrics m;
  while (reader->Read(&m)) out.push_back(m);
  grpc::Status rpc = reader->Finish();
  if (!rpc.ok() && out.size() < static_cast<size_t>(count)) {
    return FromGrpc(rpc);
  }
  return out;
}

absl::StatusOr<v1::Metrics> LocusdProcess::WatchUntil(
    const std::function<bool(const v1::Metrics&)>& done,
    absl::Duration timeout) {
  grpc::ClientContext context;
  Deadline(&context, timeout);
  v1::SubscribeRequest request;
  request.set_client_name("fault test");
  auto stub = Stub();
  auto reader = stub->Subscribe(&context, request);
  v1::Metrics m;
  while (reader->Read(&m)) {
    if (done(m)) {
      context.TryCancel();
      reader->Finish();
      return m;
    }
  }
  grpc::Status rpc = reader->Finish();
  if (!rpc.ok()) return FromGrpc(rpc);
  return absl::NotFoundError("the stream ended first");
}

int LocusdProcess::Stop(int signal) {
  if (pid_ <= 0) return -1;
  int code = locus::Stop(pid_, signal);
  pid_ = -1;
  return code;
}

std::string LocusdProcess::log() const { return ReadAll(log_path()); }

int LocusdProcess::Restore(std::string* out) {
  ProcessResult r =
      RunProcess({locusd_path_, "--restore", "--journal=" + journal_});
  if (out != nullptr) *out = r.err + r.out;
  return r.exit_code;
}

TargetFamily::TargetFamily(const std::string& binary, const std::string& comm,
                           int workers, int threads, const std::string& log,
                           bool churn) {
  std::vector<std::string> argv = {binary, comm, std::to_string(workers),
                                   std::to_string(threads)};
  if (churn) argv.push_back("churn");
  master_ = Spawn(argv, log);
  if (master_ <= 0) return;
  std::string line;
  WaitUntil(
      [&] {
        line = ReadAll(log);
        return absl::StrContains(line, "\n") ||
               waitpid(master_, nullptr, WNOHANG) == master_;
      },
      absl::Seconds(20));
  absl::string_view text = line;
  if (!absl::ConsumePrefix(&text, "ready")) return;
  for (absl::string_view field : absl::StrSplit(
           absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty())) {
    pid_t pid = 0;
    if (absl::SimpleAtoi(field, &pid)) workers_.push_back(pid);
  }
}

TargetFamily::~TargetFamily() {
  if (master_ > 0) locus::Stop(master_, SIGKILL);
  // The workers die with their master; wait until they have.
  for (pid_t w : workers_) {
    WaitUntil([&] { return kill(w, 0) != 0; }, absl::Seconds(5));
  }
}

}  // namespace locus
