#!/usr/bin/env bash
# Bad command lines: each must exit with the expected code and print exactly one line on stderr.
set -u
sb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # expected_code description args...
  local want=$1 what=$2
  shift 2
  "$sb" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$got" -ne "$want" ] || [ "$lines" -ne 1 ]; then
    echo "FAIL: $what: exit $got (want $want), $lines stderr lines:"; cat "$tmp/err"; fail=1
  else
    echo "ok: $what -> $(cat "$tmp/err")"
  fi
}
check 2 "no subcommand"
check 2 "unknown subcommand" frobnicate
check 2 "unknown option" run --frobnicate
check 2 "unknown preset" run --preset huge
check 2 "unknown workload" run --workloads fft
check 2 "unknown path" run --paths cpu1,tpu
check 2 "repeats not a number" run --repeats many
check 2 "repeats zero" run --repeats 0
check 2 "negative warmup" run --warmup -1
check 2 "param without workload" run --param n=5
check 2 "param unknown key" run --param subset-mean.colour=5
check 2 "param not a number" run --param subset-mean.n=lots
check 2 "param zero size" run --param subset-mean.n=0
check 2 "param negative size" run --param subset-mean.n=-2000
check 2 "param not divisible" run --param subset-mean.n=2001 --preset tiny
check 2 "param overflow" run --param subset-mean.n=99999999999999999999
check 2 "param n*n overflows int64" run --param subset-mean.n=4294967296 --param subset-mean.chunk=2
check 2 "missing suite file" run --suite "$tmp/none.toml"
printf 'presett = "tiny"\n' >"$tmp/typo.toml"
check 2 "suite typo" run --suite "$tmp/typo.toml"
check 2 "unwritable report folder" run --preset tiny --out /nonexistent-dir/r.h5
check 2 "report is a folder" run --preset tiny --out "$tmp"
check 2 "negative case timeout" run --case-timeout -3
check 2 "resume from missing report" run --resume "$tmp/none.h5"
printf 'not hdf5' >"$tmp/junk.h5"
check 2 "resume from a non-HDF5 file" run --resume "$tmp/junk.h5"
check 2 "info bad format" info --format xml
# Sizes whose element counts overflow 64 bits, zero and negative sizes of every workload.
check 2 "svd m*n overflows int64" run --workloads svd --param svd.m=4611686018427387904 --param svd.n=50 --param svd.chunk=64
check 2 "svd zero chunk" run --workloads svd --param svd.chunk=0
check 2 "svd chunk < n" run --workloads svd --preset tiny --param svd.chunk=10
check 2 "groupby rows beyond 2^40" run --workloads groupby --param groupby.rows=99999999999999
check 2 "groupby zero partition" run --workloads groupby --param groupby.partition=0
check 2 "groupby negative cardinality" run --workloads groupby --param groupby.cardinality=-1
# Bad report files, for run --resume, report and compare. The seed report of the fuzz corpus is
# a valid one-case report; a truncated copy, and a copy of another schema version (when h5py is
# there to write one).
good=$(dirname "$0")/../fuzz/corpus/report/one_case.h5
head -c 3000 "$good" >"$tmp/truncated.h5"
check 2 "resume from a truncated report" run --resume "$tmp/truncated.h5" --out "$tmp/partial.h5"
check 2 "report of a truncated file" report "$tmp/truncated.h5"
check 2 "report of a non-HDF5 file" report "$tmp/junk.h5"
check 2 "compare with a truncated file" compare "$good" "$tmp/truncated.h5"
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  cp "$good" "$tmp/v99.h5"
  /usr/bin/python3 -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); f.attrs['schema_version'] = 99; f.close()" "$tmp/v99.h5"
  check 2 "resume from a report of another schema version" run --resume "$tmp/v99.h5" --out "$tmp/partial.h5"
  check 2 "report of another schema version" report "$tmp/v99.h5"
else
  echo "skip: schema version checks (no h5py)"
fi
# A fuzzed report whose damaged internals crash HDF5 1.10 itself (under ASan; tools/fuzz found
# it): the command line reads reports in a child process and answers with one line.
damaged="$(cd "$(dirname "$0")/../fuzz/damaged" && pwd)/hdf5-library-crash.h5"
check 2 "report whose internals crash the HDF5 library" report "$damaged"
check 2 "resume from a report whose internals crash the HDF5 library" run --resume "$damaged" --out "$tmp/partial.h5"
# One that makes HDF5 loop for ever: the child reader is killed after its time limit.
export SCALEBENCH_REPORT_READ_TIMEOUT_S=3
check 2 "report whose internals make the HDF5 library loop" report "$(dirname "$damaged")/hdf5-library-hang.h5"
unset SCALEBENCH_REPORT_READ_TIMEOUT_S
check 2 "report output folder missing" report "$good" --out /nonexistent-dir/r.txt
check 2 "report folder is a file" run --preset tiny --out "$tmp/junk.h5/r.h5"
# No partial report is ever left by a refused command line.
if [ -e "$tmp/partial.h5" ] || ls "$tmp"/.scalebench-* >/dev/null 2>&1; then
  echo "FAIL: a refused run left a report or a work folder behind"; fail=1
fi
exit $fail
