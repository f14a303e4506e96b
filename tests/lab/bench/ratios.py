#!/usr/bin/python3
"""The convergence benchmark's page-mover ratios, from converge.sh's OUT_DIR:

  tests/lab/bench/ratios.py OUT_DIR [TICK_MS]

Per kernel directory, from the runs present (missing runs print "-"):

  locus/ceiling     Locus's t95 for memhog600 / the single-threaded bare
                    move_pages time for all 600 MiB, measured in the same
                    guest right after the run (memhog600.locus.ceiling.txt);
                    t95 counts from the workload's start, so it includes
                    Locus's detection (target <= 1.0)
  locus/autonuma    Locus's t95 / AutoNUMA's t95 for memhog600, each in its
                    own guest of the same converge.sh run (target <= 0.7)
  1 mover/default   memhog4x150: t95 with locusd --page_movers=1 / with the
                    default pool (target >= 1.6)
  tick while moving the control loop's tick duration, mean and max over the
                    ticks whose stream message counts pages moved, as a
                    share of the tick (TICK_MS, 250) (target < 10 %);
                    and the loop thread's CPU time in those ticks (the
                    rest of the duration it waited: for a CPU, a lock);
                    the same for the ticks that moved none, to compare

t95: the first sample at >= 95 % local, as in converge.sh's table.
"""
import csv
import glob
import json
import os
import sys


def t95(path):
    try:
        with open(path) as f:
            rows = list(csv.reader(f))[1:]
    except OSError:
        return None
    for row in rows:
        local, total = float(row[1]), float(row[2])
        if total > 0 and local / total >= 0.95:
            return float(row[0])
    return None


def ceiling(path):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("ceiling_s "):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def tick_shares(path, tick_ms):
    """Durations and CPU times (shares of the tick), keyed by whether the tick
    moved pages: {True: ([durations], [cpu]), False: (...)}."""
    shares = {True: ([], []), False: ([], [])}
    try:
        with open(path) as f:
            for line in f:
                try:
                    m = json.loads(line)
                except ValueError:
                    continue
                moved = sum(int(n.get("pages_migrated", 0))
                            for n in m.get("nodes", []))
                took, cpu = shares[moved > 0]
                took.append(int(m.get("tick_duration_ns", 0)) / (tick_ms * 1e6))
                cpu.append(int(m.get("tick_cpu_ns", 0)) / (tick_ms * 1e6))
    except OSError:
        pass
    return shares


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    tick_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 250
    for kernel_dir in sorted(glob.glob(os.path.join(out, "*/"))):
        run = lambda name: os.path.join(kernel_dir, name)  # noqa: E731
        locus = t95(run("memhog600.locus.csv"))
        print(f"kernel {os.path.basename(kernel_dir.rstrip('/'))}: page mover")
        print(f"  locus/ceiling    {ratio(locus, ceiling(run('memhog600.locus.ceiling.txt')))}"
              "  (memhog600, target <= 1.0)")
        print(f"  locus/autonuma   {ratio(locus, t95(run('memhog600.autonuma.csv')))}"
              "  (memhog600, target <= 0.7)")
        print(f"  1 mover/default  {ratio(t95(run('memhog4x150.locus_1mover.csv')), t95(run('memhog4x150.locus.csv')))}"
              "  (memhog4x150, target >= 1.6)")
        for stream in sorted(glob.glob(run("*.stream.json"))):
            name = os.path.basename(stream)[:-len(".stream.json")]
            for moving, (took, cpu) in sorted(tick_shares(stream, tick_ms).items(), reverse=True):
                if took:
                    print(f"  tick {'while moving' if moving else 'moving none '} {name}:"
                          f" mean {100 * sum(took) / len(took):.1f} %"
                          f", max {100 * max(took):.1f} % of the tick over {len(took)} ticks"
                          f"{' (target < 10 %)' if moving else ''}; CPU mean"
                          f" {100 * sum(cpu) / len(cpu):.1f} %, max {100 * max(cpu):.1f} %")


if __name__ == "__main__":
    main()
