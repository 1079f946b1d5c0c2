#!/usr/bin/env bash
# One visible GPU per worker (runtime/src/gpu_isolation.hpp) through the real launcher: a gpuN
# run on every visible GPU, once isolated (the default) and once with
# SCALEBENCH_GPU_ISOLATION=0. Both must validate; the report's /system/gpus must name as many
# distinct GPUs (PCI bus ids) as there are workers, each worker on the GPU of its placement,
# and isolated workers must each have seen one GPU as CUDA device 0, with the launcher's
# CUDA_DEVICE_MAX_CONNECTIONS. Needs two GPUs (exit 77).
#   test_gpu_isolation.sh path/to/scalebench
set -uo pipefail
sb=$1
# shellcheck source=multi_gpu_env.sh
. "$(dirname "$0")/multi_gpu_env.sh"
fail=0
for iso in 1 0; do
  SCALEBENCH_GPU_ISOLATION=$iso "$sb" run --preset tiny --workloads subset-mean,groupby \
    --paths gpu1,gpuN --repeats 1 --no-ceilings --out "$tmp/r$iso.h5" > "$tmp/r$iso.txt" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED (isolation=$iso): exit $rc"
    cat "$tmp/r$iso.txt"
    fail=1
    continue
  fi
  "$sb" report "$tmp/r$iso.h5" --format json > "$tmp/r$iso.json" || { fail=1; continue; }
  python3 - "$tmp/r$iso.json" "$iso" "$gpus" <<'PY' || fail=1
import json, os, sys
model = json.load(open(sys.argv[1]))
iso, gpus = sys.argv[2] == "1", int(sys.argv[3])
rows = model["system"]["gpus"]
def fail(msg):
    print(f"FAILED (isolation={int(iso)}): {msg}\n" + json.dumps(rows, indent=1))
    sys.exit(1)
if len(rows) != gpus:
    fail(f"{len(rows)} GPU descriptions for {gpus} GPUs")
buses = {r.get("pci_bus_id") for r in rows}
if len(buses) != gpus or None in buses:
    fail("the workers do not drive distinct GPUs")
if sorted(int(r["node_gpu"]) for r in rows) != list(range(gpus)):
    fail("placements are not GPUs 0..N-1")
for r in rows:
    if bool(r["isolated"]) != iso:
        fail("isolation flag differs from the setting")
    if iso and (int(r["device"]) != 0 or "," in str(r["cuda_visible_devices"])):
        fail("an isolated worker saw more than its GPU")
    if not iso and int(r["device"]) != int(r["node_gpu"]):
        fail("a worker without isolation drove another ordinal than its placement")
    # the launcher's default for the ranks, unless the user set one (rank_environment.hpp)
    want = os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS", "4")
    if str(r.get("cuda_max_connections")) != want:
        fail(f"the worker's context has {r.get('cuda_max_connections')} hardware queues, not {want}")
print(f"ok (isolation={int(iso)}): {gpus} workers on {gpus} distinct GPUs")
PY
done
exit $fail
