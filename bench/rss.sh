#!/bin/bash
# Serving RSS under a read load without ingest (issue 14): starts `saltdeck serve` on a seeded data dir, runs wrk
# (-t1 -c16, 4 s) on eight read paths and 6 s of random minions' runs, samples VmRSS every 250 ms, prints the peak.
#   bash bench/rss.sh bench/data/fleet-50000 PORT [bun run flags...]
# The server's own pollers run as configured in the data dir; the data dir's salt settings should be empty or off.
set -u
dir=$(realpath "$1"); port=$2; shift 2
cd "$(dirname "$0")/.."
SALTDECK_ADMIN_PASSWORD=bench-admin-pw bun run "$@" src/main.ts serve --data-dir "$dir" --port "$port" > "/tmp/rss-$port.log" 2>&1 &
for i in $(seq 100); do curl -sf "localhost:$port/healthz" >/dev/null && break; sleep 0.2; done
pid=$(pgrep -f "serve --data-dir $dir --port $port" | tail -1)
c=$(curl -s -i -X POST -H 'content-type: application/json' -d '{"username":"admin","password":"bench-admin-pw"}' "localhost:$port/api/auth/login" | grep -i set-cookie | sed 's/.*saltdeck_session=\([^;]*\).*/\1/')
echo "idle $(grep VmRSS /proc/$pid/status)"
( while kill -0 "$pid" 2>/dev/null; do awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null; sleep 0.25; done ) > "/tmp/rss-$port.samples" &
name=$(curl -s -H "Cookie: saltdeck_session=$c" "localhost:$port/api/inventory/packages?sort=minion_count&limit=1" | sed 's/.*"name":"\([^"]*\)".*/\1/')
for p in "/api/inventory/packages" "/api/inventory/packages?q=lib" "/api/activity" "/api/activity?search=web" "/api/activity?hide_routine=true" "/api/minions" "/api/inventory/packages/$name/versions" "/api/activity?since_minutes=60"; do
  wrk -t1 -c16 -d4s -H "Cookie: saltdeck_session=$c" "http://127.0.0.1:$port$p" | grep Requests/sec | tr -d "\n"; echo " $p"
done
wrk -t1 -c16 -d6s -H "Cookie: saltdeck_session=$c" -s bench/runs.lua "http://127.0.0.1:$port" -- "$dir/minion-ids.txt" > /dev/null
echo "after $(grep -E 'VmRSS|RssAnon|RssFile|VmHWM' /proc/$pid/status | tr -s ' \n' ' ')"
echo "peak $(sort -n "/tmp/rss-$port.samples" | tail -1) kB"
kill "$pid"; wait 2>/dev/null
