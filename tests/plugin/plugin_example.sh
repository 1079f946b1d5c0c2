#!/usr/bin/env bash
# examples/plugin as a user builds it: scalebench installed with `cmake --install` into a prefix
# that is then moved (the installation is relocatable), the plugin configured with nothing but
# find_package(scalebench) and that prefix, and run by the installed program: the CPU paths and
# each-node (mode cpu), or the GPU paths and each-gpu beside the single-cpu reference they are
# cross-checked against (mode gpu). The report must hold validated, cross-checked ok cases with their efficiency. In
# mode cpu, the plugin is built with -DTILED_DGEMM_CUDA=OFF (its CPU worker only, as on a machine
# without nvcc; docs.writing-a-workload builds it with its GPU worker), every installed header
# must also compile on its own, and a suite file's `plugins`, datagen (NumPy recomputes C = A B
# from the file), info, run --help, report and compare must see the plugin's workload.
# usage: plugin_example.sh cpu|gpu BUILD_DIR EXAMPLE_DIR PYTHON3 GENERATOR CXX
# (exit 77: skipped: mode cpu: no h5py and numpy (datagen's check); mode gpu: no python3, a
# build without CUDA, or no GPU visible)
set -eu
mode=$1 build=$2 example=$3 py=$4 gen=$5 cxx=$6
here=$(cd "$(dirname "$0")" && pwd)
need='import h5py, numpy'
[ "$mode" = gpu ] && need='import json'  # the report is read as JSON (check_example_report.py)
if [ -z "$py" ] || ! "$py" -c "$need" 2>/dev/null; then
  echo "SKIP: needs python3 ($need)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/staging" >"$tmp/install.log"
mv "$tmp/staging" "$tmp/prefix"
prefix=$tmp/prefix sb=$tmp/prefix/bin/scalebench
have_cuda=$(sed -n 's/^set(scalebench_HAVE_CUDA \(.*\))$/\1/p' "$prefix"/lib*/cmake/scalebench/scalebench-config.cmake)
if [ "$mode" = gpu ] && [ "$have_cuda" != ON ]; then
  echo "SKIP: this scalebench was built without CUDA"; exit 77
fi

if [ "$mode" = cpu ]; then
  # Every installed header compiles on its own with what the package gives, without warnings.
  mkdir "$tmp/headers"
  for h in "$prefix"/include/scalebench/*; do
    name=$(basename "$h") ext=cpp
    case $name in *.cuh) ext=cu ;; esac
    printf '#include "scalebench/%s"\n' "$name" >"$tmp/headers/${name%.*}_${name##*.}.$ext"
  done
  cat >"$tmp/headers/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(headers LANGUAGES CXX)
find_package(scalebench REQUIRED)
file(GLOB sources *.cpp)
if(scalebench_HAVE_CUDA)
  scalebench_enable_cuda()
  file(GLOB cuda_sources *.cu)
  list(APPEND sources ${cuda_sources})
endif()
add_library(headers OBJECT ${sources})
target_link_libraries(headers PRIVATE scalebench::workload_api)
target_compile_options(headers PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>)
CMAKE
  cmake -S "$tmp/headers" -B "$tmp/build-headers" -G "$gen" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/headers.log" 2>&1 &&
    cmake --build "$tmp/build-headers" >>"$tmp/headers.log" 2>&1 || { cat "$tmp/headers.log"; exit 1; }
  echo "ok: $(ls "$prefix"/include/scalebench | wc -l) installed headers compile on their own"
fi

cuda=ON
[ "$mode" = cpu ] && cuda=OFF
cmake -S "$example" -B "$tmp/build-plugin" -G "$gen" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DTILED_DGEMM_CUDA=$cuda >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build-plugin" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
lib=$tmp/build-plugin/libtiled_dgemm.so

if [ "$mode" = gpu ]; then
  gpus=$("$sb" info --format json | "$py" -c 'import json, sys; print(json.load(sys.stdin)["gpus"]["visible"])')
  if [ "$gpus" = 0 ]; then
    echo "SKIP: no GPU visible (the plugin's GPU worker was built)"; exit 77
  fi
  paths=single-cpu,single-gpu,multi-gpu,each-gpu extra=--require-gpu
else
  paths=single-cpu,multi-cpu,each-node extra=
fi
mkdir "$tmp/run"
"$sb" run --plugin "$lib" --workloads tiled-dgemm --preset tiny --paths "$paths" \
  --out "$tmp/run/r.h5" $extra >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; exit 1; }
"$sb" report --format json "$tmp/run/r.h5" >"$tmp/r.json"
"$py" "$here/check_example_report.py" "$tmp/r.json" "$paths" "$lib"
echo "ok: $paths validated and cross-checked"
[ "$mode" = cpu ] || exit 0

# A suite file names the plugin relative to its own folder.
mkdir "$tmp/suite"
cat >"$tmp/suite/tiled.toml" <<TOML
plugins = ["../build-plugin/libtiled_dgemm.so"]
workloads = ["tiled-dgemm"]
preset = "tiny"
paths = ["single-cpu"]
TOML
"$sb" run --suite "$tmp/suite/tiled.toml" --repeats 2 --no-ceilings --out "$tmp/run/suite.h5" \
  >"$tmp/suite.log" 2>&1 || { cat "$tmp/suite.log"; exit 1; }
"$sb" report --format json "$tmp/run/suite.h5" >"$tmp/suite.json"
"$py" "$here/check_example_report.py" "$tmp/suite.json" single-cpu "$lib" --no-ceilings
echo "ok: suite file"

# datagen writes A and B; NumPy's A @ B must give the sums the run reported.
"$sb" datagen tiled-dgemm --plugin "$lib" --preset tiny --out "$tmp/inputs.h5"
"$py" "$here/check_example_report.py" "$tmp/r.json" "$paths" "$lib" --datagen "$tmp/inputs.h5"
echo "ok: datagen"

"$sb" info --format json --plugin "$lib" >"$tmp/info.json"
"$py" - "$tmp/info.json" "$lib" <<'PY'
import json, os, sys
info = json.load(open(sys.argv[1]))
w = [w for w in info["workloads"] if w["name"] == "tiled-dgemm"]
assert len(w) == 1 and w[0]["plugin"] == os.path.realpath(sys.argv[2]), w
assert set(w[0]["keys"]) == {"m", "n", "k", "tile", "seed"}, w[0]["keys"]
assert set(w[0]["presets"]) == {"tiny", "small", "seed", "large"}, w[0]["presets"]
assert [p["workloads"] for p in info["plugins"]] == ["tiled-dgemm"], info["plugins"]
PY
"$sb" run --help --plugin "$lib" | tr '\n' ' ' | tr -s ' ' |  # help wraps at 100 columns
  grep -qE "subset-mean, svd, groupby(, [a-z0-9_-]+)*, tiled-dgemm "
"$sb" datagen --help --plugin "$lib" | grep -q "tiled-dgemm"
echo "ok: info, run --help, datagen --help"

# report and compare read reports alone: no --plugin needed.
"$sb" report "$tmp/run/r.h5" --wide >"$tmp/report.txt"
grep -q "^tiled-dgemm/multi-cpu/k=256,m=512,n=256,seed=42,tile=64 .* ok " "$tmp/report.txt" ||
  { cat "$tmp/report.txt"; exit 1; }
"$sb" compare "$tmp/run/r.h5" "$tmp/run/r.h5" >"$tmp/compare.txt" 2>&1 ||
  { cat "$tmp/compare.txt"; exit 1; }
grep -q "tiled-dgemm/single-cpu/" "$tmp/compare.txt" || { cat "$tmp/compare.txt"; exit 1; }
echo "ok: report, compare"
