#!/usr/bin/env bash
# The scheduler with real MPI ranks, oversubscribed on this one machine: `mpiexec -n 1+W
# scalebench-rank` (no launcher; the ranks place themselves on the node) of one multi-cpu
# subset-mean case of 4 tiny tasks per worker (16 x 16 draws each: the repeat is the runtime's
# own cost), for W workers doubling from 8 while memory allows. Prints per W: the start-up
# (launch to every worker's record at the scheduler), the median repeat, and the part of it
# outside the workers' phases (`runtime`: dispatch, messages, waits), from the case record.
#
#   bench/scheduler_ranks.sh BUILD_DIR [MAX_WORKERS]        (MAX_WORKERS: 256)
#
# With W ranks on a machine of C cores a repeat also measures the kernel's time-sharing of the
# cores among the ranks (W / C of them per core); bench/bench_scheduler.cpp measures the
# scheduler's own loop without it.
set -u -o pipefail
BUILD=$(cd "${1:?usage: scheduler_ranks.sh BUILD_DIR [MAX_WORKERS]}" && pwd)
MAX=${2:-256}
MPIEXEC=${SCALEBENCH_MPIEXEC:-mpiexec}
W=$(mktemp -d /tmp/sb_sched_ranks.XXXXXX)
trap 'rm -rf "$W"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
printf '%8s %12s %12s %12s %12s\n' workers startup_s repeat_ms runtime_ms ranks_rss_mb
for ((w = 8; w <= MAX; w *= 2)); do
  # blocks per row: 2 sqrt(w), so (n/chunk)^2 = 4 w tasks
  b=$("$py" -c "import math; print(max(2, round(2 * math.sqrt($w))))")
  n=$((b * 16))
  avail=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
  if [ "$avail" -lt $((w * 60 + 1024)) ]; then
    echo "stopping at $w workers: $avail MiB of memory available, about $((w * 60)) MiB needed"
    break
  fi
  "$py" - "$W" "$w" "$n" "$(date +%s.%N)" <<'EOF_PY'
import json, sys
d, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
case = {"index": 0, "id": f"subset-mean/multi-cpu/chunk=16,n={n},seed=42", "workload": "subset-mean",
        "path": "multi-cpu", "params": {"chunk": "16", "n": str(n), "seed": "42"}, "repeats": 10,
        "warmup": 1, "workers": w}
json.dump({"cases": [case], "stream": f"{d}/stream-{w}.jsonl", "measure_ceilings": False,
           "telemetry_period_s": -1, "launch_epoch": float(sys.argv[4])},
          open(f"{d}/plan-{w}.json", "w"))
EOF_PY
  # The ranks' resident memory, summed, sampled every half second while the job runs.
  (peak=0; while :; do
    s=$(ps -C scalebench-rank -o rss= | awk '{t += $1} END {print t + 0}')
    [ "$s" -gt "$peak" ] && { peak=$s; echo "$peak" >"$W/rss-$w"; }
    sleep 0.5
  done) &
  sampler=$!
  SCALEBENCH_PARTICIPANTS=all OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
    timeout 600 "$MPIEXEC" "${root[@]}" --oversubscribe --bind-to none -n $((w + 1)) \
    "$BUILD/scalebench-rank" --plan "$W/plan-$w.json" >"$W/out-$w" 2>&1
  ok=$?
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  if [ "$ok" != 0 ]; then
    echo "$w workers: the job failed:"
    tail -n 5 "$W/out-$w"
    break
  fi
  "$py" - "$W/stream-$w.jsonl" "$w" "$(cat "$W/rss-$w" 2>/dev/null || echo 0)" <<'EOF_PY'
import json, statistics, sys
path, w, rss_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
start = case = None
for line in open(path):
    r = json.loads(line)
    if r["type"] == "start":
        start = r
    if r["type"] == "case":
        case = r
assert case and case["status"] == "ok", case and case.get("message")
assert case["workers"] == w, (case["workers"], w)
tot = statistics.median(x["total"] for x in case["repeats"])
rt = statistics.median(x["runtime"] for x in case["repeats"])
print(f"{w:8d} {start['startup']['total_s']:12.3f} {tot * 1e3:12.3f} {rt * 1e3:12.3f} "
      f"{rss_kb / 1024:12.0f}")
EOF_PY
done
