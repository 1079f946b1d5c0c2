#!/usr/bin/env bash
# The transport axis of svd and groupby (comm=nccl | mpi-host) on every visible GPU through the
# real launcher: each case on cpu1 and gpuN, the run validating itself and cross-checking gpuN
# against single-cpu, so both transports must give the CPU's answer. svd with Householder
# blocks (the R-factor tree's sends) and with the sketch (all-reduces, broadcasts); groupby's
# dense reduction and both by-key shuffles. Needs two GPUs (exit 77 = skipped otherwise).
#   test_transport_multi_gpu.sh path/to/scalebench
set -uo pipefail
sb=$1 cases=$(dirname "$0")/../gpu/run_multi_gpu_cases.sh
"$cases" "$sb" svd "" "comm=nccl gpu_local=blocks" "comm=mpi-host gpu_local=blocks" \
  "comm=nccl gpu_local=sketch" "comm=mpi-host gpu_local=sketch" || exit $?
"$cases" "$sb" groupby "" "comm=mpi-host query=by-name" "comm=mpi-host query=by-id" \
  "comm=mpi-host query=by-key gpu_shuffle=groups" "comm=mpi-host query=by-key gpu_shuffle=rows" \
  "comm=mpi-host query=by-key gpu_shuffle=rows cardinality=3"
