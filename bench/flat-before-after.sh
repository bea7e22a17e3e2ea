#!/bin/bash
# The flat table (bench/load.ts) of two commits side by side on copies of one seeded fleet, sides alternating per round.
#   BEFORE=/path/to/worktree AFTER=/path/to/worktree SRC=bench/data/fleet-5000 OUT=bench/data/flat ROUNDS=3 bash bench/flat-before-after.sh
#   python3 bench/flat-summary.py bench/data/flat      # the table: req/s, p99 and server CPU per request, after / before
set -u
src=${SRC:?a seeded data dir (bench/seed.ts)}
out=${OUT:?an output directory}
rounds=${ROUNDS:-3}
mkdir -p $out
for side in before after; do rm -rf $out/fleet-$side; cp -a $src $out/fleet-$side; done
for round in $(seq 1 $rounds); do
  for side in before after; do
    echo "== round $round $side load $(cut -d' ' -f1-3 /proc/loadavg) $(date +%T)" >> $out/progress.log
    dir=$BEFORE; [ $side = after ] && dir=$AFTER
    (cd $dir && bun bench/load.ts --data-dir $out/fleet-$side --rounds 1 --duration 5 --only packages,packages_q_lib,activity,activity_search_web,activity_hide_routine,activity_event_type,activity_categories,minions,versions,version_query_common,minion_runs,ref_healthz,ref_auth_me --out $out/load-$side-$round.json > $out/load-$side-$round.log 2>&1)
  done
done
echo "DONE $(date +%T)" >> $out/progress.log
