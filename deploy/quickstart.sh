#!/usr/bin/env bash
# Installs what building Locus needs, builds locusd and locusctl, installs both
# (/usr/local/sbin/locusd, /usr/local/bin/locusctl: the README's commands run
# as written), and runs locusd in the foreground with the built-in default
# policy (or /etc/locus/policy.yaml when present). Arguments go to locusd.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/deps.sh build
build=${LOCUS_BUILD_DIR:-build}  # the same default as tests/run.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)" --target locusd locusctl
prefix=${LOCUS_PREFIX:-/usr/local}
install -D -m 0755 "$build/agent/main/locusd" "$prefix/sbin/locusd"
install -D -m 0755 "$build/agent/ctl/locusctl" "$prefix/bin/locusctl"
echo "quickstart: installed $prefix/sbin/locusd and $prefix/bin/locusctl;" \
  "in another terminal: locusctl status" >&2
exec "$prefix/sbin/locusd" "$@"
