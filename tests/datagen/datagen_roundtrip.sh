#!/usr/bin/env bash
# `scalebench datagen W` at the tiny preset, then NumPy/pandas recompute the answer from the file
# (check_datagen.py) and compare it with what `scalebench run` reports for the same case.
# usage: datagen_roundtrip.sh SCALEBENCH PYTHON3 WORKLOAD      (exit 77: skipped)
set -u
sb=$1 py=$2 w=$3
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$py" ] || ! "$py" -c 'import h5py, numpy, pandas' 2>/dev/null; then
  echo "SKIP: needs python3 with h5py, numpy and pandas"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -e
"$sb" datagen "$w" --preset tiny --out "$tmp/inputs.h5"
"$sb" run --preset tiny --workloads "$w" --paths cpu1 --repeats 1 --warmup 0 --no-ceilings \
  --out "$tmp/report.h5" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; exit 1; }
"$py" "$here/check_datagen.py" "$tmp/inputs.h5" "$tmp/report.h5"
