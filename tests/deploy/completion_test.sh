#!/usr/bin/env bash
# Sources the locusctl bash completion and calls its function the way bash
# does, for each case below; then checks that it offers exactly the commands
# and options `locusctl` itself documents (so the two cannot drift apart).
# usage: completion_test.sh COMPLETION_FILE [LOCUSCTL]
set -uo pipefail
completion=$1 locusctl=${2:-}
# shellcheck source=/dev/null
source "$completion"
fail=0

# complete LINE: COMPREPLY for the cursor at the end of LINE, sorted, one line.
complete_line() {
  COMP_LINE=$1
  COMP_POINT=${#1}
  COMPREPLY=()
  _locusctl
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() { # LINE WANT
  local got
  got=$(complete_line "$1")
  if [ "$got" != "$2" ]; then
    echo "FAIL [$1]: got '$got', want '$2'"
    fail=1
  fi
}

irqs=$(find /proc/irq -mindepth 1 -maxdepth 1 -type d -printf "%f\n" | sort | tr '\n' ' ' | sed 's/ $//')
irqs_with_prefix=$(for i in $irqs; do echo "irq:$i"; done | sort | tr '\n' ' ' | sed 's/ $//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/policies" "$tmp/spaced" && touch "$tmp/policies/a.yaml" "$tmp/policies/b.yaml" "$tmp/sock" "$tmp/spaced/my policy.yaml"

# bash's default word breaks: readline replaces only the text after '=' or ':'.
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
expect "locusctl " "explain help mode policy probe restore status top watch"
expect "locusctl w" "watch"
expect "locusctl p" "policy probe"
expect "locusctl watch --" "--count= --help --json --socket= --timeout="
expect "locusctl top --" "--count= --help --socket= --timeout="
expect "locusctl status --j" "--json"
expect "locusctl restore --" "--help --socket= --timeout="
expect "locusctl mode " "dry_run enforce"
expect "locusctl mode d" "dry_run"
expect "locusctl mode enforce " ""
expect "locusctl restore " ""
expect "locusctl policy " "check"
expect "locusctl policy check $tmp/policies/" "$tmp/policies/a.yaml $tmp/policies/b.yaml"
expect "locusctl policy check $tmp/policies/a.yaml " ""
expect "locusctl policy check $tmp/spaced/m" "$tmp/spaced/my policy.yaml"
expect "locusctl help " "explain help mode policy probe restore status top watch"
expect "locusctl explain " "$irqs_with_prefix"
expect "locusctl explain irq:" "$irqs"
expect "locusctl explain 1234 " ""
expect "locusctl --socket=$tmp/so" "$tmp/sock"
expect "locusctl --socket $tmp/so" "$tmp/sock"
expect "locusctl --socket $tmp/sock m" "mode"
expect "locusctl --socket=$tmp/sock --json st" "status"
expect "locusctl --count=3 watch --j" "--json"
expect "locusctl --timeout " ""
# Word breaks without '=' and ':' (as some users set): whole words come back.
COMP_WORDBREAKS=$' \t\n"\'><;|&('
expect "locusctl --socket=$tmp/so" "--socket=$tmp/sock"
expect "locusctl explain irq:" "$irqs_with_prefix"
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'

# Drift: the commands and per-command options must be locusctl's own.
if [ -n "$locusctl" ]; then
  usage=$("$locusctl" --help 2>&1 || true)
  commands=$(sed -n '/^Commands:/,/^$/p' <<<"$usage" | awk 'NR > 1 && NF { print $1 }' | sort | tr '\n' ' ')
  offered=$(complete_line "locusctl " | tr ' ' '\n' | grep -vx help | sort | tr '\n' ' ')
  if [ -z "$commands" ] || [ "$commands" != "$offered" ]; then
    echo "FAIL: locusctl --help lists commands '$commands', completion offers '$offered'"
    fail=1
  fi
  for cmd in $commands; do
    synopsis=$("$locusctl" help "$cmd" 2>&1 | sed -n 's/^usage: locusctl \[--socket=PATH\] //p' | head -1)
    want=$(grep -o -- '--[a-z_]*=\?' <<<"$synopsis" | sort | tr '\n' ' ' | sed 's/ $//')
    got=$(complete_line "locusctl $cmd --" | tr ' ' '\n' | grep -vxE -- '--(socket=|timeout=|help)' | sort | tr '\n' ' ' | sed 's/ $//')
    if [ "$want" != "$got" ]; then
      echo "FAIL: '$cmd' takes '$want' (usage: $synopsis), completion offers '$got'"
      fail=1
    fi
  done
else
  echo "note: locusctl not built; commands not compared with its --help"
fi

[ $fail -eq 0 ] && echo "completion: ok"
exit $fail
