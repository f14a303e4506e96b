#!/usr/bin/env bash
# The locusctl completions, bash's and zsh's: each case below is completed the
# way the shell does (bash: the completion function called with COMP_LINE;
# zsh: an interactive zsh with compinit, see zsh_complete.zsh), and the
# commands and options offered must be those `locusctl` itself documents (so
# the two cannot drift apart).
# usage: completion_test.sh bash|zsh COMPLETION_FILE [LOCUSCTL]
set -uo pipefail
shell=$1 completion=$2 locusctl=${3:-}
fail=0
case $shell in
  bash)
    # shellcheck source=/dev/null
    source "$completion"
    ;;
  zsh)
    command -v zsh >/dev/null || { echo "skipped: zsh is not installed"; exit 77; }
    ;;
  *) echo "usage: completion_test.sh bash|zsh COMPLETION_FILE [LOCUSCTL]" >&2; exit 2 ;;
esac

# complete_lines LINE...: for each LINE, what the shell offers with the cursor
# at its end: sorted, space-separated, one line per LINE.
complete_lines() {
  local line
  if [ "$shell" = bash ]; then
    for line in "$@"; do
      COMP_LINE=$line
      COMP_POINT=${#line}
      COMPREPLY=()
      _locusctl
      printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
      echo
    done
  else
    zsh -f "$(dirname "${BASH_SOURCE[0]}")/zsh_complete.zsh" "$(dirname "$completion")" "$@" |
      awk '/^--$/ { print s; s = ""; next } { s = s == "" ? $0 : s " " $0 }'
  fi
}
# expect LINE WANT [ZSH_WANT]: a case, checked by the next check_cases.
lines=() wants=()
expect() {
  lines+=("$1")
  if [ "$shell" = zsh ] && [ $# -gt 2 ]; then wants+=("$3"); else wants+=("$2"); fi
}
check_cases() {
  local -a gots
  local i
  mapfile -t gots < <(complete_lines "${lines[@]}")
  for i in "${!lines[@]}"; do
    if [ "${gots[i]-}" != "${wants[i]}" ]; then
      echo "FAIL [${lines[i]}]: got '${gots[i]-}', want '${wants[i]}'"
      fail=1
    fi
  done
  lines=() wants=()
}

irqs=$(find /proc/irq -mindepth 1 -maxdepth 1 -type d -printf "%f\n" | sort | tr '\n' ' ' | sed 's/ $//')
irqs_with_prefix=$(for i in $irqs; do echo "irq:$i"; done | sort | tr '\n' ' ' | sed 's/ $//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/policies" "$tmp/spaced" && touch "$tmp/policies/a.yaml" "$tmp/policies/b.yaml" "$tmp/sock" "$tmp/spaced/my policy.yaml"

# bash's default word breaks: readline replaces only the text after '=' or ':'
# (zsh inserts whole words). Where nothing is left to complete, zsh offers the
# options, as its _arguments does everywhere.
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
opts="--help --socket= --timeout="
expect "locusctl " "doctor experiment explain help log-level mode policy probe restore status top watch"
expect "locusctl w" "watch"
expect "locusctl p" "policy probe"
expect "locusctl watch --" "--count= --help --json --socket= --timeout="
expect "locusctl top --" "--count= --help --socket= --timeout="
expect "locusctl status --j" "--json"
expect "locusctl restore --" "$opts"
expect "locusctl d" "doctor"
expect "locusctl e" "experiment explain"
expect "locusctl experiment " "pool start status stop"
expect "locusctl experiment st" "start status stop"
expect "locusctl experiment start --" "--aa --block= --burn-in= --design= --duration= --help --interval= --json --latency-margin= --levers= --min-effect= --pre= --reason= --seed= --socket= --timeout="
expect "locusctl experiment status --" "--help --json --socket= --timeout="
expect "locusctl experiment stop --" "--help --json --reason= --socket= --timeout="
expect "locusctl experiment start --duration " ""
expect "locusctl experiment start --duration=" ""
expect "locusctl experiment start --seed 3 --a" "--aa"
expect "locusctl --duration=5m experiment s" "start status stop"
expect "locusctl doctor --" "$opts"
expect "locusctl doctor " "" "$opts"
expect "locusctl mode " "dry_run enforce policy"
expect "locusctl mode d" "dry_run"
expect "locusctl mode enforce " "" "$opts"
expect "locusctl restore " "" "$opts"
expect "locusctl policy " "check"
expect "locusctl policy check $tmp/policies/" "$tmp/policies/a.yaml $tmp/policies/b.yaml"
expect "locusctl policy check $tmp/policies/a.yaml " "" "$opts"
expect "locusctl policy check $tmp/spaced/m" "$tmp/spaced/my policy.yaml" "$tmp/spaced/my\\ policy.yaml"
expect "locusctl help " "doctor experiment explain help log-level mode policy probe restore status top watch"
expect "locusctl explain " "$irqs_with_prefix"
expect "locusctl explain irq:" "$irqs" "$irqs_with_prefix"
expect "locusctl explain 1234 " "" "--help --json --socket= --timeout="
expect "locusctl --socket=$tmp/so" "$tmp/sock" "--socket=$tmp/sock"
expect "locusctl --socket $tmp/so" "$tmp/sock"
expect "locusctl --socket $tmp/sock m" "mode"
expect "locusctl --socket=$tmp/sock --json st" "status"
expect "locusctl --count=3 watch --j" "--json"
expect "locusctl --count 3 watch --j" "--json"
expect "locusctl --timeout " ""
check_cases
if [ "$shell" = bash ]; then
  # Word breaks without '=' and ':' (as some users set): whole words come back.
  COMP_WORDBREAKS=$' \t\n"\'><;|&('
  expect "locusctl --socket=$tmp/so" "--socket=$tmp/sock"
  expect "locusctl explain irq:" "$irqs_with_prefix"
  check_cases
  COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
fi

# Drift: the commands and per-command options must be locusctl's own.
if [ -n "$locusctl" ]; then
  usage=$("$locusctl" --help 2>&1 || true)
  mapfile -t commands < <(sed -n '/^Commands:/,/^$/p' <<<"$usage" | awk 'NR > 1 && NF { print $1 }' | sort)
  probes=("locusctl ")
  for cmd in "${commands[@]}"; do probes+=("locusctl $cmd --"); done
  mapfile -t offers < <(complete_lines "${probes[@]}")
  listed="${commands[*]}"
  offered=$(tr ' ' '\n' <<<"${offers[0]}" | grep -vx help | sort | tr '\n' ' ' | sed 's/ $//')
  if [ -z "$listed" ] || [ "$listed" != "$offered" ]; then
    echo "FAIL: locusctl --help lists commands '$listed', completion offers '$offered'"
    fail=1
  fi
  for i in "${!commands[@]}"; do
    cmd=${commands[i]}
    synopsis=$("$locusctl" help "$cmd" 2>&1 | sed -n 's/^usage: locusctl \[--socket=PATH\] //p' | head -1)
    want=$(grep -o -- '--[a-z_-]*=\?' <<<"$synopsis" | sort | tr '\n' ' ' | sed 's/ $//')
    got=$(tr ' ' '\n' <<<"${offers[i + 1]}" | grep -vxE -- '--(socket=|timeout=|help)' | sort | tr '\n' ' ' | sed 's/ $//')
    if [ "$want" != "$got" ]; then
      echo "FAIL: '$cmd' takes '$want' (usage: $synopsis), completion offers '$got'"
      fail=1
    fi
  done
else
  echo "note: locusctl not built; commands not compared with its --help"
fi

[ $fail -eq 0 ] && echo "$shell completion: ok"
exit $fail
