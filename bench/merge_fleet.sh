#!/usr/bin/env bash
# What `scalebench report merge` of a fleet costs: NODES synthetic single-node acceptance
# reports of 8-GPU nodes (bench/make_fleet_reports.cpp: each-gpu and each-node records of
# subset-mean and svd with their telemetry series and task events, one slow GPU, two nodes that
# never reported), merged as a fleet folder; prints the wall time, the CPU time (user + system,
# its reading processes included: on a shared machine the wall time also counts the others'
# load) and the peak memory (/usr/bin/time) of the merge, and the merged report's size.
#
#   bench/merge_fleet.sh BUILD_DIR [NODES] [WORK_DIR]      (NODES: 1000; WORK_DIR: a temp folder)
#
# Exit 0 when the merge worked and its table names the slow GPU's node and the missing nodes;
# the figures are printed, not judged (docs/performance.md keeps them).
set -u -o pipefail
BUILD=$(cd "${1:?usage: merge_fleet.sh BUILD_DIR [NODES] [WORK_DIR]}" && pwd)
NODES=${2:-1000}
WORK=${3:-}
own=0
if [ -z "$WORK" ]; then
  WORK=$(mktemp -d /tmp/sb_merge_fleet.XXXXXX)
  own=1
fi
cleanup() { [ "$own" = 1 ] && rm -rf "$WORK"; }
trap cleanup EXIT
DIR=$WORK/fleet
SLOW=$((NODES / 3))
t0=$(date +%s.%N)
"$BUILD/bench/make_fleet_reports" "$DIR" "$NODES" --gpus 8 --slow "$SLOW" --missing 2 || exit 1
t1=$(date +%s.%N)
echo "made $NODES reports in $(echo "$t1 - $t0" | bc) s: $(du -sh "$DIR" | cut -f1)"
/usr/bin/time -f '%e %M %U %S' -o "$WORK/time.txt" \
  "$BUILD/scalebench" report merge "$DIR" --out "$WORK/merged.h5" >"$WORK/merge.out" 2>"$WORK/merge.err"
code=$?
read -r wall rss_kb user sys <"$WORK/time.txt"
cat "$WORK/merge.out"
tail -n 3 "$WORK/merge.err"
echo "merge of $NODES reports: exit $code, wall ${wall} s, CPU $(echo "$user + $sys" | bc) s," \
  "peak memory $((rss_kb / 1024)) MiB," \
  "merged report $(du -h "$WORK/merged.h5" 2>/dev/null | cut -f1)"
[ "$code" = 0 ] || exit 1
slow=$(printf 'gpu%04d' "$SLOW")
grep -q "$slow" "$WORK/merge.out" || { echo "the merged table does not name $slow"; exit 1; }
grep -q "^missing" "$WORK/merge.out" || { echo "the merged table names no missing node"; exit 1; }
exit 0
