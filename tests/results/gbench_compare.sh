#!/usr/bin/env bash
# `scalebench report --format gbench-json` read by Google Benchmark's own compare.py (Debian
# package libbenchmark-tools): two real runs, compared with `compare.py benchmarks`; it must
# parse both files and print every case, with its U test (3 repeats) and the overall geomean.
# usage: gbench_compare.sh SCALEBENCH PYTHON3
# The set-up (tools/install-deps, tools/deps.txt) installs compare.py and scipy: when either is
# missing the test fails, naming the package, instead of skipping.
set -u
sb=$1 py=$2
compare=""
if command -v dpkg >/dev/null; then
  compare=$(dpkg -L libbenchmark-tools 2>/dev/null | grep '/compare\.py$' | head -n1)
fi
[ -n "$compare" ] || compare=/usr/share/benchmark/compare.py
if [ ! -f "$compare" ]; then
  echo "FAIL: no $compare: the set-up should have installed libbenchmark-tools (tools/deps.txt)"
  exit 1
fi
if [ -z "$py" ] || ! "$py" -c 'import numpy, scipy' 2>/dev/null; then
  echo "FAIL: '${py:-python3}' cannot import numpy and scipy: the set-up should have installed python3-scipy (tools/deps.txt)"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for side in base cur; do
  "$sb" run --preset tiny --workloads subset-mean,svd --paths cpu1 --repeats 3 --warmup 0 \
    --no-ceilings --out "$tmp/$side.h5" >"$tmp/$side.log" 2>&1 || { cat "$tmp/$side.log"; exit 1; }
  "$sb" report "$tmp/$side.h5" --format gbench-json --out "$tmp/$side.json" || exit 1
done
"$py" "$compare" benchmarks "$tmp/base.json" "$tmp/cur.json" >"$tmp/out" 2>&1
rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$tmp/out" >"$tmp/plain"
cat "$tmp/plain"
[ "$rc" -eq 0 ] || { echo "FAIL: compare.py exited $rc"; fail=1; }
grep -q "^Comparing $tmp/base.json to $tmp/cur.json" "$tmp/plain" || { echo "FAIL: no header"; fail=1; }
for name in "subset-mean/single-cpu/chunk=500,n=2000,seed=42" \
            "svd/single-cpu/chunk=500,condition=1,m=2000,n=50,seed=42"; do
  for suffix in "" _pvalue _mean _median _stddev; do
    n=$(grep -c -- "^$name$suffix " "$tmp/plain")
    want=1; [ -z "$suffix" ] && want=3  # one line per repeat
    [ "$n" -eq "$want" ] || { echo "FAIL: $n line(s) for $name$suffix (want $want)"; fail=1; }
  done
done
grep -q "U Test, Repetitions: 3 vs 3" "$tmp/plain" || { echo "FAIL: no U test"; fail=1; }
grep -q "^OVERALL_GEOMEAN " "$tmp/plain" || { echo "FAIL: no geomean"; fail=1; }
exit $fail
