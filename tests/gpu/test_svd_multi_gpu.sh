#!/usr/bin/env bash
# Multi-GPU svd through the real launcher (mpiexec, NCCL tree): every first QR level of
# tsqr_gpu.cu (sketch, stack, blocks) on every visible GPU, validated by the run itself
# (residual, orthogonality, singular values against single-cpu and LAPACK dgesvd of the whole
# matrix), plain and badly conditioned. Needs two GPUs (exit 77 = skipped otherwise).
#   test_svd_multi_gpu.sh path/to/scalebench
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
for params in "gpu_local=sketch" "gpu_local=sketch condition=1e10" "gpu_local=stack" \
              "gpu_local=blocks" "gpu_local=auto m=16000 chunk=1000 n=200"; do
  i=$((i + 1))
  args=()
  for p in $params; do args+=(--param "svd.$p"); done
  "$sb" run --preset tiny --workloads svd --paths cpu1,gpuN --repeats 2 --no-ceilings \
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
