#!/usr/bin/env bash
# Runs one workload's tiny preset on cpu1 and gpuN (every visible GPU, real mpiexec and NCCL)
# once per case and fails when any run fails: the run validates its answers itself and
# cross-checks gpuN against single-cpu. Needs two GPUs (exit 77 = skipped otherwise).
#   run_multi_gpu_cases.sh path/to/scalebench WORKLOAD "FIXED k=v ..." "CASE k=v ..." ...
# Keys are the workload's parameters without the "WORKLOAD." prefix.
set -uo pipefail
sb=$1 workload=$2 fixed=$3
shift 3
# shellcheck source=multi_gpu_env.sh
. "$(dirname "$0")/multi_gpu_env.sh"
fail=0
i=0
for params in "$@"; do
  i=$((i + 1))
  args=()
  for p in $fixed $params; do args+=(--param "$workload.$p"); done
  "$sb" run --preset tiny --workloads "$workload" --paths cpu1,gpuN --repeats 2 --no-ceilings \
    "${args[@]}" --out "$tmp/r$i.h5" > "$tmp/r$i.txt" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED ($params): exit $rc"
    cat "$tmp/r$i.txt"
    fail=1
  else
    echo "ok ($params)"
  fi
done
exit $fail
