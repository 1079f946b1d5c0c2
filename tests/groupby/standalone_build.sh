#!/usr/bin/env bash
# Builds the groupby GPU test and benchmark straight from their sources with nvcc/g++, without
# configuring the whole project (for a GPU machine whose CMake cannot drive nvcc's C++20, or
# while other parts of the tree are mid-change). The CMake build (tests/groupby/CMakeLists.txt,
# bench/) is the real one.
#   tests/groupby/standalone_build.sh [OUT_DIR=build-groupby-sa]   (run from the repository root)
# Needs the deps prefix of tools/device-build.sh (SB_DEPS_PREFIX, default /opt/deps) for SLEEF
# and Random123 when they are not installed system-wide.
set -euo pipefail
out=${1:-build-groupby-sa}
prefix=${SB_DEPS_PREFIX:-/opt/deps}
mkdir -p "$out/obj"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${SB_CUDA_ARCH:-90}
if command -v mpicxx >/dev/null; then
  mpi_inc=$(mpicxx --showme:incdirs | tr ' ' '\n' | sed 's/^/-I/' | tr '\n' ' ')
  mpi_lib=$(mpicxx --showme:link)
else
  mpi_inc=$(pkg-config --cflags ompi-c 2>/dev/null || echo -I/usr/lib/x86_64-linux-gnu/openmpi/include)
  mpi_lib=$(pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)
fi
inc="-Iruntime/include -Iworkloads -Itests/groupby -I$prefix/usr/include -I$prefix/usr/include/x86_64-linux-gnu -I/usr/include/hdf5/serial $mpi_inc"
defs="-DOMPI_SKIP_MPICXX -DSCALEBENCH_HAVE_CUDA=1 -DSCALEBENCH_VERSION=\"sa\" -DSCALEBENCH_GIT_SHA=\"sa\""
cxx_flags="-std=c++20 -O3 -fopenmp -Wall -Wextra -Wshadow -Wpedantic $defs $inc"
cu_flags="-std=c++20 -O3 -arch=sm_$arch --expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra,-fopenmp $defs $inc"
objs=()
for src in runtime/src/error.cpp runtime/src/params.cpp runtime/src/philox.cpp \
           runtime/src/exec_path.cpp runtime/src/nvml_probe.cpp workloads/groupby/*.cpp; do
  o="$out/obj/$(basename "$src").o"; objs+=("$o")
  g++ $cxx_flags -c "$src" -o "$o" &
done
for src in runtime/src/gpu/gpu_context.cu runtime/src/gpu/gpu_errors.cu workloads/groupby/*.cu; do
  o="$out/obj/$(basename "$src").o"; objs+=("$o")
  $nvcc $cu_flags -Xptxas -v -c "$src" -o "$o" 2> "$out/obj/$(basename "$src").ptxas.txt" &
done
$nvcc $cu_flags -c tests/groupby/test_groupby_gpu.cu -o "$out/obj/test_groupby_gpu.cu.o" &
$nvcc $cu_flags -c bench/bench_groupby_gpu.cu -o "$out/obj/bench_groupby_gpu.cu.o" &
wait
cuda_lib=$(dirname "$nvcc")/../lib64
libs="-L$cuda_lib -L$prefix/usr/lib/x86_64-linux-gnu -L/usr/lib/x86_64-linux-gnu/hdf5/serial
      -lcublas -lcusolver -lcurand -lnccl -lcudart -lhdf5
      -lsleef -lfmt $mpi_lib -lgomp -ldl -lpthread"
link() { local name=$1; shift; $nvcc -arch=sm_$arch -o "$out/$name" "$@" "${objs[@]}" $libs; }
link test_groupby_gpu "$out/obj/test_groupby_gpu.cu.o" -lgtest_main -lgtest &
link bench_groupby_gpu "$out/obj/bench_groupby_gpu.cu.o" -lbenchmark &
wait
for b in test_groupby_gpu bench_groupby_gpu; do
  [ -x "$out/$b" ] || { echo "standalone_build: $b failed to build" >&2; exit 1; }
done
echo "standalone_build: $out/test_groupby_gpu $out/bench_groupby_gpu"
