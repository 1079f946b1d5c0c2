#!/usr/bin/env bash
# Host stalls (runtime/src/host_stall.hpp) done for real: while a single-gpu groupby case runs,
# its worker process is stopped (SIGSTOP) for 20 ms at a time, as a hypervisor pauses a VM's
# CPUs; the GPU finishes its tasks meanwhile. The report must mark the repeats hit, with a
# host_stall of at least 10 ms, leave them out of the median and say so in the summary notes.
#   test_host_stall.sh path/to/scalebench python3
set -uo pipefail
sb=$1 py=${2:-python3}
tmp=$(mktemp -d)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
"$sb" run --preset seed --workloads groupby --param groupby.query=by-id --paths gpu1 \
  --repeats 3000 --no-ceilings --out "$tmp/s.h5" >"$tmp/run.txt" 2>&1 &
run_pid=$!
# The worker: the scalebench-rank process of MPI rank 1, once its case has started.
worker=
for _ in $(seq 600); do
  if grep -q "started" "$tmp/run.txt" 2>/dev/null; then
    for p in $(pgrep -f scalebench-rank); do
      if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
        worker=$p
      fi
    done
    [ -n "$worker" ] && break
  fi
  sleep 0.05
done
if [ -z "$worker" ]; then
  echo "FAILED: no worker process found"
  cat "$tmp/run.txt"
  exit 1
fi
for _ in $(seq 20); do
  kill -STOP "$worker" && sleep 0.02 && kill -CONT "$worker"
  sleep 0.05
done
wait "$run_pid"
rc=$?
run_pid=
if [ $rc -ne 0 ]; then
  echo "FAILED: run exited $rc"
  cat "$tmp/run.txt"
  exit 1
fi
"$sb" report "$tmp/s.h5" --format json >"$tmp/s.json" || exit 1
"$py" - "$tmp/s.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
(case,) = r["cases"]
m, reps = case["metrics"], case["repeats"]
hit = [x for x in reps if x.get("host_stalled")]
assert m["host_stalled_repeats"] == len(hit) >= 1, (m, len(hit))
# Each 20 ms stop that fell among a repeat's tasks; the node may add short stalls of its own.
assert len([x for x in hit if x["host_stall"] >= 0.010]) >= 5, [x["host_stall"] for x in hit]
assert all(x["host_stall"] >= 0.0003 for x in hit), [x["host_stall"] for x in hit]
assert m["left_out_repeats"] == len(hit), m
kept = [x["total"] for x in reps if not x.get("host_stalled")]
assert abs(m["median_s"] - statistics.median(kept)) < 1e-12, (m["median_s"], statistics.median(kept))
(row,) = r["summary"]
assert f"host stalls in {len(hit)} of {len(reps)} repeats" in row["notes"], row["notes"]
assert "left out of the median" in row["notes"], row["notes"]
print(f"ok: {len(hit)} of {len(reps)} repeats host-stalled, longest "
      f"{max(x['host_stall'] for x in hit) * 1e3:.1f} ms; median {m['median_s'] * 1e3:.3f} ms")
PY
