#!/usr/bin/env bash
# Runs the real-Salt suite (test/salt) once per supported salt version, one
# after the other, each against a bed of its own (the suite starts a fresh bed
# in a new dir and stops it at the end). Stops at the first failing version.
#
#   bash test/salt/matrix.sh                       3006.28, 3007.15, 3008.3
#   SALT_BED_VERSIONS=3008.3 bash test/salt/matrix.sh
#   SALT_BED_VERSIONS="3006.28 3008.3" bun run test:salt
#
# two-masters.test.ts (two beds side by side, one minion of both) runs only for
# the versions in SALT_BED_TWO_MASTERS_VERSIONS (default 3008.3), to keep the
# matrix's time in check; the other test files run for every version.
#
# Extra arguments go to `bun test` (e.g. -t 'stopped minion').
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

VERSIONS=${SALT_BED_VERSIONS:-3006.28 3007.15 3008.3}
VERSIONS=${VERSIONS//,/ }
TWO_MASTERS=${SALT_BED_TWO_MASTERS_VERSIONS-3008.3}
TWO_MASTERS=" ${TWO_MASTERS//,/ } "

# The test files for version $1: every test/salt/*.test.ts, two-masters.test.ts
# only when that version is listed for it.
files_for() {
  local f
  for f in test/salt/*.test.ts; do
    if [ "${f##*/}" = two-masters.test.ts ] && [[ $TWO_MASTERS != *" $1 "* ]]; then continue; fi
    echo "./$f"
  done
}
SUMMARY=()

summary() {
  local line
  echo
  echo "test:salt summary"
  for line in "${SUMMARY[@]}"; do echo "  $line"; done
}

for v in $VERSIONS; do
  mapfile -t files < <(files_for "$v")
  echo "==== salt $v: bun test ${files[*]} ===="
  t0=$(date +%s)
  SALT_BED_VERSION=$v bun test "${files[@]}" --timeout 600000 "$@"
  rc=$?
  secs=$(($(date +%s) - t0))
  if [ "$rc" -ne 0 ]; then
    SUMMARY+=("salt $v: FAILED (exit $rc) after $secs s")
    summary
    echo "test:salt: the suite failed against salt $v; versions after it were not run" >&2
    exit "$rc"
  fi
  SUMMARY+=("salt $v: passed in $secs s")
done
summary
