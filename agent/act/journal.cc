#include "agent/act/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agent/host/cpu_mask.h"
#include "agent/host/file_util.h"
#include "common/os_error.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status SyncDir(const std::string& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || fsync(fd.get()) != 0) {
    return absl::FailedPreconditionError(ErrnoMessage(dir, errno));
  }
  return absl::OkStatus();
}

// mkdir -p with 0700: the journal says which threads and IRQs were moved,
// which is nobody else's business.
absl::Status MakeDirs(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": not a directory"));
  }
  std::string parent = DirName(dir);
  if (parent != dir) RETURN_IF_ERROR(MakeDirs(parent));
  if (mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) return absl::OkStatus();
    return absl::FailedPreconditionError(ErrnoMessage(dir, errno));
  }
  // A new directory is only durable once its parent's entry is.
  return SyncDir(parent);
}

std::string WithCrc(const std::string& body) {
  return absl::StrFormat("%s %08x\n", body, Crc32(body));
}

// The text of a record line before its CRC, when the CRC matches.
absl::StatusOr<absl::string_view> RecordBody(absl::string_view line) {
  size_t last_space = line.find_last_of(' ');
  uint32_t crc = 0;
  if (last_space == absl::string_view::npos ||
      line.size() - last_space - 1 != 8 ||
      !absl::SimpleHexAtoi(line.substr(last_space + 1), &crc)) {
    return absl::DataLossError("no checksum");
  }
  absl::string_view body = line.substr(0, last_space);
  if (Crc32(body) != crc) return absl::DataLossError("checksum mismatch");
  return body;
}

// "T <pid> <tid> <start_time> <cpulist>": the first original wins.
absl::Status ReplayThread(const std::vector<absl::string_view>& f,
                          JournalContents* out) {
  ThreadEntry e;
  auto cpus = ParseCpuList(f[4]);
  if (!absl::SimpleAtoi(f[1], &e.pid) || !absl::SimpleAtoi(f[2], &e.tid) ||
      !absl::SimpleAtoi(f[3], &e.start_time) || !cpus.ok() || cpus->empty()) {
    return absl::DataLossError("bad thread record");
  }
  e.cpus = *std::move(cpus);
  out->threads.emplace(e.tid, std::move(e));
  return absl::OkStatus();
}

// "I <irq> <cpulist>": the first original wins.
absl::Status ReplayIrq(const std::vector<absl::string_view>& f,
                       JournalContents* out) {
  IrqEntry e;
  auto cpus = ParseCpuList(f[2]);
  if (!absl::SimpleAtoi(f[1], &e.irq) || !cpus.ok() || cpus->empty()) {
    return absl::DataLossError("bad irq record");
  }
  e.cpus = *std::move(cpus);
  out->irqs.emplace(e.irq, std::move(e));
  return absl::OkStatus();
}

// "-T <tid>" or "-I <irq>".
absl::Status ReplayForget(const std::vector<absl::string_view>& f,
                          JournalContents* out) {
  int id = 0;
  if (!absl::SimpleAtoi(f[1], &id)) {
    return absl::DataLossError("bad forget record");
  }
  if (f[0] == "-T") {
    out->threads.erase(id);
  } else {
    out->irqs.erase(id);
  }
  return absl::OkStatus();
}

// Replays one complete line on `out`; why not when it is damaged.
absl::Status ReplayLine(absl::string_view line, JournalContents* out) {
  ASSIGN_OR_RETURN(absl::string_view body, RecordBody(line));
  std::vector<absl::string_view> f = absl::StrSplit(body, ' ');
  if (f[0] == "T" && f.size() == 5) return ReplayThread(f, out);
  if (f[0] == "I" && f.size() == 3) return ReplayIrq(f, out);
  if ((f[0] == "-T" || f[0] == "-I") && f.size() == 2) {
    return ReplayForget(f, out);
  }
  return absl::DataLossError(absl::StrCat("unknown record '", f[0], "'"));
}

}  // namespace

uint32_t Crc32(absl::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char byte : data) c = kCrcTable[(c ^ byte) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

JournalContents ParseJournal(absl::string_view text, absl::string_view path) {
  JournalContents out;
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    size_t newline = text.find('\n');
    if (newline == absl::string_view::npos) {
      out.truncated_tail = true;
      out.problems.push_back(
          absl::StrCat(path, ":", line_number,
                       ": incomplete last record (crash while "
                       "appending?), ignored"));
      break;
    }
    absl::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    if (line.empty()) continue;
    if (absl::Status status = ReplayLine(line, &out); !status.ok()) {
      ++out.corrupt_records;
      out.problems.push_back(
          absl::StrCat(path, ":", line_number, ": ", status.message()));
    }
  }
  return out;
}

absl::StatusOr<JournalContents> ReadJournal(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    // Nothing can exist there: an empty journal (writing will say why not).
    if (errno == ENOENT || errno == ENOTDIR) return JournalContents{};
    return absl::FailedPreconditionError(ErrnoMessage(path, errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a regular file"));
  }
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseJournal(text, path);
}

absl::StatusOr<std::unique_ptr<Journal>> Journal::Open(
    const JournalOptions& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("journal path is empty");
  }
  std::unique_ptr<Journal> journal(new Journal(options));
  ASSIGN_OR_RETURN(journal->contents_, ReadJournal(options.path));
  return journal;
}

absl::Status Journal::EnsureOpen() {
  if (fd_) return absl::OkStatus();
  const std::string dir = DirName(options_.path);
  RETURN_IF_ERROR(MakeDirs(dir));
  bool created = access(options_.path.c_str(), F_OK) != 0;
  UniqueFd fd(open(options_.path.c_str(),
                   O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                   0600));
  if (!fd) {
    return absl::FailedPreconditionError(ErrnoMessage(options_.path, errno));
  }
  // A new directory entry must survive a crash too, or the journal could
  // vanish with the records in it.
  if (created) RETURN_IF_ERROR(SyncDir(dir));
  fd_ = std::move(fd);
  return absl::OkStatus();
}

absl::Status Journal::Append(const std::string& body) {
  last_error_ = AppendRecord(body);
  return last_error_;
}

absl::Status Journal::AppendRecord(const std::string& body) {
  if (!broken_.ok()) return broken_;
  absl::Status status = EnsureOpen();
  if (!status.ok()) {
    // Not broken: nothing was written, a later tick may find space/rights.
    return absl::FailedPreconditionError(
        absl::StrCat("journal not writable, not acting: ", status.message()));
  }
  const std::string line = WithCrc(body);
  ssize_t n = write(fd_.get(), line.data(), line.size());
  int err = errno;
  if (n < 0) {
    // Nothing reached the file, so it is not torn: later appends stay safe.
    return absl::FailedPreconditionError(
        absl::StrCat("journal not writable, not acting: ",
                     ErrnoMessage(options_.path, err)));
  }
  if (n == static_cast<ssize_t>(line.size())) {
    if (fdatasync(fd_.get()) == 0) return absl::OkStatus();
    err = errno;  // written but maybe not durable
  } else {
    err = ENOSPC;  // a short write: the disk filled up mid-record
  }
  // The file may now end in a torn record; a record appended after it would
  // be glued to it and lost, so no more appends until the journal is cleared.
  broken_ = absl::FailedPreconditionError(
      absl::StrCat("journal damaged, not acting until restored: ",
                   ErrnoMessage(options_.path, err)));
  return broken_;
}

absl::Status Journal::RecordThread(const ThreadEntry& entry) {
  if (HasThread(entry.tid)) return absl::OkStatus();
  if (entry.cpus.empty()) {
    return absl::InvalidArgumentError("thread entry without CPUs");
  }
  absl::Status status =
      Append(absl::StrCat("T ", entry.pid, " ", entry.tid, " ",
                          entry.start_time, " ", FormatCpuList(entry.cpus)));
  if (status.ok()) contents_.threads.emplace(entry.tid, entry);
  return status;
}

absl::Status Journal::RecordIrq(const IrqEntry& entry) {
  if (HasIrq(entry.irq)) return absl::OkStatus();
  if (entry.cpus.empty()) {
    return absl::InvalidArgumentError("irq entry without CPUs");
  }
  absl::Status status =
      Append(absl::StrCat("I ", entry.irq, " ", FormatCpuList(entry.cpus)));
  if (status.ok()) contents_.irqs.emplace(entry.irq, entry);
  return status;
}

absl::Status Journal::ForgetThread(int32_t tid) {
  if (!HasThread(tid)) return absl::OkStatus();
  // Forget in memory even if the record fails: a restore of a stale entry is
  // harmless (start time or affinity no longer match) and must not block.
  contents_.threads.erase(tid);
  return Append(absl::StrCat("-T ", tid));
}

absl::Status Journal::ForgetIrq(int irq) {
  if (!HasIrq(irq)) return absl::OkStatus();
  contents_.irqs.erase(irq);
  return Append(absl::StrCat("-I ", irq));
}

absl::Status Journal::Clear() {
  fd_.reset();
  contents_ = JournalContents{};
  broken_ = absl::OkStatus();
  last_error_ = absl::OkStatus();
  if (unlink(options_.path.c_str()) != 0) {
    int err = errno;
    // No journal is a cleared journal, even on a read-only mount, where
    // unlink reports EROFS before it looks for the file.
    struct stat st;
    if (err == ENOENT ||
        (lstat(options_.path.c_str(), &st) != 0 && errno == ENOENT)) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(ErrnoMessage(options_.path, err));
  }
  return SyncDir(DirName(options_.path));
}

}  // namespace locus
