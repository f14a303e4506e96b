#include "agent/ctl/commands.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/ctl/agent_client.h"
#include "agent/ctl/command_base.h"
#include "agent/ctl/ctl_args.h"
#include "agent/ctl/experiment_command.h"
#include "agent/ctl/experiment_pool.h"
#include "agent/ctl/format.h"
#include "agent/ctl/terminal.h"
#include "agent/ctl/top_view.h"
#include "agent/doctor/doctor_reader.h"
#include "common/printable.h"
#include "locus_version.h"  // generated: agent/main/CMakeLists.txt
#include "policy/policy_yaml.h"

namespace locus {
namespace {

using ctl::FormatExplain;
using ctl::FormatMetrics;
using ctl::FormatProbe;
using ctl::FormatStatus;
using ctl::ModeName;
using ctl::RenderTop;

class Command : public CommandBase {
 public:
  using CommandBase::CommandBase;

  int Run() {
    if (inv_.command == "policy") return PolicyCheck();
    if (inv_.command == "doctor") return Doctor();
    // Arguments are checked before connecting: a typo is a usage error
    // whether or not the daemon runs.
    if (inv_.command == "explain" && !ParseExplain()) {
      return Usage(absl::StrCat("explain wants a TID or irq:N, not '",
                                inv_.args[0], "'"));
    }
    if (inv_.command == "mode" && !ParseMode()) {
      return Usage(absl::StrCat("mode wants enforce, dry_run or policy, not '",
                                inv_.args[0], "'"));
    }
    if (inv_.command == "log-level" &&
        (!absl::SimpleAtoi(inv_.args[0], &log_level_) || log_level_ < 0)) {
      return Usage(absl::StrCat("log-level wants a number 0 or more, not '",
                                inv_.args[0], "'"));
    }
    // Pooling reads files: no agent needed.
    if (inv_.command == "experiment" && inv_.args[0] == "pool") {
      return RunExperimentPool(
          std::vector<std::string>(inv_.args.begin() + 1, inv_.args.end()),
          out_, err_);
    }
    absl::Status reachable = CheckAgentSocket(inv_.socket);
    if (!reachable.ok()) return Fail(std::string(reachable.message()));
    if (inv_.command == "top") return Top();  // makes its own stub
    if (inv_.command == "experiment") {
      return RunExperimentCommand(inv_, out_, err_);
    }
    stub_ = NewAgentStub(inv_.socket);
    if (inv_.command == "status") return Status();
    if (inv_.command == "watch") return Watch();
    if (inv_.command == "explain") return Explain();
    if (inv_.command == "mode") return Mode();
    if (inv_.command == "restore") return Restore();
    if (inv_.command == "probe") return Probe();
    if (inv_.command == "log-level") return SetLogLevel();
    return Usage(absl::StrCat("unknown command '", inv_.command, "'"));
  }

 private:
  int Status() {
    v1::AgentStatus status;
    int rc = Call("status", &v1::Agent::Stub::GetStatus, v1::GetStatusRequest(),
                  &status);
    return rc != kExitOk ? rc : Print(status, FormatStatus);
  }

  int Watch() {
    grpc::ClientContext context;
    v1::SubscribeRequest request;
    request.set_client_name(inv_.json ? "locusctl watch --json"
                                      : "locusctl watch");
    request.set_max_messages(static_cast<uint32_t>(inv_.count));
    auto reader = stub_->Subscribe(&context, request);
    v1::Metrics metrics;
    int received = 0;
    int printed = kExitOk;
    while (reader->Read(&metrics)) {
      ++received;
      printed = Print(metrics, FormatMetrics);
      if (printed != kExitOk || (inv_.count > 0 && received >= inv_.count)) {
        context.TryCancel();
        break;
      }
    }
    grpc::Status rpc = reader->Finish();
    if (printed != kExitOk) return printed;
    if (inv_.count > 0 && received >= inv_.count) return kExitOk;
    if (!rpc.ok()) return RpcFailed("watch", rpc);
    return Fail("locusd ended the stream (is it shutting down?)");
  }

  int Top() {
    // Signals must be blocked before the channel exists: gRPC's threads
    // inherit the mask, and one of them taking SIGINT would kill us with the
    // terminal still in raw mode on the alternate screen.
    TopTerminal terminal;
    stub_ = NewAgentStub(inv_.socket);
    grpc::ClientContext context;
    v1::SubscribeRequest request;
    request.set_client_name("locusctl top");
    request.set_max_messages(static_cast<uint32_t>(inv_.count));
    auto reader = stub_->Subscribe(&context, request);
    terminal.Start([&context] { context.TryCancel(); });
    v1::Metrics metrics;
    int received = 0;
    while (reader->Read(&metrics)) {
      int rows = 0;
      int cols = 0;
      terminal.Size(&rows, &cols);
      terminal.Draw(RenderTop(metrics, rows, cols));
      if (inv_.count > 0 && ++received >= inv_.count) {
        context.TryCancel();
        break;
      }
    }
    grpc::Status rpc = reader->Finish();
    if (terminal.quit_requested()) return kExitOk;
    if (inv_.count > 0 && received >= inv_.count) return kExitOk;
    if (!rpc.ok()) return RpcFailed("top", rpc);
    return Fail("locusd ended the stream (is it shutting down?)");
  }

  bool ParseExplain() {
    const std::string& subject = inv_.args[0];
    int number = 0;
    if (absl::StartsWith(subject, "irq:") &&
        absl::SimpleAtoi(subject.substr(4), &number) && number >= 0) {
      explain_.set_irq(number);
      return true;
    }
    if (absl::SimpleAtoi(subject, &number) && number > 0) {
      explain_.set_tid(number);
      return true;
    }
    return false;
  }

  int Explain() {
    v1::ExplainResponse response;
    int rc = Call("explain", &v1::Agent::Stub::Explain, explain_, &response);
    return rc != kExitOk ? rc : Print(response, FormatExplain);
  }

  bool ParseMode() {
    const std::string& name = inv_.args[0];
    if (name == "enforce") {
      set_mode_.set_mode(v1::AGENT_MODE_ENFORCE);
    } else if (name == "dry_run" || name == "dry-run") {
      set_mode_.set_mode(v1::AGENT_MODE_DRY_RUN);
    } else if (name == "policy") {
      set_mode_.set_follow_policy(true);
    } else {
      return false;
    }
    set_mode_.set_reason("locusctl mode");
    return true;
  }

  int Mode() {
    v1::SetModeResponse response;
    if (int rc = Call("mode", &v1::Agent::Stub::SetMode, set_mode_, &response);
        rc != kExitOk) {
      return rc;
    }
    out_ << "mode " << ModeName(response.mode()) << " (was "
         << ModeName(response.previous()) << ")";
    // Nothing more from a daemon that does not say.
    if (response.source() == v1::MODE_SOURCE_POLICY) {
      out_ << "; following the policy file's mode, and its reloads";
    } else if (response.source() == v1::MODE_SOURCE_RUNTIME) {
      out_ << "; a runtime override of the policy's mode until "
              "'locusctl mode policy' or a restart";
    }
    out_ << "\n";
    return kExitOk;
  }

  int Restore() {
    v1::RestoreRequest request;
    request.set_reason("locusctl restore");
    v1::RestoreResponse response;
    if (int rc = Call("restore", &v1::Agent::Stub::Restore, request, &response);
        rc != kExitOk) {
      return rc;
    }
    out_ << "restored " << response.restored() << " change(s), "
         << response.failed() << " failed\n";
    for (const std::string& e : response.errors()) {
      out_ << "  " << Printable(e) << "\n";
    }
    if (response.mode_source() == v1::MODE_SOURCE_RUNTIME) {
      out_ << "mode set to " << ModeName(response.mode())
           << " (a runtime override, so that the agent does not act again; "
              "'locusctl mode policy' follows the policy file again)\n";
    }
    return response.failed() == 0 ? kExitOk : kExitFailed;
  }

  int Probe() {
    v1::ProbeReport report;
    int rc =
        Call("probe", &v1::Agent::Stub::Probe, v1::ProbeRequest(), &report);
    return rc != kExitOk ? rc : Print(report, FormatProbe);
  }

  int SetLogLevel() {
    v1::SetLogLevelRequest request;
    request.set_level(log_level_);
    v1::SetLogLevelResponse response;
    if (int rc = Call("log-level", &v1::Agent::Stub::SetLogLevel, request,
                      &response);
        rc != kExitOk) {
      return rc;
    }
    out_ << "log level " << response.level() << " (was " << response.previous()
         << ")\n";
    return kExitOk;
  }

  // The checks locusd --doctor makes, here, and whether an agent answers.
  // The journal checked is the one the agent that answered holds (the
  // default one when none answers).
  int Doctor() {
    AgentAnswer agent;
    agent.socket = inv_.socket;
    agent.reached = CheckAgentSocket(inv_.socket);
    if (agent.reached.ok()) {
      stub_ = NewAgentStub(inv_.socket);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           absl::ToChronoNanoseconds(inv_.timeout));
      grpc::Status rpc =
          stub_->GetStatus(&context, v1::GetStatusRequest(), &agent.status);
      if (!rpc.ok()) {
        agent.reached =
            absl::UnavailableError(DescribeRpcError(rpc, inv_.socket));
      }
    }
    DoctorPaths paths;
    if (agent.reached.ok() && !agent.status.journal_path().empty()) {
      paths.journal_path = agent.status.journal_path();
    }
    DoctorInputs in = ReadHostDoctorInputs(paths);
    in.agent = std::move(agent);
    std::vector<DoctorCheck> checks = RunDoctorChecks(in);
    out_ << FormatDoctor(checks);
    return DoctorExitCode(checks);
  }

  int PolicyCheck() {
    const std::string& path = inv_.args[1];
    auto policy = LoadPolicyFile(path);
    if (!policy.ok()) {
      err_ << policy.status().message() << "\n";
      return kExitFailed;
    }
    out_ << path << ": ok\n";
    return kExitOk;
  }

  v1::ExplainRequest explain_;
  v1::SetModeRequest set_mode_;
  int log_level_ = 0;
};

}  // namespace

int CannotWrite(std::ostream& err) {
  // Right after the failed flush, errno is the write's (ENOSPC, EPIPE).
  int error = errno;
  err << "locusctl: cannot write the output"
      << (error != 0 ? absl::StrCat(": ", strerror(error)) : "") << "\n";
  return kExitFailed;
}

int RunLocusctl(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  absl::StatusOr<CtlInvocation> inv = ParseCtlArgs(args);
  if (!inv.ok()) {
    err << "locusctl: " << inv.status().message() << "\n"
        << "Try 'locusctl --help'.\n";
    return kExitUsage;
  }
  int rc = kExitOk;
  errno = 0;
  if (inv->version) {
    out << "locusctl " << LOCUS_VERSION_STRING << "\n";
  } else if (inv->help) {
    out << CtlUsage(inv->command, inv->args.empty() ? "" : inv->args[0]);
  } else {
    rc = Command(*inv, out, err).Run();
  }
  // Output that never reached its file is a failure (`> /dev/full`), not
  // a success the caller would trust.
  if (out) {
    errno = 0;
    out.flush();
  }
  if (!out && rc == kExitOk) return CannotWrite(err);
  return rc;
}

}  // namespace locus
