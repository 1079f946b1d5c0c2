#!/usr/bin/env bash
# Node acceptance on every visible GPU (CTest gpu.each_gpu_check, label gpu): another process
# keeps GPU 1 busy (busy_gpu, a kernel spinning for the whole run) while
#   scalebench run --preset seed --workloads subset-mean --paths each-gpu --check
# measures every GPU at once: the run must exit 1 naming GPU 1, and only it, `busy` with
# busy_gpu's pid (issue #50), with telemetry (SM clock, power, clock-event reasons) and energy in
# every device's record, and every GPU's health fields and host links.
# usage: test_each_gpu_check.sh SCALEBENCH BUSY_GPU PYTHON3   (exit 77: fewer than 2 GPUs)
set -u
sb=$1 busy=$2 py=$3
n=$("$busy" --count 2>/dev/null || echo 0)
if [ "${n:-0}" -lt 2 ]; then echo "SKIP: needs 2 GPUs or more (found ${n:-0})"; exit 77; fi
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
# GPU 1 of scalebench's placement is the second visible GPU.
list=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((n - 1)))}
second=$(cut -d, -f2 <<<"$list")
CUDA_VISIBLE_DEVICES=$second "$busy" 600 >"$tmp/busy.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q busy "$tmp/busy.log" && break; sleep 0.1; done
grep -q busy "$tmp/busy.log" || { cat "$tmp/busy.log"; echo "FAIL: busy_gpu did not start"; exit 1; }

"$sb" run --preset seed --workloads subset-mean --paths each-gpu --repeats 5 --check \
  --out "$tmp/r.h5" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" = 1 ] || { echo "FAIL: run --check exited $rc, not 1"; exit 1; }
grep -q "GPU 1 on" "$tmp/out" || { echo "FAIL: GPU 1 not named"; exit 1; }
# The report read through scalebench itself (the GPU machine need not have h5py).
"$sb" report "$tmp/r.h5" --format json >"$tmp/r.json" || { echo "FAIL: report --format json"; exit 1; }
"$py" - "$tmp/r.json" "$n" "$pid" <<'EOF_PY'
import json
import sys

path, gpus, hog = sys.argv[1], int(sys.argv[2]), sys.argv[3]
model = json.load(open(path))
rows = [r for r in model["verdicts"] if r["workload"] == "subset-mean"]
assert len(rows) == gpus, f"{len(rows)} verdicts for {gpus} GPUs"
bad = sorted(int(r["device"]) for r in rows if r["verdict"] != "ok")
assert bad == [1], f"not ok: GPUs {bad}, expected [1]: " + "; ".join(r["reason"] for r in rows)
busy = [r for r in rows if r["device"] == 1][0]
assert busy["verdict"] == "busy" and f"busy_gpu (pid {hog}" in busy["reason"], busy
links = [r for r in model["verdicts"] if r["workload"] == "link"]
health = [r for r in model["verdicts"] if r["workload"] == "health"]
assert len(links) == 2 * gpus and len(health) == gpus, (len(links), len(health))
fields = {}
for h in model["system"]["gpu_health"]:
    fields.setdefault(h["node_gpu"], set()).add(h["field"])
assert len(fields) == gpus and all(len(f) == 17 for f in fields.values()), fields
for case in model["cases"]:
    name = case["id"]
    assert "telemetry" in case, f"{name}: no telemetry"
    series = case["telemetry"]["series"]
    for c in ("gpu_sm_mhz", "gpu_power_w", "gpu_clock_event_reasons"):
        assert c in series, f"{name}: no {c} in the telemetry series ({list(series)})"
    sm = [x for x in series["gpu_sm_mhz"] if isinstance(x, (int, float)) and x == x]
    assert sm and 100 < max(sm) < 5000, f"{name}: SM clock {sm[:5]}"
    assert case["energy"]["source"] == "nvml", case["energy"]
print("GPU 1 alone not ok (busy, busy_gpu named); telemetry and energy in every device's record")
EOF_PY
