#!/usr/bin/env bash
# The A/B gate (docs/ci.md) against the nightly flow on real runs of this machine, with other
# jobs beside it: the error rates docs/ci.md states.
#
# usage: ab_trials.sh SCALEBENCH PYTHON3 DIR [TRIALS] [FLOWS]
#   TRIALS  trials of each scenario (default 5)
#   FLOWS   "ab", "separated" or "ab,separated" (default)
#
# The case is docs/ci.md's gate: subset-mean multi-cpu, small preset (n=20000, chunk=2000).
# "+10%" runs n=21000/chunk=2100 (10.25% more draws) in its place, "2x" n=28280/chunk=2828
# (2.0x). Other jobs: a light hog (one core burnt 20-60 ms every 0.5-1.5 s) or a heavy one (two
# such hogs). Scenarios, each TRIALS times:
#   light  A/A   the same code on both sides      must never exit 1
#   light  +10%  10% more work on the current side  must exit 1 in 4 of 5 trials, never `same`
#   heavy  A/A                                     must never exit 1
#   heavy  2x    twice the work                    must exit 1 every time
# ab:        one `scalebench run --baseline ... --repeats auto` per trial (both sides in one job)
# separated: a baseline run, then a current run, 15 repeats each, then `scalebench compare` (the
#            nightly flow, both measured beside the same hog)
# Prints one table row per run and the rates; exit 0 when the targets hold, 1 when one fails,
# 77 (skip) when other processes took more than a quarter of the machine during a run (a shared
# development machine: the timings then say nothing about the gate).
set -u
sb=$1 py=$2 dir=$3 trials=${4:-5} flows=${5:-ab,separated}
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$py" ] || { echo "SKIP: needs python3"; exit 77; }
mkdir -p "$dir"
log="$dir/ab_trials.log"
: >"$log"

base=(--preset small --workloads subset-mean --paths cpuN --no-ceilings)
declare -A work=([aa]="" [plus10]="--current param:subset-mean.n=21000 --current param:subset-mean.chunk=2100"
                 [twice]="--current param:subset-mean.n=28280 --current param:subset-mean.chunk=2828")
declare -A relabel=([aa]="" [plus10]="--param subset-mean.n=21000 --param subset-mean.chunk=2100"
                    [twice]="--param subset-mean.n=28280 --param subset-mean.chunk=2828")

cpu_ticks() {  # "busy total own": the machine's busy and total CPU ticks, and this script's
  local _ u n s i w q sq st rest own
  read -r _ u n s i w q sq st rest </proc/stat
  own=$(sed 's/.*) //' /proc/$$/stat | awk '{print $12 + $13 + $14 + $15}')
  echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st)) $own"
}

others_share() {  # percent of the machine other processes used since the mark $1
  local b0 t0 o0 b1 t1 o1
  read -r b0 t0 o0 <<<"$1"
  read -r b1 t1 o1 <<<"$(cpu_ticks)"
  local total=$((t1 - t0)) other
  [ "$total" -gt 0 ] || { echo 0; return; }
  other=$((b1 - b0 - (o1 - o0)))
  [ "$other" -gt 0 ] || other=0
  echo $((100 * other / total))
}

hogs=()
start_hogs() {  # start_hogs N SEED: N bursty hogs (20-60 ms every 0.5-1.5 s)
  local k
  for ((k = 0; k < $1; ++k)); do
    "$py" "$here/bursty_hog.py" --every 0.5 1.5 0.02 0.06 900 $(($2 + 101 * k)) &
    hogs+=($!)
  done
}
stop_hogs() {
  local h
  for h in "${hogs[@]}"; do kill "$h" 2>/dev/null; wait "$h" 2>/dev/null; done
  hogs=()
}
trap stop_hogs EXIT

verdict_of() {  # the verdict, change and MDE of the table printed in file $1
  awk '/subset-mean\/multi-cpu/ && $2 ~ /^(same|slower|faster|noisy|inconclusive|failed)$/ {
         v = $2; c = $5; m = "-"; if (match($0, /MDE [0-9.]+%/)) m = substr($0, RSTART + 4, RLENGTH - 4)
         print v, c, m; exit }' "$1"
}

busiest=0
failures=0
row() {  # row FLOW SCENARIO TRIAL RC FILE SHARE REPEATS
  read -r v c m <<<"$(verdict_of "$5")"
  printf '| %-9s | %-11s | %d | %d | %-12s | %-7s | %-6s | %-7s | %d%% |\n' "$1" "$2" "$3" "$4" \
    "${v:--}" "${c:--}" "${m:--}" "$7" "$6" | tee -a "$dir/rows.md"
  echo "$1 $2 $4 ${v:--}" >>"$dir/results.txt"
}

run_ab() {  # run_ab SCENARIO KIND HOGS TRIAL
  local out="$dir/ab-$1-$4.h5" mark rc share reps
  start_hogs "$3" "$4"
  mark=$(cpu_ticks)
  # shellcheck disable=SC2086
  "$sb" run "${base[@]}" --baseline label=baseline ${work[$2]} --repeats auto --out "$out" \
    >"$dir/ab-$1-$4.out" 2>>"$log"
  rc=$?
  stop_hogs
  share=$(others_share "$mark")
  [ "$share" -gt "$busiest" ] && busiest=$share
  "$sb" compare "$out" >"$dir/ab-$1-$4.cmp" 2>>"$log"
  reps=$(awk '/subset-mean\/multi-cpu/ {for (i = 1; i <= NF; ++i) if ($i ~ /^[0-9]+\/[0-9]+$/) {print $i; exit}}' "$dir/ab-$1-$4.cmp")
  row ab "$1" "$4" "$rc" "$dir/ab-$1-$4.cmp" "$share" "${reps:--}"
}

run_separated() {  # run_separated SCENARIO KIND HOGS TRIAL
  local b="$dir/sep-$1-$4-base.h5" c="$dir/sep-$1-$4-cur.h5" mark rc share
  start_hogs "$3" "$4"
  mark=$(cpu_ticks)
  "$sb" run "${base[@]}" --repeats 15 --out "$b" >>"$log" 2>&1
  # shellcheck disable=SC2086
  "$sb" run "${base[@]}" ${relabel[$2]} --repeats 15 --out "$c" >>"$log" 2>&1
  stop_hogs
  share=$(others_share "$mark")
  [ "$share" -gt "$busiest" ] && busiest=$share
  # The current run's case relabelled as the baseline's, so that compare pairs them.
  "$py" - "$b" "$c" <<'PY' 2>>"$log"
import sys
import h5py
case = "cases/0000_subset-mean_multi-cpu"
with h5py.File(sys.argv[1], "r") as b, h5py.File(sys.argv[2], "r+") as c:
    for k in ("n", "chunk"):
        c[case + "/params"].attrs[k] = b[case + "/params"].attrs[k]
    c[case].attrs["id"] = b[case].attrs["id"]
PY
  "$sb" compare "$b" "$c" >"$dir/sep-$1-$4.out" 2>>"$log"
  rc=$?
  row separated "$1" "$4" "$rc" "$dir/sep-$1-$4.out" "$share" "15/15"
}

echo "load before the trials: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
: >"$dir/results.txt"
: >"$dir/rows.md"
echo "| flow      | scenario    | trial | exit | verdict      | change  | MDE    | repeats | others |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((t = 1; t <= trials; ++t)); do
  for flow in ${flows//,/ }; do
    "run_$flow" light-aa aa 1 "$t"
    "run_$flow" light-plus10 plus10 1 "$t"
    "run_$flow" heavy-aa aa 2 "$t"
    "run_$flow" heavy-twice twice 2 "$t"
  done
done
echo "load after the trials: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"

# The targets, for each flow.
for flow in ${flows//,/ }; do
  count() { awk -v f="$flow" -v s="$1" -v what="$2" '$1 == f && $2 == s && ($3 == what || $4 == what) {n++} END {print n + 0}' "$dir/results.txt"; }
  aa1=$(( $(count light-aa 1) + $(count heavy-aa 1) ))
  p1=$(count light-plus10 1)
  psame=$(count light-plus10 same)
  t1=$(count heavy-twice 1)
  echo "$flow: A/A exit 1 in $aa1 of $((2 * trials)); +10% exit 1 in $p1 of $trials, same in $psame; 2x exit 1 in $t1 of $trials"
  if [ "$flow" = ab ]; then
    [ "$aa1" -eq 0 ] || { echo "FAIL: an A/A run of the A/B gate exited 1"; failures=1; }
    [ "$psame" -eq 0 ] || { echo "FAIL: +10% judged same by the A/B gate"; failures=1; }
    [ "$t1" -eq "$trials" ] || { echo "FAIL: 2x not caught every time by the A/B gate"; failures=1; }
    [ "$trials" -lt 5 ] || [ "$p1" -ge $((trials * 4 / 5)) ] ||
      { echo "FAIL: +10% caught in fewer than 4 of 5 trials"; failures=1; }
  fi
done
echo "busiest run: other processes took $busiest% of the machine"
if [ "$busiest" -gt 25 ]; then
  echo "SKIP: the machine was busy with other work ($busiest% of its CPU time) during a run"
  exit 77
fi
exit "$failures"
