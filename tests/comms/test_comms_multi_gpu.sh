#!/usr/bin/env bash
# comms on every visible GPU through the real launcher (mpiexec, NCCL, CUDA IPC): every
# collective's sweep and the pair matrix (both schedules) on gpuN, next to the same cases on
# cpuN (one CPU worker per GPU, MPI), each validated by the run itself (exit 1 on a wrong
# element) and cross-checked between the two paths; every case must have run (not skipped).
# Needs two GPUs (exit 77 = skipped otherwise).
#   test_comms_multi_gpu.sh path/to/scalebench
set -uo pipefail
sb=$1
# shellcheck source=../gpu/multi_gpu_env.sh
. "$(dirname "$0")/../gpu/multi_gpu_env.sh"
fail=0
for schedule in serial rounds; do
  out="$tmp/comms-$schedule.h5"
  if ! "$sb" run --preset tiny --workloads comms --paths cpuN,gpuN --repeats 2 --no-ceilings \
      --param comms.schedule="$schedule" --out "$out" > "$tmp/run.txt" 2>&1; then
    echo "FAILED (schedule=$schedule):"
    cat "$tmp/run.txt"
    fail=1
    continue
  fi
  "$sb" report "$out" --format json > "$tmp/report.json" || { fail=1; continue; }
  python3 - "$tmp/report.json" "$gpus" <<'PY' || fail=1
import json, sys
model = json.load(open(sys.argv[1]))
gpus = int(sys.argv[2])
bad = [c["id"] + ": " + c["status"] + " " + c.get("message", "") for c in model["cases"]
       if c["status"] != "ok"]
if bad:
    sys.exit("cases not ok:\n" + "\n".join(bad))
pairs = [c for c in model["cases"] if c["path"] == "multi-gpu" and c["params"]["op"] == "pairs"]
links = pairs[0]["metrics"]["links"]
if len(links) != gpus * (gpus - 1):
    sys.exit(f"{len(links)} links measured for {gpus} GPUs")
print("ok:", len(model["cases"]), "cases;", pairs[0]["metrics"].get("notes", []))
PY
done
exit $fail
