#!/usr/bin/env bash
# Measures scalebench on a GPU node in one go and prints a short table last.
#   tools/gpu-campaign.sh single   build, GPU tests, seed preset on one GPU, peers
#   tools/gpu-campaign.sh scaling  build, large preset on 1, 2 and 4 GPUs (multi-gpu path)
# Logs and reports go to $OUT (or ./campaign-out). Needs the .deps bundle (tools/device-build.sh).
set -uo pipefail
mode=${1:-single}
out=${OUT:-$PWD/campaign-out}
mkdir -p "$out"
# NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi -L | tee "$out/gpus.txt"
targets="scalebench scalebench-rank"
[ "$mode" = single ] && targets="$targets ${SB_EXTRA_TARGETS:-}"
t0=$(date +%s)
if ! SB_TARGETS="$targets" tools/device-build.sh .deps build-gpu >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
sb=build-gpu/scalebench
summary=()
case "$mode" in
  single)
    if [ -n "${SB_EXTRA_TARGETS:-}" ]; then
      (cd build-gpu && ctest -L gpu --output-on-failure >"$out/gpu-tests.log" 2>&1)
      summary+=("gpu tests: $(grep -E 'tests passed|tests failed' "$out/gpu-tests.log" | tail -1)")
    fi
    CUDA_VISIBLE_DEVICES=0 $sb run --preset seed --paths gpu1 --repeats 10 --out "$out/seed-1gpu.h5" \
      >"$out/seed-1gpu.txt" 2>"$out/seed-1gpu.err"
    summary+=("seed gpu1 rc=$?")
    $sb report "$out/seed-1gpu.h5" --format markdown >"$out/seed-1gpu.md" 2>&1
    for p in tools/peers/*.py; do
      [ -f "$p" ] && PYTHONUNBUFFERED=1 timeout 240 python3 "$p" >"$out/peer-$(basename "$p" .py).txt" 2>&1
    done
    ;;
  scaling)
    for g in 0 0,1 0,1,2,3; do
      n=$(echo "$g" | tr ',' '\n' | wc -l)
      CUDA_VISIBLE_DEVICES=$g $sb run --preset large --paths gpu1,gpuN --repeats 5 \
        --out "$out/large-${n}gpu.h5" >"$out/large-${n}gpu.txt" 2>"$out/large-${n}gpu.err"
      summary+=("large ${n} GPU rc=$?")
    done
    ;;
esac
for f in "$out"/*.txt; do echo "== $f"; tail -25 "$f"; done
printf '%s\n' "${summary[@]}"
