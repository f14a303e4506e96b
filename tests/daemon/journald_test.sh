#!/bin/bash
# locusd's log in journald, where the host runs no journald (no systemd as
# PID 1): a private journald in a private mount namespace (its own /run and
# /var/log/journal, so the host's are untouched), then
#  - locusd with stderr on journald's stream and JOURNAL_STREAM naming it, as
#    systemd starts a service: its lines must arrive as native entries
#    (_TRANSPORT=journal, SYSLOG_IDENTIFIER=locusd, PRIORITY), not as text;
#  - the event entries' MESSAGE_ID and LOCUS_* fields, read back with
#    journalctl (JournalSinkTest, in journal_sink_check).
# Usage: journald_test.sh LOCUSD JOURNAL_SINK_CHECK (log_test with the
# journald test built in). Exit 77: cannot run here.
set -eu
LOCUSD=$1 LOG_TEST=$2
if [ "${LOCUS_IN_NAMESPACE:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mounts, journald)"; exit 77; }
  for tool in unshare journalctl /lib/systemd/systemd-journald /usr/bin/python3; do
    command -v "$tool" >/dev/null || { echo "SKIP: no $tool"; exit 77; }
  done
  LOCUS_IN_NAMESPACE=1 exec unshare -m --propagation private "$0" "$@"
fi

mount -t tmpfs tmpfs /run
if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
mkdir -p /run/systemd/journal
DIR=$(mktemp -d)
/lib/systemd/systemd-journald >"$DIR/journald.out" 2>&1 &
JOURNALD=$!
trap 'kill $JOURNALD 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 100); do
  [ -S /run/systemd/journal/stdout ] && break
  sleep 0.1
done
[ -S /run/systemd/journal/stdout ] || { cat "$DIR/journald.out"; exit 1; }

printf 'mode: dry_run\ntargets:\n  comm: [locus-none]\n' >"$DIR/policy.yaml"
# What systemd does for StandardError=journal: connect to journald's stdout
# socket, send the stream header, and name the stream in JOURNAL_STREAM.
/usr/bin/python3 - "$LOCUSD" --policy="$DIR/policy.yaml" \
  --socket="$DIR/locusd.sock" --journal="$DIR/journal" --tick=100ms <<'PY'
import os, signal, socket, subprocess, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/run/systemd/journal/stdout")
s.sendall(b"locusd-stream\n\n6\n1\n0\n0\n0\n")
st = os.fstat(s.fileno())
env = dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
p = subprocess.Popen(sys.argv[1:], stderr=s.fileno(), env=env)
time.sleep(1.5)
p.send_signal(signal.SIGTERM)
sys.exit(p.wait(20))
PY

ENTRIES=$(journalctl --no-pager -o json SYSLOG_IDENTIFIER=locusd)
/usr/bin/python3 - "$ENTRIES" <<'PY'
import json, sys
entries = [json.loads(l) for l in sys.argv[1].splitlines() if l]
running = [e for e in entries if e["MESSAGE"].startswith("locusd ")
           and " running: " in e["MESSAGE"]]
assert running, f"no 'locusd ... running' entry among {entries}"
for e in running:
    assert e["_TRANSPORT"] == "journal", e   # native, not the text stream
    assert e["PRIORITY"] == "6", e
assert not any(e["MESSAGE"].startswith("<") for e in entries), entries
print(f"{len(entries)} native entries from locusd")
PY
if journalctl --no-pager -o cat _TRANSPORT=stdout | grep -q .; then
  echo "text lines on the stream too:"; journalctl --no-pager _TRANSPORT=stdout
  exit 1
fi
"$LOG_TEST" --gtest_filter='JournalSinkTest.*' 2>&1 | tee "$DIR/gtest.out"
grep -q '\[  PASSED  \] 1 test' "$DIR/gtest.out"
