#!/usr/bin/env bash
# Configure and build scalebench on a GPU node that lacks some Debian packages, from a bundle of
# .deb files (made by tools/bundle-deps) unpacked into a private prefix.
#   tools/device-build.sh [BUNDLE_DIR=.deps] [BUILD_DIR=build-gpu] [extra cmake args...]
# Targets: set SB_TARGETS="a b" to build only those (default: all).
set -euo pipefail
bundle=${1:-.deps}
build=${2:-build-gpu}
shift $(( $# > 2 ? 2 : $# )) || true
prefix=${SB_DEPS_PREFIX:-/opt/deps}
mkdir -p "$prefix"
# One unpacking at a time: two builds side by side (tools/gpu-campaign.sh build OTHER) made
# dpkg -x fail on a symbolic link the other had just made.
exec 9>"$prefix/.unpack.lock"
flock 9
for deb in "$bundle"/*.deb; do
  [ -e "$deb" ] || continue
  dpkg -x "$deb" "$prefix"
done
exec 9>&-  # the lock goes with the descriptor, which the build does not inherit
export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${SB_CUDA_ARCH:-90}" -DSCALEBENCH_CUDA=ON "$@"
if [ -n "${SB_TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$build" -j "$(nproc)" --target $SB_TARGETS
else
  cmake --build "$build" -j "$(nproc)"
fi
