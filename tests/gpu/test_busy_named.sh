#!/usr/bin/env bash
# Node acceptance names the cause on one GPU (CTest gpu.busy_named, label gpu; issue #50):
# another process (busy_gpu, a kernel spinning on every SM) keeps GPU 0 busy while
#   scalebench run --preset seed --workloads subset-mean --paths each-gpu --check
# measures it: GPU 0's verdict names busy_gpu by pid and name. busy_gpu takes every SM, so the
# GPU is `busy` whatever it is compared with, where NVML samples per-process utilization; where
# it does not (the reason then has no SM share), `busy` needs the device to be found slow, and a
# GPU without a peer or a reference is `not judged` with busy_gpu still named. Every health field
# and both host links are recorded. busy_gpu is stopped however the test ends.
# usage: test_busy_named.sh SCALEBENCH BUSY_GPU PYTHON3   (exit 77: no GPU)
set -u
sb=$1 busy=$2 py=$3
n=$("$busy" --count 2>/dev/null || echo 0)
if [ "${n:-0}" -lt 1 ]; then echo "SKIP: needs a GPU"; exit 77; fi
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
first=$(cut -d, -f1 <<<"${CUDA_VISIBLE_DEVICES:-0}")
CUDA_VISIBLE_DEVICES=$first "$busy" 500 >"$tmp/busy.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q busy "$tmp/busy.log" && break; sleep 0.1; done
grep -q busy "$tmp/busy.log" || { cat "$tmp/busy.log"; echo "FAIL: busy_gpu did not start"; exit 1; }

CUDA_VISIBLE_DEVICES=$first timeout 450 "$sb" run --preset seed --workloads subset-mean \
  --paths each-gpu --repeats 5 --check --out "$tmp/r.h5" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
case $rc in 1 | 5) ;; *) echo "FAIL: run --check exited $rc, not 1 (busy) or 5 (not judged)"; exit 1 ;; esac
"$sb" report "$tmp/r.h5" --format json >"$tmp/r.json" || { echo "FAIL: report --format json"; exit 1; }
"$py" - "$tmp/r.json" "$pid" "$rc" <<'EOF_PY'
import json
import sys

path, hog, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(path))
row = [r for r in m["verdicts"] if r["workload"] == "subset-mean"][0]
assert f"busy_gpu (pid {hog}" in row["reason"], row
case = [c for c in m["cases"] if c["path"] == "each-gpu"][0]
sampled = case["interference"].get("gpu_others_sm_pct") is not None
if sampled:
    assert row["verdict"] == "busy" and rc == 1, (row, rc)
else:
    assert row["verdict"] in ("busy", "not judged"), row
health = {h["field"]: h for h in m["system"]["gpu_health"]}
assert len(health) == 17, sorted(health)
for h in health.values():
    assert h["value"] and (h["value"] != "unavailable" or h["detail"]), h
assert len(m["system"]["host_links"]) == 2, m["system"]["host_links"]
print(f"GPU 0 {row['verdict']}, busy_gpu (pid {hog}) named; 17 health fields; 2 host links")
EOF_PY
