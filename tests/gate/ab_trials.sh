#!/usr/bin/env bash
# The A/B gate (docs/ci.md) against the nightly flow on real runs of this machine, with other
# jobs beside it: the error rates docs/ci.md states.
#
# usage: ab_trials.sh SCALEBENCH PYTHON3 DIR [TRIALS] [FLOWS] [MAX_TIME]
#   TRIALS    trials of each scenario (default 5)
#   FLOWS     "ab", "separated" or "ab,separated" (default)
#   MAX_TIME  the A/B runs' --max-time per case (default: the run's own, 60 s); CI's one trial
#             gives 30: an A/A run that cannot decide `same` beside the heavy hog spends it all
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
sb=$1 py=$2 dir=$3 trials=${4:-5} flows=${5:-ab,separated} max_time=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$py" ] || { echo "SKIP: needs python3"; exit 77; }
case ",$flows," in
  *,separated,*)  # it relabels the current run's case with h5py, before the first run
    "$py" -c "import h5py" 2>/dev/null ||
      { echo "ab_trials.sh: the separated flow needs h5py in $py (Debian: python3-h5py)" >&2; exit 2; } ;;
esac
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
         v = $2; c = "-"; m = "-"; if (match($0, /MDE [0-9.]+%/)) m = substr($0, RSTART + 4, RLENGTH - 4)
         for (i = 3; i <= NF; ++i) if ($i ~ /^[-+][0-9.]+%$/) { c = $i; break }
         print v, c, m; exit }' "$1"
}

busiest=0
failures=0
row() {  # row FLOW SCENARIO TRIAL RC FILE SHARE REPEATS SECONDS
  read -r v c m <<<"$(verdict_of "$5")"
  printf '| %-9s | %-12s | %d | %d | %-12s | %-7s | %-6s | %-7s | %5s | %d%% |\n' "$1" "$2" "$3" "$4" \
    "${v:--}" "${c:--}" "${m:--}" "$7" "$8" "$6" | tee -a "$dir/rows.md"
  echo "$1 $2 $4 ${v:--} $8" >>"$dir/results.txt"
}

elapsed() {  # whole seconds since the mark $1 (an $EPOCHREALTIME)
  awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.0f", b - a}'
}

run_ab() {  # run_ab SCENARIO KIND HOGS TRIAL
  local out="$dir/ab-$1-$4.h5" mark rc share reps t0 secs
  rm -f "$out"  # a second run of the trials in the same folder (ctest again) measures anew
  start_hogs "$3" "$4"
  mark=$(cpu_ticks)
  t0=$EPOCHREALTIME
  # shellcheck disable=SC2086
  "$sb" run "${base[@]}" --baseline label=baseline ${work[$2]} --repeats auto \
    ${max_time:+--max-time "$max_time"} --out "$out" >"$dir/ab-$1-$4.out" 2>>"$log"
  rc=$?
  secs=$(elapsed "$t0")
  stop_hogs
  share=$(others_share "$mark")
  [ "$share" -gt "$busiest" ] && busiest=$share
  "$sb" compare "$out" >"$dir/ab-$1-$4.cmp" 2>>"$log"
  reps=$(awk '/subset-mean\/multi-cpu/ {for (i = 1; i <= NF; ++i) if ($i ~ /^[0-9]+\/[0-9]+$/) {print $i; exit}}' "$dir/ab-$1-$4.cmp")
  row ab "$1" "$4" "$rc" "$dir/ab-$1-$4.cmp" "$share" "${reps:--}" "$secs"
}

run_separated() {  # run_separated SCENARIO KIND HOGS TRIAL
  local b="$dir/sep-$1-$4-base.h5" c="$dir/sep-$1-$4-cur.h5" mark rc share t0 secs
  rm -f "$b" "$c"
  start_hogs "$3" "$4"
  mark=$(cpu_ticks)
  t0=$EPOCHREALTIME
  "$sb" run "${base[@]}" --repeats 15 --out "$b" >>"$log" 2>&1
  # shellcheck disable=SC2086
  "$sb" run "${base[@]}" ${relabel[$2]} --repeats 15 --out "$c" >>"$log" 2>&1
  secs=$(elapsed "$t0")
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
  row separated "$1" "$4" "$rc" "$dir/sep-$1-$4.out" "$share" "15/15" "$secs"
}

echo "load before the trials: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
: >"$dir/results.txt"
: >"$dir/rows.md"
echo "| flow      | scenario     | trial | exit | verdict      | change  | MDE    | repeats | s     | others |"
echo "|---|---|---|---|---|---|---|---|---|---|"
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
count() {  # count FLOW SCENARIO WHAT: runs of that flow and scenario whose exit code or verdict is WHAT
  awk -v f="$1" -v s="$2" -v what="$3" '$1 == f && $2 == s && ($3 == what || $4 == what) {n++} END {print n + 0}' "$dir/results.txt"
}
seconds() {  # seconds FLOW: "median s (at most max s)" of that flow's runs
  awk -v f="$1" '$1 == f {t[n++] = $5} END {
    if (!n) {print "not run"; exit}
    for (i = 1; i < n; ++i) for (k = i; k > 0 && t[k - 1] > t[k]; --k) {x = t[k]; t[k] = t[k - 1]; t[k - 1] = x}
    m = n % 2 ? t[(n - 1) / 2] : (t[n / 2 - 1] + t[n / 2]) / 2
    printf "%.0f s (at most %.0f s)", m, t[n - 1]}' "$dir/results.txt"
}
for flow in ${flows//,/ }; do
  aa1=$(( $(count "$flow" light-aa 1) + $(count "$flow" heavy-aa 1) ))
  p1=$(count "$flow" light-plus10 1)
  psame=$(count "$flow" light-plus10 same)
  t1=$(count "$flow" heavy-twice 1)
  echo "$flow: A/A exit 1 in $aa1 of $((2 * trials)); +10% exit 1 in $p1 of $trials, same in $psame; 2x exit 1 in $t1 of $trials"
  if [ "$flow" = ab ]; then
    [ "$aa1" -eq 0 ] || { echo "FAIL: an A/A run of the A/B gate exited 1"; failures=1; }
    [ "$psame" -eq 0 ] || { echo "FAIL: +10% judged same by the A/B gate"; failures=1; }
    [ "$t1" -eq "$trials" ] || { echo "FAIL: 2x not caught every time by the A/B gate"; failures=1; }
    [ "$trials" -lt 5 ] || [ "$p1" -ge $((trials * 4 / 5)) ] ||
      { echo "FAIL: +10% caught in fewer than 4 of 5 trials"; failures=1; }
  fi
done

# docs/ci.md's table "Measured error rates: A/B gate and nightly flow", row for row.
cell() {  # cell FLOW SCENARIO WHAT
  case ",$flows," in *",$1,"*) echo "$(count "$1" "$2" "$3") of $trials" ;; *) echo "not run" ;; esac
}
table_row() {  # table_row SCENARIO WHAT TEXT TARGET
  printf '| %s | %s | %s | %s |\n' "$3" "$4" "$(cell ab "$1" "$2")" "$(cell separated "$1" "$2")"
}
echo
echo "| $trials trials of each scenario | the A/B gate must | A/B gate | nightly flow |"
echo "|---|---|---|---|"
table_row light-aa 1 "light hog, A/A: exit 1 (false alarm)" "never"
table_row light-aa 5 "light hog, A/A: exit 5 (undecided)" "-"
table_row light-plus10 1 "light hog, +10%: exit 1 (caught)" "4 of 5 or more"
table_row light-plus10 5 "light hog, +10%: exit 5 (undecided)" "-"
table_row light-plus10 same "light hog, +10%: \`same\` (missed)" "never"
table_row heavy-aa 1 "heavy hogs, A/A: exit 1 (false alarm)" "never"
table_row heavy-aa 5 "heavy hogs, A/A: exit 5 (undecided)" "-"
table_row heavy-twice 1 "heavy hogs, 2x: exit 1 (caught)" "every time"
sep_time="not run"
case ",$flows," in *,separated,*) sep_time=$(seconds separated) ;; esac
ab_time="not run"
case ",$flows," in *,ab,*) ab_time=$(seconds ab) ;; esac
printf '| %s | %s | %s | %s |\n' "time of one gate (median)" "-" "$ab_time" "$sep_time"
echo
echo "busiest run: other processes took $busiest% of the machine"
if [ "$busiest" -gt 25 ]; then
  echo "SKIP: the machine was busy with other work ($busiest% of its CPU time) during a run"
  exit 77
fi
exit "$failures"
