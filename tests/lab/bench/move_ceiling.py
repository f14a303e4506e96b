#!/usr/bin/python3
"""How fast can pages move between nodes in this guest, by anyone?

Run inside a lab guest with 2 nodes, as root, e.g.:

  tests/lab/guest.sh --build build -- tests/lab/bench/move_ceiling.py build [MIB] [--ceiling]

For each way of moving, a fresh lab_memhog first-touches MIB (600) MiB on
node 1 and then keeps using it from node 0, as in converge.sh; printed: the
time each way took on all its private writable pages, what is on node 0
afterwards, and MB/s:

  move_pages N    move_pages(2) on N pages per call, back to back, no
                  lookups: the most any mover built on it can do
  lookup+move     Locus's way: move_pages without nodes on 256 pages at a
                  time to find the pages on node 1, then moves of 4096
                  (pages the lookup does not find there wait for a later
                  pass, as in Locus)
  migratepages    numactl's migratepages (migrate_pages(2), numad's way;
                  its exec is timed too)

With --ceiling only "move_pages 4096" runs (the single-threaded bare
ceiling Locus's moves of 4096 pages are held to), followed by a line
"ceiling_s SECONDS" for the convergence benchmark (case.sh).

The lookups are also shown apart; the process start is not timed. NUMA balancing
is off. Only the standard library: the guests run this machine's python3.
"""
import ctypes
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import labtool  # noqa: E402  (tests/lab, beside this directory)

SYS_MOVE_PAGES = 279  # x86_64
MPOL_MF_MOVE = 2

libc = ctypes.CDLL(None, use_errno=True)
page_size = os.sysconf("SC_PAGE_SIZE")


def move_pages(pid, addrs, node):
    """Status per page; node None only looks up where each page is."""
    n = len(addrs)
    pages = (ctypes.c_void_p * n)(*addrs)
    nodes = (ctypes.c_int * n)(*([node] * n)) if node is not None else None
    status = (ctypes.c_int * n)()
    if libc.syscall(SYS_MOVE_PAGES, pid, ctypes.c_ulong(n), pages, nodes,
                    status, MPOL_MF_MOVE) < 0:
        sys.exit(f"move_pages: {os.strerror(ctypes.get_errno())}")
    return list(status)


def private_pages(pid):
    return [a for start, end in labtool.private_ranges(pid)
            for a in range(start, end, page_size)]


# Each way returns the seconds it spent looking pages up.
def by_batches(pid, addrs, batch):
    for i in range(0, len(addrs), batch):
        move_pages(pid, addrs[i:i + batch], 0)
    return 0.0


def lookup_and_move(pid, addrs):
    lookups, batch = 0.0, []
    for i in range(0, len(addrs), 256):
        chunk = addrs[i:i + 256]
        start = time.monotonic()
        status = move_pages(pid, chunk, None)
        lookups += time.monotonic() - start
        batch += [a for a, s in zip(chunk, status) if s > 0]
        if len(batch) >= 4096:
            move_pages(pid, batch, 0)
            batch = []
    if batch:
        move_pages(pid, batch, 0)
    return lookups


def migratepages(pid, addrs):
    del addrs  # the kernel walks the process itself
    subprocess.run(["migratepages", str(pid), "1", "0"], check=True)
    return 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ceiling_only = "--ceiling" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--ceiling"]
    memhog = os.path.join(args[0], "tests/bench/lab_memhog")
    mib = int(args[1]) if len(args) > 1 else 600
    with open("/sys/devices/system/node/node1/cpulist") as f:
        node1_cpus = f.read().strip()
    with open("/proc/sys/kernel/numa_balancing", "w") as f:
        f.write("0")
    ways = [("move_pages 4096", lambda p, a: by_batches(p, a, 4096)),
            ("move_pages 8192", lambda p, a: by_batches(p, a, 8192)),
            ("lookup+move", lookup_and_move),
            ("migratepages", migratepages)]
    if ceiling_only:
        ways = ways[:1]
    for name, way in ways:
        hog = subprocess.Popen(
            ["taskset", "-c", node1_cpus, memhog, f"--mb={mib}",
             "--touch_node=1", "--run_node=0", "--report_ms=0"],
            stdout=subprocess.PIPE, text=True)
        if hog.stdout.readline().strip() != "ready":
            sys.exit("lab_memhog did not report ready")
        addrs = private_pages(hog.pid)
        start = time.monotonic()
        lookups = way(hog.pid, addrs)
        seconds = time.monotonic() - start
        moved = move_pages(hog.pid, addrs, None).count(0)
        hog.kill()
        hog.wait()
        print(f"{name:16} {moved * page_size >> 20:5} MiB to node 0 in "
              f"{seconds:5.2f} s ({moved * page_size / seconds / 1e6:4.0f} "
              f"MB/s; lookups {lookups:.2f} s)", flush=True)
        if ceiling_only:
            print(f"ceiling_s {seconds:.3f}", flush=True)


if __name__ == "__main__":
    main()
