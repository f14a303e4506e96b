#!/usr/bin/env zsh
# What zsh's completion system offers for each LINE (cursor at its end), with
# the completion functions of FPATH_DIR: one candidate a line, as the word
# would read once inserted, then a line "--" after each LINE's candidates.
# An interactive zsh runs in a pseudo-terminal (zpty) with compinit; compadd is
# wrapped to record, instead of add, what the completion functions offer.
# usage: zsh_complete.zsh FPATH_DIR LINE...
emulate -L zsh
zmodload zsh/zpty || exit 1
dir=$1
shift
out=$(mktemp) || exit 1
trap 'rm -f $out; zpty -d comp 2>/dev/null' EXIT

zpty comp zsh -f -i
# Drains the terminal (a full one blocks the shell) until FILE has MARKER.
wait_for() {
  local chunk n
  for n in {1..400}; do
    while zpty -rt comp chunk 2>/dev/null; do :; done
    grep -qx -- $1 $out 2>/dev/null && return 0
    sleep 0.05
  done
  print -u2 "zsh_complete: no answer from zsh"
  exit 1
}

zpty -w comp "setopt interactivecomments; ZC_OUT=${(q)out}; fpath=(${(q)dir} \$fpath)"
zpty -w comp 'autoload -Uz compinit && compinit -u -D
unsetopt autolist listambiguous beep; LISTMAX=0
compadd() {
  # Internal queries (-O, -A, -D: look, do not add) go through unchanged.
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "$@"
    return
  fi
  local -a hits args=("$@")
  builtin compadd -A hits "$@"
  # The prefixes and suffixes that go around each word: -P/-p and -S/-s,
  # also inside clusters such as -qS=. Options before them take a value in
  # the same word or the next one (-o only when one follows).
  local w c v ppre hpre psuf hsuf h
  integer k=1 j
  while (( k <= $#args )); do
    w=$args[k]
    [[ $w == -[^-]* ]] || break
    for (( j = 2; j <= $#w; j++ )); do
      c=$w[j]
      [[ $c == [PSpsiIWdJVXxrRMFOADEo] ]] || continue
      v=$w[j+1,-1]
      if [[ -z $v && ( $c != o || $args[k+1] != -* ) ]]; then
        v=$args[++k]
      fi
      case $c in
        P) ppre=$v ;; p) hpre=$v ;; S) psuf=$v ;; s) hsuf=$v ;;
      esac
      break
    done
    (( k++ ))
  done
  for h in $hits; do
    print -r -- "$IPREFIX$ppre$hpre$h$hsuf$psuf" >> $ZC_OUT
  done
  (( $#hits ))
}
# Tab completes, then marks the end of the candidates (typed-ahead keys
# would make zle skip the completion, so the next line waits for the mark).
integer ZC_N=0
zc-complete() {
  zle complete-word
  print -r -- done$(( ++ZC_N )) >> $ZC_OUT
}
zle -N zc-complete
bindkey "^I" zc-complete
print -r -- ready >> $ZC_OUT'
wait_for ready
: > $out

integer i=0
for line in "$@"; do
  (( i++ ))
  zpty -wn comp "$line"$'\t'
  wait_for done$i
  zpty -wn comp $'\x15' # kill-whole-line
  sed '$d' $out | sort -u
  print -- --
  : > $out
done
