#!/usr/bin/env bash
# A node lost mid-run loses nothing and stops nothing it need not (CTest: batch.slurm_node_loss,
# label `slurm`), on a real three-node SLURM cluster made of network namespaces on this machine
# (netns_cluster.sh).
#
#   tests/batch/slurm_node_loss.sh BUILD_DIR [SOURCE_DIR]
#
# `scalebench submit --nodes 3` runs four multi-cpu cases (a --param sweep), each with a worker
# on every node. While the second case runs, every process of the third node is killed
# (kill -9, its slurmd included). Then:
#   - the job still ends by itself (the script asks SLURM for --no-kill), within the bound;
#   - the first case is ok and ran on all three nodes;
#   - the case that ran is `failed`, its message naming the node and the repeat;
#   - every later case is ok, ran on the two nodes left, and says which node was lost.
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no namespaces, no SLURM).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_node_loss.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
NODES=3
SB_LOG_TAG=slurm_node_loss
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=slurm_common.sh
. "$HERE/slurm_common.sh"
# shellcheck source=netns_cluster.sh
. "$HERE/netns_cluster.sh"

nc_check_namespaces
sb_require_slurm

T=$(mktemp -d /tmp/sb_nodeloss.XXXXXX)
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
LOST=${NC_NODES[2]}
sb_log "nodes ${NC_NODES[*]} idle; ${LOST} will be lost"
[ -x "$SCALEBENCH" ] || sb_fail "no scalebench executable at $SCALEBENCH"

REPORT=$T/out/report.h5
J=$("$SCALEBENCH" submit --scheduler slurm --nodes "$NODES" --cpus-per-node 2 \
  --time 00:10:00 --partition "$NC_PARTITION" --output "$T/out/scalebench-%j.out" -- \
  --preset tiny --workloads subset-mean --paths multi-cpu --param subset-mean.seed=1,2,3,4 \
  --param subset-mean.n=8000 --repeats 25 --warmup 0 --no-ceilings --out "$REPORT") ||
  sb_fail "scalebench submit failed"
J=$(tail -n 1 <<<"$J" | tr -d '[:space:]')
[[ "$J" =~ ^[0-9]+$ ]] || sb_fail "scalebench submit printed '$J', not a job id"
JOBS+=("$J")
sb_log "scalebench job $J submitted"

# Wait until the second case runs (its progress records in the run's stream), then lose the node.
for _ in $(seq 1 900); do
  grep -qsE '"case":1,.*"type":"progress"' "$T"/out/.scalebench-*/stream-0.jsonl && break
  sleep 0.1
done
grep -qsE '"case":1,.*"type":"progress"' "$T"/out/.scalebench-*/stream-0.jsonl ||
  sb_fail "the second case never started: $(tail -n 20 "$T/out/scalebench-$J.out" 2>/dev/null)"
sleep 1
nc_kill_node "$LOST"
sb_log "killed every process of $LOST at $((SECONDS - t0)) s"

st=$(sb_wait_job "$J" 240)
sb_log "---- job $J ended $st"
tail -n 30 "$T/out/scalebench-$J.out" 2>/dev/null
[ -s "$REPORT" ] || sb_fail "job $J wrote no report at $REPORT"

py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" - "$REPORT" "$LOST" "${NC_NODES[@]}" <<'EOF_PY' || sb_fail "report check failed"
import sys
import h5py

path, lost, nodes = sys.argv[1], sys.argv[2], sys.argv[3:]

def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "tolist"):
        v = v.tolist()
    return [text(x) for x in v] if isinstance(v, list) else str(v)

def strings(g, name):
    if name in g:
        return sorted(text(x) for x in g[name][()])
    if name in g.attrs:
        v = text(g.attrs[name])
        return sorted(v) if isinstance(v, list) else [v]
    return []

errors = []
with h5py.File(path, "r") as f:
    cases = [f["cases"][k] for k in sorted(f["cases"])]
    if len(cases) != 4:
        errors.append(f"{len(cases)} cases, not 4")
    states = [text(c.attrs["status"]) for c in cases]
    print("statuses:", states)
    first, running, later = cases[0], cases[1], cases[2:]
    if states[0] != "ok" or strings(first, "hosts") != sorted(nodes):
        errors.append(f"case 0: {states[0]} on {strings(first, 'hosts')}, not ok on {nodes}")
    msg = text(running.attrs["message"])
    print("case 1:", states[1], msg)
    if states[1] != "failed" or f"{lost} stopped answering during" not in msg:
        errors.append(f"case 1: {states[1]}: '{msg}' does not name {lost}")
    for c in later:
        hosts = strings(c, "hosts")
        if text(c.attrs["status"]) != "ok" or lost in hosts or len(hosts) != len(nodes) - 1:
            errors.append(f"{text(c.attrs['id'])}: {text(c.attrs['status'])} on {hosts}")
        if strings(c, "nodes_lost") != [lost]:
            errors.append(f"{text(c.attrs['id'])}: nodes_lost {strings(c, 'nodes_lost')}")
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
EOF_PY
sb_log "PASSED: $LOST lost mid-run; the running case names it, the rest ran on the nodes left ($((SECONDS - t0)) s)"
