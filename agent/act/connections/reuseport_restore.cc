#include "agent/act/connections/reuseport_restore.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "common/os_error.h"

namespace locus {
namespace {

// A /proc link's text; a vanished process or fd is NotFound (ErrnoStatus).
absl::StatusOr<std::string> ReadLink(const std::string& path) {
  char buf[256];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  if (n < 0) return ErrnoStatus(path, errno);
  return std::string(buf, static_cast<size_t>(n));
}

// A process that exited while it was read is not worth reporting.
void Report(const absl::Status& status, std::vector<std::string>* errors) {
  if (!absl::IsNotFound(status) && status.code() != absl::StatusCode::kOk) {
    errors->push_back(std::string(status.message()));
  }
}

class ProcListenerFinder : public ListenerFinder {
 public:
  explicit ProcListenerFinder(std::string procfs_root)
      : root_(std::move(procfs_root)) {}

  absl::StatusOr<FoundGroups> Find(const std::set<ListenKey>& keys,
                                   std::vector<std::string>* errors) override {
    absl::StatusOr<std::vector<std::string>> names = ListDirectory(root_);
    if (!names.ok()) return names.status();
    std::set<uint64_t> netns;
    for (const ListenKey& key : keys) netns.insert(key.netns);
    // netns -> its processes, in pid order.
    std::map<uint64_t, std::vector<int32_t>> pids;
    for (const std::string& name : *names) {
      int32_t pid = 0;
      if (!absl::SimpleAtoi(name, &pid)) continue;
      absl::StatusOr<std::string> link =
          ReadLink(JoinPath(root_, absl::StrCat(name, "/ns/net")));
      absl::StatusOr<uint64_t> ns =
          link.ok() ? ParseNetNsLink(*link) : link.status();
      Report(ns.status(), errors);
      if (ns.ok() && netns.contains(*ns)) pids[*ns].push_back(pid);
    }
    FoundGroups found;
    for (const auto& [ns, members] : pids) {
      std::map<uint64_t, ListenKey> wanted =
          Listeners(ns, members, keys, errors);
      for (int32_t pid : members) AddHolder(pid, wanted, &found, errors);
    }
    return found;
  }

 private:
  // inode -> key of the LISTEN sockets of namespace `ns` bound as one of
  // `keys`, from the tables of the first of `pids` that is still there.
  std::map<uint64_t, ListenKey> Listeners(uint64_t ns,
                                          const std::vector<int32_t>& pids,
                                          const std::set<ListenKey>& keys,
                                          std::vector<std::string>* errors) {
    std::map<uint64_t, ListenKey> wanted;
    for (int32_t pid : pids) {
      absl::StatusOr<std::string> tcp = ReadTextFile(
          JoinPath(root_, absl::StrCat(pid, "/net/tcp")), kMaxTcpTableBytes);
      Report(tcp.status(), errors);
      if (!tcp.ok()) continue;
      // No tcp6 in a namespace of a kernel without IPv6.
      absl::StatusOr<std::string> tcp6 = ReadTextFile(
          JoinPath(root_, absl::StrCat(pid, "/net/tcp6")), kMaxTcpTableBytes);
      for (const TcpTable& table :
           {ParseTcpTable(*tcp, AF_INET),
            ParseTcpTable(tcp6.ok() ? *tcp6 : "", AF_INET6)}) {
        for (const TcpListenRow& row : table.listeners) {
          ListenKey key{ns, row.address};
          if (keys.contains(key)) wanted[row.inode] = key;
        }
      }
      break;
    }
    return wanted;
  }

  // The sockets of `wanted` that `pid` holds; the first holder listed of
  // each is the one to duplicate it from, through its lowest fd. An fd
  // closed while it was read is skipped.
  void AddHolder(int32_t pid, const std::map<uint64_t, ListenKey>& wanted,
                 FoundGroups* found, std::vector<std::string>* errors) {
    const std::string dir = JoinPath(root_, absl::StrCat(pid, "/fd"));
    absl::StatusOr<std::vector<std::string>> fds = ListDirectory(dir);
    Report(fds.status(), errors);
    if (!fds.ok() || wanted.empty()) return;
    std::map<uint64_t, int> held;  // inode -> lowest fd
    for (const std::string& name : *fds) {
      int fd = 0;
      if (!absl::SimpleAtoi(name, &fd)) continue;
      absl::StatusOr<std::string> link = ReadLink(JoinPath(dir, name));
      absl::StatusOr<FdLink> parsed =
          link.ok() ? ParseFdLink(*link) : link.status();
      if (!parsed.ok() || parsed->kind != FdLink::Kind::kSocket ||
          !wanted.contains(parsed->inode)) {
        continue;
      }
      auto [it, added] = held.emplace(parsed->inode, fd);
      if (!added && fd < it->second) it->second = fd;
    }
    for (const auto& [inode, fd] : held) {
      std::vector<GroupSocket>& sockets = (*found)[wanted.at(inode)];
      bool known = false;
      for (const GroupSocket& socket : sockets) known |= socket.inode == inode;
      if (!known) sockets.push_back({inode, 0, pid, fd});
    }
  }

  std::string root_;
};

}  // namespace

std::unique_ptr<ListenerFinder> MakeProcListenerFinder(
    const std::string& procfs_root) {
  return std::make_unique<ProcListenerFinder>(procfs_root);
}

}  // namespace locus
