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
exit $fail
