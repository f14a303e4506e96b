#!/usr/bin/env bash
# Builds the .deb from the configured build directory (the setup step of the
# package tests): cpack installs what the build made, so build first.
# usage: deb_build.sh CPACK_CONFIG OUT_DIR
set -euo pipefail
config=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
cpack -G DEB -B "$out" --config "$config" >"$out/cpack.log" 2>&1 || {
  cat "$out/cpack.log"
  echo "cpack failed (are locusd and locusctl built?)"
  exit 1
}
debs=("$out"/*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
  echo "want one .deb in $out, found: ${debs[*]}"
  exit 1
fi
echo "built ${debs[0]} ($(stat -c %s "${debs[0]}") bytes)"
