#!/usr/bin/env bash
# lintian, Debian's package checker, finds no error in the .deb. Its warnings
# and notes are printed (and none are expected: see cmake/LocusPackage.cmake).
# usage: deb_lintian.sh DEB_DIR
set -uo pipefail
deb=$(ls "$1"/*.deb)
command -v lintian >/dev/null || { echo "skipped: lintian is not installed (deploy/deps.sh test)"; exit 77; }
lintian --version
# --fail-on error: the exit status says whether an E: tag was emitted.
out=$(lintian --fail-on error --display-level '>=pedantic' "$deb" 2>&1)
rc=$?
grep -v '^running with root privileges' <<<"$out"
if [ $rc -ne 0 ] || grep -q '^E: ' <<<"$out"; then
  echo "FAIL: lintian reports errors (exit $rc)"
  exit 1
fi
echo "lintian: no error ($(grep -c '^W: ' <<<"$out") warnings)"
