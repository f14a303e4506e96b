#!/usr/bin/env bash
# One license throughout: LICENSE is the GPL version 2; each BPF program's
# license string (what the kernel reads, and the gate to its GPL-only
# helpers) is one the kernel takes as GPL v2, and its SPDX line, where there
# is one, says GPL-2.0 only; the package's copyright file says GPL-2.0-only.
# usage: license_test.sh SOURCE_DIR
set -uo pipefail
src=$1
fail=0
problem() { echo "FAIL: $*"; fail=1; }

cmp -s "$src/LICENSE" /usr/share/common-licenses/GPL-2 ||
  problem "LICENSE is not /usr/share/common-licenses/GPL-2"
programs=("$src"/bpf/*.bpf.c)
[ -f "${programs[0]}" ] || problem "no BPF program in bpf/"
for f in "${programs[@]}"; do
  name=${f#"$src"/}
  license=$(sed -n 's/.*SEC("license") *= *"\([^"]*\)".*/\1/p' "$f")
  case $license in
    GPL | "GPL v2") ;;
    *) problem "$name: license string '$license', want \"GPL\" (GPL v2, as LICENSE)" ;;
  esac
  spdx=$(sed -n 's/.*SPDX-License-Identifier: *\([^ *]*\).*/\1/p' "$f" | head -1)
  case $spdx in
    "" | GPL-2.0 | GPL-2.0-only) ;;
    *) problem "$name: SPDX-License-Identifier $spdx, want GPL-2.0-only" ;;
  esac
done
grep -qx 'License: GPL-2.0-only' "$src/deploy/deb/copyright" ||
  problem "deploy/deb/copyright does not declare GPL-2.0-only"
[ $fail -eq 0 ] && echo "license: ok (LICENSE, ${#programs[@]} BPF programs, copyright)"
exit $fail
