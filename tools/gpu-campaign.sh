#!/usr/bin/env bash
# Measures scalebench on a GPU node in one go and prints a short table last.
#   tools/gpu-campaign.sh [full|runs|bykey]   full: build everything, GPU tests, then the runs;
#                                             runs: build scalebench only, then the runs;
#                                             bykey: build scalebench only, then the by-key runs
#   tools/gpu-campaign.sh build [OTHER]       build everything (and OTHER's scalebench: another
#                                             source tree, e.g. `git archive COMMIT` unpacked)
#   tools/gpu-campaign.sh tests [JOBS [S]]    the GPU tests of the build (ctest -L gpu -j JOBS,
#                                             stopped after S seconds, default 500)
#   tools/gpu-campaign.sh verdicts            after `build` and `tests`: the figures the issues
#                                             ask for, each twice where it matters (seed on 4
#                                             and 2 GPUs, large svd/by-key, comms with the
#                                             PyTorch all_reduce peer, each-gpu with telemetry
#                                             on and off, the transport axis), a table last
#   tools/gpu-campaign.sh trace [REPEATS]      after `build`: seed on gpu1, gpuN and each-gpu
#                                             (telemetry on and off) with run --trace; per case
#                                             the median, the runtime's own cost (`runtime`,
#                                             `messages`), the worst repeat and its trace line
#   tools/gpu-campaign.sh sizes [ARG..]      after `build`: tiny, small and seed on one GPU and
#                                             on all GPUs and two (20 repeats; ARG.. added to
#                                             each multi-gpu run), seed on all GPUs with
#                                             telemetry off, svd large on one GPU and twice on
#                                             all; median and worst repeat per case, start-up
#   tools/gpu-campaign.sh scaling             after `build`: more GPUs never slower (seed on
#                                             every GPU and on two, twice, 20 repeats), large
#                                             svd and by-key on every GPU twice and on two, the
#                                             start-up three times, then the PyTorch and CuPy
#                                             peers of groupby and svd on one GPU; PASS/FAIL per
#                                             figure (tools/scaling_verdicts.py), peers last
#   tools/gpu-campaign.sh ab OTHER [PRESET..] seed and large (or PRESET..) on gpu1,gpuN, this
#                                             tree and OTHER alternating, twice each; medians
#                                             side by side (both built by `build OTHER`)
#   tools/gpu-campaign.sh acceptance          after `build`: node acceptance names the cause
#                                             (issue #50): each-gpu --check clean (every device
#                                             ok, every health field present), again with a
#                                             PyTorch fp64 GEMM loop on GPU 0 (GPU 0 `busy`,
#                                             naming its pid and name), and energy per case
#                                             against nvidia-smi's power every 0.1 s integrated
#                                             over the same interval (within 5%); PASS/FAIL last
#   tools/gpu-campaign.sh groupby             build scalebench, bench_groupby_gpu and
#                                             test_groupby_gpu; the groupby GPU tests; groupby
#                                             large and seed on one GPU (and on every GPU where
#                                             there are more) twice each, the PyTorch peer of
#                                             every query at both sizes in the same call, the
#                                             kernels (bench_groupby_gpu); per case both
#                                             medians, the floor and the efficiency last
# Runs: seed preset and large preset on the single-gpu and multi-gpu paths (every visible GPU),
# each writing an HDF5 report, plus its markdown table. bykey: groupby by-key large on one GPU
# and on every visible GPU twice, the multi-GPU case with its exchange timeline (run --trace),
# with the push kernel's blocks at 12, 16, 24 and 32 (--param groupby.push_blocks; the default
# is 16 on two GPUs and 24 on more) and with the NCCL
# exchange, then bench_groupby_gpu's PushAllToAll (the push kernel alone, every GPU to every
# other at once). Logs and reports go to $OUT.
# Needs the .deps bundle of missing Debian packages (see tools/device-build.sh).
set -uo pipefail
mode=${1:-full}
out=${OUT:-$PWD/campaign-out}
mkdir -p "$out"
# NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi -L | tee "$out/gpus.txt"
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The tests build examples/plugin against an installed scalebench: its dependencies from there.
export CMAKE_PREFIX_PATH=/opt/deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
case "$mode" in
  build)
    t0=$(date +%s)
    other=${2:-}
    if [ -n "$other" ]; then
      (cd "$other" && SB_TARGETS="scalebench scalebench-rank" timeout 500 tools/device-build.sh \
        "$OLDPWD/.deps" build-gpu >"$out/build-other.log" 2>&1) &
    fi
    # The docs' peer commands run with the tests' python3: the one that has the peers.
    timeout 500 tools/device-build.sh .deps build-gpu -DSB_PYTHON3="$(command -v python3)" \
      >"$out/build.log" 2>&1
    rc=$?
    wait
    [ $rc -eq 0 ] || { grep -E "error" "$out/build.log" | head -30; tail -20 "$out/build.log"; }
    [ -z "$other" ] || [ -x "$other/build-gpu/scalebench" ] || tail -20 "$out/build-other.log"
    echo "build: rc=$rc in $(( $(date +%s) - t0 )) s"
    exit $rc ;;
  tests)
    (cd build-gpu && timeout "${3:-500}" ctest -L gpu -j "${2:-1}" --output-on-failure \
      >"$out/gpu-tests.log" 2>&1)
    grep -E "\*\*\*Failed|Failed  |tests passed|tests failed" "$out/gpu-tests.log" | tail -15
    exit 0 ;;
  verdicts)
    sb=build-gpu/scalebench
    ngpu=$(nvidia-smi -L | wc -l)
    run() {  # label, then run arguments (environment before the label via env)
      local label=$1
      shift
      timeout 150 "$@" --out "$out/$label.h5" >"$out/$label.txt" 2>"$out/$label.err" ||
        echo "$label: rc=$?"
      $sb report "$out/$label.h5" --format csv >"$out/$label.csv" 2>/dev/null
    }
    run seed4a $sb run --preset seed --workloads subset-mean,svd,groupby --paths gpu1,gpuN --repeats 10
    run seed4b $sb run --preset seed --workloads subset-mean,svd,groupby --paths gpu1,gpuN --repeats 10
    run seed2 env CUDA_VISIBLE_DEVICES=0,1 $sb run --preset seed --workloads subset-mean,svd,groupby \
      --paths gpuN --repeats 10
    run large4 $sb run --preset large --workloads svd,groupby --param groupby.query=by-key \
      --paths gpu1,gpuN --repeats 5
    run large2 env CUDA_VISIBLE_DEVICES=0,1 $sb run --preset large --workloads svd,groupby \
      --param groupby.query=by-key --paths gpuN --repeats 5
    run transport4 $sb run --preset large --workloads svd,groupby --param groupby.query=by-key \
      --param svd.comm=mpi-host --param groupby.comm=mpi-host --paths gpuN --repeats 5
    run comms $sb run --workloads comms --preset large --paths gpuN --repeats 3
    run accept $sb run --preset seed --workloads subset-mean,svd,groupby --paths each-gpu --repeats 10
    run accept-off env SCALEBENCH_TELEMETRY=0 $sb run --preset seed --workloads subset-mean,svd,groupby \
      --paths each-gpu --repeats 10
    timeout 120 python3 tools/peers/comms_peers.py --sizes 1G >"$out/torch-allreduce.txt" 2>&1
    python3 - "$out" <<'PY'
import csv, os, statistics, sys
out = sys.argv[1]
def rows(label):
    path = f"{out}/{label}.csv"
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []
for label in ("seed4a", "seed4b", "seed2", "large4", "large2", "transport4", "accept", "accept-off", "comms"):
    print(f"== {label}")
    for r in rows(label):
        med = float(r.get("median_s") or "nan") * 1e3
        mx = float(r.get("max_s") or "nan") * 1e3
        short = r["case"].replace("cardinality=10000000,", "").replace(",seed=42", "")
        extra = r.get("throughput", "")
        print(f"  {short[:78]:78} {r['status']:>7} {r.get('repeats',''):>3} med {med:9.3f} ms max {mx:9.3f} ms {extra}")
PY
    tail -5 "$out/torch-allreduce.txt"
    grep -h "runtime up" "$out"/seed4a.txt "$out"/seed4b.txt
    $sb report "$out/comms.h5" --wide 2>/dev/null | grep -E "all-reduce|pairs" | cut -c1-200 | head -6
    $sb report "$out/accept.h5" 2>/dev/null | tail -15
    exit 0 ;;
  trace)
    sb=build-gpu/scalebench
    reps=${2:-20}
    three=subset-mean,svd,groupby
    # label  paths  workloads  settings (the telemetry's cost: on and off; GPU waits that spin
    # without yielding the core)
    while read -r label path wl envs; do
      for k in a b; do
        env ${envs//,/ } timeout 150 $sb run --preset seed --workloads "$wl" --paths "$path" \
          --repeats "$reps" --trace --out "$out/trace-$label-$k.h5" \
          >"$out/trace-$label-$k.txt" 2>"$out/trace-$label-$k.err" || echo "$label-$k: rc=$?"
        $sb report "$out/trace-$label-$k.h5" --format json >"$out/trace-$label-$k.json" 2>/dev/null
      done
    done <<'RUNS'
gpu1 gpu1 subset-mean,svd,groupby SCALEBENCH_TELEMETRY=1
gpuN gpuN subset-mean,svd,groupby SCALEBENCH_TELEMETRY=1
each each-gpu subset-mean,svd,groupby SCALEBENCH_TELEMETRY=1
each-off each-gpu subset-mean,svd,groupby SCALEBENCH_TELEMETRY=0
gpu1-spin gpu1 subset-mean,svd,groupby SCALEBENCH_GPU_WAIT=spin
gpuN-spin gpuN subset-mean,svd,groupby SCALEBENCH_GPU_WAIT=spin
each-spin each-gpu subset-mean,svd,groupby SCALEBENCH_GPU_WAIT=spin
RUNS
    (cd "$out" && tar czf trace.tgz trace-*.err trace-*.json &&
      rm -f trace-*.err trace-*.json trace-*.txt trace-*.h5)
    python3 tools/trace_summary.py --brief --tgz "$out/trace.tgz"
    exit 0 ;;
  sizes)
    sb=build-gpu/scalebench
    shift
    three=subset-mean,svd,groupby
    one() {  # label, then the command
      local label=$1
      shift
      timeout 200 "$@" --out "$out/sizes-$label.h5" >"$out/sizes-$label.txt" \
        2>"$out/sizes-$label.err" || echo "$label: rc=$?"
      $sb report "$out/sizes-$label.h5" --format csv >"$out/sizes-$label.csv" 2>/dev/null
    }
    for preset in tiny small seed; do
      one "$preset-gpu1" $sb run --preset $preset --workloads $three --paths gpu1 --repeats 20
      one "$preset-gpu4" $sb run --preset $preset --workloads $three --paths gpuN --repeats 20 "$@"
      one "$preset-gpu2" env CUDA_VISIBLE_DEVICES=0,1 $sb run --preset $preset --workloads $three \
        --paths gpuN --repeats 20 "$@"
    done
    one seed-gpu4-off env SCALEBENCH_TELEMETRY=0 $sb run --preset seed --workloads groupby \
      --paths gpuN --repeats 20 "$@"
    one seed-gpu2-off env SCALEBENCH_TELEMETRY=0 CUDA_VISIBLE_DEVICES=0,1 $sb run --preset seed \
      --workloads groupby --paths gpuN --repeats 20 "$@"
    one svd-large-a $sb run --preset large --workloads svd --paths gpu1,gpuN --repeats 5 "$@"
    one svd-large-b $sb run --preset large --workloads svd --paths gpuN --repeats 5 "$@"
    # by-key's repeats on every GPU with every worker's timeline (run --trace: stderr)
    one bykey-trace $sb run --preset seed --workloads groupby --param groupby.query=by-key \
      --paths gpuN --repeats 30 --trace "$@"
    for f in "$out"/sizes-*.h5; do  # per case its repeats; the start-up
      $sb report "$f" --format json | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(json.dumps({"startup": r.get("startup"), "cases": [{"id": c["id"], "workers": c.get("workers"),
      "setup_s": c.get("setup_s"), "totals": [x.get("total") for x in c.get("repeats", [])]}
      for c in r["cases"]]}))' >"${f%.h5}.json"
    done
    python3 - "$out" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
for path in sorted(glob.glob(f"{out}/sizes-*.csv")):
    label = os.path.basename(path)[6:-4]
    for r in csv.DictReader(open(path)):
        med = float(r.get("median_s") or "nan") * 1e3
        mx = float(r.get("max_s") or "nan") * 1e3
        short = r["case"].replace("cardinality=10000000,", "").replace(",seed=42", "")
        print(f"{label:14} {short[:64]:64} {r['status'][:6]:>6} {r.get('workers',''):>2}"
              f" med {med:9.3f} max/med {mx / med if med else 0:5.2f}")
for path in sorted(glob.glob(f"{out}/sizes-*.json")):
    st = json.load(open(path)).get("startup") or {}
    keys = ("total_s", "launch_to_main_s", "mpi_init_s", "cuda_init_s", "cuda_wait_s",
            "describe_node_s", "describe_gpu_s", "ceilings_s", "ready_after_main_s")
    print(f"{os.path.basename(path)[6:-5]:14} start-up " +
          " ".join(f"{k[:-2]} {st.get(k, float('nan')):.2f}" for k in keys))
PY
    (cd "$out" && tar czf sizes.tgz sizes-*.csv sizes-*.txt sizes-*.err sizes-*.json &&
      rm -f sizes-*)
    exit 0 ;;
  scaling)
    sb=build-gpu/scalebench
    ngpu=$(nvidia-smi -L | wc -l)
    one() {  # label, then the command; its report as JSON
      local label=$1
      shift
      timeout 200 "$@" --out "$out/scaling-$label.h5" >"$out/scaling-$label.txt" \
        2>"$out/scaling-$label.err" || echo "$label: rc=$?"
      $sb report "$out/scaling-$label.h5" --format json >"$out/scaling-$label.json" 2>/dev/null
      rm -f "$out/scaling-$label.h5"
    }
    for k in 1 2 3; do
      one "startup-$k" $sb run --preset seed --workloads subset-mean --paths gpuN --repeats 1 \
        --no-ceilings
    done
    three=subset-mean,svd,groupby
    for k in a b; do
      one "seed-all-$k" $sb run --preset seed --workloads $three --paths gpu1,gpuN --repeats 20
      [ "$ngpu" -le 2 ] || one "seed-2-$k" env CUDA_VISIBLE_DEVICES=0,1 $sb run --preset seed \
        --workloads $three --paths gpu1,gpuN --repeats 20
      one "large-all-$k" $sb run --preset large --workloads svd,groupby \
        --param groupby.query=by-key --paths gpu1,gpuN --repeats 5
    done
    [ "$ngpu" -le 2 ] || one large-2 env CUDA_VISIBLE_DEVICES=0,1 $sb run --preset large \
      --workloads svd,groupby --param groupby.query=by-key --paths gpu1,gpuN --repeats 5
    # The peers in the same call, on one GPU: PyTorch (and CuPy for svd) on the same sizes.
    peer() {  # label, then the command; its last lines
      local label=$1
      shift
      timeout 240 "$@" >"$out/peers-$label.txt" 2>&1 || echo "peers $label: rc=$?"
    }
    peer groupby-large python3 tools/peers/groupby_peers.py --rows 1e8 --no-pandas \
      --queries by-key --repeats 3
    peer groupby-seed python3 tools/peers/groupby_peers.py --queries by-name,by-id,by-key \
      --no-pandas --repeats 5
    peer svd env CUDA_VISIBLE_DEVICES=0 python3 tools/peers/svd_peers.py \
      --sizes 10000x1000,2000000x1000 --repeats 3
    python3 tools/scaling_verdicts.py "$out" "$ngpu" | tee "$out/verdicts-scaling.txt"
    for f in "$out"/peers-*.txt; do
      echo "== $(basename "$f" .txt)"
      tail -n 6 "$f"
    done
    (cd "$out" && tar czf scaling.tgz scaling-*.json scaling-*.err peers-*.txt && rm -f \
      scaling-*.json scaling-*.err scaling-*.txt peers-*.txt)
    exit 0 ;;
  acceptance)
    sb=build-gpu/scalebench
    [ -x "$sb" ] || { echo "no $sb: run tools/gpu-campaign.sh build first"; exit 1; }
    results=()
    verdict() { results+=("$(printf '%-4s %s' "$1" "$2")"); }
    hog="" smi=""
    cleanup() {  # the GEMM loop and nvidia-smi end with the campaign, however it ends
      [ -n "$hog" ] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
      [ -n "$smi" ] && kill "$smi" 2>/dev/null && wait "$smi" 2>/dev/null
      hog="" smi=""
    }
    trap cleanup EXIT INT TERM
    # (1) Nothing else on the GPUs: every device ok, every health field present.
    timeout 400 $sb run --preset seed --paths each-gpu --check --out "$out/accept-clean.h5" \
      >"$out/accept-clean.txt" 2>"$out/accept-clean.err"
    rc=$?
    $sb report "$out/accept-clean.h5" --format json >"$out/accept-clean.json" 2>/dev/null
    tail -25 "$out/accept-clean.txt"
    [ $rc -eq 0 ] && verdict PASS "clean each-gpu --check exits 0" ||
      verdict FAIL "clean each-gpu --check exits $rc (0 wanted; $out/accept-clean.txt)"
    python3 - "$out/accept-clean.json" >"$out/accept-clean.check" 2>&1 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
gpus = {(g["host"], g["node_gpu"]) for g in m["system"]["gpus"]}
bad = [f'{r["host"]} GPU {r["device"]} {r["case"]}: {r["verdict"]}' for r in m["verdicts"]
       if r["verdict"] not in ("ok", "not judged")]
fields = {}
for h in m["system"].get("gpu_health", []):
    ok = h["value"] != "unavailable" or h["detail"]
    fields.setdefault((h["host"], h["node_gpu"]), {})[h["field"]] = h["value"] if ok else None
missing = [f"{k}: {len(v)} fields" for k, v in fields.items() if len(v) != 17 or None in v.values()]
links = [l for l in m["system"].get("host_links", []) if l.get("bytes_per_s")]
print("devices not ok:", bad or "none")
print("GPUs with every health field (value or unavailable):", len(fields), "of", len(gpus), missing or "")
for k, v in sorted(fields.items()):
    print(" ", k, ", ".join(f"{f}={x}" for f, x in sorted(v.items())))
print("host links measured:", len(links), "of", 2 * len(gpus))
for l in links:
    print(f'  {l["host"]} GPU {l["node_gpu"]} {l["direction"]}: {l["bytes_per_s"] / 1e9:.1f} GB/s, '
          f'PCIe Gen{l["pcie_generation"]} x{l["pcie_width"]} of Gen{l["pcie_generation_max"]} '
          f'x{l["pcie_width_max"]}')
sys.exit(0 if not bad and not missing and len(fields) == len(gpus) and len(links) == 2 * len(gpus) else 1)
PY
    rc=$?
    cat "$out/accept-clean.check"
    [ $rc -eq 0 ] && verdict PASS "every GPU ok, 17 health fields each, both host links measured" ||
      verdict FAIL "clean run's verdicts, health fields or host links ($out/accept-clean.check)"
    # (2) A PyTorch fp64 GEMM loop on GPU 0 of the placement (the first visible GPU).
    first=$(cut -d, -f1 <<<"${CUDA_VISIBLE_DEVICES:-0}")
    CUDA_VISIBLE_DEVICES=$first timeout 900 python3 -c '
import os, sys, time, torch
a = torch.randn(8192, 8192, dtype=torch.float64, device="cuda")
b = torch.randn(8192, 8192, dtype=torch.float64, device="cuda")
c = a @ b
torch.cuda.synchronize()
print("ready", os.getpid(), flush=True)
while True:
    c = a @ b
    torch.cuda.synchronize()
' >"$out/hog.txt" 2>&1 &
    hog=$!
    for _ in $(seq 600); do grep -q ready "$out/hog.txt" && break; sleep 0.1; done
    hog_pid=$(awk '/ready/ {print $2}' "$out/hog.txt")
    if [ -z "$hog_pid" ]; then
      cat "$out/hog.txt"
      verdict FAIL "the PyTorch GEMM loop did not start"
    else
      timeout 400 $sb run --preset seed --paths each-gpu --check --out "$out/accept-busy.h5" \
        >"$out/accept-busy.txt" 2>"$out/accept-busy.err"
      rc=$?
      $sb report "$out/accept-busy.h5" --format json >"$out/accept-busy.json" 2>/dev/null
      grep -A1 -E '^(busy|slow|throttled|failed|unhealthy|inefficient)' "$out/accept-busy.txt" |
        cut -c1-400 | head -12
      python3 - "$out/accept-busy.json" "$hog_pid" >"$out/accept-busy.check" 2>&1 <<'PY'
import json, sys
m, pid = json.load(open(sys.argv[1])), sys.argv[2]
rows = [r for r in m["verdicts"] if r["workload"] not in ("health", "link")]
gpu0 = [r for r in rows if r["device"] == 0]
others = [r for r in rows if r["device"] != 0 and r["verdict"] not in ("ok", "not judged")]
named = [r for r in gpu0 if r["verdict"] == "busy" and f"pid {pid}" in r["reason"] and "python3" in r["reason"]]
for r in gpu0:
    print(f'GPU 0 {r["case"]}: {r["verdict"]}: {r["reason"][:300]}')
print("other GPUs not ok:", [f'GPU {r["device"]} {r["verdict"]}' for r in others] or "none")
sys.exit(0 if gpu0 and len(named) == len(gpu0) and not others else 1)
PY
      ok=$?
      cat "$out/accept-busy.check"
      [ $rc -eq 1 ] && [ $ok -eq 0 ] &&
        verdict PASS "GEMM loop on GPU 0: --check exits 1, GPU 0 busy naming python3 pid $hog_pid" ||
        verdict FAIL "GEMM loop on GPU 0: exit $rc, busy named: $([ $ok -eq 0 ] && echo yes || echo no) ($out/accept-busy.check)"
    fi
    cleanup
    sleep 5  # the GPU's power settles before the energy runs
    # (3) Energy per case against nvidia-smi's power every 0.1 s over the same interval.
    nvidia-smi --query-gpu=timestamp,pci.bus_id,power.draw,power.draw.instant \
      --format=csv,noheader,nounits -lms 100 >"$out/smi-power.csv" 2>"$out/smi-power.err" &
    smi=$!
    sleep 1
    timeout 500 $sb run --preset seed --workloads subset-mean,svd --paths each-gpu --repeats 400 \
      --warmup 3 --out "$out/accept-energy.h5" >"$out/accept-energy.txt" 2>"$out/accept-energy.err"
    rc=$?
    sleep 1
    cleanup
    $sb report "$out/accept-energy.h5" --format json >"$out/accept-energy.json" 2>/dev/null
    python3 tools/energy_vs_smi.py "$out/accept-energy.json" "$out/smi-power.csv" \
      >"$out/accept-energy.check" 2>&1
    ok=$?
    cat "$out/accept-energy.check"
    [ $ok -eq 0 ] && verdict PASS "energy per case within 5% of nvidia-smi's power integrated" ||
      verdict FAIL "energy per case against nvidia-smi (run exit $rc; $out/accept-energy.check)"
    echo "== acceptance (issue #50)"
    printf '%s\n' "${results[@]}"
    exit 0 ;;
  ab)
    other=${2:?usage: tools/gpu-campaign.sh ab OTHER [PRESET..]}
    shift 2
    presets=("$@")
    [ ${#presets[@]} -gt 0 ] || presets=(seed large)
    for preset in "${presets[@]}"; do
      for round in 1 2; do
        for side in new old; do
          exe=build-gpu/scalebench
          [ "$side" = old ] && exe=$other/build-gpu/scalebench
          timeout 240 "$exe" run --preset "$preset" --paths gpu1,gpuN --repeats 7 \
            --out "$out/$preset-$side-$round.h5" >"$out/$preset-$side-$round.txt" \
            2>"$out/$preset-$side-$round.err" || echo "$preset $side $round: rc=$?"
          build-gpu/scalebench report "$out/$preset-$side-$round.h5" --format csv \
            >"$out/$preset-$side-$round.csv" 2>/dev/null
        done
      done
    done
    python3 - "$out" "${presets[@]}" <<'PY'
import csv, sys, os
out, presets = sys.argv[1], sys.argv[2:]
def medians(path):
    rows = {}
    if os.path.exists(path):
        for r in csv.DictReader(open(path)):
            rows[r["case"]] = (r["status"], float(r["median_s"] or "nan"))
    return rows
for p in presets:
    runs = {(side, k): medians(f"{out}/{p}-{side}-{k}.csv") for side in ("new", "old") for k in (1, 2)}
    print(f"== {p}: median ms (new 1, new 2 | old 1, old 2)")
    for case in runs[("new", 1)]:
        cells = []
        for side in ("new", "old"):
            for k in (1, 2):
                st, m = runs[(side, k)].get(case, ("-", float("nan")))
                cells.append(f"{m * 1e3:9.3f}" if st == "ok" else f"{st:>9}")
        short = case.replace("cardinality=10000000,", "").replace(",seed=42", "")
        print(f"{short[:70]:70} {cells[0]} {cells[1]} | {cells[2]} {cells[3]}")
PY
    exit 0 ;;
esac
t0=$(date +%s)
targets=""
[ "$mode" != full ] && targets="scalebench scalebench-rank"
[ "$mode" = bykey ] && targets="$targets bench_groupby_gpu"
[ "$mode" = groupby ] && targets="$targets bench_groupby_gpu test_groupby_gpu"
if ! SB_TARGETS="$targets" timeout 330 tools/device-build.sh .deps build-gpu >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -30; tail -20 "$out/build.log"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
sb=build-gpu/scalebench
summary=("build $(( $(date +%s) - t0 )) s")
if [ "$mode" = full ]; then
  (cd build-gpu && timeout 150 ctest -L gpu --output-on-failure >"$out/gpu-tests.log" 2>&1)
  summary+=("gpu tests: $(grep -E 'tests passed|tests failed' "$out/gpu-tests.log" | tail -1)")
fi
if [ "$mode" = bykey ]; then
  bykey() {  # label, then scalebench run arguments; prints "label: case time" lines
    local label=$1
    shift
    timeout 120 $sb run --preset large --workloads groupby --param groupby.query=by-key --repeats 5 \
      "$@" >"$out/bykey-$label.txt" 2>"$out/bykey-$label.err"
    # case, workers ("4 GPUs"), status, repeats, median: the label, case, status and median
    grep -E '^groupby' "$out/bykey-$label.txt" | awk -v l="$label" '{print l": "$1, $4, $6, $7}'
  }
  {
    bykey a --paths gpu1,gpuN --out "$out/bykey.h5"
    bykey b --paths gpu1,gpuN
    bykey trace --paths gpuN --trace
    grep -h 'shuffle rank' "$out/bykey-trace.txt" "$out/bykey-trace.err" | tail -"$(nvidia-smi -L | wc -l)"
    # every count, the default among them (16 on two GPUs, 24 on more: its run beside the others)
    for blocks in 12 16 24 32; do
      bykey "push$blocks" --paths gpuN --param groupby.push_blocks="$blocks"
    done
    bykey nccl --paths gpuN --param groupby.gpu_exchange=nccl
    # the pushes alone, every GPU to every other at once (the tasks' floor)
    timeout 120 build-gpu/bench/bench_groupby_gpu --benchmark_filter=PushAllToAll \
      --benchmark_counters_tabular=true >"$out/push-all-to-all.txt" 2>&1
    awk '/^BM_PushAllToAll/ {sub("/s", "", $7); print "push all-to-all: "$1, $2" "$3, $7" GB/s and "$9" MB per GPU"}' \
      "$out/push-all-to-all.txt"
  } | sed 's/cardinality=10000000,//; s/,partition=5000000//; s/,query=by-key,rows=100000000,seed=42//' \
    | tee "$out/bykey-summary.txt"
  # the logs in one file (few files come back from a GPU machine); the summary beside it
  (cd "$out" && mv bykey-summary.txt summary-bykey.txt &&
    tar czf bykey.tgz bykey-*.txt bykey-*.err push-all-to-all.txt &&
    rm -f bykey-*.txt bykey-*.err push-all-to-all.txt)
  printf '%s\n' "${summary[@]}"
  exit 0
fi
if [ "$mode" = groupby ]; then
  paths=gpu1
  [ "$(nvidia-smi -L | wc -l)" -gt 1 ] && paths=gpu1,gpuN
  timeout 150 build-gpu/tests/groupby/test_groupby_gpu >"$out/groupby-tests.log" 2>&1
  summary+=("groupby GPU tests: $(grep -E '^\[  (PASSED|FAILED)|tests? ran' \
    "$out/groupby-tests.log" | tr -s ' ' | tr '\n' ' ')")
  gb() {  # label, preset, repeats: one run, its report as JSON
    timeout 200 $sb run --preset "$2" --workloads groupby --paths "$paths" --repeats "$3" \
      --out "$out/groupby-$1.h5" >"$out/groupby-$1.txt" 2>"$out/groupby-$1.err" ||
      echo "groupby $1: rc=$?"
    $sb report "$out/groupby-$1.h5" --format json >"$out/groupby-$1.json" 2>/dev/null
  }
  for k in a b; do
    gb "large-$k" large 5
    gb "seed-$k" seed 20
  done
  # The peer in the same call, on the same rows (its columns made beforehand, untimed).
  timeout 300 python3 tools/peers/groupby_peers.py --rows 1e8 --no-pandas --repeats 3 \
    >"$out/groupby-peers-large.txt" 2>&1 || echo "peers large: rc=$?"
  timeout 120 python3 tools/peers/groupby_peers.py --no-pandas --repeats 5 \
    >"$out/groupby-peers-seed.txt" 2>&1 || echo "peers seed: rc=$?"
  timeout 150 build-gpu/bench/bench_groupby_gpu --benchmark_counters_tabular=true \
    --benchmark_filter='Ceilings|Generate/columns:56|AggregateDense|AggregateByKey/mode:[45]|WorkerLarge' \
    >"$out/groupby-bench.txt" 2>&1
  grep -E '^BM_' "$out/groupby-bench.txt" | cut -c1-150
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
rows = {}
for size in ("large", "seed"):
    for k in ("a", "b"):
        try:
            model = json.load(open(f"{out}/groupby-{size}-{k}.json"))
        except (OSError, ValueError):
            continue
        for r in model.get("summary", []):
            key = (size, r["case"].split("/")[1], r["case"].split("query=")[1].split(",")[0])
            rows.setdefault(key, []).append(r)
print(f"{'preset':6} {'path':10} {'query':8} {'median ms (a, b)':>20} {'floor ms':>9} "
      f"{'eff.':>6} ceiling")
for (size, path, query), rs in sorted(rows.items()):
    med = [r.get("median_s") or float("nan") for r in rs]
    eff = rs[0].get("efficiency") or float("nan")
    print(f"{size:6} {path:10} {query:8} {', '.join(f'{m * 1e3:.3f}' for m in med):>20} "
          f"{eff * med[0] * 1e3:9.3f} {eff * 100:5.1f}% {rs[0].get('ceiling', '')}")
PY
  for f in large seed; do echo "== PyTorch peer, $f"; tail -n 4 "$out/groupby-peers-$f.txt"; done
  (cd "$out" && tar czf groupby.tgz groupby-*.txt groupby-*.err groupby-*.json groupby-*.log &&
    rm -f groupby-*.txt groupby-*.err groupby-*.json groupby-*.log groupby-*.h5)
  printf '%s\n' "${summary[@]}"
  exit 0
fi
for preset in seed large; do
  s=$(date +%s)
  timeout 200 $sb run --preset "$preset" --paths gpu1,gpuN --repeats 5 --out "$out/$preset.h5" \
    >"$out/$preset.txt" 2>"$out/$preset.err"
  rc=$?
  $sb report "$out/$preset.h5" --format markdown >"$out/$preset.md" 2>&1
  summary+=("$preset rc=$rc in $(( $(date +%s) - s )) s")
done
for f in seed large; do echo "== $f"; cut -c1-220 "$out/$f.txt" | tail -20; tail -3 "$out/$f.err"; done
printf '%s\n' "${summary[@]}"
