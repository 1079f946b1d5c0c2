#!/usr/bin/env bash
# One GPU-machine session for the GPU runtime and subset-mean: build (standalone, then CMake),
# GPU tests, the kernel benchmark with SM clocks sampled, the peer script; logs under $OUT.
#   OUT=/some/dir tests/gpu/device_run.sh            (repository root; .deps carried)
set -uo pipefail
out=${OUT:-/tmp/sb-gpu-run}
mkdir -p "$out" /opt/deps
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for d in .deps/*.deb; do dpkg -x "$d" /opt/deps; done
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; } \
  > "$out/info.txt" 2>&1
tests/gpu/standalone_build.sh build-sa > "$out/build.log" 2>&1 || { echo "standalone build failed"; tail "$out/build.log"; }
grep -hE 'Used|spill' build-sa/obj/*.ptxas.txt >> "$out/info.txt"
cuobjdump -sass build-sa/bench_subset_mean_gpu | python3 tests/gpu/sass_mix.py > "$out/sass_mix.txt"
(cd build-sa && for t in test_philox_gpu test_subset_mean_gpu test_gpu_context test_nvml_probe; do
   timeout 200 ./$t >> "$out/tests.log" 2>&1; echo "$t rc=$?"; done)
grep -E 'FAILED|ulp:|ulp,|PASSED' "$out/tests.log"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv \
  -lms 250 > "$out/clocks.csv" 2>&1 &
smi=$!
(cd build-sa && timeout 200 ./bench_subset_mean_gpu --benchmark_counters_tabular=true \
   --benchmark_out="$out/bench.json" --benchmark_out_format=json > "$out/bench.txt" 2>&1)
kill $smi
PYTHONUNBUFFERED=1 timeout 150 python3 tools/peers/subset_mean_peers.py > "$out/peers.txt" 2>&1
# The real build and `ctest -L gpu` (needs the rest of the tree to configure and compile).
SB_TARGETS="test_philox_gpu test_subset_mean_gpu test_gpu_context test_nvml_probe bench_subset_mean_gpu" \
  timeout 300 tools/device-build.sh .deps build-gpu > "$out/cmake_build.log" 2>&1
echo "cmake build rc=$?"
(cd build-gpu 2>/dev/null && timeout 200 ctest -L gpu --output-on-failure > "$out/ctest.log" 2>&1; \
  echo "ctest -L gpu rc=$?"; tail -4 "$out/ctest.log")
echo "--- clocks during the benchmark (MHz, W):"
awk -F, 'NR>1{c[$2]++; p+=$3; n++} END{for (k in c) print k, c[k] " samples"; if (n) print "mean power", p/n " W"}' "$out/clocks.csv"
echo "--- benchmark"; grep -E '^BM_' "$out/bench.txt" | sed 's|/min_time:[0-9.]*/manual_time||'
echo "--- peers"; grep -v '^#' "$out/peers.txt"
