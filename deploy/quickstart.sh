#!/usr/bin/env bash
# Installs what Locus needs, builds it, and runs locusd in the foreground with
# the built-in default policy (or /etc/locus/policy.yaml when present).
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/deps.sh
build=${LOCUS_BUILD_DIR:-build}  # the same default as tests/run.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)" --target locusd
exec "$build/agent/main/locusd" "$@"
