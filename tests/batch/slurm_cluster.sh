#!/usr/bin/env bash
# A real single-node SLURM cluster for one test run (CTest: batch.slurm_real, label `slurm`).
#
#   tests/batch/slurm_cluster.sh BUILD_DIR [SOURCE_DIR]
#
# Installs Debian's slurm-wlm and munge when missing (apt-get, non-interactive), writes a munge
# key and a one-node slurm.conf for this machine (real host name, CPUs and memory from
# `slurmd -C`; ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, SelectType=select/cons_tres;
# every state, spool, log, pid and socket file in a temporary folder), starts munged, slurmctld
# and slurmd, waits for the node to be idle, then runs two jobs to completion:
#   1. `sbatch --wrap 'srun --mpi=pmix -n 2 hostname'`: the cluster itself works;
#   2. `scalebench submit --scheduler slurm --nodes 1 ... -- --preset tiny --workloads subset-mean
#      --paths single-cpu,multi-cpu --out DIR/report.h5`, then checks the report with
#      /usr/bin/python3 + h5py: every case ok or skipped, scheduler == "slurm", job_id == the job.
# A trap always cleans up: scancel, stop the daemons it started (by their pid files), remove the
# temporary folder (SB_SLURM_KEEP=1 keeps it for debugging; SB_SLURM_RUN=CMD runs CMD in the
# cluster once the node is idle, instead of the two jobs; SB_SLURM_CONF_EXTRA=FILE appends FILE's
# lines to slurm.conf, with @HOST@ replaced by the node's name: tests/docs adds a partition).
#
# Exit codes: 0 passed, 1 failed, 77 skipped (only where this machine cannot run the daemons:
# not root, packages neither installed nor installable).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_cluster.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SOURCE_DIR=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
JOB_TIMEOUT=${SB_SLURM_JOB_TIMEOUT:-600}
SB_LOG_TAG=slurm_cluster
# shellcheck source=slurm_common.sh
. "$(dirname "$0")/slurm_common.sh"

sb_require_slurm

# ------------------------------------------------------------------ state and cleanup
T=$(mktemp -d /tmp/sb_slurm.XXXXXX)
chmod 755 "$T"
export SLURM_CONF=$T/slurm.conf
JOBS=()

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for j in "${JOBS[@]}"; do scancel "$j" >/dev/null 2>&1 || true; done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    for f in slurmctld.log slurmd.log munge/munged.log; do
      [ -s "$T/$f" ] && { sb_log "---- last lines of $f"; tail -n 25 "$T/$f"; }
    done
  fi
  sb_stop_pidfile "$T/slurmd.pid"
  sb_stop_pidfile "$T/slurmctld.pid" "$T/munge/munged.pid"
  if [ "${SB_SLURM_KEEP:-0}" = 1 ]; then sb_log "kept $T"; else rm -rf "$T"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ munge
mkdir -p "$T/spool" "$T/out"
sb_start_munged "$T"

# ------------------------------------------------------------------ slurm.conf
HOST=$(hostname -s)
NODE_LINE=$(slurmd -C 2>/dev/null | head -n 1)
[ -n "$NODE_LINE" ] || sb_fail "slurmd -C printed nothing"
NODE_LINE=${NODE_LINE/NodeName=* CPUs=/CPUs=}   # keep CPUs= Boards= ... RealMemory=
CPUS=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$NODE_LINE")
MEM=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$NODE_LINE")
NODE_LINE=${NODE_LINE/RealMemory=$MEM/RealMemory=$((MEM * 9 / 10))}
CTLD_PORT=$(sb_free_port)
SLURMD_PORT=$(sb_free_port)
[ "$SLURMD_PORT" = "$CTLD_PORT" ] && SLURMD_PORT=$((CTLD_PORT + 1))
SRUN_PORTS="$((40000 + RANDOM % 10000))"
SRUN_PORTS="$SRUN_PORTS-$((SRUN_PORTS + 200))"

{
  echo "# Written by tests/batch/slurm_cluster.sh for one test run; removed afterwards."
  echo "ClusterName=sbtest"
  echo "SlurmctldHost=$HOST(127.0.0.1)"
  echo "SlurmctldPort=$CTLD_PORT"
  echo "SlurmdPort=$SLURMD_PORT"
  echo "SrunPortRange=$SRUN_PORTS"
  echo "SlurmdSpoolDir=$T/spool"
  echo "SlurmdPidFile=$T/slurmd.pid"
  echo "SlurmdLogFile=$T/slurmd.log"
  echo "MpiDefault=none"
  echo "KillWait=10"
  echo "SlurmdTimeout=60"
  sb_slurm_conf_common "$T"
  echo "NodeName=$HOST NodeAddr=127.0.0.1 $NODE_LINE State=UNKNOWN"
  echo "PartitionName=sbtest Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
} >"$SLURM_CONF"
if [ -n "${SB_SLURM_CONF_EXTRA:-}" ]; then
  sed "s/@HOST@/$HOST/g" "$SB_SLURM_CONF_EXTRA" >>"$SLURM_CONF" ||
    sb_fail "cannot read $SB_SLURM_CONF_EXTRA"
fi
sb_log "slurm.conf for $HOST: $NODE_LINE, ports $CTLD_PORT/$SLURMD_PORT"

# ------------------------------------------------------------------ daemons
slurmctld -f "$SLURM_CONF" -c -i >"$T/slurmctld.stdout" 2>&1 || sb_fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$HOST" >"$T/slurmd.stdout" 2>&1 || sb_fail "slurmd did not start"
sb_wait_node_states idle 60 "$HOST" ||
  sb_fail "node $HOST is '$(sinfo -h -n "$HOST" -o %t 2>/dev/null)', not idle, after 60 s"
sb_log "node $HOST is idle"
if [ -n "${SB_SLURM_RUN:-}" ]; then  # debugging: run a command inside the cluster instead
  bash -c "$SB_SLURM_RUN"
  exit $?
fi

# ------------------------------------------------------------------ job 1: the cluster works
J1=$(sbatch --parsable -n 2 -o "$T/out/hostname-%j.out" --wrap 'srun --mpi=pmix -n 2 hostname') ||
  sb_fail "sbatch refused the hostname job"
J1=${J1%%;*}
JOBS+=("$J1")
st=$(sb_wait_job "$J1" "$JOB_TIMEOUT")
cat "$T/out/hostname-$J1.out" 2>/dev/null
[ "$st" = COMPLETED ] || sb_fail "hostname job $J1 ended $st"
[ "$(grep -c "^$(hostname)\$" "$T/out/hostname-$J1.out")" = 2 ] ||
  sb_fail "hostname job $J1 did not print the host name twice"
sb_log "job $J1 (srun --mpi=pmix -n 2 hostname): COMPLETED"

# ------------------------------------------------------------------ job 2: scalebench
[ -x "$SCALEBENCH" ] || sb_fail "no scalebench executable at $SCALEBENCH"
REPORT=$T/out/report.h5
J2=$("$SCALEBENCH" submit --scheduler slurm --nodes 1 --cpus-per-node "$CPUS" \
  --time 00:15:00 --partition sbtest --output "$T/out/scalebench-%j.out" -- \
  --preset tiny --workloads subset-mean --paths single-cpu,multi-cpu --out "$REPORT") ||
  sb_fail "scalebench submit failed"
J2=$(tail -n 1 <<<"$J2" | tr -d '[:space:]')
[[ "$J2" =~ ^[0-9]+$ ]] || sb_fail "scalebench submit printed '$J2', not a job id"
JOBS+=("$J2")
sb_log "scalebench job $J2 submitted"
st=$(sb_wait_job "$J2" "$JOB_TIMEOUT")
sb_log "---- job $J2 output"
tail -n 60 "$T/out/scalebench-$J2.out" 2>/dev/null
[ "$st" = COMPLETED ] || sb_fail "scalebench job $J2 ended $st"
[ -s "$REPORT" ] || sb_fail "job $J2 wrote no report at $REPORT"
sb_check_report "$REPORT" slurm "$J2" || sb_fail "report check failed"
sb_log "PASSED: SLURM job $J2 ran scalebench to completion"
