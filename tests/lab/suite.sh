#!/bin/bash
# Runs several scenario scripts in one guest boot (a boot under TCG and the
# agent's first start cost tens of seconds each): each in a shell of its own,
# from an empty work directory and the boot's kernel.numa_balancing, in the
# order given. Fails when any of them failed, and says which.
# Run inside a guest (tests/lab/guest.sh).
# Usage: suite.sh SCRIPT[:PART,...]...   (file names in tests/lab/; PARTs:
# the script's scenarios to run, all of them when none is named)
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
balancing=$(</proc/sys/kernel/numa_balancing)
failed=()
for script in "$@"; do
  echo "### $script"
  parts=()
  [[ "$script" == *:* ]] && IFS=, read -ra parts <<<"${script#*:}"
  rm -rf /run/lab
  echo "$balancing" >/proc/sys/kernel/numa_balancing
  bash "$dir/${script%%:*}" "${parts[@]}" || failed+=("$script")
done
echo "### suite: ${#failed[@]} of $# script(s) failed${failed[*]:+: ${failed[*]}}"
[ "${#failed[@]}" -eq 0 ]
