#include "agent/host/listeners.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

constexpr uint64_t kTcpListen = 0x0A;  // TCP_LISTEN in include/net/tcp_states.h

// Exactly `digits` hex digits (1 to 16 when 0): SimpleHexAtoi alone would
// also take a sign, "0x" or surrounding blanks.
bool ParseHex(absl::string_view text, size_t digits, uint64_t* out) {
  if (text.empty() || text.size() > 16 || (digits && text.size() != digits) ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isxdigit)) {
    return false;
  }
  return absl::SimpleHexAtoi(text, out);
}

// "ADDR:PORT" as net/tcp prints it: each 32-bit word of the address as the
// host read it from memory (so copying it back to memory restores network
// order), the port as a 16-bit number.
absl::StatusOr<ListenAddress> ParseHexAddress(absl::string_view text,
                                              int family) {
  const size_t words = family == AF_INET6 ? 4 : 1;
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  ListenAddress address;
  address.family = family;
  uint64_t value = 0;
  bool ok = parts.size() == 2 && parts[0].size() == 8 * words &&
            ParseHex(parts[1], 4, &value);
  address.port = static_cast<uint16_t>(value);
  for (size_t i = 0; ok && i < words; ++i) {
    ok = ParseHex(parts[0].substr(8 * i, 8), 8, &value);
    const uint32_t word = static_cast<uint32_t>(value);
    std::memcpy(address.bytes.data() + 4 * i, &word, sizeof(word));
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad local address '", text, "'"));
  }
  return address;
}

// One row: "sl: local remote st tx:rx tr:when retrnsmt uid timeout inode
// ...". nullopt for a socket in another state than LISTEN.
absl::StatusOr<std::optional<TcpListenRow>> ParseTcpRow(absl::string_view line,
                                                        int family) {
  std::vector<absl::string_view> f =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (f.size() < 10) {
    return absl::DataLossError(
        absl::StrCat("only ", f.size(), " fields, want 10 (truncated?)"));
  }
  uint64_t state = 0;
  if (!ParseHex(f[3], 2, &state)) {
    return absl::InvalidArgumentError(absl::StrCat("bad state '", f[3], "'"));
  }
  if (state != kTcpListen) return std::nullopt;
  TcpListenRow listener;
  ASSIGN_OR_RETURN(listener.address, ParseHexAddress(f[1], family));
  if (!absl::SimpleAtoi(f[9], &listener.inode) || listener.inode == 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad inode '", f[9], "'"));
  }
  return listener;
}

// The value of `key` in a line of "key: value" and "key:value" tokens, as an
// epoll fdinfo's tfd lines mix them ("tfd:        3 ... pos:0 ino:1983c").
std::optional<absl::string_view> Field(absl::string_view line,
                                       absl::string_view key) {
  std::vector<absl::string_view> tokens =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  for (size_t i = 0; i < tokens.size(); ++i) {
    absl::string_view token = tokens[i];
    if (!absl::ConsumePrefix(&token, key) || !absl::ConsumePrefix(&token, ":"))
      continue;
    if (!token.empty()) return token;
    if (i + 1 < tokens.size()) return tokens[i + 1];
  }
  return std::nullopt;
}

// The number in "<prefix>[N]".
bool BracketedNumber(absl::string_view link, absl::string_view prefix,
                     uint64_t* out) {
  return absl::ConsumePrefix(&link, prefix) &&
         absl::ConsumePrefix(&link, "[") && absl::ConsumeSuffix(&link, "]") &&
         !link.empty() && absl::ascii_isdigit(link.front()) &&
         absl::SimpleAtoi(link, out);
}

// Listening sockets of one namespace by inode.
using ListenTable = std::map<uint64_t, ListenAddress>;

// What one process of the instance holds.
struct ProcessSockets {
  int32_t pid = 0;
  bool worker = false;  // its epoll sets were read
  uint64_t netns = 0;
  std::map<uint64_t, int> socket_fds;  // socket inode -> its lowest fd
  std::set<uint64_t> epoll_inodes;     // files in its epoll sets
};

// ENOENT/ESRCH while reading: the process (or fd) went away mid-read.
bool Gone(const absl::Status& status) {
  return absl::IsNotFound(status) ||
         absl::StrContains(status.message(), std::strerror(ESRCH));
}

// A /proc link's text. Only its start matters ("socket:[", "net:["), so a
// long file path may be cut.
absl::StatusOr<std::string> ReadLinkText(const std::string& path) {
  char buf[256];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  if (n < 0) return LastErrnoStatus(path);
  return std::string(buf, static_cast<size_t>(n));
}

// `result`'s value, or nullopt: reported in `errors` (after `path`, when
// given) unless the file went away with its process or fd.
template <typename T>
std::optional<T> Value(absl::StatusOr<T> result,
                       std::vector<std::string>* errors,
                       absl::string_view path = "") {
  if (result.ok()) return *std::move(result);
  if (Gone(result.status())) return std::nullopt;
  errors->push_back(path.empty()
                        ? std::string(result.status().message())
                        : absl::StrCat(path, ": ", result.status().message()));
  return std::nullopt;
}

void AddErrors(const std::string& path, const std::vector<std::string>& found,
               std::vector<std::string>* errors) {
  for (const std::string& error : found) errors->push_back(path + ": " + error);
}

// The files in the epoll set of `dir`/fd/`fd`.
void ReadEpoll(const std::string& dir, const std::string& fd,
               ProcessSockets* process, std::vector<std::string>* errors) {
  const std::string path = JoinPath(dir, absl::StrCat("fdinfo/", fd));
  std::optional<std::string> text = Value(ReadTextFile(path), errors);
  if (!text) return;
  EpollSet set = ParseEpollFdinfo(*text);
  AddErrors(path, set.errors, errors);
  for (const EpollTarget& target : set.targets) {
    process->epoll_inodes.insert(target.inode);
  }
}

// One fd: a socket is recorded, a worker's epoll set read. An fd closed
// since the listing is skipped (workers open and close client sockets all
// the time).
void ReadFd(const std::string& dir, const std::string& fd,
            ProcessSockets* process, std::vector<std::string>* errors) {
  int number = 0;
  if (!absl::SimpleAtoi(fd, &number)) return;
  const std::string path = JoinPath(dir, absl::StrCat("fd/", fd));
  std::optional<std::string> text = Value(ReadLinkText(path), errors);
  if (!text) return;
  std::optional<FdLink> link = Value(ParseFdLink(*text), errors, path);
  if (!link) return;
  if (link->kind == FdLink::Kind::kSocket) {
    auto [it, added] = process->socket_fds.emplace(link->inode, number);
    if (!added) it->second = std::min(it->second, number);
  } else if (link->kind == FdLink::Kind::kEpoll && process->worker) {
    ReadEpoll(dir, fd, process, errors);
  }
}

// nullopt: the process is gone or its namespace unreadable (reported).
absl::StatusOr<std::optional<ProcessSockets>> ReadProcess(
    const std::string& procfs_root, int32_t pid, bool worker,
    std::vector<std::string>* errors) {
  const std::string dir = JoinPath(procfs_root, absl::StrCat(pid));
  ProcessSockets process;
  process.pid = pid;
  process.worker = worker;
  const std::string ns_path = JoinPath(dir, "ns/net");
  absl::StatusOr<std::string> ns = ReadLinkText(ns_path);
  absl::StatusOr<std::vector<std::string>> fds =
      ListDirectory(JoinPath(dir, "fd"));
  // Without the right to inspect nginx (not root, Yama, an LSM) no process
  // can be read: the caller says why the feature is down.
  for (const absl::Status& status : {ns.status(), fds.status()}) {
    if (absl::IsPermissionDenied(status)) return status;
  }
  std::optional<std::string> ns_link = Value(std::move(ns), errors);
  std::optional<uint64_t> netns =
      ns_link ? Value(ParseNetNsLink(*ns_link), errors, ns_path) : std::nullopt;
  std::optional<std::vector<std::string>> names = Value(std::move(fds), errors);
  if (!netns || !names) return std::nullopt;
  process.netns = *netns;
  for (const std::string& fd : *names) ReadFd(dir, fd, &process, errors);
  return process;
}

// The LISTEN sockets of `pid`'s namespace from its net/tcp and net/tcp6;
// nullopt when the process went away first.
std::optional<ListenTable> ReadListenTable(const std::string& procfs_root,
                                           int32_t pid,
                                           std::vector<std::string>* errors) {
  ListenTable table;
  for (int family : {AF_INET, AF_INET6}) {
    const std::string path = JoinPath(
        procfs_root,
        absl::StrCat(pid, family == AF_INET ? "/net/tcp" : "/net/tcp6"));
    absl::StatusOr<std::string> read = ReadTextFile(path, kMaxTcpTableBytes);
    // No tcp6 in a namespace of a kernel without IPv6.
    if (family == AF_INET6 && absl::IsNotFound(read.status())) break;
    std::optional<std::string> text = Value(std::move(read), errors);
    if (!text) return std::nullopt;
    TcpTable rows = ParseTcpTable(*text, family);
    AddErrors(path, rows.errors, errors);
    for (const TcpListenRow& row : rows.listeners) {
      table[row.inode] = row.address;
    }
  }
  return table;
}

// The worker whose epoll set holds `inode`: 0 when none or several do.
int32_t OwnerOf(uint64_t inode, const std::vector<ProcessSockets>& processes) {
  int32_t owner = 0;
  for (const ProcessSockets& process : processes) {
    if (!process.worker || !process.epoll_inodes.contains(inode)) continue;
    if (owner != 0) return 0;
    owner = process.pid;
  }
  return owner;
}

// Where to duplicate a socket from, among (pid -> fd) of its holders.
void ChooseDup(const std::map<int32_t, int>& holders, int32_t master,
               GroupSocket* socket) {
  auto from = holders.find(master);
  if (from == holders.end()) from = holders.find(socket->owner_pid);
  if (from == holders.end()) from = holders.begin();
  socket->dup_pid = from->first;
  socket->dup_fd = from->second;
}

std::vector<ListenGroup> Group(const std::vector<ProcessSockets>& processes,
                               const std::map<uint64_t, ListenTable>& tables,
                               int32_t master) {
  // key -> inode -> holder pid -> fd
  std::map<ListenKey, std::map<uint64_t, std::map<int32_t, int>>> found;
  for (const ProcessSockets& process : processes) {
    auto table = tables.find(process.netns);
    if (table == tables.end()) continue;
    for (const auto& [inode, fd] : process.socket_fds) {
      auto address = table->second.find(inode);
      if (address == table->second.end()) continue;  // not a TCP listener
      found[{process.netns, address->second}][inode][process.pid] = fd;
    }
  }
  std::vector<ListenGroup> groups;
  for (const auto& [key, sockets] : found) {
    ListenGroup& group = groups.emplace_back();
    group.key = key;
    for (const auto& [inode, holders] : sockets) {
      GroupSocket& socket = group.sockets.emplace_back();
      socket.inode = inode;
      socket.owner_pid = OwnerOf(inode, processes);
      ChooseDup(holders, master, &socket);
    }
  }
  return groups;
}

}  // namespace

std::string ListenAddressString(const ListenAddress& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  inet_ntop(address.family, address.bytes.data(), text, sizeof(text));
  return address.family == AF_INET6
             ? absl::StrCat("[", text, "]:", address.port)
             : absl::StrCat(text, ":", address.port);
}

TcpTable ParseTcpTable(absl::string_view text, int family) {
  TcpTable table;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || (number == 1 && absl::StartsWith(line, "sl"))) {
      continue;  // the header names the columns
    }
    absl::StatusOr<std::optional<TcpListenRow>> row = ParseTcpRow(line, family);
    if (!row.ok()) {
      table.errors.push_back(
          absl::StrCat("line ", number, ": ", row.status().message()));
    } else if (row->has_value()) {
      table.listeners.push_back(**row);
    }
  }
  return table;
}

EpollSet ParseEpollFdinfo(absl::string_view text) {
  EpollSet set;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    // The other lines (pos, flags, mnt_id, the epoll's own ino) are about
    // the epoll file itself.
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "tfd:")) {
      continue;
    }
    std::optional<absl::string_view> fd = Field(line, "tfd");
    std::optional<absl::string_view> inode = Field(line, "ino");
    EpollTarget target;
    if (!fd || !inode || !absl::SimpleAtoi(*fd, &target.fd) ||
        !ParseHex(*inode, 0, &target.inode)) {
      set.errors.push_back(absl::StrCat("line ", number, ": bad tfd line '",
                                        absl::StripAsciiWhitespace(line),
                                        "' (want 'tfd: N ... ino:HEX')"));
      continue;
    }
    set.targets.push_back(target);
  }
  return set;
}

absl::StatusOr<FdLink> ParseFdLink(absl::string_view link) {
  FdLink out;
  if (link == "anon_inode:[eventpoll]") out.kind = FdLink::Kind::kEpoll;
  if (!absl::StartsWith(link, "socket:")) return out;
  if (!BracketedNumber(link, "socket:", &out.inode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad socket link '", link, "'"));
  }
  out.kind = FdLink::Kind::kSocket;
  return out;
}

absl::StatusOr<uint64_t> ParseNetNsLink(absl::string_view link) {
  uint64_t inode = 0;
  if (!BracketedNumber(link, "net:", &inode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad network namespace link '", link, "'"));
  }
  return inode;
}

absl::StatusOr<std::vector<ListenGroup>> ReadListenGroups(
    const std::string& procfs_root, const NginxInstance& instance,
    std::vector<std::string>* errors) {
  // The master first, then the workers; a pid listed twice is read once.
  std::vector<int32_t> pids = {instance.master_pid};
  std::set<int32_t> workers(instance.worker_pids.begin(),
                            instance.worker_pids.end());
  for (int32_t pid : workers) {
    if (pid != instance.master_pid) pids.push_back(pid);
  }
  std::vector<ProcessSockets> processes;
  std::map<uint64_t, ListenTable> tables;  // by netns
  for (int32_t pid : pids) {
    ASSIGN_OR_RETURN(
        std::optional<ProcessSockets> process,
        ReadProcess(procfs_root, pid, workers.contains(pid), errors));
    if (!process) continue;
    // A namespace's table is read through the first of its processes that
    // is still there.
    if (!tables.contains(process->netns)) {
      std::optional<ListenTable> table =
          ReadListenTable(procfs_root, pid, errors);
      if (!table) continue;
      tables[process->netns] = *std::move(table);
    }
    processes.push_back(*std::move(process));
  }
  return Group(processes, tables, instance.master_pid);
}

}  // namespace locus
