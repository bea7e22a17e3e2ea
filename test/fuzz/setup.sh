#!/usr/bin/env bash
# Installs schemathesis (version in requirements.txt) into .cache/fuzz-venv; exit 3: no python3 (a skip outside CI).
exec bash "$(dirname "$0")/../helpers/venv.sh" fuzz-venv test/fuzz/requirements.txt
