#!/usr/bin/env bash
# Fleet acceptance on a real three-node SLURM cluster made on this machine (CTest
# batch.slurm_fleet, label `slurm`; netns_cluster.sh), issue #51:
#   1. `scalebench submit --fleet 3` (a job array, one exclusive node per element) of `run
#      --paths each-node`, one node's slurmd, and so every process of its job, in a cgroup v1
#      CPU quota of 3% of one CPU (moved there before the job: nothing of the job escapes it);
#      `scalebench report merge DIR --check` must exit 1, its fleet table must name that node and
#      only it, and its re-submit command must name it alone. Of three devices only the slowest
#      can be slower than their median, so the verdict holds however busy this machine is as
#      long as the quota makes that node the slowest: 3% of a CPU is below what each of 30
#      runnable threads gets from two cores;
#   2. the quota lifted, another node drained; `submit --fleet-nodes` of all three (one job
#      pinned to each, single-cpu cases: no peer verdict to disturb what this part checks); the
#      drained node's job is cancelled before it starts: the merge must list that node as
#      missing and print a re-submit command for it alone; the node resumed, that command (run
#      as printed) must complete the sweep: merged again, every node ok.
#
#   tests/batch/slurm_fleet.sh BUILD_DIR [SOURCE_DIR]
#
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no network/UTS namespaces, no cgroup v1
# cpu controller, or SLURM neither installed nor installable).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_fleet.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
JOB_TIMEOUT=${SB_SLURM_JOB_TIMEOUT:-180}
NODES=3
SB_LOG_TAG=slurm_fleet
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=slurm_common.sh
. "$HERE/slurm_common.sh"
# shellcheck source=netns_cluster.sh
. "$HERE/netns_cluster.sh"

nc_check_namespaces
CPU_CG=/sys/fs/cgroup/cpu
[ -e "$CPU_CG/cpu.cfs_quota_us" ] && [ -w "$CPU_CG" ] ||
  sb_skip "no writable cgroup v1 cpu controller at $CPU_CG"
sb_require_slurm
[ -x "$SCALEBENCH" ] || sb_fail "no scalebench executable at $SCALEBENCH"

T=$(mktemp -d /tmp/sb_fleet.XXXXXX)
CG=$CPU_CG/sb_fleet_slow_$$
JOBS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for j in "${JOBS[@]}"; do scancel "$j" >/dev/null 2>&1 || true; done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -d "$T" ]; then
    for f in "$T"/slurmctld.log "$T"/out/*/*.out; do
      [ -s "$f" ] && { sb_log "---- last lines of ${f#"$T"/}"; tail -n 15 "$f"; }
    done
  fi
  nc_down
  if [ -d "$CG" ]; then
    while read -r p; do echo "$p" >"$CPU_CG/cgroup.procs" 2>/dev/null; done <"$CG/cgroup.procs"
    rmdir "$CG" 2>/dev/null
  fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_all() { # JOB...: every job (or array element) ended COMPLETED
  local j st
  for j in "$@"; do
    st=$(sb_wait_job "$j" "$JOB_TIMEOUT")
    [ "$st" = COMPLETED ] || sb_fail "job $j ended $st"
  done
}

t0=$SECONDS
nc_up "$T" "$NODES"
SLOW=${NC_NODES[2]}
mkdir "$CG" || sb_fail "cannot create the cgroup $CG"
echo 100000 >"$CG/cpu.cfs_period_us" && echo 3000 >"$CG/cpu.cfs_quota_us" ||
  sb_fail "cannot set the CPU quota of $CG"
# slurmd alone is moved: the job steps it forks from now on (slurmstepd, the launcher, the ranks)
# are born in it.
cat "$T/nodes/$SLOW/slurmd.pid" >"$CG/cgroup.procs" || sb_fail "cannot move $SLOW's slurmd"
sb_log "nodes ${NC_NODES[*]} up in $((SECONDS - t0)) s; $SLOW limited to 3% of one CPU"

RUN=(--preset tiny --workloads subset-mean --paths each-node --repeats 5 --no-ceilings --check)
SUBMIT=(--scheduler slurm --cpus-per-node 2 --time 00:10:00 --partition "$NC_PARTITION")

# ------------------------------------------------------------------ 1: a job array, one slow node
A=$T/out/array
ids=$("$SCALEBENCH" submit "${SUBMIT[@]}" --fleet "$NODES" --fleet-dir "$A" -- "${RUN[@]}") ||
  sb_fail "scalebench submit --fleet failed"
J=$(tail -n 1 <<<"$ids" | tr -d '[:space:]')
[[ "$J" =~ ^[0-9]+$ ]] || sb_fail "submit --fleet printed '$ids', not a job id"
JOBS+=("$J")
sb_log "fleet array $J submitted into $A"
wait_all "${J}_0" "${J}_1" "${J}_2"
"$SCALEBENCH" report merge "$A" --check >"$T/merge1.out" 2>"$T/merge1.err"
code=$?
sb_log "---- report merge $A (exit $code)"
cat "$T/merge1.out" "$T/merge1.err"
[ "$code" = 1 ] || sb_fail "merge --check exited $code; the slowed node must make it 1"
grep -q "^fleet: 1 of 3 nodes not ok, 0 missing" "$T/merge1.out" ||
  sb_fail "the fleet table does not say one node of three is not ok"
grep -Eq "^(slow|throttled) +$SLOW " "$T/merge1.out" || sb_fail "the fleet table does not name $SLOW"
for n in "${NC_NODES[@]}"; do
  [ "$n" = "$SLOW" ] && continue
  grep -Eq "^(slow|throttled|failed|missing) +$n " "$T/merge1.out" && sb_fail "the table names $n"
done
grep -q -- "--fleet-nodes $SLOW --" "$T/merge1.out" ||
  sb_fail "the re-submit command does not name $SLOW alone"
[ -s "$A/merged.h5" ] || sb_fail "no merged report $A/merged.h5"
"$SCALEBENCH" report "$A/merged.h5" --format junit --out "$T/fleet.xml" ||
  sb_fail "report of the merged report failed"
grep -q "classname=\"scalebench.$SLOW\"" "$T/fleet.xml" || sb_fail "the JUnit names no $SLOW"
sb_log "array sweep: merged table names $SLOW alone ($((SECONDS - t0)) s)"

# ------------------------------------------------------------------ 2: one job per node, one never runs
echo -1 >"$CG/cpu.cfs_quota_us" || sb_fail "cannot lift the CPU quota of $CG"
GONE=${NC_NODES[1]}
scontrol update nodename="$GONE" state=drain reason=sb-fleet-test || sb_fail "cannot drain $GONE"
B=$T/out/pinned
RUN_B=(--preset tiny --workloads subset-mean --paths single-cpu --repeats 3 --no-ceilings)
ids=$("$SCALEBENCH" submit "${SUBMIT[@]}" --fleet-nodes "$(IFS=,; echo "${NC_NODES[*]}")" \
  --fleet-dir "$B" -- "${RUN_B[@]}") || sb_fail "scalebench submit --fleet-nodes failed"
mapfile -t PIN <<<"$ids"
[ "${#PIN[@]}" = 3 ] || sb_fail "submit --fleet-nodes printed '${ids}', not three job ids"
JOBS+=("${PIN[@]}")
wait_all "${PIN[0]}" "${PIN[2]}"
st=$(scontrol show job "${PIN[1]}" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
[ "$st" = PENDING ] || sb_fail "the job on the drained $GONE is $st, not PENDING"
scancel "${PIN[1]}" || sb_fail "scancel ${PIN[1]} failed"
sb_wait_job "${PIN[1]}" 30 >/dev/null
"$SCALEBENCH" report merge "$B" --check >"$T/merge2.out" 2>"$T/merge2.err"
code=$?
sb_log "---- report merge $B (exit $code)"
cat "$T/merge2.out" "$T/merge2.err"
[ "$code" = 1 ] || sb_fail "merge --check exited $code with a node missing"
grep -q "^missing   $GONE (job ${PIN[1]}): no report" "$T/merge2.out" ||
  sb_fail "the fleet table does not list $GONE as missing"
grep -q "^fleet: 0 of 2 nodes not ok, 1 missing (2 of 3 elements reported" "$T/merge2.out" ||
  sb_fail "the fleet tally is wrong"
again=$(grep -A1 "^re-submit the failed and missing nodes:" "$T/merge2.out" | tail -n 1)
[[ "$again" == *"--fleet-nodes $GONE --"* ]] || sb_fail "the re-submit command is '$again'"
sb_log "pinned sweep: $GONE missing; re-submitting it as printed"
scontrol update nodename="$GONE" state=resume || sb_fail "cannot resume $GONE"
ids=$(eval "${again/scalebench/\"$SCALEBENCH\"}") || sb_fail "the re-submit command failed: $again"
R=$(tail -n 1 <<<"$ids" | tr -d '[:space:]')
JOBS+=("$R")
wait_all "$R"
"$SCALEBENCH" report merge "$B" --check >"$T/merge3.out" 2>&1 ||
  { cat "$T/merge3.out"; sb_fail "after the re-submission, merge --check still fails"; }
grep -q "^fleet: all 3 nodes ok (3 of 3 elements reported)" "$T/merge3.out" ||
  { cat "$T/merge3.out"; sb_fail "the completed sweep is not all ok"; }
sb_log "PASSED: array sweep named $SLOW alone; $GONE missing, re-submitted alone and ok ($((SECONDS - t0)) s)"
