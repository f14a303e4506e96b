#!/bin/bash
# Stage two of the lab guest, started by the initramfs inside the new root
# (this machine's root under a tmpfs overlay, everything already mounted):
# runs the caller's command from the run directory with the caller's
# environment and working directory, records its exit status, and powers the
# guest off.
run_dir=$1
nic=$2

set -a
# shellcheck disable=SC1091
. "$run_dir/env"
set +a
export LAB_GUEST=1 LAB_NIC="$nic" LAB_GUEST_ADDR=10.0.2.15 LAB_HOST_ADDR=10.0.2.2
if ! cd "$(<"$run_dir/cwd")"; then
  echo "lab guest: cannot enter $(<"$run_dir/cwd")" >>"$run_dir/stderr"
fi

bash "$run_dir/command" </dev/null >>"$run_dir/stdout" 2>>"$run_dir/stderr"
# Written over 9p without caching: on the caller's disk once echo returns.
echo $? >"$run_dir/status"
echo o >/proc/sysrq-trigger
sleep 60
