#!/usr/bin/python3
"""Measurements for the lab scenarios, read from the kernel, not from Locus.

  labtool.py pages PID        where PID's pages are, against where it runs
  labtool.py xnode FILE PID.. cross-node migrations per PID in a tracefs dump
  labtool.py get PATH         one field of the JSON object on stdin
  labtool.py moves FILE       Locus's moves per entity in `locusctl watch --json`
                              output, and moves that undid someone else's
  labtool.py adoption FILE PID..  in that output, the first tick listing each
                              PID among the agent's tasks as a worker and
                              the first tick that pinned it
  labtool.py softhome FILE PID  in that output, PID's pins and widenings (s),
                              the least time between two changes of its
                              spill, and page moves of it while widened
  labtool.py pagemoves FILE NODE  in that output, Locus's applied page moves
                              (migrate_pages): how many, MiB moved, those
                              whose leave_nodes do not name NODE, per pid
  labtool.py irqbalance_bans PID  the IRQs on irqbalance PID's ban list (setup)
  labtool.py irqbalance_ban PID IRQ...
                              replaces that list, as an admin does at run time
  labtool.py pintick          the first tick of an applied pin in the
                              `locusctl explain TID --json` on stdin
  labtool.py conns PORT N CPUS ACCESS_LOG
                              N HTTP/1.0 connections to 127.0.0.1:PORT from a
                              process pinned to each CPU of CPUS (a cpulist),
                              joined with nginx's access log ($pid
                              $request_uri): how many reached a worker
                              confined to the client CPU's node; the
                              others by client CPU and worker, with
                              where they fell in that CPU's sequence
  labtool.py threadconns PORT N CPUS PID OUT
                              the same for PID, a server whose answer's body
                              is the index of the thread that served
                              (HAProxy's %[thread]), the i-th of its threads
                              by tid; the clients' lines in OUT
  labtool.py cpusample PID.. one line "MSEC PID:NS ..." of each PID's CPU time
                              (/proc/PID/schedstat) with the wall clock
  labtool.py truth REPORT ACCESS_LOG SAMPLES
                              an experiment's report (`locusctl experiment
                              status --json`) against nginx's access log
                              ($msec $pid $bytes_sent) and the cpusample
                              lines, over the report's measured window:
                              per arm, bytes and CPU seconds as Locus counted
                              them and as nginx and the kernel did, the
                              relative errors, and each worker's share of
                              the requests against 1/N
  labtool.py noise REPORT      the noise an A/A report shows, for the
                              experiment's power model (experiment_power's
                              flags): a worker's own per-interval standard
                              deviation of log work per CPU-second (mean of
                              interval_sd), the workers' lasting spread beyond
                              it, and the intervals' common swing (time_sd)

Each prints `key=value` words a shell can read. Only the standard library:
the guests run this machine's Debian python3.
"""
import array
import glob
import json
import os
import re
import sys
from collections import defaultdict


def read(path):
    with open(path) as f:
        return f.read()


def cpu_nodes():
    """CPU number -> node id, from sysfs."""
    nodes = {}
    for path in glob.glob("/sys/devices/system/node/node[0-9]*"):
        node = int(path.rsplit("node", 1)[1])
        for cpu in parse_cpu_list(read(path + "/cpulist")):
            nodes[cpu] = node
    return nodes


def parse_cpu_list(text):
    cpus = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def pfn_nodes(page_size):
    """(pages per memory block, block index -> node)."""
    block = int(read("/sys/devices/system/memory/block_size_bytes").strip(), 16)
    blocks = {}
    for path in glob.glob("/sys/devices/system/node/node[0-9]*/memory[0-9]*"):
        node = int(re.search(r"/node(\d+)/", path).group(1))
        blocks[int(path.rsplit("memory", 1)[1])] = node
    return block // page_size, blocks


def private_ranges(pid):
    """(start, end) of PID's private writable mappings, where the pages
    move_pages(MPOL_MF_MOVE) may move live ([vdso] and [vvar] aside)."""
    for line in read(f"/proc/{pid}/maps").splitlines():
        fields = line.split()
        perms = fields[1]
        if perms[0] != "r" or perms[1] != "w" or perms[3] != "p":
            continue
        if len(fields) > 5 and fields[5].startswith("[v"):
            continue
        yield tuple(int(x, 16) for x in fields[0].split("-"))


def pages(pid):
    """Where PID's own pages are: present pages mapped by PID alone
    (pagemap's exclusive bit) in its private writable mappings, which are the
    pages move_pages(MPOL_MF_MOVE) may move. Shared library text and pages
    still shared with a parent after fork are not its own to move; they are
    counted apart, from numa_maps, as all_*. anon_by_node: of its own pages,
    the anonymous ones (pagemap bit 61 clear), which its cpuset.mems places (a
    file page it alone maps, a data page of a binary not yet written, sits
    wherever the process that first read it put it); anon_in_mems: their
    share on the nodes it may use (Mems_allowed_list)."""
    page_size = os.sysconf("SC_PAGE_SIZE")
    per_block, blocks = pfn_nodes(page_size)
    node_of_cpu = cpu_nodes()
    run_nodes = sorted({node_of_cpu[c] for c in os.sched_getaffinity(pid)})
    by_node = defaultdict(int)
    anon_by_node = defaultdict(int)
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end in private_ranges(pid):
            count = (end - start) // page_size
            pagemap.seek(start // page_size * 8)
            entries = array.array("Q")
            entries.frombytes(pagemap.read(count * 8))
            for e in entries:
                # bit 63 present, bit 61 file page or shared anonymous, bit
                # 56 exclusively mapped, bits 0-54 PFN
                if e >> 63 and (e >> 56) & 1:
                    node = blocks.get((e & ((1 << 55) - 1)) // per_block, -1)
                    by_node[node] += 1
                    if not (e >> 61) & 1:
                        anon_by_node[node] += 1
    total = sum(by_node.values())
    local = sum(by_node[n] for n in run_nodes)
    all_by_node = defaultdict(int)
    for line in read(f"/proc/{pid}/numa_maps").splitlines():
        for field in line.split()[2:]:
            m = re.fullmatch(r"N(\d+)=(\d+)", field)
            if m:
                all_by_node[int(m.group(1))] += int(m.group(2))
    all_total = sum(all_by_node.values())
    all_local = sum(all_by_node[n] for n in run_nodes)
    mems = set()
    for line in read(f"/proc/{pid}/status").splitlines():
        if line.startswith("Mems_allowed_list:"):
            mems = set(parse_cpu_list(line.split(":", 1)[1].strip()))
    anon_total = sum(anon_by_node.values())
    anon_in_mems = sum(anon_by_node[n] for n in mems)
    fmt = lambda d: ",".join(f"{n}:{d[n]}" for n in sorted(d)) or "-"
    print(f"share={local / total if total else 0:.3f} pages={total} "
          f"by_node={fmt(by_node)} runs_on={','.join(map(str, run_nodes))} "
          f"all_share={all_local / all_total if all_total else 0:.3f} "
          f"all_pages={all_total} all_by_node={fmt(all_by_node)} "
          f"anon_by_node={fmt(anon_by_node)} "
          f"anon_in_mems={anon_in_mems / anon_total if anon_total else 0:.3f}")


def xnode(path, pids):
    """sched_migrate_task events in a tracefs dump whose source and
    destination CPUs are on different nodes, per pid. A move that leaves a
    node the pid may no longer run on (its first wakeup after a pin) is the
    pin taking effect, not the scheduler moving it: counted apart (joined)."""
    node_of_cpu = cpu_nodes()
    wanted = {int(p) for p in pids}
    allowed = {}
    for pid in wanted:
        try:
            allowed[pid] = {node_of_cpu[c] for c in os.sched_getaffinity(pid)}
        except OSError:
            allowed[pid] = set(node_of_cpu.values())
    cross = defaultdict(int)
    within = defaultdict(int)
    joined = 0
    pattern = re.compile(r"sched_migrate_task:.*?\bpid=(\d+)\b.*?"
                         r"\borig_cpu=(\d+)\s+dest_cpu=(\d+)")
    for line in read(path).splitlines():
        m = pattern.search(line)
        if not m:
            continue
        pid, orig, dest = (int(x) for x in m.groups())
        if pid not in wanted:
            continue
        if node_of_cpu.get(orig) == node_of_cpu.get(dest):
            within[pid] += 1
        elif node_of_cpu.get(orig) not in allowed[pid]:
            joined += 1
        else:
            cross[pid] += 1
    print(f"cross={sum(cross.values())} within={sum(within.values())} "
          f"joined={joined} "
          "per_pid=" + (",".join(f"{p}:{cross[p]}" for p in sorted(wanted)) or "-"))


def get(path):
    value = json.load(sys.stdin)
    for part in path.split("."):
        if isinstance(value, list):
            value = [v.get(part) if isinstance(v, dict) else None for v in value]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            value = None
    if isinstance(value, list):
        print(" ".join(str(v) for v in value))
    elif value is not None:
        print(value)


def moves(path):
    """Locus's placement moves per entity (thread pins and IRQ affinity
    changes, reverts included; page migrations are progress, not moves, but
    their target node must never change), and moves of an entity made after
    someone else had changed it."""
    moves = defaultdict(list)       # entity -> target node/cpus, in order
    external = {}                   # entity -> tick of the first external change
    against = []                    # moves after an external change
    mem_targets = defaultdict(set)  # pid -> nodes pages were sent to

    def record(entity, action, tick, placement):
        moves[entity].append(placement)
        if entity in external and tick >= external[entity]:
            against.append(f"{entity}@{tick}")

    for line in read(path).splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        tick = int(m.get("tick", 0))
        for change in m.get("external_changes", []):
            irq = int(change.get("irq", -1))
            entity = f"irq{irq}" if irq >= 0 else f"tid{change.get('tid')}"
            external.setdefault(entity, tick)
        for action in m.get("actions", []):
            if action.get("outcome") != "ACTION_OUTCOME_APPLIED":
                continue
            if "pin_thread" in action:
                p = action["pin_thread"]
                record(f"tid{p['tid']}", action, tick, f"node{p.get('node', 0)}")
            elif "set_irq_affinity" in action:
                p = action["set_irq_affinity"]
                record(f"irq{p['irq']}", action, tick,
                       "cpus" + "-".join(map(str, p.get("cpus", []))))
            elif "migrate_pages" in action:
                p = action["migrate_pages"]
                mem_targets[p["pid"]].add(p.get("to_node", 0))
        for revert in m.get("reverts", []):
            a = revert.get("action", {})
            if "pin_thread" in a:
                record(f"tid{a['pin_thread']['tid']}", a, tick, "revert")
            elif "set_irq_affinity" in a:
                record(f"irq{a['set_irq_affinity']['irq']}", a, tick, "revert")
    most = max((len(v) for v in moves.values()), default=0)
    busiest = ",".join(f"{e}:{len(v)}" for e, v in sorted(moves.items())
                       if len(v) == most and most > 1) or "-"
    mem_flip = ",".join(str(p) for p, nodes in sorted(mem_targets.items())
                        if len(nodes) > 1) or "-"
    print(f"entities={len(moves)} total={sum(len(v) for v in moves.values())} "
          f"max_per_entity={most} busiest={busiest} external={len(external)} "
          f"external_irqs={sum(e.startswith('irq') for e in external)} "
          f"against_external={len(against)} against={','.join(against) or '-'} "
          f"memory_target_changes={mem_flip}")


def pagemoves(path, node):
    """Locus's applied page moves in a metrics stream: their count, the MiB
    they moved, how many leave_nodes lacks `node` (a lower tier's node:
    every move must leave it), and per pid "pid:moves:MiB:to_nodes"; plus
    the reason of the first move that moved pages, for the log."""
    node = int(node)
    count, moved, without, first = 0, 0, 0, ""
    per_pid = defaultdict(lambda: [0, 0, set()])
    for line in read(path).splitlines():
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        for action in m.get("actions", []):
            mp = action.get("migrate_pages")
            if not mp or action.get("outcome") != "ACTION_OUTCOME_APPLIED":
                continue
            count += 1
            b = int(mp.get("moved_bytes", 0))
            moved += b
            if node not in [int(n) for n in mp.get("leave_nodes", [])]:
                without += 1
            p = per_pid[int(mp.get("pid", 0))]
            p[0] += 1
            p[1] += b
            p[2].add(int(mp.get("to_node", 0)))
            if b and not first:
                first = action.get("reason", "").replace(" ", "_")
    print("moves=%d moved_mib=%.1f without_leave=%d per_pid=%s first=%s" % (
        count, moved / 2**20, without,
        ",".join("%d:%d:%.1f:%s" % (pid, n, b / 2**20, "/".join(map(str, sorted(t))))
                 for pid, (n, b, t) in sorted(per_pid.items())) or "-",
        first or "-"))


def adoption(path, pids):
    """Per pid, the tick it first appears among the agent's tasks as a
    worker and the tick of its first applied pin (none: never pinned in the
    file). A worker just forked reads as its master (nginx retitles it a
    moment later, which under emulation can miss a tick's scan): the agent
    cannot place it as a worker before it is one."""
    seen, pinned, times = {}, {}, {}
    dropped = 0
    for line in read(path).splitlines():
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        tick = int(m.get("tick", 0))
        times[tick] = m.get("time", "")
        for task in m.get("tasks", []):
            if task.get("role") == "TASK_ROLE_WORKER":
                seen.setdefault(int(task.get("pid", 0)), tick)
        dropped = int(m.get("drops", {}).get("subscriber_dropped_total", 0))
        for action in m.get("actions", []):
            p = action.get("pin_thread")
            if p and action.get("outcome") == "ACTION_OUTCOME_APPLIED":
                pinned.setdefault(int(p["pid"]), tick)
    words = [f"dropped={dropped if times else '-'}"]
    for pid in (int(p) for p in pids):
        s, p = seen.get(pid), pinned.get(pid)
        words.append(f"{pid}:seen={s if s is not None else '-'}"
                     f",pinned={p if p is not None else '-'}"
                     f",ticks={p - s if s is not None and p is not None else '-'}")
    print(" ".join(words))


def softhome(path, pid):
    """Worker `pid`'s soft home from a metrics stream: each applied pin of
    it, "widen@S" (its spill_node set) or "pin@S" (confined), S seconds
    after the stream's first message; the shortest time between two changes
    of its spill; and how many page moves of it were applied while it was
    widened."""
    pid = int(pid)
    start, widened, events, moved = None, False, [], 0
    for line in read(path).splitlines():
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        t = ts_seconds(m.get("time", "1970-01-01T00:00:00Z"))
        start = t if start is None else start
        kind = None  # one per tick: a pin is one action per thread
        for action in m.get("actions", []):
            if action.get("outcome") != "ACTION_OUTCOME_APPLIED":
                continue
            p, mp = action.get("pin_thread"), action.get("migrate_pages")
            if p and int(p.get("pid", 0)) == pid:
                # proto3 JSON leaves out a spill to node 0; -1 is confined.
                kind = "widen" if int(p.get("spill_node", 0)) >= 0 else "pin"
            if mp and int(mp.get("pid", 0)) == pid and widened:
                moved += 1
        if kind:
            events.append((kind, t - start))
            widened = kind == "widen"
    # A change of its spill: a widening, or the pin that ends one.
    changes = [t for i, (k, t) in enumerate(events)
               if k == "widen" or (i > 0 and events[i - 1][0] == "widen")]
    gaps = [b - a for a, b in zip(changes, changes[1:])]
    print("events=%s changes=%d min_gap=%s moved_while_widened=%d" % (
        ",".join("%s@%.1f" % e for e in events) or "-", len(changes),
        "%.1f" % min(gaps) if gaps else "-", moved))


def pintick():
    """The first tick whose decision applied a pin, from explain's JSON (the
    agent's own record, which a slow metrics subscriber cannot miss). Its
    decisions are notes, as the agent's log words them: "<reason> → pin pid
    P tid T to node N cpus C: applied (...)"."""
    applied = re.compile(r"→ pin pid \d+ tid \d+ to node \d+ .*: applied")
    ticks = [int(d.get("tick", 0)) for d in json.load(sys.stdin).get("decisions", [])
             if applied.search(d.get("note", ""))]
    print(min(ticks) if ticks else "-")


def clients_on(cpu, port, n, out):
    """Child pinned to `cpu`: n connections, each asking for its own path
    /CPU/I, "cpu path body" (or "cpu fail") per line to `out`, body the
    first word of the response's body ("-" when none). The path, not the
    client port, names the connection in nginx's log: the kernel may give a
    port again within one run once its connection has closed."""
    import socket
    os.sched_setaffinity(0, {cpu})
    lines = []
    for i in range(n):
        path = "/%d/%d" % (cpu, i)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"GET %s HTTP/1.0\r\n\r\n" % path.encode())
                reply = b""
                while chunk := s.recv(4096):
                    reply += chunk
                body = reply.partition(b"\r\n\r\n")[2].split()
                lines.append("%d %s %s" % (cpu, path,
                                           body[0].decode() if body else "-"))
        except OSError:
            lines.append("%d fail" % cpu)
    with open(out, "a") as f:
        f.write("\n".join(lines) + "\n")


def worker_node(pid, nodes):
    """The one node `pid`'s CPUs lie on, or -1."""
    try:
        text = read("/proc/%d/status" % pid)
    except OSError:
        return -1
    allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", text).group(1)
    on = {nodes.get(c, -1) for c in parse_cpu_list(allowed)}
    return on.pop() if len(on) == 1 else -1


def connect_from(port, n, cpus, out):
    """n connections from a process pinned to each CPU of `cpus`; their
    lines in `out`."""
    open(out, "w").close()
    children = []
    for cpu in parse_cpu_list(cpus):
        pid = os.fork()
        if pid == 0:
            try:
                clients_on(cpu, port, n, out)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


def tally(out, worker_of):
    """Each client line of `out` against the node of the worker
    `worker_of(path, body)` names (None: not matched)."""
    nodes = cpu_nodes()
    local = remote = failed = unmatched = 0
    node_of = {}
    nth = defaultdict(int)  # connections of each client CPU so far
    # (client CPU, worker) -> the remote connections' places in the CPU's
    # sequence: all at the start is a stale steering map, spread out a SYN
    # handled on another CPU.
    remote_at = defaultdict(list)
    for line in read(out).split("\n"):
        f = line.split()
        if len(f) < 2:
            continue
        cpu = int(f[0])
        nth[cpu] += 1
        if f[1] == "fail":
            failed += 1
            continue
        worker = worker_of(f[1], f[2] if len(f) > 2 else "-")
        if worker is None:
            unmatched += 1
            continue
        if worker not in node_of:
            node_of[worker] = worker_node(worker, nodes)
        if node_of[worker] == nodes.get(cpu):
            local += 1
        else:
            remote += 1
            remote_at[(cpu, worker)].append(nth[cpu] - 1)
    seen = local + remote
    by = ",".join("cpu%d>%d@node%d:%d[%d-%d]" % (cpu, w, node_of[w], len(at),
                                                 at[0], at[-1])
                  for (cpu, w), at in sorted(remote_at.items()))
    print("local=%d remote=%d failed=%d unmatched=%d share=%.4f remote_by=%s"
          % (local, remote, failed, unmatched, local / seen if seen else 0,
             by or "-"))


def conns(port, n, cpus, access_log):
    out = access_log + ".clients"
    open(access_log, "w").close()
    connect_from(port, n, cpus, out)
    served = {}
    for line in read(access_log).split("\n"):
        f = line.split()
        if len(f) == 2 and f[0].isdigit() and f[1].startswith("/"):
            served[f[1]] = int(f[0])
    tally(out, lambda path, body: served.get(path))


def threadconns(port, n, cpus, pid, out):
    """As conns, for a server that answers with the index of the thread that
    served (HAProxy: `lf-string "%[thread]"`): index i is the i-th of PID's
    threads by tid (HAProxy starts thread i after thread i - 1, and a tid is
    the lowest free number)."""
    tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    connect_from(port, n, cpus, out)

    def worker_of(path, body):
        return tids[int(body)] if body.isdigit() and int(body) < len(tids) \
            else None
    tally(out, worker_of)


def cpusample(pids):
    import time
    parts = []
    for pid in pids:
        try:
            parts.append("%s:%s" % (pid, read("/proc/%s/schedstat" % pid).split()[0]))
        except (OSError, IndexError):
            pass
    print("%d %s" % (int(time.time() * 1000), " ".join(parts)))


def ts_seconds(stamp):
    """RFC 3339 (protobuf's JSON Timestamp) to Unix seconds."""
    from datetime import datetime
    stamp = stamp.rstrip("Z")
    frac = 0.0
    if "." in stamp:
        stamp, digits = stamp.split(".")
        frac = float("0." + digits)
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=__import__("datetime").timezone.utc).timestamp() + frac


def cpu_at(samples, pid, t, field=0):
    """pid's CPU ns (field 1: run-queue wait ns) at Unix time t, linear
    between the samples around it."""
    points = [(ms / 1000.0, v[pid][field]) for ms, v in samples if pid in v]
    before = [p for p in points if p[0] <= t]
    after = [p for p in points if p[0] >= t]
    if not before or not after:
        return None
    (t0, v0), (t1, v1) = before[-1], after[0]
    return v0 if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def hist_quantile(times_us, q):
    """The q-quantile of TIMES_US as the report takes its own: binned as
    the work sensor bins service times (bpf/include/locus/work.h: 16
    buckets per power of two of microseconds) and read linearly within the
    bucket that holds it (policy/experiment_latency.cc's Quantile), so that
    the two measures of the same requests are compared, not two ways of
    taking a quantile."""
    sub_bits, max_msb = 4, 29
    sub = 1 << sub_bits
    last = ((max_msb - sub_bits + 2) << sub_bits) - 1

    def low(i):
        return i if i < sub else (sub + i % sub) * 2.0 ** (i // sub - 1)

    def high(i):
        if i < sub:
            return i + 1
        return 2 * low(i) if i >= last else low(i) + 2.0 ** (i // sub - 1)

    counts = defaultdict(int)
    for us in times_us:
        us = int(us)
        if us < sub:
            i = us
        else:
            msb = us.bit_length() - 1
            i = min(last, (msb - sub_bits + 1) * sub +
                    (us >> (msb - sub_bits)) - sub)
        counts[i] += 1
    rank, below = q * len(times_us), 0
    for i in sorted(counts):
        if below + counts[i] >= rank:
            return low(i) + (rank - below) / counts[i] * (high(i) - low(i))
        below += counts[i]
    return 0


def truth(report_path, access_log, samples_path):
    report = json.load(open(report_path))
    start = ts_seconds(report["started"])
    # Each worker's first burn_in intervals are left out of its totals:
    # the window starts after them (every unit here was there from the
    # start).
    burn = int(report.get("burn_in", 0))
    if 0 < burn <= len(report["series"]):
        start = ts_seconds(report["series"][burn - 1]["end"])
    end = ts_seconds(report["series"][-1]["end"])
    arm = {int(u["pid"]): u["arm"] for u in report["units"]}
    samples = []
    for line in read(samples_path).split("\n"):
        f = line.split()
        if not f:
            continue
        # pid:cpu_ns:wait_ns (schedstat's first two fields)
        samples.append((int(f[0]), {int(p): (int(v), int(w)) for p, v, w in
                                    (x.split(":") for x in f[1:])}))
    logged = defaultdict(int)
    requests = defaultdict(int)
    times = defaultdict(list)  # nginx's $request_time, seconds (ms steps)
    host_bytes = 0  # every request from the start, as the report's host
    started = ts_seconds(report["started"])
    for line in read(access_log).split("\n"):
        f = line.split()
        if len(f) != 4:
            continue
        t, pid, sent = float(f[0]), int(f[1]), int(f[2])
        if started <= t <= end:
            host_bytes += sent
        if start <= t <= end:
            logged[pid] += sent
            requests[pid] += 1
            times[pid].append(float(f[3]))
    out = []
    for a in ("EXPERIMENT_ARM_TREATED", "EXPERIMENT_ARM_CONTROL"):
        pids = [p for p, x in arm.items() if x == a]
        units = [u for u in report["units"] if u["arm"] == a]
        locus_bytes = sum(int(u.get("bytes_sent", 0)) for u in units)
        locus_cpu = sum(float(u.get("cpu_seconds", 0)) for u in units)
        log_bytes = sum(logged[p] for p in pids)
        kernel_cpu = kernel_wait = 0.0
        for p in pids:
            c0, c1 = cpu_at(samples, p, start), cpu_at(samples, p, end)
            w0, w1 = cpu_at(samples, p, start, 1), cpu_at(samples, p, end, 1)
            if c0 is not None and c1 is not None:
                kernel_cpu += (c1 - c0) / 1e9
                kernel_wait += (w1 - w0) / 1e9
        name = a.split("_")[-1].lower()
        arm_times = sorted(x for p in pids for x in times[p])
        figures = report.get(name + "_figures", {})
        for q, key in ((0.5, "p50"), (0.99, "p99")):
            log_q = arm_times[min(len(arm_times) - 1, int(q * len(arm_times)))] \
                if arm_times else 0
            # _err: against the log's times binned as the report bins its
            # own; 1 where the log reads 0 (it cannot resolve them).
            log_hist = hist_quantile([x * 1e6 for x in arm_times], q)
            locus_us = float(figures.get(key + "_us", 0))
            out.append("%s_%s_us=%.0f %s_%s_log_us=%.0f %s_%s_log_binned_us=%.0f "
                       "%s_%s_err=%.4f" % (
                           name, key, locus_us, name, key, log_q * 1e6, name,
                           key, log_hist, name, key,
                           abs(locus_us - log_hist) / log_hist if log_q else 1))
        # Run-queue wait per CPU-second, against schedstat's over the window.
        wait = float(figures.get("wait_per_cpu_second", 0))
        kernel = kernel_wait / kernel_cpu if kernel_cpu else 0
        out.append("%s_wait=%.4f %s_kernel_wait=%.4f %s_wait_err=%.4f" % (
            name, wait, name, kernel, name,
            abs(wait - kernel) / kernel if kernel else 1))
        out.append("%s_bytes=%d %s_log_bytes=%d %s_bytes_err=%.4f "
                   "%s_cpu=%.3f %s_kernel_cpu=%.3f %s_cpu_err=%.4f" % (
                       name, locus_bytes, name, log_bytes, name,
                       abs(locus_bytes - log_bytes) / log_bytes if log_bytes else 1,
                       name, locus_cpu, name, kernel_cpu, name,
                       abs(locus_cpu - kernel_cpu) / kernel_cpu if kernel_cpu else 1))
    total = sum(requests[p] for p in arm)
    fair = 1.0 / len(arm) if arm else 0
    skew = max((abs(requests[p] / total / fair - 1) for p in arm), default=1) \
        if total else 1
    out.append("requests=%d request_skew=%.4f window=%.1f" % (total, skew, end - start))
    # The whole host's bytes per wall-second, against the access log's.
    locus_rate = float(report.get("host_bytes_per_second", 0))
    log_rate = host_bytes / (end - started) if end > started else 0
    out.append("host_bytes_per_s=%.0f host_log_bytes_per_s=%.0f "
               "host_bytes_err=%.4f host_cpu_busy=%.3f" % (
                   locus_rate, log_rate,
                   abs(locus_rate - log_rate) / log_rate if log_rate else 1,
                   float(report.get("host_cpu_busy", -1))))
    print(" ".join(out))


def noise(report_path):
    import math
    report = json.load(open(report_path))
    units = [u for u in report.get("units", []) if int(u.get("intervals", 0)) > 1]
    sds = [float(u.get("interval_sd", 0)) for u in units]
    logs = [math.log(float(u["bytes_per_cpu_second"])) for u in units
            if float(u.get("bytes_per_cpu_second", 0)) > 0]
    k = sum(int(u["intervals"]) for u in units) / len(units) if units else 0
    if len(logs) < 2 or not k:
        print("units=%d" % len(units))
        return
    mean = sum(logs) / len(logs)
    spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    interval_sd = sum(sds) / len(sds)
    worker_sd = math.sqrt(max(0.0, spread ** 2 - interval_sd ** 2 / k))
    # The burn-in's intervals are the arms' transition, no steady state.
    burn_in = int(report.get("burn_in", 0))
    arms = [math.log(float(i["control_bytes_per_cpu_second"]))
            for i in report.get("series", [])[burn_in:]
            if float(i.get("control_bytes_per_cpu_second", 0)) > 0]
    time_sd = 0.0
    if len(arms) > 1:
        m = sum(arms) / len(arms)
        time_sd = math.sqrt(sum((x - m) ** 2 for x in arms) / (len(arms) - 1))
    print("units=%d intervals=%.0f interval_sd=%.4f unit_sd=%.4f worker_sd=%.4f "
          "time_sd=%.4f" % (len(units), k, interval_sd, spread, worker_sd, time_sd))


def irqbalance_ask(pid, command):
    """irqbalance's answer to COMMAND on its control socket (root only: the
    request carries our credentials). irqbalance answers between its scans
    (every 10 s by default, longer under TCG), and one started from a shell
    dies of SIGPIPE if the client hangs up first: the wait covers three scans
    rather than give up early, and a timeout is one line on stderr and exit
    status 2, never a hang."""
    import socket
    import struct
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(f"/run/irqbalance/irqbalance{pid}.sock")
    creds = struct.pack("iII", os.getpid(), os.geteuid(), os.getegid())
    sock.sendmsg([command.encode()],
                 [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])
    reply = b""
    try:
        while chunk := sock.recv(4096):
            reply += chunk
    except socket.timeout:
        print(f"irqbalance (pid {pid}) did not answer within 30 s",
              file=sys.stderr)
        sys.exit(2)
    return reply.decode()


def irqbalance_bans(pid):
    """The IRQs on irqbalance's ban list, as its `setup` reply lists them."""
    words = irqbalance_ask(pid, "setup").split()
    irqs = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "IRQ"]
    print(" ".join(sorted(irqs, key=int)) or "-")


def main(argv):
    if len(argv) >= 2 and argv[0] == "pages":
        pages(int(argv[1]))
    elif len(argv) >= 2 and argv[0] == "xnode":
        xnode(argv[1], argv[2:])
    elif len(argv) == 2 and argv[0] == "get":
        get(argv[1])
    elif len(argv) == 2 and argv[0] == "moves":
        moves(argv[1])
    elif argv == ["pintick"]:
        pintick()
    elif len(argv) == 5 and argv[0] == "conns":
        conns(int(argv[1]), int(argv[2]), argv[3], argv[4])
    elif len(argv) == 6 and argv[0] == "threadconns":
        threadconns(int(argv[1]), int(argv[2]), argv[3], int(argv[4]), argv[5])
    elif len(argv) >= 2 and argv[0] == "cpusample":
        cpusample(argv[1:])
    elif len(argv) == 2 and argv[0] == "noise":
        noise(argv[1])
    elif len(argv) == 4 and argv[0] == "truth":
        truth(argv[1], argv[2], argv[3])
    elif len(argv) == 2 and argv[0] == "irqbalance_bans":
        irqbalance_bans(int(argv[1]))
    elif len(argv) >= 3 and argv[0] == "irqbalance_ban":
        irqbalance_ask(int(argv[1]), "settings ban irqs " + " ".join(argv[2:]))
    elif len(argv) == 3 and argv[0] == "softhome":
        softhome(argv[1], argv[2])
    elif len(argv) == 3 and argv[0] == "pagemoves":
        pagemoves(argv[1], argv[2])
    elif len(argv) >= 2 and argv[0] == "adoption":
        adoption(argv[1], argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
