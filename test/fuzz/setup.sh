#!/usr/bin/env bash
# Installs schemathesis (version in requirements.txt) into .cache/fuzz-venv. Without python3 and its venv module it
# says why and exits 3, which run.ts reports as a skip, except under CI=true, where that is a failure (exit 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.cache/fuzz-venv
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "fuzz: python3 with venv and pip is missing" >&2
  [ "${CI:-}" = "true" ] && exit 1
  exit 3
fi
want=$(cat test/fuzz/requirements.txt)
if [ ! -x "$VENV/bin/schemathesis" ] || [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$want" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet -r test/fuzz/requirements.txt
  printf '%s' "$want" > "$VENV/.installed"
fi
