#!/usr/bin/env bash
# Multi-GPU groupby by-key through the real launcher (mpiexec, NCCL): both shuffles of
# worker_gpu.cu against the single-cpu path, group by group (tiny preset: every group is
# compared). Cardinality 3 sends most rows of a worker to one send bucket of one owner, so the
# bucket overflows into the spill table and the slice buckets overflow into global atomics: the
# rare paths of the row shuffle. Needs two GPUs (exit 77 = skipped otherwise).
#   test_groupby_multi_gpu.sh path/to/scalebench
set -uo pipefail
sb=$1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "fewer than two GPUs visible: skipped"
  exit 77
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
i=0
for params in "gpu_shuffle=rows cardinality=3" "gpu_shuffle=rows cardinality=1000" \
              "gpu_shuffle=rows" "gpu_shuffle=groups" "gpu_shuffle=auto cardinality=50000"; do
  i=$((i + 1))
  args=(--param groupby.query=by-key)
  for p in $params; do args+=(--param "groupby.$p"); done
  "$sb" run --preset tiny --workloads groupby --paths cpu1,gpuN --repeats 2 --no-ceilings \
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
