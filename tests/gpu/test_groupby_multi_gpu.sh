#!/usr/bin/env bash
# Multi-GPU groupby by-key through the real launcher (mpiexec, NCCL, CUDA IPC): the three
# exchanges of workloads/groupby/gpu/ (groups; rows pushed to their owners during the tasks,
# or sent by NCCL after them), against the single-cpu path, group by group (tiny preset: every group
# is compared). Cardinality 3 sends most rows of a worker to one send bucket of one owner, so the
# bucket overflows into the spill table and the slice buckets overflow into global atomics: the
# rare paths of the row shuffle. Keys travel as 32-bit words up to cardinality 2^32 and as
# 64-bit words above it (cardinality 10^10). The tuning keys change the exchanges' code paths,
# not their answers: push_blocks (3 blocks of pushes, and 1024, more blocks than items) and
# shuffle_chunks (2 pieces, and 3, cut to a divisor of the regions). With eight tasks of 2^20
# rows, a GPU that pushes twice or more splits the rows of all its pushes but the last while the
# last land (from three GPUs on; checked on 1000 sampled groups). Needs two GPUs (exit 77 = skipped otherwise).
#   test_groupby_multi_gpu.sh path/to/scalebench
exec "$(dirname "$0")/run_multi_gpu_cases.sh" "$1" groupby "query=by-key" \
  "gpu_shuffle=rows gpu_exchange=peer cardinality=3" \
  "gpu_shuffle=rows gpu_exchange=peer cardinality=1000" "gpu_shuffle=rows gpu_exchange=peer" \
  "gpu_shuffle=rows gpu_exchange=peer cardinality=10000000000" \
  "gpu_shuffle=rows gpu_exchange=nccl cardinality=3" \
  "gpu_shuffle=rows gpu_exchange=nccl cardinality=1000" "gpu_shuffle=rows gpu_exchange=nccl" \
  "gpu_shuffle=rows gpu_exchange=nccl cardinality=10000000000" \
  "gpu_shuffle=groups" "gpu_shuffle=auto cardinality=50000" \
  "gpu_shuffle=rows gpu_exchange=peer push_blocks=3" \
  "gpu_shuffle=rows gpu_exchange=peer push_blocks=1024 cardinality=3" \
  "gpu_shuffle=rows gpu_exchange=peer rows=8388608 partition=1048576" \
  "gpu_shuffle=rows gpu_exchange=nccl shuffle_chunks=2" \
  "gpu_shuffle=rows gpu_exchange=nccl shuffle_chunks=3 cardinality=1000"
