#!/usr/bin/env bash
# Saltdeck's real Salt test bed: one salt-master, salt-api (rest_cherrypy) and
# three salt-minions (web-01, web-02, db-01), all on 127.0.0.1, all from PyPI.
#
#   bed.sh install                  create/reuse the venv (.cache/salt-venv-<version>)
#   bed.sh start <dir>              write configs, start everything, wait, write <dir>/bed.env
#   bed.sh stop <dir>               stop every daemon of that bed (idempotent)
#   bed.sh stop-minion <dir> <id>   stop one minion
#   bed.sh start-minion <dir> <id>  start one minion again and wait until it answers
#   bed.sh stop-api <dir>           stop only salt-api
#   bed.sh start-api <dir>          start salt-api again and wait until /login answers
#   bed.sh stop-master <dir>        stop only salt-master (salt-api and the minions keep running)
#   bed.sh start-master <dir>       start salt-master again and wait until every minion answers
#   bed.sh salt <dir> <args...>     run the venv's salt CLI against that bed's master
#   bed.sh salt-run <dir> <args...> run the venv's salt-run against that bed's master (orchestrations)
#   bed.sh status <dir>             show which daemons of that bed run
#
# SALT_BED_VERSION picks the salt release: 3006.28 (default), 3007.15, 3008.3.
# `start` also reads (a second master beside a first bed, for salt multi-master):
#   SALT_BED_MINION_IDS=east-01,shared-01   this bed's minions instead of the three
#   SALT_BED_PEER=<dir of a running bed>    share that bed's master key (salt's multi-master rule)
#   SALT_BED_SHARED_IDS=shared-01           these minions list both masters (`master: [peer, this]`)
# See README.md beside this file for the versions, timings and quirks.
set -euo pipefail

# --- Settings ---------------------------------------------------------------

# 3006.30 and 3006.29 (the newest 3006 releases) require a certifi release
# newer than the registry serves here, so pip cannot resolve them; 3006.28 is
# the newest 3006 that installs. It also pulls CherryPy in by itself (3006.24+).
# 3007.15 and 3008.3 are the other lines the suite runs against (test/salt/matrix.sh).
SUPPORTED_VERSIONS=(3006.28 3007.15 3008.3)
SALT_VERSION=${SALT_BED_VERSION:-3006.28}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# One venv and one constraints file per version; the beds share only pip's cache.
VENV=${SALT_BED_VENV:-$REPO/.cache/salt-venv-$SALT_VERSION}
CONSTRAINTS=$HERE/constraints-$SALT_VERSION.txt
PROBE=$HERE/probe.py
STAMP=$VENV/.saltdeck-bed-stamp

MINION_IDS=(web-01 web-02 db-01)
# Minions of this bed that also list the peer bed's master (SALT_BED_PEER): salt's multi-master.
SHARED_IDS=()
PEER=""
SALT_USER=saltsecret        # the sharedsecret eauth user (same name as in the fixtures)
SALT_PASSWORD=saltdeck-s3cr3t
FILE_USER=saltfile          # the `file` eauth user (users.txt), for tests of a second backend
FILE_PASSWORD=saltfile-pass

START_TIMEOUT=${SALT_BED_START_TIMEOUT:-120}   # seconds for `start` until all minions ping
MINION_TIMEOUT=${SALT_BED_MINION_TIMEOUT:-60}  # seconds for `start-minion`
STOP_GRACE=${SALT_BED_STOP_GRACE:-10}          # seconds between SIGTERM and SIGKILL
LOOP_INTERVAL=${SALT_BED_LOOP_INTERVAL:-5}     # master maintenance loop = presence event period

# --- Small helpers ----------------------------------------------------------

log() { echo "bed: $*" >&2; }
die() { echo "bed: ERROR: $*" >&2; exit 1; }

usage() {
  sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# A missing prerequisite (python3, venv, pip). In CI this is a hard failure;
# on a developer machine exit 3 so a test harness can tell "cannot run the bed
# here" from "the bed is broken" (exit 1).
prereq_fail() {
  echo "bed: ERROR: $*" >&2
  if [ "${CI:-}" = "true" ]; then
    echo "bed: CI=true: the Salt test bed is required in CI; install the missing tool in the CI setup." >&2
    exit 1
  fi
  exit 3
}

now() { date +%s; }

check_version() {
  local v
  for v in "${SUPPORTED_VERSIONS[@]}"; do [ "$v" = "$SALT_VERSION" ] && return 0; done
  echo "bed: ERROR: SALT_BED_VERSION=$SALT_VERSION is not supported; use one of: ${SUPPORTED_VERSIONS[*]}" >&2
  echo "bed: (each version needs its own test/salt/constraints-<version>.txt, see test/salt/README.md)" >&2
  exit 2
}

# A pid counts as alive unless it is gone or a zombie: PID 1 here is not a
# real init and may never reap daemonized processes, so `kill -0` alone lies.
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != "Z" ]
}

# --- install ----------------------------------------------------------------

stamp_text() {
  local pyver
  pyver=$("$VENV/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || echo none)
  echo "salt==$SALT_VERSION python=$pyver constraints=$(sha256sum "$CONSTRAINTS" | cut -c1-16)"
}

venv_ok() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c '' 2>/dev/null
}

installed_ok() {
  venv_ok && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(stamp_text)" ] &&
    [ -x "$VENV/bin/salt-master" ] && [ -x "$VENV/bin/salt-api" ] && [ -x "$VENV/bin/salt-minion" ]
}

# Imports that every daemon needs. Some salt sdists on PyPI were published
# without their dependency metadata (saltstack/salt#69244, #67973); this
# catches that case instead of failing later inside a daemonized process.
# 3007 and 3008 also list aiohttp, croniter and gitpython as base requirements;
# 3008 adds OpenTelemetry, xxhash, timelib and truststore (tornado is still one).
verify_imports() {
  "$VENV/bin/python" - "$SALT_VERSION" <<'EOF'
import importlib, sys
mods = ["salt.version", "cherrypy", "zmq", "msgpack", "yaml", "jinja2", "tornado", "requests",
        "distro", "psutil", "Cryptodome", "cryptography", "looseversion", "packaging", "jmespath"]
if not sys.argv[1].startswith("3006."):
    mods += ["aiohttp", "croniter", "git"]
if sys.argv[1].startswith("3008."):
    mods += ["opentelemetry.sdk", "xxhash", "timelib", "truststore"]
for m in mods:
    importlib.import_module(m)
import salt.version
got = salt.version.__version__
if got != sys.argv[1]:
    sys.exit("salt %s installed, expected %s" % (got, sys.argv[1]))
EOF
}

# Base requirements that only the newer lines have (for the fallback above).
extra_requirements() {
  case "$SALT_VERSION" in
    3006.*) ;;
    3007.*) echo croniter GitPython ;;
    *) echo croniter GitPython opentelemetry-sdk opentelemetry-exporter-otlp-proto-http \
         opentelemetry-exporter-prometheus xxhash timelib truststore ;;
  esac
}

cmd_install() {
  if installed_ok; then
    log "salt $SALT_VERSION already installed in $VENV"
    return 0
  fi
  command -v python3 >/dev/null 2>&1 ||
    prereq_fail "python3 not found: the Salt test bed needs Python 3 (tested: 3.11) with the venv module and pip"
  local t0; t0=$(now)
  mkdir -p "$(dirname "$VENV")"
  if ! venv_ok; then
    rm -rf "$VENV"   # a venv whose interpreter vanished (e.g. Python upgraded) is useless
    log "creating venv $VENV"
    python3 -m venv "$VENV" ||
      prereq_fail "'python3 -m venv' failed (on Debian: apt-get install python3-venv)"
  fi
  "$VENV/bin/python" -m pip --version >/dev/null 2>&1 ||
    prereq_fail "pip is missing in $VENV (on Debian: apt-get install python3-venv python3-pip)"

  # pip's output goes to a log: it is long, and the machine's pip config adds
  # a warning per package about local index folders that do not exist.
  local plog=$VENV/install.log
  log "pip install salt==$SALT_VERSION (log: $plog)"
  if ! "$VENV/bin/python" -m pip install --disable-pip-version-check \
      -c "$CONSTRAINTS" "salt==$SALT_VERSION" CherryPy >"$plog" 2>&1; then
    grep -v "^WARNING: Location 'file:" "$plog" | tail -20 >&2
    die "pip install failed"
  fi
  if ! verify_imports 2>/dev/null; then
    log "dependencies incomplete; installing salt's requirements explicitly"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -c "$CONSTRAINTS" \
      pyzmq msgpack PyYAML Jinja2 MarkupSafe requests distro psutil pycryptodomex \
      cryptography looseversion packaging jmespath tornado aiohttp $(extra_requirements) >>"$plog" 2>&1 ||
      die "pip install of salt's requirements failed (see $plog)"
    verify_imports || die "salt $SALT_VERSION still does not import (see $plog)"
  fi
  stamp_text >"$STAMP"
  log "installed salt $SALT_VERSION in $(($(now) - t0)) s"
}

# --- Bed layout -------------------------------------------------------------
# <dir>/conf/master/master     master + salt-api config (one file, as salt-api wants)
# <dir>/conf/<id>/minion       one config dir per minion
# <dir>/m                      master root_dir (pki, cache, sockets, logs, pid files)
# <dir>/r/<id>                 minion root_dir
# <dir>/srv/salt               state tree
# <dir>/out                    files written by demo.sls
# <dir>/log                    launcher output of each daemon (errors before it forks)
# <dir>/bed.env                connection settings for tests (written once ready)

# $1 = bed dir; $2 = "create" to make it (start) or "quiet-missing" to just
# return 1 when it does not exist (stop is idempotent); otherwise a missing
# dir is an error.
set_bed_dir() {
  [ -n "${1:-}" ] || usage
  case "$1" in *[[:space:]]*) die "bed dir must not contain whitespace: '$1'" ;; esac
  if [ "${2:-}" = create ]; then
    mkdir -p "$1"
  elif [ ! -d "$1" ]; then
    [ "${2:-}" = quiet-missing ] && return 1
    die "no bed dir $1"
  fi
  B=$(cd "$1" && pwd -P)
  load_bed_ids
  # UNIX socket paths are limited to 107 bytes; the longest one the bed
  # creates is a minion's event socket under <dir>/r/<id>/var/run/salt/minion.
  local id longid=web-01
  for id in "${MINION_IDS[@]}"; do [ ${#id} -le ${#longid} ] || longid=$id; done
  local longest="$B/r/$longid/var/run/salt/minion/minion_event_0123456789_pull.ipc"
  [ ${#longest} -le 100 ] || die "bed dir '$B' is too long for UNIX sockets; use a short path such as /tmp/bed1"
  MASTER_CONF=$B/conf/master
  MASTER_PIDFILE=$B/m/var/run/salt-master.pid
  API_PIDFILE=$B/m/var/run/salt-api.pid
}

minion_pidfile() { echo "$B/r/$1/var/run/salt-minion.pid"; }

# The minion ids a started bed was given (SALT_BED_MINION_IDS at its start) and
# which of them are shared with a peer, recorded in <dir>/conf/venv, so stop,
# status and start-minion know them whatever the environment says now.
load_bed_ids() {
  local f=$B/conf/venv ids
  [ -f "$f" ] || return 0
  ids=$(sed -n 's/^MINION_IDS=//p' "$f")
  [ -z "$ids" ] || IFS=, read -r -a MINION_IDS <<<"$ids"
  ids=$(sed -n 's/^SHARED_IDS=//p' "$f")
  SHARED_IDS=()
  [ -z "$ids" ] || IFS=, read -r -a SHARED_IDS <<<"$ids"
  PEER=$(sed -n 's/^PEER=//p' "$f")
}

# Minion ids from a comma list (SALT_BED_MINION_IDS, SALT_BED_SHARED_IDS): salt
# ids as the bed uses them in paths and targets, so letters, digits and dashes.
parse_ids() {
  local ids=() id
  IFS=, read -r -a ids <<<"$1"
  [ ${#ids[@]} -gt 0 ] || die "$2 is empty"
  for id in "${ids[@]}"; do
    [[ $id =~ ^[a-z0-9][a-z0-9-]{0,30}$ ]] || die "$2: '$id' is not an id of [a-z0-9-]"
  done
  echo "${ids[*]}"
}

is_shared_minion() {
  local id
  for id in "${SHARED_IDS[@]}"; do [ "$id" = "$1" ] && return 0; done
  return 1
}

is_known_minion() {
  local id
  for id in "${MINION_IDS[@]}"; do [ "$id" = "$1" ] && return 0; done
  return 1
}

# Pids of processes that belong to one daemon of this bed. Salt daemons fork
# workers that keep the launcher's command line (setproctitle rewrites it as
# one space-separated string and appends a name), so every process of a daemon
# carries "-c <its config dir>". Matching that exact argument, in either the
# rewritten or the original NUL-separated form, finds them all and nothing of
# another bed.
pids_for_conf() {
  local conf=$1 re f pid
  # shellcheck disable=SC2016  # the $ is a regex character here
  re=$(printf '%s' "$conf" | sed 's/[][\.*^$()+?{}|]/\\&/g')
  for f in $({ grep -lszxF -- "$conf" /proc/[0-9]*/cmdline
               grep -lszE -- "(^| )$re( |\$)" /proc/[0-9]*/cmdline; } 2>/dev/null | sort -u); do
    grep -qsaF 'salt-' "$f" || continue
    pid=${f#/proc/}; pid=${pid%/cmdline}
    [ "$pid" = "$$" ] && continue
    if alive "$pid"; then echo "$pid"; fi
  done
}

pid_from_file() {
  local pid
  [ -f "$1" ] || return 1
  pid=$(tr -dc '0-9' <"$1")
  [ -n "$pid" ] && alive "$pid" && echo "$pid"
}

# SIGTERM the given pids, wait up to STOP_GRACE, then SIGKILL what is left.
# $1 is a label for messages; the rest is a command that lists the pids (it is
# re-run so that workers forked during shutdown are caught too).
terminate() {
  local label=$1; shift
  local pids deadline p left
  pids=$("$@" | sort -u)
  [ -n "$pids" ] || { log "$label: not running"; return 0; }
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  deadline=$(($(now) + STOP_GRACE))
  while :; do
    left=$(for p in $pids $("$@"); do if alive "$p"; then echo "$p"; fi; done | sort -u | tr '\n' ' ')
    [ -z "$left" ] && { log "$label: stopped"; return 0; }
    [ "$(now)" -ge "$deadline" ] && break
    sleep 0.3
  done
  log "$label: still running after ${STOP_GRACE}s, sending SIGKILL to $left"
  # shellcheck disable=SC2086
  kill -KILL $left 2>/dev/null || true
  sleep 0.5
  left=$("$@")
  [ -z "$left" ] || { log "$label: could not kill: $left"; return 1; }
  log "$label: killed"
}

minion_pids() { { pid_from_file "$(minion_pidfile "$1")" || true; pids_for_conf "$B/conf/$1"; } | sort -u; }
master_pids() { { pid_from_file "$MASTER_PIDFILE" || true; pid_from_file "$API_PIDFILE" || true; pids_for_conf "$MASTER_CONF"; } | sort -u; }
# salt-api and its workers only. They share "-c <dir>/conf/master" with the
# master, but their command lines name salt-api (setproctitle keeps the program
# name), which the master's processes do not.
api_pids() {
  local p
  { pid_from_file "$API_PIDFILE" || true
    for p in $(pids_for_conf "$MASTER_CONF"); do
      if grep -qsaF 'salt-api' "/proc/$p/cmdline"; then echo "$p"; fi
    done; } | sort -u
}

# salt-master and its workers only: the processes of "-c <dir>/conf/master"
# that are not salt-api's.
master_only_pids() {
  local p
  { pid_from_file "$MASTER_PIDFILE" || true
    for p in $(pids_for_conf "$MASTER_CONF"); do
      if ! grep -qsaF 'salt-api' "/proc/$p/cmdline"; then echo "$p"; fi
    done; } | sort -u
}

# --- Config writing ---------------------------------------------------------

# Three distinct free TCP ports on 127.0.0.1 (salt-api, publish, ret).
# All sockets stay open until every port is chosen, so they differ; a fixed
# 4505/4506/8000 would collide with a second bed or a leftover daemon.
pick_ports() {
  "$VENV/bin/python" - <<'EOF'
import socket
socks = []
for _ in range(3):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

write_master_config() {
  mkdir -p "$MASTER_CONF"
  printf '%s:%s\n' "$FILE_USER" "$FILE_PASSWORD" >"$B/conf/users.txt"
  cat >"$MASTER_CONF/master" <<EOF
# Generated by test/salt/bed.sh; rewritten on every 'bed.sh start'.
id: saltbed
root_dir: $B/m
interface: 127.0.0.1
publish_port: $PUB_PORT
ret_port: $RET_PORT
user: $(id -un)
auto_accept: true
presence_events: true
loop_interval: $LOOP_INTERVAL
timeout: 5
gather_job_timeout: 5
worker_threads: 4
log_level: warning
log_level_logfile: info
# Lets a test ask /login for a short-lived token ("token_expire": 5).
token_expire_user_override: true
file_roots:
  base:
    - $B/srv/salt
# Nodegroups for the scoped-permission tests (a nodegroup target expanded by the master).
nodegroups:
  webs: 'web-*'
  dbs: 'G@role:db'

netapi_enable_clients:
  - local
  - local_async
  - local_batch
  - local_subset
  - runner
  - runner_async
  - wheel
  - wheel_async

external_auth:
  sharedsecret:
    $SALT_USER: ['.*', '@runner', '@wheel', '@jobs']
  file:
    ^filename: $B/conf/users.txt
    ^filetype: text
    ^hashtype: plaintext
    $FILE_USER: ['.*', '@runner', '@wheel', '@jobs']
sharedsecret: $SALT_PASSWORD

rest_cherrypy:
  host: 127.0.0.1
  port: $API_PORT
  disable_ssl: true
  collect_stats: true
EOF
}

write_minion_config() {
  local id=$1 role=${1%%-*} masters
  mkdir -p "$B/conf/$id"
  # A shared minion lists both masters, each as host:port (salt reads the ret
  # port from the entry and learns each master's publish port when it signs in);
  # it connects to both at once (master_type str: salt's "hot" multi-master).
  if is_shared_minion "$id"; then
    masters="master:
  - 127.0.0.1:$PEER_RET_PORT
  - 127.0.0.1:$RET_PORT"
  else
    masters="master: 127.0.0.1
master_port: $RET_PORT
publish_port: $PUB_PORT"
  fi
  cat >"$B/conf/$id/minion" <<EOF
# Generated by test/salt/bed.sh; rewritten on every 'bed.sh start'.
id: $id
$masters
root_dir: $B/r/$id
user: $(id -un)
log_level: warning
log_level_logfile: info
# The fqdns grain does reverse DNS for every address; without a network that
# only adds start-up time.
enable_fqdns_grains: false
# Retry authentication fast: the master may still be starting.
acceptance_wait_time: 1
acceptance_wait_time_max: 2
random_reauth_delay: 0
grains:
  saltdeck_bed: true
  role: $role
EOF
  [ "$id" = web-01 ] || return 0
  # A scheduled state run, so tests see jobs that no API call started: every
  # 60 s (the first one 60 s after the minion starts), returned to the master
  # job cache. No queue: a run that collides with another state run is refused
  # ("running as PID"), which is one plain return; with queue: true every
  # version reports a collision twice (README.md, "Scheduled job").
  cat >>"$B/conf/$id/minion" <<EOF
schedule:
  demo-schedule:
    function: state.apply
    args:
      - demo
    seconds: 60
    run_on_start: false
    return_job: true
EOF
}

write_state_tree() {
  local srv=$B/srv/salt
  mkdir -p "$srv" "$B/out"
  # top.sls gives one state.apply all three outcomes Saltdeck must tell apart:
  # web-01 changes a file (changed), db-01 also has a failing state (unhealthy),
  # web-02 hits a Jinja render error (a failed run, never dropped).
  cat >"$srv/top.sls" <<'EOF'
base:
  'web-01':
    - demo
  'db-01':
    - demo
    - fail
  'web-02':
    - broken
EOF
  # The file contents carry a random hash, so every run reports `changes`.
  cat >"$srv/demo.sls" <<EOF
demo-file:
  file.managed:
    - name: $B/out/{{ grains['id'] }}.txt
    - makedirs: true
    - contents: |
        Managed by the Saltdeck test bed on {{ grains['id'] }}.
        Run token: {{ salt['test.random_hash']() }}

demo-ok:
  test.succeed_without_changes: []
EOF
  cat >"$srv/fail.sls" <<'EOF'
demo-fail:
  test.fail_without_changes: []
EOF
  # Same three lines as the fixture: render error on line 3.
  cat >"$srv/broken.sls" <<'EOF'
broken:
  test.succeed_without_changes:
    - name: {{ undefined_thing.attr }}
EOF
  # Long enough that a second state run on the same minion is refused.
  cat >"$srv/slow.sls" <<'EOF'
slow-sleep:
  cmd.run:
    - name: sleep 6
EOF
  # An orchestration (runner state.orchestrate orch.demo): the master applies demo to web-02 as a job of its own.
  mkdir -p "$srv/orch"
  cat >"$srv/orch/demo.sls" <<'EOF'
orch-demo:
  salt.state:
    - tgt: web-02
    - sls: demo
EOF
}

write_env() {
  # The version the venv really has (install checked it against SALT_VERSION).
  local real
  real=$("$VENV/bin/python" -c 'import salt.version; print(salt.version.__version__)') || real=$SALT_VERSION
  cat >"$B/bed.env.tmp" <<EOF
SALT_URL=http://127.0.0.1:$API_PORT
SALT_USER=$SALT_USER
SALT_PASSWORD=$SALT_PASSWORD
SALT_EAUTH=sharedsecret
SALT_BED_DIR=$B
SALT_BED_MINIONS=$(IFS=,; echo "${MINION_IDS[*]}")
SALT_BED_SHARED=$(IFS=,; echo "${SHARED_IDS[*]}")
SALT_BED_PEER=$PEER
SALT_BED_VERSION=$real
SALT_BED_FILE_USER=$FILE_USER
SALT_BED_FILE_PASSWORD=$FILE_PASSWORD
EOF
  mv "$B/bed.env.tmp" "$B/bed.env"
}

# Ports live in the master config; read them back for start-minion / re-checks.
# Also switches to the venv the bed was started with (conf/venv).
read_ports() {
  [ -f "$MASTER_CONF/master" ] || die "no bed in $B (run: bed.sh start $B)"
  if [ -f "$B/conf/venv" ]; then
    SALT_VERSION=$(sed -n 's/^SALT_VERSION=//p' "$B/conf/venv")
    VENV=$(sed -n 's/^VENV=//p' "$B/conf/venv")
  fi
  API_PORT=$(sed -n 's/^  port: //p' "$MASTER_CONF/master")
  PUB_PORT=$(sed -n 's/^publish_port: //p' "$MASTER_CONF/master")
  RET_PORT=$(sed -n 's/^ret_port: //p' "$MASTER_CONF/master")
}

# --- Starting and waiting ---------------------------------------------------

# Start one daemonized salt program. With -d it forks and the launcher exits
# at once; anything it prints before forking (config errors) goes to log/.
launch() {
  local name=$1 prog=$2 conf=$3
  mkdir -p "$B/log"
  "$VENV/bin/$prog" -c "$conf" -d >"$B/log/$name.launch.log" 2>&1 ||
    { cat "$B/log/$name.launch.log" >&2; return 1; }
}

# Daemon log files (salt's defaults under each root_dir).
log_files() {
  local id
  echo "$B/m/var/log/salt/master"
  echo "$B/m/var/log/salt/api"
  for id in "${MINION_IDS[@]}"; do echo "$B/r/$id/var/log/salt/minion"; done
  ls "$B"/log/*.launch.log 2>/dev/null || true
}

dump_logs() {
  local f
  echo "bed: ---- last lines of the daemon logs in $B ----" >&2
  for f in $(log_files); do
    [ -s "$f" ] || continue
    echo "==> $f <==" >&2
    tail -n 25 "$f" >&2
  done
  echo "bed: ----" >&2
}

# Wait until something listens on 127.0.0.1:$1 (bash's /dev/tcp, no tools needed).
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# $1 = comma list of ids, $2 = seconds each HTTP request may take, $3 = the
# salt-api port to ask (default: this bed's).
probe_ready() {
  "$VENV/bin/python" "$PROBE" ready --url "http://127.0.0.1:${3:-$API_PORT}" \
    --user "$SALT_USER" --password "$SALT_PASSWORD" --eauth sharedsecret --ids "$1" --http-timeout "$2"
}

# Poll until every id in $1 (comma list) answers test.ping through salt-api
# (this bed's, or the one on port $3: a peer's), or fail after $2 seconds.
# Fails early if this bed's master or salt-api died.
wait_ready() {
  local ids=$1 timeout=$2 port=${3:-$API_PORT} deadline msg="" t0
  t0=$(now)
  deadline=$((t0 + timeout))
  while :; do
    # A daemon writes its pid file only after it forked, so give freshly
    # launched ones a few seconds before taking a missing pid file as a death.
    if [ $(($(now) - t0)) -ge 10 ]; then
      pid_from_file "$MASTER_PIDFILE" >/dev/null || { log "salt-master is not running"; return 1; }
      pid_from_file "$API_PIDFILE" >/dev/null || { log "salt-api is not running"; return 1; }
    fi
    if ! port_open "$port"; then
      msg="salt-api port $port not open yet"
    elif msg=$(probe_ready "$ids" $((deadline - $(now) + 1)) "$port" 2>&1); then
      return 0
    fi
    msg=$(tail -n 1 <<<"$msg")
    if [ "$(now)" -ge "$deadline" ]; then
      log "not ready after ${timeout}s: $msg"
      return 1
    fi
    sleep 1
  done
}

start_failed() {
  dump_logs
  if [ "${SALT_BED_KEEP_ON_FAIL:-}" != "1" ]; then
    log "stopping the half-started bed (set SALT_BED_KEEP_ON_FAIL=1 to keep it)"
    cmd_stop "$B" || true
  fi
  exit 1
}

# The minions of the bed being started: SALT_BED_MINION_IDS or the three; with
# SALT_BED_PEER, the peer bed's ports and the shared ids (SALT_BED_SHARED_IDS).
choose_minions() {
  MINION_IDS=(web-01 web-02 db-01)
  SHARED_IDS=()
  PEER=""
  local ids
  if [ -n "${SALT_BED_MINION_IDS:-}" ]; then
    ids=$(parse_ids "$SALT_BED_MINION_IDS" SALT_BED_MINION_IDS) || exit 1
    read -r -a MINION_IDS <<<"$ids"
  fi
  if [ -z "${SALT_BED_PEER:-}" ]; then
    [ -z "${SALT_BED_SHARED_IDS:-}" ] || die "SALT_BED_SHARED_IDS needs SALT_BED_PEER (the bed whose master they also list)"
    return 0
  fi
  [ -d "$SALT_BED_PEER" ] || die "SALT_BED_PEER=$SALT_BED_PEER: no such dir"
  PEER=$(cd "$SALT_BED_PEER" && pwd -P)
  [ "$PEER" != "$B" ] || die "SALT_BED_PEER is this bed itself"
  [ -f "$PEER/conf/master/master" ] || die "SALT_BED_PEER=$PEER: no bed there (run: bash test/salt/bed.sh start $PEER)"
  PEER_RET_PORT=$(sed -n 's/^ret_port: //p' "$PEER/conf/master/master")
  PEER_API_PORT=$(sed -n 's/^  port: //p' "$PEER/conf/master/master")
  if [ -n "${SALT_BED_SHARED_IDS:-}" ]; then
    ids=$(parse_ids "$SALT_BED_SHARED_IDS" SALT_BED_SHARED_IDS) || exit 1
    read -r -a SHARED_IDS <<<"$ids"
  fi
  for id in "${SHARED_IDS[@]}"; do
    is_known_minion "$id" || die "SALT_BED_SHARED_IDS: $id is not one of this bed's minions (${MINION_IDS[*]})"
  done
}

# Salt's multi-master rule: the masters of one minion share one key pair (the
# minion keeps a single minion_master.pub and refuses a master whose key
# differs). The peer's pair goes into this master's pki dir before it first
# starts; 3008 keeps it as <id>.pem with master.pem a symlink, so -L.
copy_peer_master_key() {
  local from=$PEER/m/etc/salt/pki/master to=$B/m/etc/salt/pki/master
  [ -f "$from/master.pem" ] && [ -f "$from/master.pub" ] ||
    die "SALT_BED_PEER=$PEER: its master has no key yet in $from (is that bed started?)"
  mkdir -p "$to"
  cp -L "$from/master.pem" "$from/master.pub" "$to/"
  chmod 400 "$to/master.pem"
}

cmd_start() {
  set_bed_dir "${1:-}" create
  installed_ok || die "salt is not installed; run: bash test/salt/bed.sh install"

  # Already running? Then just re-check it and print the env (cheap re-use).
  if [ -n "$(master_pids)" ]; then
    read_ports
    if [ -f "$B/bed.env" ] && wait_ready "$(IFS=,; echo "${MINION_IDS[*]}")" 30 >/dev/null; then
      log "bed in $B is already running"
      cat "$B/bed.env"
      return 0
    fi
    die "a broken bed is running in $B; run: bash test/salt/bed.sh stop $B"
  fi

  local t0 id ports
  t0=$(now)
  # Leftovers of an earlier bed in this dir (keys, job cache, logs) would make
  # runs differ; remove only what this script creates.
  for id in "${MINION_IDS[@]}"; do
    [ -z "$(minion_pids "$id")" ] || die "minion $id of $B still runs; run: bash test/salt/bed.sh stop $B"
  done
  choose_minions
  rm -rf "$B/conf" "$B/m" "$B/r" "$B/srv" "$B/out" "$B/log" "$B/bed.env"
  [ -z "$PEER" ] || copy_peer_master_key

  ports=$(pick_ports)
  read -r API_PORT PUB_PORT RET_PORT <<<"$ports"
  write_master_config
  # Which venv this bed runs on: start-minion, start-api and salt use it, so
  # they work on the bed whatever SALT_BED_VERSION says now.
  printf 'SALT_VERSION=%s\nVENV=%s\nMINION_IDS=%s\nSHARED_IDS=%s\nPEER=%s\n' "$SALT_VERSION" "$VENV" \
    "$(IFS=,; echo "${MINION_IDS[*]}")" "$(IFS=,; echo "${SHARED_IDS[*]}")" "$PEER" >"$B/conf/venv"
  for id in "${MINION_IDS[@]}"; do write_minion_config "$id"; done
  write_state_tree
  log "bed dir $B; salt-api :$API_PORT, publish :$PUB_PORT, ret :$RET_PORT; minions ${MINION_IDS[*]}${PEER:+; beside $PEER (shared: ${SHARED_IDS[*]:-none})}"

  launch master salt-master "$MASTER_CONF" || start_failed
  # Minions that find no master back off; start them once the ret port listens.
  local deadline=$(($(now) + 60))
  until port_open "$RET_PORT"; do
    pid_from_file "$MASTER_PIDFILE" >/dev/null || [ "$(now)" -lt $((t0 + 10)) ] ||
      { log "salt-master exited during start-up"; start_failed; }
    [ "$(now)" -lt "$deadline" ] || { log "salt-master did not open port $RET_PORT within 60s"; start_failed; }
    sleep 0.3
  done
  launch api salt-api "$MASTER_CONF" || start_failed
  for id in "${MINION_IDS[@]}"; do launch "$id" salt-minion "$B/conf/$id" || start_failed; done

  wait_ready "$(IFS=,; echo "${MINION_IDS[*]}")" "$START_TIMEOUT" || start_failed
  # A shared minion is ready when the peer's master hears it too.
  if [ ${#SHARED_IDS[@]} -gt 0 ]; then
    wait_ready "$(IFS=,; echo "${SHARED_IDS[*]}")" "$START_TIMEOUT" "$PEER_API_PORT" || start_failed
  fi
  write_env
  log "ready in $(($(now) - t0)) s; settings in $B/bed.env"
  cat "$B/bed.env"
}

# --- Stopping ---------------------------------------------------------------

# Every process of the bed: all minions, the master and salt-api.
bed_pids() {
  local id
  for id in "${MINION_IDS[@]}"; do minion_pids "$id"; done
  master_pids
}

cmd_stop() {
  set_bed_dir "${1:-}" quiet-missing || { log "no bed dir ${1:-}: nothing to stop"; return 0; }
  # All daemons get SIGTERM at once: a salt-minion alone needs about 5 s to
  # shut down, so stopping them one after another would take 20 s.
  terminate "bed $B" bed_pids
  rm -f "$B/bed.env"   # it describes a running bed
}

cmd_stop_minion() {
  set_bed_dir "${1:-}" quiet-missing || { log "no bed dir ${1:-}: nothing to stop"; return 0; }
  is_known_minion "${2:-}" || die "unknown minion id '${2:-}' (known: ${MINION_IDS[*]})"
  terminate "minion $2" minion_pids "$2"
}

cmd_start_minion() {
  set_bed_dir "${1:-}"
  local id=${2:-}
  is_known_minion "$id" || die "unknown minion id '$id' (known: ${MINION_IDS[*]})"
  read_ports
  [ -n "$(master_pids)" ] || die "the bed in $B is not running (run: bash test/salt/bed.sh start $B)"
  if [ -n "$(minion_pids "$id")" ]; then
    log "minion $id already running"
  else
    launch "$id" salt-minion "$B/conf/$id" || { dump_logs; exit 1; }
  fi
  wait_ready "$id" "$MINION_TIMEOUT" || { dump_logs; exit 1; }
  log "minion $id answers test.ping"
}

cmd_stop_api() {
  set_bed_dir "${1:-}" quiet-missing || { log "no bed dir ${1:-}: nothing to stop"; return 0; }
  terminate "salt-api" api_pids
}

cmd_start_api() {
  set_bed_dir "${1:-}"
  read_ports
  pid_from_file "$MASTER_PIDFILE" >/dev/null ||
    die "salt-master of $B is not running (run: bash test/salt/bed.sh start $B)"
  if [ -n "$(api_pids)" ]; then
    log "salt-api already running"
  else
    launch api salt-api "$MASTER_CONF" || { dump_logs; exit 1; }
  fi
  local t0 deadline msg=""
  t0=$(now); deadline=$((t0 + MINION_TIMEOUT))
  while :; do
    if port_open "$API_PORT" && msg=$(probe_ready "" $((deadline - $(now) + 1)) 2>&1); then
      log "salt-api answers /login on :$API_PORT ($(($(now) - t0)) s)"
      return 0
    fi
    if [ "$(now)" -ge "$deadline" ]; then
      log "salt-api does not answer /login after ${MINION_TIMEOUT}s: ${msg:-port $API_PORT not open}"
      dump_logs; exit 1
    fi
    sleep 0.3
  done
}

cmd_stop_master() {
  set_bed_dir "${1:-}" quiet-missing || { log "no bed dir ${1:-}: nothing to stop"; return 0; }
  terminate "salt-master" master_only_pids
}

# The minions reconnect by themselves (they retry their master); wait until all
# answer test.ping through salt-api again.
cmd_start_master() {
  set_bed_dir "${1:-}"
  read_ports
  if [ -n "$(master_only_pids)" ]; then
    log "salt-master already running"
  else
    launch master salt-master "$MASTER_CONF" || { dump_logs; exit 1; }
  fi
  wait_ready "$(IFS=,; echo "${MINION_IDS[*]}")" "$START_TIMEOUT" || { dump_logs; exit 1; }
  log "salt-master answers and every minion answers test.ping"
}

# The venv's salt CLI against this bed's master (its config dir), so tests can
# start jobs outside salt-api. Output and exit code are salt's.
cmd_salt() {
  set_bed_dir "${1:-}"
  shift
  read_ports
  exec "$VENV/bin/salt" -c "$MASTER_CONF" "$@"
}

# The venv's salt-run against this bed's master, e.g. `bed.sh salt-run <dir> state.orchestrate orch.demo`.
cmd_salt_run() {
  set_bed_dir "${1:-}"
  shift
  read_ports
  exec "$VENV/bin/salt-run" -c "$MASTER_CONF" "$@"
}

cmd_status() {
  set_bed_dir "${1:-}"
  local id p rc=0
  p=$(pid_from_file "$MASTER_PIDFILE" || true); echo "salt-master ${p:-stopped}"
  [ -n "$p" ] || rc=1
  p=$(pid_from_file "$API_PIDFILE" || true); echo "salt-api    ${p:-stopped}"
  [ -n "$p" ] || rc=1
  for id in "${MINION_IDS[@]}"; do
    p=$(pid_from_file "$(minion_pidfile "$id")" || true); echo "$id      ${p:-stopped}"
    [ -n "$p" ] || rc=1
  done
  return $rc
}

main() {
  local cmd=${1:-}
  [ $# -gt 0 ] && shift
  check_version
  case "$cmd" in
    install) cmd_install ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    stop-minion) cmd_stop_minion "$@" ;;
    start-minion) cmd_start_minion "$@" ;;
    stop-api) cmd_stop_api "$@" ;;
    start-api) cmd_start_api "$@" ;;
    stop-master) cmd_stop_master "$@" ;;
    start-master) cmd_start_master "$@" ;;
    salt) cmd_salt "$@" ;;
    salt-run) cmd_salt_run "$@" ;;
    status) cmd_status "$@" ;;
    *) usage ;;
  esac
}

main "$@"
