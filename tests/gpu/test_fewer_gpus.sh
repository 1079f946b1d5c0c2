#!/usr/bin/env bash
# Fewer GPUs for small problems (runtime/src/participant_plan.hpp) through the real launcher:
# the tiny preset's svd and groupby multi-gpu cases run on one GPU; an svd of two row blocks
# (m = 200 000, n = 100) runs on two GPUs over a NCCL communicator of their own when three or
# more are visible, between cases on every GPU. Each run validates itself and cross-checks
# gpuN against single-cpu; every multi-gpu summary row names its GPUs. Needs two GPUs
# (exit 77 = skipped otherwise).
#   test_fewer_gpus.sh path/to/scalebench python3
set -uo pipefail
sb=$1 py=${2:-python3}
# shellcheck source=multi_gpu_env.sh
. "$(dirname "$0")/multi_gpu_env.sh"
export SCALEBENCH_PARTICIPANTS=auto
fail=0
check() {  # label, "PART@GPUS ..." (the multi-gpu case whose id has PART uses GPUS), run arguments
  local label=$1 expected=$2
  shift 2
  if ! "$sb" run --repeats 2 --no-ceilings "$@" --out "$tmp/$label.h5" >"$tmp/$label.txt" 2>&1; then
    echo "FAILED $label: run exited $?"
    cat "$tmp/$label.txt"
    fail=1
    return
  fi
  "$sb" report "$tmp/$label.h5" --format json >"$tmp/$label.json" || { fail=1; return; }
  "$py" - "$tmp/$label.json" "$gpus" "$expected" <<'PY' || { fail=1; cat "$tmp/$label.txt"; }
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["summary"] if r["path"] == "multi-gpu"]
gpus = int(sys.argv[2])
expected = dict((p, int(n)) for p, n in (e.split("@") for e in sys.argv[3].split()))
got = {p: [r["workers"] for r in rows if p in r["case"]] for p in expected}
assert all(got[p] == [n] for p, n in expected.items()), f"workers {got}, expected {expected}"
assert len(rows) == len(expected), [r["case"] for r in rows]
for r in rows:
    assert r["status"] == "ok", r
    note = f"fewer workers ({r['workers']} of {gpus} GPUs)"
    assert (note in r["notes"]) == (r["workers"] < gpus), (note, r["notes"])
print("ok", sys.argv[1], got)
PY
}
# svd tiny; groupby tiny by-name, by-id, by-key: one GPU each.
check tiny "svd@1 by-name@1 by-id@1 by-key@1" --preset tiny --workloads svd,groupby --paths cpu1,gpuN
if [ "$gpus" -ge 3 ]; then
  # Two row blocks: a communicator over the first two GPUs, then cases on every GPU again.
  check subset "m=200000@2 m=400000@$gpus m=800000@$gpus" --preset tiny --workloads svd \
    --paths cpu1,gpuN --param svd.n=100 --param svd.chunk=100000 \
    --param svd.m=200000,400000,800000
fi
exit $fail
