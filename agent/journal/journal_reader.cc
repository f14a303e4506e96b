#include "agent/journal/journal_reader.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/cpu_mask.h"
#include "common/file_read.h"
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

// "<netns> <address:port>" of an "R" or "-R" record.
absl::StatusOr<ListenKey> SteeredKey(const std::vector<absl::string_view>& f) {
  ListenKey key;
  if (!absl::SimpleAtoi(f[1], &key.netns) ||
      !ParseListenAddress(f[2], &key.address).ok()) {
    return absl::DataLossError("bad steering record");
  }
  return key;
}

// "R <netns> <address:port>": a program attached to that group.
absl::Status ReplaySteered(const std::vector<absl::string_view>& f,
                           JournalContents* out) {
  ASSIGN_OR_RETURN(ListenKey key, SteeredKey(f));
  out->steered.insert(key);
  return absl::OkStatus();
}

// "B <irqbalance pid> <irq>" or "N <numad pid> <pid>": the neighbour's pid
// and what Locus handed it.
absl::Status ReplayNeighbour(const std::vector<absl::string_view>& f,
                             JournalContents* out) {
  int32_t owner = 0;
  int32_t id = 0;
  if (!absl::SimpleAtoi(f[1], &owner) || !absl::SimpleAtoi(f[2], &id) ||
      owner <= 0 || id <= 0) {
    return absl::DataLossError("bad neighbour record");
  }
  if (f[0] == "B") {
    out->irqbalance_bans[id] = owner;
  } else {
    out->numad_exclusions[id] = owner;
  }
  return absl::OkStatus();
}

// "-T <tid>", "-I <irq>", "-B <irq>", "-N <pid>" or
// "-R <netns> <address:port>".
absl::Status ReplayForget(const std::vector<absl::string_view>& f,
                          JournalContents* out) {
  if (f[0] == "-R") {
    ASSIGN_OR_RETURN(ListenKey key, SteeredKey(f));
    out->steered.erase(key);
    return absl::OkStatus();
  }
  int id = 0;
  if (!absl::SimpleAtoi(f[1], &id)) {
    return absl::DataLossError("bad forget record");
  }
  if (f[0] == "-T") {
    out->threads.erase(id);
  } else if (f[0] == "-I") {
    out->irqs.erase(id);
  } else if (f[0] == "-B") {
    out->irqbalance_bans.erase(id);
  } else {
    out->numad_exclusions.erase(id);
  }
  return absl::OkStatus();
}

// Replays one complete line on `out`; why not when it is damaged.
absl::Status ReplayLine(absl::string_view line, JournalContents* out) {
  ASSIGN_OR_RETURN(absl::string_view body, RecordBody(line));
  std::vector<absl::string_view> f = absl::StrSplit(body, ' ');
  if (f[0] == "T" && f.size() == 5) return ReplayThread(f, out);
  if (f[0] == "I" && f.size() == 3) return ReplayIrq(f, out);
  if (f[0] == "R" && f.size() == 3) return ReplaySteered(f, out);
  if ((f[0] == "B" || f[0] == "N") && f.size() == 3) {
    return ReplayNeighbour(f, out);
  }
  if (((f[0] == "-T" || f[0] == "-I" || f[0] == "-B" || f[0] == "-N") &&
       f.size() == 2) ||
      (f[0] == "-R" && f.size() == 3)) {
    return ReplayForget(f, out);
  }
  return absl::DataLossError(absl::StrCat("unknown record '", f[0], "'"));
}

}  // namespace

absl::Status ParseListenAddress(absl::string_view text,
                                ListenAddress* address) {
  const bool v6 = absl::StartsWith(text, "[");
  const size_t colon = v6 ? text.find("]:") : text.find_last_of(':');
  uint32_t port = 0;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(text.substr(colon + (v6 ? 2 : 1)), &port) ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad address '", text, "' (want ADDRESS:PORT)"));
  }
  const std::string host(text.substr(v6 ? 1 : 0, colon - (v6 ? 1 : 0)));
  address->family = v6 ? AF_INET6 : AF_INET;
  address->bytes = {};
  address->port = static_cast<uint16_t>(port);
  if (inet_pton(address->family, host.c_str(), address->bytes.data()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad address '", text, "' (not numeric IPv4/IPv6)"));
  }
  return absl::OkStatus();
}

uint32_t Crc32(absl::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char byte : data) c = kCrcTable[(c ^ byte) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void JournalParser::Feed(absl::string_view chunk) {
  while (!chunk.empty()) {
    const size_t newline = chunk.find('\n');
    const absl::string_view piece = chunk.substr(0, newline);
    if (!overlong_ && line_.size() + piece.size() > kMaxJournalLine) {
      overlong_ = true;  // junk without newlines must not grow memory
      line_.clear();
    }
    if (!overlong_) line_.append(piece.data(), piece.size());
    if (newline == absl::string_view::npos) return;
    chunk.remove_prefix(newline + 1);
    EndLine();
  }
}

void JournalParser::EndLine() {
  ++line_number_;
  if (overlong_) {
    ++out_.corrupt_records;
    Problem(absl::StrCat("record longer than ", kMaxJournalLine, " bytes"));
  } else if (!line_.empty()) {
    if (absl::Status status = ReplayLine(line_, &out_); !status.ok()) {
      ++out_.corrupt_records;
      Problem(status.message());
    }
  }
  line_.clear();
  overlong_ = false;
}

void JournalParser::Problem(absl::string_view why) {
  if (++problems_ <= kMaxJournalProblems) {
    out_.problems.push_back(absl::StrCat(path_, ":", line_number_, ": ", why));
  }
}

JournalContents JournalParser::Finish() && {
  if (overlong_) {
    // No append writes more than a record: junk this long at the end was
    // never one (5 MB of random bytes is not a crash mid-append).
    ++line_number_;
    ++out_.corrupt_records;
    Problem(absl::StrCat("more than ", kMaxJournalLine,
                         " bytes without a newline at the end: not a record"));
  } else if (!line_.empty()) {
    ++line_number_;
    out_.truncated_tail = true;
    Problem("incomplete last record (crash while appending?), ignored");
  }
  if (problems_ > kMaxJournalProblems) {
    out_.problems.push_back(absl::StrCat(path_, ": and ",
                                         problems_ - kMaxJournalProblems,
                                         " more damaged record(s)"));
  }
  return std::move(out_);
}

JournalContents ParseJournal(absl::string_view text, absl::string_view path) {
  JournalParser parser(path);
  parser.Feed(text);
  return std::move(parser).Finish();
}

absl::StatusOr<JournalContents> ReadJournal(const std::string& path) {
  // The shared reader's open: a FIFO planted at the path must not block the
  // start, and a link is not followed (the path is resolved already, and
  // the writer refuses links too). Streamed rather than read whole: the
  // parser holds one line, whatever the file's size.
  absl::StatusOr<UniqueFd> fd = OpenRegularFile(path, /*follow_links=*/false);
  if (!fd.ok()) {
    // Nothing can exist there: an empty journal (writing will say why not).
    if (absl::IsNotFound(fd.status())) return JournalContents{};
    return absl::FailedPreconditionError(fd.status().message());
  }
  JournalParser parser(path);
  std::array<char, 64 * 1024> buffer;
  for (;;) {
    ssize_t n = read(fd->get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::FailedPreconditionError(ErrnoMessage(path, errno));
    if (n == 0) break;
    parser.Feed(absl::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  return std::move(parser).Finish();
}

}  // namespace locus
