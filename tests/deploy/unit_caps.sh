#!/usr/bin/env bash
# The unit's CapabilityBoundingSet is enough: every BPF feature the sensors
# probe behaves the same with only those capabilities as with all of root's.
# As a check that the harness really drops capabilities, the same probe
# without CAP_PERFMON must lose the tracing programs.
# usage: unit_caps.sh UNIT PROBE_FEATURES     (root)
set -uo pipefail
unit=$1 probe=$2
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root"; exit 77; }
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tail -1)
[ -n "$caps" ] || { echo "no CapabilityBoundingSet in $unit"; exit 1; }
setpriv_caps() { # CAP_X ... -> -all,+x,...
  local out=-all c
  for c in "$@"; do
    c=${c#CAP_}
    out+=",+${c,,}"
  done
  echo "$out"
}
# shellcheck disable=SC2086
bounded=$(setpriv_caps $caps)
full=$("$probe") || { echo "probe failed with full capabilities"; exit 1; }
limited=$(setpriv --bounding-set="$bounded" --inh-caps=-all -- "$probe") ||
  { echo "probe failed under $bounded"; exit 1; }
# shellcheck disable=SC2086
no_perfmon=$(setpriv --bounding-set="$(setpriv_caps ${caps//CAP_PERFMON/})" --inh-caps=-all -- "$probe")
echo "== all of root's capabilities"; echo "$full"
echo "== the unit's: $caps"; echo "$limited"
fail=0
grep -q ' available ' <<<"$full" || { echo "FAIL: no BPF feature available even as root"; fail=1; }
[ "$full" = "$limited" ] || { echo "FAIL: the unit's capabilities change what the sensors can load"; fail=1; }
[ "$full" != "$no_perfmon" ] || { echo "FAIL: dropping CAP_PERFMON changed nothing: are capabilities dropped?"; fail=1; }
exit $fail
