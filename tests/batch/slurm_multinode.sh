#!/usr/bin/env bash
# A real three-node SLURM cluster on this one machine (CTest: batch.slurm_multinode, label
# `slurm`), built by netns_cluster.sh: every node its own network, UTS and mount namespace with
# its own host name and address on a private bridge, one munged, one slurmctld, one slurmd per
# node.
#
#   tests/batch/slurm_multinode.sh BUILD_DIR [SOURCE_DIR]
#
# Then:
#   1. `sbatch -N 3 --wrap 'srun -N 3 hostname'`: the cluster itself works (three host names);
#   2. `scalebench submit --scheduler slurm --nodes 3 --cpus-per-node 2 ... -- --preset tiny
#      --workloads subset-mean,comms --paths single-cpu,multi-cpu --out DIR/report.h5`; the report
#      must hold every case ok (validated) or skipped, scheduler "slurm", the job's id, nodes = 3,
#      and every multi-cpu case must have run a worker on each of the three nodes;
#   3. an A/B run (`submit ... -- --baseline rank=...`): both sides' srun steps (--overlap) on the
#      three nodes taking turns, the baseline's commands through srun's standard input; every
#      case of both sides ok on every node, six repeats a side;
#   4. the same run on the first node in an LSF-shaped environment (LSB_JOBID,
#      LSB_DJOB_HOSTFILE, LSF_BINDIR with a blaunch that enters the named node): mpiexec must
#      reach the other nodes through blaunch, and the report must be as in 2 (scheduler "lsf");
#   5. the same in an SGE-shaped one (JOB_ID, SGE_ROOT, ARC, PE_HOSTFILE, NSLOTS and a stand-in
#      qrsh): OpenMPI must use qrsh -inherit (scheduler "sge").
# A trap always tears everything down (processes by their PIDs, then the namespaces, the bridge
# and the temporary folder; SB_SLURM_KEEP=1 keeps the folder). SB_SLURM_RUN=CMD runs CMD inside
# the live cluster instead of the jobs; CMD may call $SB_CLUSTER_DIR/kill-node NODE and
# $SB_CLUSTER_DIR/start-slurmd NODE.
#
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no network/UTS namespaces, or SLURM
# neither installed nor installable).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_multinode.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
JOB_TIMEOUT=${SB_SLURM_JOB_TIMEOUT:-120}
NODES=3
SB_LOG_TAG=slurm_multinode
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=slurm_common.sh
. "$HERE/slurm_common.sh"
# shellcheck source=netns_cluster.sh
. "$HERE/netns_cluster.sh"

nc_check_namespaces
sb_require_slurm

T=$(mktemp -d /tmp/sb_multinode.XXXXXX)
JOBS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for j in "${JOBS[@]}"; do scancel "$j" >/dev/null 2>&1 || true; done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -d "$T" ]; then
    for f in "$T"/slurmctld.log "$T"/nodes/*/slurmd.log; do
      [ -s "$f" ] && { sb_log "---- last lines of ${f#"$T"/}"; tail -n 15 "$f"; }
    done
  fi
  nc_down
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
nc_up "$T" "$NODES"
sb_log "nodes ${NC_NODES[*]} idle on $NC_SUBNET.0/24 after $((SECONDS - t0)) s"
if [ -n "${SB_SLURM_RUN:-}" ]; then # debugging: run a command inside the cluster instead
  bash -c "$SB_SLURM_RUN"
  exit $?
fi

# ------------------------------------------------------------------ job 1: the cluster works
J1=$(sbatch --parsable -N "$NODES" -o "$T/out/hostname-%j.out" \
  --wrap "srun -N $NODES hostname") || sb_fail "sbatch refused the hostname job"
J1=${J1%%;*}
JOBS+=("$J1")
st=$(sb_wait_job "$J1" 60)
[ "$st" = COMPLETED ] || sb_fail "hostname job $J1 ended $st: $(cat "$T/out/hostname-$J1.out")"
got=$(sort "$T/out/hostname-$J1.out" | tr '\n' ' ')
want=$(printf '%s\n' "${NC_NODES[@]}" | sort | tr '\n' ' ')
[ "$got" = "$want" ] || sb_fail "hostname job $J1 printed '$got', not '$want'"
sb_log "job $J1 (srun -N $NODES hostname): $got"

# ------------------------------------------------------------------ job 2: scalebench
[ -x "$SCALEBENCH" ] || sb_fail "no scalebench executable at $SCALEBENCH"
REPORT=$T/out/report.h5
J2=$("$SCALEBENCH" submit --scheduler slurm --nodes "$NODES" --cpus-per-node 2 \
  --time 00:10:00 --partition "$NC_PARTITION" --output "$T/out/scalebench-%j.out" -- \
  --preset tiny --workloads subset-mean,comms --paths single-cpu,multi-cpu --out "$REPORT") ||
  sb_fail "scalebench submit failed"
J2=$(tail -n 1 <<<"$J2" | tr -d '[:space:]')
[[ "$J2" =~ ^[0-9]+$ ]] || sb_fail "scalebench submit printed '$J2', not a job id"
JOBS+=("$J2")
sb_log "scalebench job $J2 submitted"
st=$(sb_wait_job "$J2" "$JOB_TIMEOUT")
sb_log "---- job $J2 output"
tail -n 40 "$T/out/scalebench-$J2.out" 2>/dev/null
[ "$st" = COMPLETED ] || sb_fail "scalebench job $J2 ended $st"
[ -s "$REPORT" ] || sb_fail "job $J2 wrote no report at $REPORT"
sb_check_report "$REPORT" slurm "$J2" "${NC_NODES[@]}" || sb_fail "report check failed"
# comms across the nodes: every collective and the pair matrix ran (one CPU worker per node),
# every link of the matrix is a network link, and each is a row of the verdict table.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" - "$REPORT" "$NODES" <<'EOF_PY' || sb_fail "comms check failed"
import sys
import h5py
path, nodes = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    comms = [g for g in f["cases"].values() if g.attrs["workload"] == "comms"]
    assert len(comms) == 6, f"{len(comms)} comms cases"
    for g in comms:
        assert g.attrs["status"] == "ok", f"{g.attrs['id']}: {g.attrs['status']} {g.attrs['message']}"
    pairs = [g for g in comms if g["params"].attrs["op"] == "pairs"][0]
    kinds = {k.decode() if isinstance(k, bytes) else k for k in pairs["metrics"]["links"]["kind"]}
    assert len(pairs["metrics"]["links"]) == nodes * (nodes - 1), "not every pair measured"
    assert kinds == {"network"}, f"link kinds {kinds}"
    rows = f["verdicts"][()]
    text = lambda v: v.decode() if isinstance(v, bytes) else v
    links = [r for r in rows if text(r["link"])]
    assert len(links) == nodes * (nodes - 1), f"{len(links)} link verdicts"
    for r in links:
        assert text(r["unit"]) == "B/s" and text(r["model"]) == "network", r
        assert r["value"] > 0 and text(r["verdict"]) in ("ok", "slow"), r
EOF_PY
sb_log "$NODES-node SLURM job $J2 ran scalebench on ${NC_NODES[*]}"

# ------------------------------------------------------------------ job 3: an A/B run
# Both sides as srun steps of one allocation (--overlap), the baseline's commands through srun's
# standard input to its rank 0 on the first node; every case of both sides ok on all nodes.
AB=$T/out/ab.h5
J3=$("$SCALEBENCH" submit --scheduler slurm --nodes "$NODES" --cpus-per-node 2 \
  --time 00:10:00 --partition "$NC_PARTITION" --output "$T/out/ab-%j.out" -- \
  --baseline rank="$BUILD_DIR/scalebench-rank" --baseline label=main --preset tiny \
  --workloads subset-mean --paths multi-cpu --repeats 6 --no-ceilings --on-noisy pass \
  --out "$AB") || sb_fail "scalebench submit of the A/B run failed"
J3=$(tail -n 1 <<<"$J3" | tr -d '[:space:]')
JOBS+=("$J3")
st=$(sb_wait_job "$J3" "$JOB_TIMEOUT")
sb_log "---- job $J3 output"
tail -n 20 "$T/out/ab-$J3.out" 2>/dev/null
# 0 or 1: the verdict is the machine's business here, not this test's
[ "$st" = COMPLETED ] || [ "$st" = FAILED ] || sb_fail "A/B job $J3 ended $st"
sb_check_report "$AB" slurm "$J3" "${NC_NODES[@]}" || sb_fail "A/B report check failed"
"$py" - "$AB" "$NODES" <<'EOF_PY' || sb_fail "A/B check failed"
import sys
import h5py
path, nodes = sys.argv[1], int(sys.argv[2])
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
with h5py.File(path, "r") as f:
    sides = f["ab/sides"][()]
    assert [text(s["side"]) for s in sides] == ["baseline", "current"], sides
    base = list(f["ab/baseline/cases"].values())
    assert len(base) == 1, f"{len(base)} baseline cases"
    for g in base + list(f["cases"].values()):
        assert text(g.attrs["status"]) == "ok", text(g.attrs.get("message", ""))
        assert len(set(text(h) for h in g["hosts"][()])) == nodes, "not every node"
        assert len(g["times"]) == 6, "not 6 repeats"
    turns = f["ab/turns"][()]
    assert sum(int(t["repeats"]) for t in turns) == 12, turns
EOF_PY
sb_log "A/B job $J3: both sides took turns on ${NC_NODES[*]}"

# ------------------------------------------------------------------ 4, 5: LSF and SGE shapes
# scalebench run on the first node in an LSF-shaped (then SGE-shaped) environment listing all
# three nodes with 2 slots each: it must start mpiexec through blaunch (LSF_BINDIR/blaunch), or
# let OpenMPI use qrsh -inherit (SGE_ROOT/bin/ARC/qrsh); here both are stand-ins that enter the
# named node's namespaces, so the ranks really run on the three nodes.
mkdir -p "$T/lsf/bin" "$T/sge/bin/lx-amd64"
nc_remote_shell "$T/lsf/bin/blaunch"
nc_remote_shell "$T/sge/bin/lx-amd64/qrsh"
for n in "${NC_NODES[@]}"; do printf '%s\n%s\n' "$n" "$n"; done >"$T/lsf/hostfile"
for n in "${NC_NODES[@]}"; do echo "$n 2 all.q@$n UNDEFINED"; done >"$T/sge/pe_hostfile"
RUN_ARGS=(--preset tiny --workloads subset-mean --paths single-cpu,multi-cpu --no-ceilings)
shape_run() { # SCHEDULER JOB_ID VAR=VALUE...: scalebench run on node 1 in that environment
  local scheduler=$1 job=$2
  shift 2
  : >"$NC_DIR/remote-shell.log"
  (cd "$T/out" && timeout "$JOB_TIMEOUT" nsenter -t "$(cat "$T/nodes/${NC_NODES[0]}/slurmd.pid")" \
    --net --uts --mount -- env "$@" SCALEBENCH_GPUS_PER_NODE=0 "$SCALEBENCH" run "${RUN_ARGS[@]}" --out "$T/out/$scheduler.h5" \
    >"$T/out/$scheduler.out" 2>&1) || {
    tail -n 30 "$T/out/$scheduler.out"
    sb_fail "scalebench run in the $scheduler-shaped allocation failed"
  }
  sb_check_report "$T/out/$scheduler.h5" "$scheduler" "$job" "${NC_NODES[@]}" ||
    sb_fail "$scheduler report check failed"
}
shape_run lsf 31337 LSB_JOBID=31337 LSB_DJOB_HOSTFILE="$T/lsf/hostfile" LSB_DJOB_NUMPROC=6 \
  LSF_BINDIR="$T/lsf/bin"
for n in "${NC_NODES[@]:1}"; do
  grep -qx "blaunch $n" "$NC_DIR/remote-shell.log" || sb_fail "mpiexec did not use blaunch for $n"
done
sb_log "LSF shape: mpiexec through blaunch ran scalebench on ${NC_NODES[*]}"
shape_run sge 4711 JOB_ID=4711 SGE_ROOT="$T/sge" ARC=lx-amd64 PE_HOSTFILE="$T/sge/pe_hostfile" \
  NSLOTS=6 PE=mpi
for n in "${NC_NODES[@]:1}"; do
  grep -qx "qrsh $n" "$NC_DIR/remote-shell.log" || sb_fail "mpiexec did not use qrsh for $n"
done
sb_log "SGE shape: mpiexec through qrsh -inherit ran scalebench on ${NC_NODES[*]}"
sb_log "PASSED: SLURM job, LSF and SGE shapes on ${NC_NODES[*]} ($((SECONDS - t0)) s)"
