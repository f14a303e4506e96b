#!/usr/bin/env bash
# The systemd unit's sandbox: exposure <= 3.0 by `systemd-analyze security`,
# and the settings locusd relies on are present (or absent) as documented.
# usage: unit_security.sh UNIT
set -euo pipefail
unit=$1
fail=0
problem() { echo "$unit: $*"; fail=1; }

out=$(systemd-analyze security --offline=yes --threshold=30 "$unit" 2>&1) || {
  echo "$out"
  problem "systemd-analyze security failed or exposure above 3.0"
}
exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
echo "exposure: ${exposure:-?}"
[ -n "$exposure" ] || problem "no exposure figure in systemd-analyze output"

# systemd's last assignment of a key wins (for lists, assignments add up).
value() { sed -n "s/^$1=//p" "$unit" | tail -1; }
want() { # KEY VALUE
  [ "$(value "$1")" = "$2" ] || problem "$1 is '$(value "$1")', want '$2'"
}
want Type notify
want Restart on-failure
want StateDirectory locus
want RuntimeDirectory locus
want NoNewPrivileges yes
want ProtectSystem strict
want ProtectHome yes
want PrivateTmp yes
want ProtectClock yes
want SystemCallArchitectures native
want LockPersonality yes
want MemoryDenyWriteExecute yes
want RestrictAddressFamilies "AF_UNIX AF_NETLINK"
[ -n "$(value WatchdogSec)" ] || problem "no WatchdogSec="
value ExecStartPre | grep -q -- '--restore' || problem "ExecStartPre does not restore the journal"
# /proc/irq/N/smp_affinity_list is written: ProtectKernelTunables=yes would
# make /proc/irq read-only, which ReadWritePaths= cannot undo.
[ "$(value ProtectKernelTunables)" != yes ] || problem "ProtectKernelTunables=yes blocks IRQ affinity"
caps=$(value CapabilityBoundingSet)
for c in CAP_BPF CAP_PERFMON CAP_SYS_NICE CAP_SYS_PTRACE; do
  [[ " $caps " == *" $c "* ]] || problem "CapabilityBoundingSet lacks $c"
done
for c in CAP_SYS_ADMIN CAP_DAC_OVERRIDE CAP_NET_ADMIN CAP_SYS_MODULE; do
  [[ " $caps " != *" $c "* ]] || problem "CapabilityBoundingSet holds $c, which locusd does not need"
done
# The syscalls locusd makes must survive the filter: allowed by the first
# (allow) list, not taken back by a later ~ list.
expand() { # names and @groups -> syscall names, one a line; groups nest
  local item
  for item in "$@"; do
    if [[ $item == @* ]]; then
      # shellcheck disable=SC2046 # one syscall name per word
      expand $(systemd-analyze syscall-filter "$item" | sed -n 's/^    \([^# ].*\)/\1/p')
    else
      echo "$item"
    fi
  done
}
# shellcheck disable=SC2046 # one item per word
allow=$(expand $(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$unit"))
# shellcheck disable=SC2046
deny=$(expand $(sed -n 's/^SystemCallFilter=~\(.*\)/\1/p' "$unit"))
[ -n "$allow" ] || problem "no SystemCallFilter allow list"
for s in bpf perf_event_open sched_setaffinity move_pages chown mount reboot; do
  if grep -qx -- "$s" <<<"$allow" && ! grep -qx -- "$s" <<<"$deny"; then
    case $s in mount | reboot) problem "SystemCallFilter allows $s" ;; esac
  else
    case $s in mount | reboot) ;; *) problem "SystemCallFilter blocks $s" ;; esac
  fi
done
exit $fail
