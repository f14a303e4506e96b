#!/usr/bin/python3
"""Soak of locusd's socket under attack, on loopback and private paths only.

Starts a dry-run locusd (its socket, journal and policy in a temporary
directory, listening on 127.0.0.1:PORT too, with the systemd default soft
limit of 1024 descriptors), then for --seconds at once:
  - slot hogs: TCP clients, each from its own 127.0.0.X, that open
    Subscribe streams with a flow-control window of 0 (they answer PINGs,
    never read), reopening when dropped; they start 2 s ahead;
  - idle connections: --idle TCP connections from 200 addresses that say
    nothing;
  - PING bursts (20,000 PINGs in one write; the next as soon as all are
    acked or the server closed) and RST bursts (HEADERS then RST_STREAM,
    5,000 streams), one connection each, back to back;
while root's `locusctl watch --json` reads every tick over the Unix socket.
Prints RSS max, descriptors max against the limit, root's watch (ticks
seen, longest tick, overruns) and what the hub and server refused.

Usage: tests/bench/socket_soak.py BUILD_DIR [--seconds=60] [--idle=1100]
Needs root (locusd loads BPF) and Debian's python3-h2 (hence /usr/bin/python3).
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBSCRIBE = "/locus.v1.Agent/Subscribe"
GRPC_EMPTY = b"\x00\x00\x00\x00\x00"  # an empty SubscribeRequest, framed


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def h2_connect(port, window=65535, source="127.0.0.1"):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                    source_address=(source, 0))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
    sock.sendall(conn.data_to_send())
    return sock, conn


def grpc_headers(port, path):
    return [(":method", "POST"), (":scheme", "http"), (":path", path),
            (":authority", f"127.0.0.1:{port}"), ("content-type", "application/grpc"),
            ("te", "trailers")]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n


def slot_hog(port, source, stop, stats):
    """Holds a Subscribe stream with a window of 0; acks PINGs; reopens."""
    while not stop.is_set():
        try:
            sock, conn = h2_connect(port, window=0, source=source)
            sid = conn.get_next_available_stream_id()
            conn.send_headers(sid, grpc_headers(port, SUBSCRIBE))
            conn.send_data(sid, GRPC_EMPTY, end_stream=True)
            sock.sendall(conn.data_to_send())
            stats.add("hog streams opened")
            sock.settimeout(1)
            while not stop.is_set():
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    break
                for ev in conn.receive_data(data):  # h2 acks PINGs itself
                    if isinstance(ev, h2.events.StreamEnded):
                        stats.add("hog streams ended by the server")
                    if isinstance(ev, h2.events.TrailersReceived):
                        status = dict((k.decode(), v.decode()) for k, v in ev.headers)
                        stats.add("hog refused/ended: grpc-status " +
                                  status.get("grpc-status", "?"))
                    if isinstance(ev, h2.events.ConnectionTerminated):
                        stats.add("hog connections closed by GOAWAY")
                sock.sendall(conn.data_to_send())
            sock.close()
        except OSError:
            stats.add("hog connections refused or closed")
            time.sleep(0.2)


def drain(sock, conn, acks_wanted):
    """Reads until the server closes, 2 s pass in silence, or every PING is
    acked (so that a server which acks rather than closes gets the next
    burst at once, not 2 s later); returns the acks read."""
    acks = 0
    sock.settimeout(2)
    try:
        while acks_wanted == 0 or acks < acks_wanted:
            data = sock.recv(65536)
            if not data:
                break
            for ev in conn.receive_data(data):
                if isinstance(ev, h2.events.PingAckReceived):
                    acks += 1
    except (OSError, h2.exceptions.ProtocolError):
        pass
    return acks


def burst(port, stop, stats, kind):
    """One connection per burst: 20,000 PINGs, or 5,000 HEADERS+RST_STREAM."""
    while not stop.is_set():
        try:
            sock, conn = h2_connect(port)
            frames = bytearray(conn.data_to_send())
            if kind == "ping":
                for i in range(20000):
                    conn.ping(i.to_bytes(8, "big"))
            else:
                headers = grpc_headers(port, "/locus.v1.Agent/GetStatus")
                for _ in range(5000):
                    sid = conn.get_next_available_stream_id()
                    conn.send_headers(sid, headers)
                    conn.reset_stream(sid)
                    frames += conn.data_to_send()
            frames += conn.data_to_send()
            try:
                sock.sendall(frames)
            except OSError:
                pass  # closed by the server mid-burst (GOAWAY)
            stats.add(f"{kind} bursts")
            acks = drain(sock, conn, 20000 if kind == "ping" else 0)
            if kind == "ping":
                stats.add("ping acks", acks)
            sock.close()
        except OSError:
            stats.add(f"{kind} connect errors")
            time.sleep(0.2)


def idle_connections(port, count, stop, stats):
    held = []
    for i in range(count):
        source = f"127.0.1.{i % 200 + 1}"  # 200 peers
        try:
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5,
                                                 source_address=(source, 0)))
        except OSError:
            stats.add("idle connect errors")
    stats.add("idle connections opened", len(held))
    stop.wait()
    closed = 0
    for s in held:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    stats.add("idle connections the server closed", closed)


def sample(pid, stop, out):
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        out["rss_kb"] = max(out["rss_kb"], int(line.split()[1]))
                        out["rss_last_kb"] = int(line.split()[1])
            out["fds"] = max(out["fds"], len(os.listdir(f"/proc/{pid}/fd")))
        except (OSError, ValueError):
            pass
        time.sleep(0.1)


def watch(locusctl, sock_path, out):
    proc = subprocess.Popen([locusctl, f"--socket={sock_path}", "watch", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out["proc"] = proc
    for line in proc.stdout:
        m = json.loads(line)
        out["ticks"] += 1
        out["max_tick_ns"] = max(out["max_tick_ns"], int(m.get("tick_duration_ns", 0)))
        out["overruns"] = int(m.get("overruns_total", 0))
        out["dropped"] = int(m.get("drops", {}).get("subscriber_dropped_total", 0))
    out["stderr"] = proc.stderr.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--idle", type=int, default=1100)
    ap.add_argument("--hogs", type=int, default=40)
    ap.add_argument("--bursts", default="ping,rst", help="ping, rst, both or none")
    args = ap.parse_args()
    locusd = os.path.join(args.build, "agent/main/locusd")
    locusctl = os.path.join(args.build, "agent/ctl/locusctl")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # for the clients
    tmp = tempfile.mkdtemp(prefix="locus-soak.")
    port = free_port()
    sock_path = os.path.join(tmp, "locusd.sock")
    log = open(os.path.join(tmp, "locusd.log"), "w")
    daemon = subprocess.Popen(
        [locusd, f"--socket={sock_path}", f"--journal={tmp}/journal",
         f"--policy={tmp}/policy.yaml", "--mode=dry_run",
         f"--listen_tcp=127.0.0.1:{port}",
         f"--sysfs_root={REPO}/tests/fixtures/split2/sys"],
        stdout=log, stderr=log,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard)))
    try:
        for _ in range(100):
            if os.path.exists(sock_path):
                break
            time.sleep(0.1)
        time.sleep(1)
        stop = threading.Event()
        stats = Stats()
        usage = {"rss_kb": 0, "rss_last_kb": 0, "fds": 0}
        seen = {"ticks": 0, "max_tick_ns": 0, "overruns": 0, "dropped": 0}
        threads = [threading.Thread(target=sample, args=(daemon.pid, stop, usage)),
                   threading.Thread(target=watch, args=(locusctl, sock_path, seen)),
                   threading.Thread(target=idle_connections,
                                    args=(port, args.idle, stop, stats))]
        # Each hog from its own loopback address: a peer of its own.
        hogs = [threading.Thread(target=slot_hog,
                                 args=(port, f"127.0.0.{i + 2}", stop, stats))
                for i in range(args.hogs)]
        for t in hogs:
            t.start()
        time.sleep(2)  # the hogs take the slots first
        threads += [threading.Thread(target=burst, args=(port, stop, stats, k))
                    for k in args.bursts.split(",") if k in ("ping", "rst")]
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        status = subprocess.run([locusctl, f"--socket={sock_path}", "watch",
                                 "--count=1", "--json"], capture_output=True,
                                text=True, timeout=20)
        stop.set()
        seen["proc"].terminate() if "proc" in seen else None
        for t in threads + hogs:
            t.join(timeout=30)
        with open(f"/proc/{daemon.pid}/limits") as f:
            nofile = [l for l in f if l.startswith("Max open files")][0].split()[3]
        kinds = " and ".join(k.upper() for k in args.bursts.split(",")
                             if k in ("ping", "rst")) or "no"
        print(f"attack: {args.seconds} s, {args.hogs} slot hogs, {args.idle} idle "
              f"connections, {kinds} bursts back to back (loopback)")
        print(f"RSS max {usage['rss_kb'] / 1024:.1f} MiB "
              f"(at the end {usage['rss_last_kb'] / 1024:.1f} MiB; limit 64)")
        print(f"fds max {usage['fds']} of a soft limit of {nofile}")
        print(f"root's watch: {seen['ticks']} ticks, longest tick "
              f"{seen['max_tick_ns'] / 1e6:.2f} ms, overruns_total {seen['overruns']}, "
              f"ticks it lost {seen['dropped']}")
        print(f"root's new watch during the attack: "
              f"{'ok' if status.returncode == 0 else 'FAILED ' + status.stderr.strip()}")
        for key in sorted(stats.counts):
            print(f"  {key}: {stats.counts[key]}")
        print(f"locusd still running: {daemon.poll() is None}")
        with open(os.path.join(tmp, "locusd.log")) as f:
            lines = f.readlines()
        print("locusd log lines with EMFILE:",
              sum("Too many open files" in l for l in lines))
        # Logged at most once a second, with the count so far.
        cut = [l for l in lines if "HTTP/2 rapid reset" in l]
        print("locusd log lines about rapid resets:", len(cut),
              f"(last: {cut[-1].strip()[-80:]})" if cut else "")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
