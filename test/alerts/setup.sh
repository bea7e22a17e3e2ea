#!/usr/bin/env bash
# Installs aiosmtpd (version in requirements.txt) into .cache/smtp-venv for the email channel's tests.
# Without python3 it exits 3 (the tests skip with a reason), except under CI=true, where it fails.
set -uo pipefail
bash "$(dirname "$0")/../helpers/venv.sh" smtp-venv test/alerts/requirements.txt
