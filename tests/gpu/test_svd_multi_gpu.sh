#!/usr/bin/env bash
# Multi-GPU svd through the real launcher (mpiexec, NCCL): every first QR level of
# tsqr_gpu.cu (sketch, stack, blocks; the sketch's forced fallback to Householder QR and the
# tree, sketch_check=1) on every visible GPU, validated by the run itself
# (residual, orthogonality, singular values against single-cpu and LAPACK dgesvd of the whole
# matrix), plain and badly conditioned; the sketch with one row slice per stream and with one
# slice for every row (slice_rows). Needs two GPUs (exit 77 = skipped otherwise).
#   test_svd_multi_gpu.sh path/to/scalebench
exec "$(dirname "$0")/run_multi_gpu_cases.sh" "$1" svd "" \
  "gpu_local=sketch" "gpu_local=sketch condition=1e10" "gpu_local=sketch sketch_check=1" "gpu_local=stack" "gpu_local=blocks" \
  "gpu_local=auto m=16000 chunk=1000 n=200" \
  "gpu_local=sketch slice_rows=1" "gpu_local=sketch slice_rows=1000000"
