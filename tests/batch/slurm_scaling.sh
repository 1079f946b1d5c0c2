#!/usr/bin/env bash
# Scaling studies on a real three-node SLURM cluster made on this machine (CTest
# batch.slurm_scaling, label `slurm`; netns_cluster.sh), issue #51: subset-mean and groupby on
# multi-cpu at 1, 2 and 3 nodes,
#   1. strong, in one allocation of three nodes (`scalebench scale` runs a job step on the first
#      1, 2 and 3 nodes);
#   2. weak, as a chain of three jobs (1, 2, then 3 nodes, each after the previous one), every
#      problem grown with the node count by its workload's rule;
# each must leave one merged report, DIR/scaling.h5, whose scaling table has every case at the
# three node counts with its speedup and parallel efficiency, the cases' workers on that many
# nodes, and (weak) the problems grown 2x and 3x.
#
#   tests/batch/slurm_scaling.sh BUILD_DIR [SOURCE_DIR]
#
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no network/UTS namespaces, or SLURM
# neither installed nor installable).

set -u -o pipefail

BUILD_DIR=$(cd "${1:?usage: slurm_scaling.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SCALEBENCH=${SCALEBENCH:-$BUILD_DIR/scalebench}
JOB_TIMEOUT=${SB_SLURM_JOB_TIMEOUT:-240}
NODES=3
SB_LOG_TAG=slurm_scaling
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=slurm_common.sh
. "$HERE/slurm_common.sh"
# shellcheck source=netns_cluster.sh
. "$HERE/netns_cluster.sh"

nc_check_namespaces
sb_require_slurm
[ -x "$SCALEBENCH" ] || sb_fail "no scalebench executable at $SCALEBENCH"

T=$(mktemp -d /tmp/sb_scaling.XXXXXX)
JOBS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for j in "${JOBS[@]}"; do scancel "$j" >/dev/null 2>&1 || true; done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -d "$T" ]; then
    for f in "$T"/slurmctld.log "$T"/out/*.out; do
      [ -s "$f" ] && { sb_log "---- last lines of ${f#"$T"/}"; tail -n 25 "$f"; }
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
sb_log "nodes ${NC_NODES[*]} up in $((SECONDS - t0)) s"
SUBMIT=(--scheduler slurm --cpus-per-node 2 --time 00:15:00 --partition "$NC_PARTITION"
  --nodes 1,2,3)
RUN=(--preset tiny --workloads subset-mean,groupby --paths multi-cpu --repeats 3 --no-ceilings
  --param groupby.days=6)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)

check_study() { # DIR MODE: the merged report's scaling table
  "$SCALEBENCH" report "$1/scaling.h5" --format json --out "$T/$2.json" ||
    sb_fail "cannot render $1/scaling.h5"
  "$py" - "$T/$2.json" "$2" <<'EOF_PY' || sb_fail "$2 scaling table check failed"
import json, math, sys
model = json.load(open(sys.argv[1]))
mode = sys.argv[2]
s = model["scaling"]
assert s["mode"] == mode, s["mode"]
rows = s["rows"]
cases = {}
for r in rows:
    cases.setdefault(r["case"], []).append(r)
workloads = {r["workload"] for r in rows}
assert workloads == {"subset-mean", "groupby"}, workloads
assert len(cases) == 4, sorted(cases)          # subset-mean, groupby by-name/by-id/by-key
for case, rs in cases.items():
    assert [r["nodes"] for r in rs] == [1, 2, 3], (case, [r["nodes"] for r in rs])
    for r in rs:
        assert r["status"] == "ok", r
        assert math.isfinite(r["efficiency"]) and r["efficiency"] > 0, r
        assert r["ideal"] == r["nodes"], r
    assert abs(rs[0]["efficiency"] - 1) < 1e-9, rs[0]
    print(f"{mode:6} {case}: " + ", ".join(
        f"{r['nodes']} nodes {r['median_s'] * 1e3:.1f} ms speedup {r['speedup']:.2f} "
        f"efficiency {100 * r['efficiency']:.0f}%" for r in rs))
# Every record ran on as many nodes as its report's node count, within one merged report.
for c in model["cases"]:
    hosts = set(c["hosts"])
    assert len(hosts) == c["scaling_nodes"], (c["id"], hosts, c["scaling_nodes"])
    assert c["source_report"].endswith(f"nodes-{c['scaling_nodes']}.h5"), c["source_report"]
if mode == "weak":
    units = {}
    for r in rows:
        units.setdefault(r["case"], {})[r["nodes"]] = r["work_units"]
    for case, u in units.items():
        for k in (2, 3):
            ratio = u[k] / u[1]
            # groupby's rows grow exactly; subset-mean's n x n to the nearest multiple of chunk
            assert 0.7 * k < ratio < 1.4 * k, (case, k, ratio)
EOF_PY
}

# ------------------------------------------------------------------ 1: strong, one allocation
ids=$("$SCALEBENCH" submit "${SUBMIT[@]}" --scaling strong --scaling-dir "$T/out/strong" \
  --output "$T/out/strong-%j.out" -- "${RUN[@]}") || sb_fail "submit --scaling strong failed"
J=$(tail -n 1 <<<"$ids" | tr -d '[:space:]')
JOBS+=("$J")
st=$(sb_wait_job "$J" "$JOB_TIMEOUT")
sb_log "---- strong study, job $J ($st)"
tail -n 20 "$T/out/strong-$J.out"
[ "$st" = COMPLETED ] || sb_fail "the strong study's job $J ended $st"
check_study "$T/out/strong" strong
sb_log "strong study: one allocation, 1, 2 and 3 nodes merged ($((SECONDS - t0)) s)"

# ------------------------------------------------------------------ 2: weak, a chain of jobs
ids=$("$SCALEBENCH" submit "${SUBMIT[@]}" --scaling weak --chain --scaling-dir "$T/out/weak" \
  --output "$T/out/weak-%j.out" -- "${RUN[@]}") || sb_fail "submit --scaling weak --chain failed"
mapfile -t CHAIN <<<"$ids"
[ "${#CHAIN[@]}" = 3 ] || sb_fail "submit --chain printed '$ids', not three job ids"
JOBS+=("${CHAIN[@]}")
for j in "${CHAIN[@]}"; do
  st=$(sb_wait_job "$j" "$JOB_TIMEOUT")
  tail -n 12 "$T/out/weak-$j.out"
  [ "$st" = COMPLETED ] || sb_fail "the weak chain's job $j ended $st"
done
check_study "$T/out/weak" weak
sb_log "PASSED: strong (one allocation) and weak (a chain of 3 jobs) studies merged ($((SECONDS - t0)) s)"
