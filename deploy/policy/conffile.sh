#!/bin/sh
# Writes the package's /etc/locus/policy.yaml from the spelled-out default
# policy: every key commented out (as sshd_config does: `#key` is a setting,
# `# text` a comment), so the file applies the built-in defaults and keys an
# admin leaves commented keep following the defaults of later versions.
# Only `version: 1` stays, naming the schema.
# usage: conffile.sh DEFAULT_POLICY_YAML OUT
set -eu
in=$1 out=$2
{
  cat <<'HEAD'
# Locus policy (locus-policy(5)). locusd reads this file; without it, it runs
# the built-in default.
#
# Every key below is commented out and shows its default: to change one,
# uncomment it and its section's line (placement:, memory:, ...). Keys left
# commented follow the defaults of later versions. The file is reloaded when
# saved and on `systemctl reload locusd`; a file that does not validate is
# refused (the running policy stays) with file:line:column for each error.
# Check a file without applying it: locusctl policy check FILE.
HEAD
  # The default's own header (up to its first blank line) speaks of copying
  # it here; the rest is kept, each setting commented out.
  sed -e '1,/^$/{/^$/!d}' \
    -e '/^version:/b' -e '/^[[:space:]]*#/b' -e '/^[[:space:]]*$/b' \
    -e 's/^\([[:space:]]*\)/\1#/' "$in"
} >"$out.tmp"
mv "$out.tmp" "$out"
