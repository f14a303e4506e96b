#!/usr/bin/env python3
"""Runs every command the README shows, so that the README cannot rot.

Commands are taken from the README's ```sh blocks and from inline code spans
that start with a Locus program or script. Each is run for real where that
is safe on a test machine, the way a newcomer runs it: the quick start first
(it installs locusd and locusctl, here under a private prefix put first on
PATH), then `locusctl ...` and `locusd ...` exactly as written, found on PATH,
not in the build: locusctl against a locusd this test starts in dry run on a
private socket, locusd's one-shot forms. Commands that cannot run inside a test (tests/run.sh
itself, benchmarks that take minutes, the lab) get a doc check instead: the
script or binary exists, and for tests/run.sh, .ci/run calls it. A command
the test does not recognise fails it: a new README command needs a check.

usage: readme_commands.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC, BUILD = sys.argv[1], sys.argv[2]
# Where the quick start installs (LOCUS_PREFIX), and the PATH every README
# command then runs with, as a newcomer's shell would find the programs.
PREFIX = tempfile.mkdtemp(prefix="locus-prefix-")
ENV = dict(os.environ, LOCUS_BUILD_DIR=BUILD, LOCUS_PREFIX=PREFIX,
           PATH=f"{PREFIX}/sbin:{PREFIX}/bin:" + os.environ.get("PATH", ""))
PROGRAMS = ("locusd", "locusctl", "./deploy/", "./tests/", "tests/", "build/",
            "cpack ")

failures = []


def fail(command, why):
    failures.append(f"{command!r}: {why}")
    print(f"FAIL {command}: {why}")


def commands(readme):
    """(command, line) pairs from ```sh blocks and inline code spans."""
    out = []
    in_sh = False
    for number, line in enumerate(readme.splitlines(), 1):
        if line.startswith("```"):
            in_sh = line.strip() == "```sh" and not in_sh
            continue
        if in_sh:
            command = line.split("  #")[0].strip()
            if command:
                out.append((command, number))
            continue
        for span in re.findall(r"`([^`]+)`", line):
            if span.startswith(PROGRAMS) and " " in span or span.startswith(
                    ("locusd --", "./")):
                out.append((span, number))
    return out


def run(argv, timeout=60, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, env=ENV, **kwargs)


def wait_for(path, proc, seconds=30):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.1)
    return False


class Daemon:
    """locusd in dry run on a private socket and journal."""

    def __init__(self, argv_prefix, tmp):
        self.socket = os.path.join(tmp, "locusd.sock")
        argv = argv_prefix + [f"--socket={self.socket}",
                              f"--journal={tmp}/journal", "--mode=dry_run"]
        self.log = open(os.path.join(tmp, "locusd.log"), "w+")
        # The quick start builds into LOCUS_BUILD_DIR (this test's build) and
        # installs under LOCUS_PREFIX.
        self.proc = subprocess.Popen(argv, cwd=SRC, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=ENV)
        self.up = wait_for(self.socket, self.proc, 600)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return -9
        return self.proc.returncode

    def output(self):
        self.log.seek(0)
        return self.log.read()


def check_locusctl(command, daemon):
    argv = shlex.split(command)
    args = [a if a != "FILE" else f"{SRC}/deploy/policy/nginx.yaml"
            for a in argv[1:]]
    if args[:1] in (["top"], ["watch"]) and not any(
            a.startswith("--count") for a in args):
        args.append("--count=2")  # a live view or a stream: two ticks, then stop
    r = run(["locusctl", f"--socket={daemon.socket}"] + args)
    if args[:1] == ["explain"]:
        # No nginx runs here: the thread is unknown, and the answer must say
        # so plainly rather than fail obscurely.
        if r.returncode != 0 and "not a target" not in r.stderr:
            fail(command, f"exit {r.returncode}: {r.stderr.strip()}")
        return
    if r.returncode != 0:
        fail(command, f"exit {r.returncode}: {r.stderr.strip()}")
    elif args[:1] == ["watch"]:
        count = int(re.search(r"--count=(\d+)", " ".join(args)).group(1))
        if "--json" in args:
            ticks = [l for l in r.stdout.splitlines() if l.startswith("{")]
        else:
            ticks = re.findall(r"^tick \d+", r.stdout, re.M)
        if len(ticks) != count:
            fail(command, f"{len(ticks)} ticks printed, want {count}")
    elif args[:1] == ["status"] and "mode" not in r.stdout:
        fail(command, f"no mode in: {r.stdout[:200]}")


def check_locusd(command):
    argv = shlex.split(command)
    r = run(["locusd"] + argv[1:], timeout=120, cwd=SRC)
    if r.returncode != 0:
        fail(command, f"exit {r.returncode}: {r.stderr.strip()[:300]}")
    elif "--json" in argv and not r.stdout.lstrip().startswith("{"):
        fail(command, "no JSON object printed")


def check_quickstart(command, tmp):
    """The quick start builds and installs locusd and locusctl, and runs
    locusd in the foreground; the installed locusctl talks to it."""
    quick = Daemon([f"{SRC}/deploy/quickstart.sh"], os.path.join(tmp, "q"))
    if not quick.up:
        fail(command, "locusd never opened its socket:\n" + quick.output())
        quick.stop()
        return
    for program in ("sbin/locusd", "bin/locusctl"):
        if not os.access(os.path.join(PREFIX, program), os.X_OK):
            fail(command, f"did not install {program} under LOCUS_PREFIX")
    r = run(["locusctl", f"--socket={quick.socket}", "status"])
    code = quick.stop()
    if r.returncode != 0:
        fail(command, f"locusctl status: {r.stderr.strip()}")
    if code != 0:
        fail(command, f"locusd exited {code} on SIGTERM")


def check_exists(command):
    """Benchmarks and the lab: the thing named exists and can run."""
    first = shlex.split(command)[0]
    path = first if os.path.isabs(first) else os.path.join(SRC, first)
    if first.startswith("build/"):
        path = os.path.join(BUILD, first[len("build/"):])
    if not os.access(path, os.X_OK):
        fail(command, f"{path} is not an executable")


def main():
    readme = open(os.path.join(SRC, "README.md")).read()
    found = commands(readme)
    if not found:
        fail("README.md", "no commands found")
    quickstart = [(c, n) for c, n in found
                  if c.startswith("./deploy/quickstart.sh")]
    if not quickstart:
        fail("README.md", "no ./deploy/quickstart.sh command")
    with tempfile.TemporaryDirectory(prefix="locus-readme-") as tmp:
        os.makedirs(os.path.join(tmp, "q"))
        # First, as a newcomer would: every later command needs what it
        # installs.
        for command, line in quickstart:
            print(f"README:{line}: {command}")
            check_quickstart(command, tmp)
        if failures:
            sys.exit("the quick start failed: " + "; ".join(failures))
        daemon = Daemon(["locusd", f"--policy={SRC}/deploy/policy/nginx.yaml"],
                        tmp)
        if not daemon.up:
            print(daemon.output())
            sys.exit("locusd did not start")
        try:
            for command, line in found:
                if (command, line) in quickstart:
                    continue
                print(f"README:{line}: {command}")
                if command.startswith("locusctl"):
                    check_locusctl(command, daemon)
                elif command.startswith("locusd"):
                    check_locusd(command)
                elif command.startswith("./tests/run.sh"):
                    ci = open(os.path.join(SRC, ".ci/run")).read()
                    if "tests/run.sh" not in ci:
                        fail(command, ".ci/run does not call it")
                elif command.startswith("cpack -G DEB"):
                    # Built and inspected by the deploy.deb_* tests.
                    if not os.path.exists(os.path.join(BUILD,
                                                       "CPackConfig.cmake")):
                        fail(command, "no CPackConfig.cmake in the build")
                elif command.startswith(("tests/bench/", "tests/lab/",
                                         "build/tests/")):
                    check_exists(command)
                else:
                    fail(command, "no check for this command: add one")
        finally:
            code = daemon.stop()
            if code != 0:
                fail("locusd (test daemon)", f"exited {code} on SIGTERM")
    if failures:
        print(f"\n{len(failures)} README command(s) failed:")
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print(f"{len(found)} README commands checked")


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("needs root: locusd loads BPF sensors")
        sys.exit(77)
    try:
        main()
    finally:
        shutil.rmtree(PREFIX, ignore_errors=True)
