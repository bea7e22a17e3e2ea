#!/usr/bin/env bash
# Installs the test OpenID provider (test/oidc/package.json: panva's oidc-provider, exact versions in package-lock.json)
# into test/oidc/node_modules for the OIDC sign-in tests; again only when the lockfile changed. Without node and npm it
# says why and exits 3 (the tests skip with the reason), except under CI=true, where it fails.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "oidc: node and npm are missing (apt-get install nodejs npm)" >&2
  [ "${CI:-}" = "true" ] && exit 1
  exit 3
fi
if ! cmp -s package-lock.json node_modules/.saltdeck-installed 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json node_modules/.saltdeck-installed
fi
