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
# cluster once the node is idle, instead of the two jobs).
#
# Exit codes: 0 passed, 1 failed, 77 skipped (only where this machine cannot run the daemons:
# not root, packages neither installed nor installable).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_cluster.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SOURCE_DIR=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
JOB_TIMEOUT=${SB_SLURM_JOB_TIMEOUT:-600}

log() { printf '[slurm_cluster] %s\n' "$*"; }
skip() { log "SKIPPED: $*"; exit 77; }
fail() {
  log "FAILED: $*"
  exit 1
}

# ------------------------------------------------------------------ packages
if [ "$(id -u)" != 0 ]; then
  skip "running the SLURM daemons needs root (this is uid $(id -u))"
fi
need_install=()
for exe in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge \
           mungekey:munge; do
  command -v "${exe%%:*}" >/dev/null 2>&1 || need_install+=("${exe##*:}")
done
if [ ! -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] &&
   [ ! -e /usr/lib/slurm-wlm/mpi_pmix.so ] && [ -z "$(find /usr/lib -name mpi_pmix.so 2>/dev/null | head -1)" ]; then
  need_install+=(slurm-wlm-basic-plugins)
fi
if [ ${#need_install[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || skip "no SLURM here and no apt-get to install it"
  log "installing slurm-wlm munge (missing: ${need_install[*]})"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends slurm-wlm munge libpmix2 openmpi-bin \
      >/tmp/sb_slurm_apt.log 2>&1; then
    apt-get update -q >>/tmp/sb_slurm_apt.log 2>&1 || true
    apt-get install -y -q --no-install-recommends slurm-wlm munge libpmix2 openmpi-bin \
      >>/tmp/sb_slurm_apt.log 2>&1 ||
      skip "cannot install slurm-wlm and munge (see /tmp/sb_slurm_apt.log)"
  fi
fi

# ------------------------------------------------------------------ state and cleanup
T=$(mktemp -d /tmp/sb_slurm.XXXXXX)
chmod 755 "$T"
export SLURM_CONF=$T/slurm.conf
JOBS=()

stop_pidfile() {  # stop the daemon whose pid file is $1 (only a process we started)
  local f=$1 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for j in "${JOBS[@]}"; do scancel "$j" >/dev/null 2>&1 || true; done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    for f in slurmctld.log slurmd.log munged.log; do
      [ -s "$T/$f" ] && { log "---- last lines of $f"; tail -n 25 "$T/$f"; }
    done
  fi
  stop_pidfile "$T/slurmd.pid"
  stop_pidfile "$T/slurmctld.pid"
  stop_pidfile "$T/munged.pid"
  if [ "${SB_SLURM_KEEP:-0}" = 1 ]; then log "kept $T"; else rm -rf "$T"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ munge
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/out"
chmod 755 "$T/munge"
mungekey --create --keyfile="$T/munge/munge.key" --force >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$T/munge/munge.key"
MUNGE_SOCKET=$T/munge/munge.socket
munged --force --key-file="$T/munge/munge.key" --socket="$MUNGE_SOCKET" \
  --pid-file="$T/munged.pid" --log-file="$T/munged.log" --seed-file="$T/munge/munge.seed" ||
  fail "munged did not start"
for _ in $(seq 50); do [ -S "$MUNGE_SOCKET" ] && break; sleep 0.1; done
[ -S "$MUNGE_SOCKET" ] || fail "munged made no socket"
if command -v munge >/dev/null 2>&1; then
  munge -n -S "$MUNGE_SOCKET" | unmunge -S "$MUNGE_SOCKET" >/dev/null ||
    fail "munge cannot encode and decode a credential"
fi

# ------------------------------------------------------------------ slurm.conf
HOST=$(hostname -s)
NODE_LINE=$(slurmd -C 2>/dev/null | head -n 1)
[ -n "$NODE_LINE" ] || fail "slurmd -C printed nothing"
NODE_LINE=${NODE_LINE/NodeName=* CPUs=/CPUs=}   # keep CPUs= Boards= ... RealMemory=
CPUS=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$NODE_LINE")
MEM=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$NODE_LINE")
NODE_LINE=${NODE_LINE/RealMemory=$MEM/RealMemory=$((MEM * 9 / 10))}
free_port() {  # a TCP port nobody listens on, from a range that varies per run
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  echo 6817
}
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
[ "$SLURMD_PORT" = "$CTLD_PORT" ] && SLURMD_PORT=$((CTLD_PORT + 1))
SRUN_PORTS="$((40000 + RANDOM % 10000))"
SRUN_PORTS="$SRUN_PORTS-$((SRUN_PORTS + 200))"

cat >"$SLURM_CONF" <<EOF
# Written by tests/batch/slurm_cluster.sh for one test run; removed afterwards.
ClusterName=sbtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SrunPortRange=$SRUN_PORTS
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$T/plugstack.conf
KillWait=10
InactiveLimit=0
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$HOST NodeAddr=127.0.0.1 $NODE_LINE State=UNKNOWN
PartitionName=sbtest Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
: >"$T/plugstack.conf"
log "slurm.conf for $HOST: $NODE_LINE, ports $CTLD_PORT/$SLURMD_PORT"

# ------------------------------------------------------------------ daemons
slurmctld -f "$SLURM_CONF" -c -i >"$T/slurmctld.stdout" 2>&1 || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$HOST" >"$T/slurmd.stdout" 2>&1 || fail "slurmd did not start"
state=""
for _ in $(seq 120); do
  state=$(sinfo -h -n "$HOST" -o %t 2>/dev/null | head -n 1)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "node $HOST is '$state', not idle, after 60 s"
log "node $HOST is idle"
if [ -n "${SB_SLURM_RUN:-}" ]; then  # debugging: run a command inside the cluster instead
  bash -c "$SB_SLURM_RUN"
  exit $?
fi

# wait_job ID: waits until the job leaves the queue; prints its final state.
wait_job() {
  local id=$1 st=""
  for _ in $(seq $((JOB_TIMEOUT * 2))); do
    st=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case "$st" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE)
        echo "$st"; return 0 ;;
    esac
    sleep 0.5
  done
  echo "${st:-UNKNOWN}(timed out)"
}

# ------------------------------------------------------------------ job 1: the cluster works
J1=$(sbatch --parsable -n 2 -o "$T/out/hostname-%j.out" --wrap 'srun --mpi=pmix -n 2 hostname') ||
  fail "sbatch refused the hostname job"
J1=${J1%%;*}
JOBS+=("$J1")
st=$(wait_job "$J1")
cat "$T/out/hostname-$J1.out" 2>/dev/null
[ "$st" = COMPLETED ] || fail "hostname job $J1 ended $st"
[ "$(grep -c "^$(hostname)\$" "$T/out/hostname-$J1.out")" = 2 ] ||
  fail "hostname job $J1 did not print the host name twice"
log "job $J1 (srun --mpi=pmix -n 2 hostname): COMPLETED"

# ------------------------------------------------------------------ job 2: scalebench
[ -x "$SCALEBENCH" ] || fail "no scalebench executable at $SCALEBENCH"
REPORT=$T/out/report.h5
J2=$("$SCALEBENCH" submit --scheduler slurm --nodes 1 --cpus-per-node "$CPUS" \
  --time 00:15:00 --partition sbtest --output "$T/out/scalebench-%j.out" -- \
  --preset tiny --workloads subset-mean --paths single-cpu,multi-cpu --out "$REPORT") ||
  fail "scalebench submit failed"
J2=$(tail -n 1 <<<"$J2" | tr -d '[:space:]')
[[ "$J2" =~ ^[0-9]+$ ]] || fail "scalebench submit printed '$J2', not a job id"
JOBS+=("$J2")
log "scalebench job $J2 submitted"
st=$(wait_job "$J2")
log "---- job $J2 output"
cat "$T/out/scalebench-$J2.out" 2>/dev/null | tail -n 60
[ "$st" = COMPLETED ] || fail "scalebench job $J2 ended $st"
[ -s "$REPORT" ] || fail "job $J2 wrote no report at $REPORT"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" - "$REPORT" "$J2" <<'EOF' || fail "report check failed"
import sys
import h5py

path, job = sys.argv[1], sys.argv[2]

def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "shape") and v.shape == ():
        return text(v[()])
    return str(v)

with h5py.File(path, "r") as f:
    sched = text(f.attrs.get("scheduler", ""))
    jid = text(f.attrs.get("job_id", ""))
    assert sched == "slurm", f"scheduler attribute is {sched!r}, not 'slurm'"
    assert jid == job, f"job_id attribute is {jid!r}, not {job!r}"
    assert "cases" in f, "no /cases group"
    statuses = {}
    for name, g in f["cases"].items():
        if isinstance(g, h5py.Group) and "status" in g.attrs:
            statuses[name] = text(g.attrs["status"])
    if not statuses and "summary" in f:
        s = f["summary"][()]
        statuses = {text(r["case"]): text(r["status"]) for r in s}
    assert statuses, "the report holds no case"
    bad = {k: v for k, v in statuses.items() if v not in ("ok", "skipped")}
    assert not bad, f"cases not ok/skipped: {bad}"
    paths = sorted(set(k.split("/")[1] if "/" in k else k for k in statuses))
    print(f"report {path}: scheduler={sched} job_id={jid}, {len(statuses)} cases ok/skipped")
EOF
log "PASSED: SLURM job $J2 ran scalebench to completion"
