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
script or binary exists, and for tests/run.sh, .ci/run calls it. The
install section's commands run as far as a test may: cpack for real into a
folder of the test's, `apt install` simulated (deploy.deb_install installs
the package for real and removes it), the unit the package ships for
`systemctl enable`; the coexistence section's `sysctl` runs and the value is
put back. A command
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
    if args[:1] == ["doctor"]:
        if doctor_exit_ok(command, r) and not re.search(
                r"^OK    agent: locusd answers on ", r.stdout, re.M):
            fail(command, f"no agent line for the running locusd: {r.stdout}")
        return
    if args[:1] == ["explain"]:
        # No nginx runs here: the thread is unknown, and the answer must say
        # so plainly rather than fail obscurely.
        if r.returncode != 0 and "not a target" not in r.stderr:
            fail(command, f"exit {r.returncode}: {r.stderr.strip()}")
        return
    if args[:1] == ["experiment"] and args[1:2] != ["--help"]:
        # The test's locusd has no nginx (and starts in dry run, though a
        # `locusctl mode` above may have changed that): a start is refused
        # with why, and no experiment has run to show or stop; no host's
        # report is here to pool.
        want = {"start": ("dry run", "needs at least 4 workers"),
                "status": ("no experiment",),
                "stop": ("no experiment",),
                "pool": ("No such file or directory",)}.get(args[1] if len(args) > 1 else "")
        if (want is None or r.returncode == 0 or
                not any(w in r.stderr for w in want)):
            fail(command, f"exit {r.returncode}, want an error saying "
                 f"{want!r}: {r.stderr.strip()}")
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
    if "--doctor" in argv:
        doctor_exit_ok(command, r)
    elif r.returncode != 0:
        fail(command, f"exit {r.returncode}: {r.stderr.strip()[:300]}")
    elif "--json" in argv and not r.stdout.lstrip().startswith("{"):
        fail(command, "no JSON object printed")


def doctor_exit_ok(command, r):
    """The doctor exits 1 exactly when a line says FAIL."""
    want = 1 if re.search(r"^FAIL  ", r.stdout, re.M) else 0
    if r.returncode != want or "capabilities:" not in r.stdout:
        fail(command, f"exit {r.returncode} (want {want}): {r.stdout[-400:]}"
             f"{r.stderr.strip()[-200:]}")
        return False
    return True


def build_argv(command):
    """The command with the README's build folder as this test's build."""
    return [BUILD + a[len("build"):] if a == "build" or a.startswith(
        "build/") else a for a in shlex.split(command)]


class Package:
    """The .deb of the README's install section, built once with cpack as
    written, into a folder of its own (cpack writes to its working folder)."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "deb")
        self.deb = None

    def cpack(self, command):
        os.makedirs(self.dir, exist_ok=True)
        argv = build_argv(command)
        if "--config" not in argv:
            argv += ["--config", os.path.join(BUILD, "CPackConfig.cmake")]
        r = run(argv, timeout=600, cwd=self.dir)
        debs = [f for f in os.listdir(self.dir) if f.endswith(".deb")]
        if r.returncode != 0 or len(debs) != 1:
            fail(command, f"exit {r.returncode}, .debs {debs}: "
                 f"{(r.stdout + r.stderr)[-400:]}")
            return
        self.deb = os.path.join(self.dir, debs[0])

    def check_install(self, command):
        """apt resolves the package's dependencies for real, installing
        nothing (deploy.deb_install installs it and removes it again)."""
        if self.deb is None:
            self.cpack("cpack -G DEB")
        if self.deb is None:
            return
        argv = ["apt-get", "install", "--simulate"] + [
            self.deb if a.startswith("./locus_") else a
            for a in shlex.split(command)[2:]]
        r = run(argv, timeout=120, cwd=self.dir)
        if r.returncode != 0 or not re.search(r"^Inst locus ", r.stdout, re.M):
            fail(command, f"apt-get --simulate: exit {r.returncode}: "
                 f"{(r.stdout + r.stderr)[-400:]}")

    def check_unit(self, command):
        """systemd is not PID 1 in a test: the package must ship the unit
        that the command enables (deploy.unit_verify checks the unit)."""
        if self.deb is None:
            self.cpack("cpack -G DEB")
        if self.deb is None:
            return
        unit = shlex.split(command)[-1] + ".service"
        r = run(["dpkg-deb", "-c", self.deb])
        if f"/usr/lib/systemd/system/{unit}" not in r.stdout:
            fail(command, f"the package does not ship {unit}")


def check_sysctl(command):
    """Run for real, then the value the host had is put back."""
    key, value = shlex.split(command)[-1].split("=")
    path = "/proc/sys/" + key.replace(".", "/")
    if not os.path.exists(path):
        print(f"  skipped: no {path} in this kernel")
        return
    before = open(path).read().strip()
    try:
        r = run(shlex.split(command))
        now = open(path).read().strip()
        if r.returncode != 0 or now != value:
            fail(command, f"exit {r.returncode}, {key} is {now}: {r.stderr}")
    finally:
        with open(path, "w") as f:
            f.write(before)


def check_other(command, tmp, package):
    """The install and coexistence sections' commands; False when none of
    them is this one."""
    if command.startswith("./deploy/deps.sh"):
        r = run(shlex.split(command), timeout=900, cwd=SRC)
        if r.returncode != 0:
            fail(command, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    elif command.startswith("cmake --build build"):
        r = run(build_argv(command), timeout=900, cwd=SRC)
        if r.returncode != 0:
            fail(command, f"exit {r.returncode}: {r.stdout[-400:]}")
    elif command.startswith("cpack -G DEB"):
        package.cpack(command)
    elif command.startswith("apt install ./locus_"):
        package.check_install(command)
    elif command == "systemctl enable --now locusd":
        package.check_unit(command)
    elif command.startswith("sysctl -w kernel."):
        check_sysctl(command)
    else:
        return False
    return True


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
        package = Package(tmp)
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
                elif check_other(command, tmp, package):
                    pass
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
