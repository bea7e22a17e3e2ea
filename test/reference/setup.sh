#!/usr/bin/env bash
# Installs the pydantic reference (FastAPI, pydantic, httpx at the versions in requirements.txt) into .cache/ref-venv.
# Without python3 and its venv module it says why and exits 0, except under CI=true, where that is a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.cache/ref-venv
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "reference: python3 with venv and pip is missing" >&2
  [ "${CI:-}" = "true" ] && exit 1
  exit 0
fi
want=$(cat test/reference/requirements.txt)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$want" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet -r test/reference/requirements.txt
  printf '%s' "$want" > "$VENV/.installed"
fi
"$VENV/bin/python" -c 'import fastapi, pydantic; print(f"reference: fastapi {fastapi.__version__}, pydantic {pydantic.__version__}")'
