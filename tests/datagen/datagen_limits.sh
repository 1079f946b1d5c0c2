#!/usr/bin/env bash
# `scalebench datagen` refuses, before generating anything, what is above --max-bytes (exit 2, one
# line naming the bytes needed and the limit) and bad input (exit 2, one line); no file, not even
# a temporary one, is left behind.
set -u
sb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # expected_code pattern description args...
  local want=$1 pattern=$2 what=$3
  shift 3
  "$sb" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$? lines
  lines=$(wc -l <"$tmp/err")
  if [ "$got" -ne "$want" ] || [ "$lines" -ne 1 ] || ! grep -Eq -- "$pattern" "$tmp/err"; then
    echo "FAIL: $what: exit $got (want $want), $lines stderr line(s), want /$pattern/:"
    cat "$tmp/err"; fail=1
  else
    echo "ok: $what -> $(cat "$tmp/err")"
  fi
  if [ -n "$(ls -A "$tmp/d")" ]; then echo "FAIL: $what left $(ls "$tmp/d")"; fail=1; fi
}
mkdir "$tmp/d"
out="$tmp/d/x.h5"
# subset-mean small: 20000^2 doubles = 3.2e9 bytes, above the 2 GiB default.
check 2 "needs 3200004096 bytes .*limit of 2147483648 bytes" "default limit" \
  datagen subset-mean --out "$out"
check 2 "needs 16000000000 bytes .*limit of 2147483648 bytes" "svd large" \
  datagen svd --preset large --out "$out"
check 2 "needs [0-9]+ bytes .*limit of 1000000 bytes" "explicit limit" \
  datagen groupby --preset tiny --max-bytes 1MB --out "$out"
check 2 "needs 3200004096 bytes .*limit of 3200000000 bytes" "limit from a --param size" \
  datagen subset-mean --param subset-mean.n=20000 --max-bytes 3.2GB --out "$out"
check 2 "max-bytes 'lots'" "bad --max-bytes" datagen svd --preset tiny --max-bytes lots --out "$out"
check 2 "unknown workload 'fft'" "unknown workload" datagen fft --out "$out"
check 2 "out is required" "missing --out" datagen svd --preset tiny
check 2 "unknown preset" "unknown preset" datagen svd --preset huge --out "$out"
check 2 "has no parameter 'colour'" "unknown key" datagen svd --param svd.colour=red --out "$out"
check 2 "does not exist" "missing folder" datagen svd --preset tiny --out "$tmp/d/none/x.h5"
# Just under the limit: written (32000000 bytes of x plus at most 4096 of answer).
if "$sb" datagen subset-mean --preset tiny --max-bytes 32004096 --out "$out" >/dev/null; then
  [ -f "$out" ] && echo "ok: at the limit -> written" || { echo "FAIL: no file at the limit"; fail=1; }
else
  echo "FAIL: at the limit: refused"; fail=1
fi
exit $fail
