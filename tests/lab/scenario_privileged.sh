#!/bin/bash
# Lab scenario: the privileged tests that need two NUMA nodes, which skip on a
# one-node machine (moving a huge page between nodes). Run here, none may
# skip: a skip fails the scenario.
# Run inside a guest (tests/lab/guest.sh); needs 2 nodes.
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

TESTS=(tests/act/memory/huge_pages_privileged_test)

two_node_tests() {
  local t out
  for t in "${TESTS[@]}"; do
    out=$("$LOCUS_BUILD_DIR/$t" 2>&1)
    local rc=$?
    echo "$out" | grep -E '^\[ +(OK|SKIPPED|FAILED) +\]' | sed 's/^/  /'
    [ "$rc" -eq 0 ] || fail "$t exited $rc" || return 1
    ! echo "$out" | grep -q '^\[  SKIPPED \]' || fail "$t skipped a test on $(nodes) nodes" || return 1
    log "ok: $t"
  done
}

run_scenarios two_node_tests
