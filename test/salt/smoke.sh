#!/usr/bin/env bash
# Smoke check of the real Salt test bed: install, start, talk to salt-api with
# curl, check the shapes Saltdeck relies on, stop one minion, stop the bed.
#
#   bash test/salt/smoke.sh [dir]     (default dir: /tmp/bed1)
#
# Needs curl and jq. Exit 0 only if every check passed; the bed is always
# stopped at the end (SMOKE_KEEP=1 keeps it running for a look around).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BED=$HERE/bed.sh
DIR=${1:-/tmp/bed1}
PASS=0
FAIL=0

for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "smoke: $tool is required" >&2; exit 1; }
done

check() { # check <description> <command...>: run the command, count the result
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then PASS=$((PASS + 1)); echo "ok   $what"
  else FAIL=$((FAIL + 1)); echo "FAIL $what"; fi
}

cleanup() {
  [ -n "${EVENTS_PID:-}" ] && kill "$EVENTS_PID" 2>/dev/null
  [ "${SMOKE_KEEP:-}" = 1 ] || bash "$BED" stop "$DIR" >/dev/null 2>&1
}
trap cleanup EXIT

bash "$BED" install || exit 1
bash "$BED" start "$DIR" >/dev/null || exit 1
set -a; . "$DIR/bed.env"; set +a
echo "bed: $SALT_URL (salt $SALT_BED_VERSION)"

# POST /login with sharedsecret; the token is the CherryPy session id.
LOGIN=$(curl -sS -H 'Content-Type: application/json' -H 'Accept: application/json' "$SALT_URL/login" \
  -d "{\"username\":\"$SALT_USER\",\"password\":\"$SALT_PASSWORD\",\"eauth\":\"$SALT_EAUTH\"}")
TOKEN=$(jq -r '.return[0].token' <<<"$LOGIN")
check "login returns a 40-hex session token" grep -Eqx '[0-9a-f]{40}' <<<"$TOKEN"
check "login perms list the ACL" jq -e '.return[0].perms | index("@runner") != null' <<<"$LOGIN"

api() { # api <lowstate json>: POST / with the session token
  curl -sS --max-time 60 -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -H "X-Auth-Token: $TOKEN" "$SALT_URL/" -d "$1"
}

# Subscribe to /events first: ret events can arrive before the POST returns.
EVENTS=$DIR/smoke-events.sse
curl -sS -N --max-time 60 -H "X-Auth-Token: $TOKEN" "$SALT_URL/events" >"$EVENTS" 2>/dev/null &
EVENTS_PID=$!
sleep 1

R=$(api '[{"client":"local","tgt":"*","fun":"test.ping"}]')
check "local test.ping '*': all three true" \
  jq -e '.return[0] == {"web-01": true, "web-02": true, "db-01": true}' <<<"$R"

R=$(api '[{"client":"local","tgt":"web-01","fun":"state.sls","arg":["demo"]}]')
check "state.sls demo: state dict, file.managed has changes" \
  jq -e '.return[0]["web-01"] | to_entries | map(select(.key | startswith("file_|-demo-file_|-")))[0].value
         | (.result == true) and (.changes | length > 0) and (.duration | type == "number")' <<<"$R"
check "state.sls demo: test.succeed_without_changes result true" \
  jq -e '.return[0]["web-01"]["test_|-demo-ok_|-demo-ok_|-succeed_without_changes"].result == true' <<<"$R"

R=$(api '[{"client":"local","tgt":"db-01","fun":"state.sls","arg":["fail"]}]')
check "state.sls fail: result false" \
  jq -e '.return[0]["db-01"]["test_|-demo-fail_|-demo-fail_|-fail_without_changes"].result == false' <<<"$R"

R=$(api '[{"client":"local","tgt":"web-01","fun":"state.sls","arg":["broken"]}]')
check "state.sls broken: list of strings with the render error" \
  jq -e '.return[0]["web-01"] | (type == "array") and (.[0] | startswith("Rendering SLS '"'"'base:broken'"'"' failed"))' <<<"$R"

R=$(api '[{"client":"local","tgt":"web-02","fun":"pkg.list_pkgs","kwarg":{"versions_as_list":true}}]')
check "pkg.list_pkgs versions_as_list: every version is a list" \
  jq -e '.return[0]["web-02"] | (length > 10) and (map_values(type == "array") | all)' <<<"$R"

R=$(api '[{"client":"wheel","fun":"key.list_all"}]')
check "wheel key.list_all: envelope with three accepted keys" \
  jq -e '.return[0].data | .success and (.return.minions == ["db-01", "web-01", "web-02"])' <<<"$R"

R=$(api '[{"client":"runner","fun":"manage.status"}]')
check "runner manage.status: all up" \
  jq -e '.return[0] == {"up": ["db-01", "web-01", "web-02"], "down": []}' <<<"$R"

sleep 1
kill "$EVENTS_PID" 2>/dev/null; wait "$EVENTS_PID" 2>/dev/null; EVENTS_PID=
check "/events starts with 'retry: 400'" test "$(head -1 "$EVENTS")" = "retry: 400"
check "/events has tag:/data: frames of job returns" grep -q '^tag: salt/job/[0-9]\{20\}/ret/web-01$' "$EVENTS"
check "/events data: lines are JSON {data, tag}" \
  bash -c "grep '^data: ' '$EVENTS' | sed 's/^data: //' | jq -e -s 'all(has(\"data\") and has(\"tag\"))'"

# A stopped minion: manage.status (a ping) sees it down; test.ping gives false.
bash "$BED" stop-minion "$DIR" db-01 >/dev/null 2>&1
R=$(api '[{"client":"runner","fun":"manage.status"}]')
check "after stop-minion db-01: manage.status down == [db-01]" \
  jq -e '.return[0] == {"up": ["web-01", "web-02"], "down": ["db-01"]}' <<<"$R"
R=$(api '[{"client":"local","tgt":"db-01","fun":"test.ping"}]')
# 3006 and 3007 answer false for a minion that does not return; 3008 answers a
# string ("Minion did not return. [No response]\n…salt-run jobs.lookup_jid <jid>").
if [[ $SALT_BED_VERSION == 3008.* ]]; then
  check "after stop-minion db-01: test.ping db-01 is 'Minion did not return…' (3008)" \
    jq -e '.return[0]["db-01"] | type == "string" and startswith("Minion did not return.")' <<<"$R"
else
  check "after stop-minion db-01: test.ping db-01 is false" jq -e '.return[0] == {"db-01": false}' <<<"$R"
fi

check "start-minion db-01 waits until it answers" bash "$BED" start-minion "$DIR" db-01
R=$(api '[{"client":"runner","fun":"manage.status"}]')
check "after start-minion db-01: all up" jq -e '.return[0].down == []' <<<"$R"

if [ "${SMOKE_KEEP:-}" != 1 ]; then
  bash "$BED" stop "$DIR" >/dev/null 2>&1
  check "stop: no process of this bed is left" \
    bash -c "! ps -eo args | grep -F -- '$DIR/conf/' | grep -v grep | grep -q salt-"
fi

echo "smoke: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
