#!/usr/bin/env bash
# `scalebench run --trace` on a multi-GPU by-key case: every worker prints its exchange's
# timeline to stderr once per repeat (two repeats, two or more workers: four lines at least),
# with both row exchanges (peer: "(peer)" in the line) and the groups exchange ("(groups)"),
# and the run still validates. Needs two GPUs (exit 77 = skipped otherwise).
#   test_groupby_trace.sh path/to/scalebench
set -uo pipefail
sb=$1
# shellcheck source=multi_gpu_env.sh
. "$(dirname "$0")/multi_gpu_env.sh"
fail=0
for exchange in peer nccl groups; do
  shuffle=rows
  [ "$exchange" = groups ] && shuffle=groups
  "$sb" run --preset tiny --workloads groupby --paths gpuN --repeats 2 --warmup 0 --no-ceilings \
    --param groupby.query=by-key --param "groupby.gpu_shuffle=$shuffle" \
    --param "groupby.gpu_exchange=${exchange/groups/auto}" --trace --out "$tmp/$exchange.h5" \
    >"$tmp/$exchange.txt" 2>"$tmp/$exchange.err"
  rc=$?
  lines=$(cat "$tmp/$exchange.txt" "$tmp/$exchange.err" | grep -c '^groupby shuffle rank' || true)
  want=4  # two repeats on at least two workers
  if [ $rc -ne 0 ] || [ "$lines" -lt "$want" ]; then
    echo "FAILED ($exchange): exit $rc, $lines trace lines (want $want)"
    cat "$tmp/$exchange.txt" "$tmp/$exchange.err"
    fail=1
  elif [ "$exchange" != nccl ] && ! grep -q "^groupby shuffle rank [0-9]* ($exchange)" "$tmp/$exchange.txt" "$tmp/$exchange.err"; then
    echo "FAILED ($exchange): no $exchange timeline"
    fail=1
  else
    echo "ok ($exchange): $lines trace lines"
  fi
done
exit $fail
