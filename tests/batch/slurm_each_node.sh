#!/usr/bin/env bash
# Node acceptance on a real three-node SLURM cluster made on this machine (CTest
# batch.slurm_each_node, label `slurm`; netns_cluster.sh): one node's slurmd, and so every job
# step it starts, is put in a cgroup v1 CPU quota of a quarter of one CPU, and
#   scalebench submit --nodes 3 ... -- --paths each-node --check
# must end the job with exit status 1, naming that node and only it (on the job's output and
# in the report's /verdicts), with the cgroup throttling in its telemetry.
#
#   tests/batch/slurm_each_node.sh BUILD_DIR [SOURCE_DIR]
#
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no network/UTS namespaces, no cgroup v1
# cpu controller, or SLURM neither installed nor installable).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_each_node.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
JOB_TIMEOUT=${SB_SLURM_JOB_TIMEOUT:-150}
NODES=3
SB_LOG_TAG=slurm_each_node
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

T=$(mktemp -d /tmp/sb_each_node.XXXXXX)
CG=$CPU_CG/sb_slow_$$
JOBS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for j in "${JOBS[@]}"; do scancel "$j" >/dev/null 2>&1 || true; done
  nc_down
  # Every process of the quota's cgroup was ours (the slow node's); it is empty once the node is
  # down, and can go.
  if [ -d "$CG" ]; then
    while read -r p; do echo "$p" >"$CPU_CG/cgroup.procs" 2>/dev/null; done <"$CG/cgroup.procs"
    rmdir "$CG" 2>/dev/null
  fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
nc_up "$T" "$NODES"
SLOW=${NC_NODES[2]}
mkdir "$CG" || sb_fail "cannot create the cgroup $CG"
echo 100000 >"$CG/cpu.cfs_period_us" && echo 25000 >"$CG/cpu.cfs_quota_us" ||
  sb_fail "cannot set the CPU quota of $CG"
# slurmd alone is moved: the steps it forks from now on (slurmstepd, the ranks) are born in it.
cat "$T/nodes/$SLOW/slurmd.pid" >"$CG/cgroup.procs" || sb_fail "cannot move $SLOW's slurmd"
sb_log "nodes ${NC_NODES[*]} up in $((SECONDS - t0)) s; $SLOW limited to 25% of one CPU"

REPORT=$T/out/report.h5
J=$("$SCALEBENCH" submit --scheduler slurm --nodes "$NODES" --cpus-per-node 2 \
  --time 00:10:00 --partition "$NC_PARTITION" --output "$T/out/scalebench-%j.out" -- \
  --preset small --workloads subset-mean --paths each-node --repeats 3 --no-ceilings --check \
  --out "$REPORT") || sb_fail "scalebench submit failed"
J=$(tail -n 1 <<<"$J" | tr -d '[:space:]')
[[ "$J" =~ ^[0-9]+$ ]] || sb_fail "scalebench submit printed '$J', not a job id"
JOBS+=("$J")
st=$(sb_wait_job "$J" "$JOB_TIMEOUT")
OUT=$T/out/scalebench-$J.out
sb_log "---- job $J output"
tail -n 25 "$OUT" 2>/dev/null
code=$(scontrol show job "$J" 2>/dev/null | sed -n 's/.*ExitCode=\([0-9]*\):.*/\1/p' | head -n 1)
[ "$st" = FAILED ] && [ "$code" = 1 ] ||
  sb_fail "job $J ended $st with exit code '$code'; --check must exit 1 for the slowed node"
[ -s "$REPORT" ] || sb_fail "job $J wrote no report at $REPORT"
grep -q "node $SLOW" "$OUT" || sb_fail "the job's output does not name $SLOW"
for n in "${NC_NODES[@]}"; do
  [ "$n" = "$SLOW" ] && continue
  if grep -E "^(slow|throttled|failed) " "$OUT" | grep -q "node $n"; then
    sb_fail "the job's output names $n, which was not slowed"
  fi
done

py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" - "$REPORT" "$SLOW" "${NC_NODES[@]}" <<'EOF_PY' || sb_fail "report check failed"
import sys
import h5py

path, slow, nodes = sys.argv[1], sys.argv[2], sys.argv[3:]
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
with h5py.File(path, "r") as f:
    rows = f["verdicts"][()]
    verdicts = {text(r["host"]): (text(r["verdict"]), text(r["reason"])) for r in rows}
    assert sorted(verdicts) == sorted(nodes), f"verdict rows for {sorted(verdicts)}"
    bad = sorted(h for h, (v, _) in verdicts.items() if v != "ok")
    assert bad == [slow], f"not ok: {bad}, expected only {slow}: {verdicts}"
    print(f"{slow}: {verdicts[slow][0]}: {verdicts[slow][1]}")
    throttled = 0.0
    for name, g in f["cases"].items():
        if text(g.attrs.get("host", "")) == slow:
            assert "telemetry" in g, f"{name} has no telemetry"
            throttled = float(g["interference"].attrs["cgroup_throttled_s"])
    assert throttled > 0, f"{slow}: no cgroup throttling in its interference record"
    print(f"{slow}: cgroup_throttled_s = {throttled:.2f}")
EOF_PY
sb_log "PASSED: each-node --check named $SLOW alone ($((SECONDS - t0)) s)"
