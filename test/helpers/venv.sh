#!/usr/bin/env bash
# Usage: venv.sh NAME REQUIREMENTS — makes .cache/NAME a venv holding exactly REQUIREMENTS (reinstalled when that file
# changes). Without python3 and its venv module it says why and exits 3, except under CI=true, where it exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=".cache/$1"
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "$1: python3 with venv and pip is missing" >&2
  [ "${CI:-}" = "true" ] && exit 1
  exit 3
fi
want=$(cat "$2")
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$want" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet -r "$2"
  printf '%s' "$want" > "$VENV/.installed"
fi
