#!/usr/bin/env bash
# Every subcommand end to end through the real binaries (CTest cli.<part>, label `cli`): what it
# prints, writes and exits with, on real tiny runs (--preset tiny --repeats 3 --warmup 0
# --no-ceilings). Bad input is tests/launcher/cli_bad_input.sh; datagen is
# tests/datagen/datagen_*.sh; report and compare formats on synthetic reports are
# tests/results/test_report_cli.cpp.
#
# usage: cli_commands.sh SCALEBENCH PYTHON3 WORKDIR PART
#   PART: info | info-gpu | run | report | compare | submit | history | recover | help
# `run` writes WORKDIR/run-a.h5, which `report`, `compare`, `history` and `recover` read (CTest
# fixture cli_run).
set -u
sb=$1 py=$2 work=$3 part=$4
mkdir -p "$work"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
tiny=(--preset tiny --repeats 3 --warmup 0 --no-ceilings)
# The three compute workloads: comms needs two workers or more, which this test does not assume.
three=(--workloads subset-mean,svd,groupby)

bad() { echo "FAIL: $*"; fail=1; }

# run_sb NAME WANT_EXIT args..: runs scalebench (60 s at most), keeping $tmp/NAME.out and .err.
run_sb() {
  local name=$1 want=$2
  shift 2
  timeout 60 "$sb" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    bad "scalebench $* exited $rc (want $want)"
    sed 's/^/  stderr: /' "$tmp/$name.err" | tail -n 20
  fi
  return 0
}

# has NAME STREAM REGEX..: every extended regex matches a line of $tmp/NAME.STREAM.
has() {
  local name=$1 stream=$2 re
  shift 2
  for re in "$@"; do
    grep -Eq -- "$re" "$tmp/$name.$stream" ||
      { bad "$name: $stream has no line matching /$re/"; sed 's/^/  | /' "$tmp/$name.$stream" | head -n 40; }
  done
}

# py_check FILE..: runs the Python program on stdin with the files as arguments.
py_check() {
  "$py" - "$@" || bad "python check of $* failed"
}

case "$part" in
info)
  run_sb info 0 info
  has info out '^Host +[^ ]' '^CPU +.*\([0-9]+ socket\(s\), [1-9][0-9]* cores, [0-9]+ hardware threads, [0-9]+ NUMA domain' \
    '^Memory +[0-9.]+ GiB' '^OS +Linux' '^GPUs +0 visible.* - [^ ]' '^Versions$' '^  mpi +Open MPI' \
    '^  hdf5 +1\.' '^  blas +[^ ]' '^  scalebench +[0-9]' '^Allocation +local on 1 node' \
    '^  rank 0 +scheduler +on [^ ]+ +gpu -1' '^  rank 1 +worker +on [^ ]+ +gpu -1 +threads [1-9]' \
    '^  subset-mean ' '^  svd ' '^  groupby ' '^      subset-mean\.n ' '^      groupby\.rows '
  run_sb json 0 info --format json
  py_check "$tmp/json.out" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
n = j["node"]
assert n["host"] and n["cores"] >= 1 and n["memory_bytes"] > 0, n
g = j["gpus"]
assert g["visible"] == 0 and g["note"], g  # no GPU here: and it says why
assert g["devices"] == [], g
for k in ("mpi", "hdf5", "blas", "scalebench"):
    assert j["versions"].get(k), (k, j["versions"])
assert j["allocation"] == {"scheduler": "local", "job_id": "", "nodes": 1}, j["allocation"]
roles = [r["role"] for r in j["ranks"]]
assert roles[0] == "scheduler" and roles[1:] == ["worker"] * (len(roles) - 1) and len(roles) >= 2, roles
names = [w["name"] for w in j["workloads"]]
assert names[:3] == ["subset-mean", "svd", "groupby"], names
for w in j["workloads"]:
    assert set(w["presets"]) == {"tiny", "small", "seed", "large"}, w["presets"].keys()
    assert w["keys"], w["name"]
EOF
  # Inside a two-node SLURM allocation: the allocation and the ranks a run would start there.
  SLURM_JOB_ID=4242 SLURM_JOB_NODELIST='sbnode[01-02]' SLURM_JOB_NUM_NODES=2 \
    SLURM_JOB_CPUS_PER_NODE='8(x2)' run_sb slurm 0 info
  has slurm out '^Allocation +slurm job 4242 on 2 node' '^  rank 0 +scheduler +on sbnode01' \
    '^  rank 1 +worker +on sbnode01 +gpu -1' '^  rank 2 +worker +on sbnode02 +gpu -1'
  ;;
info-gpu)
  run_sb info 0 info
  has info out '^GPUs +[1-9][0-9]* visible' '^  \[0\] [^ ].* [0-9.]+ GiB +GPU-' \
    '^  rank 1 +worker +on [^ ]+ +gpu 0 '
  run_sb json 0 info --format json
  py_check "$tmp/json.out" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
g = j["gpus"]
assert g["cuda_built"] and g["visible"] >= 1 and len(g["devices"]) >= g["visible"], g
d = g["devices"][0]
assert d["name"] and d["memory_bytes"] > 0 and d["uuid"].startswith("GPU-"), d
assert any(r["gpu"] == 0 for r in j["ranks"] if r["role"] == "worker"), j["ranks"]
EOF
  ;;
run)
  rm -f "$work/run-a.h5"
  run_sb run 0 run "${tiny[@]}" "${three[@]}" --paths cpu1,cpuN --out "$work/run-a.h5"
  has run err '^scalebench: 10 case\(s\) to run \(0 kept\), local on 1 node' \
    '^scalebench: runtime up: 2 ranks' '^scalebench: \[1/10\] ok +subset-mean single-cpu +median ' \
    '^scalebench: \[10/10\] ok +groupby multi-cpu ' "report written to $work/run-a.h5"
  has run out '^run ok: 10 ok, 0 failed, 0 skipped \(10 cases\)$' '^case +workers +status +reps +median' \
    '^subset-mean/multi-cpu/chunk=500,n=2000,seed=42 +1w×2t +ok +3 '
  [ -s "$work/run-a.h5" ] || bad "no report $work/run-a.h5"
  py_check "$work/run-a.h5" <<'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    assert a["status"] == "ok" and a["preset"] == "tiny" and a["scheduler"] == "local", a
    groups = sorted(f["cases"])
    assert len(groups) == 10, groups
    for g in groups:
        c = f["cases"][g]
        assert c.attrs["status"] in ("ok", b"ok"), (g, c.attrs["status"])
        assert len(c["times"]) == 3, (g, len(c["times"]))  # --repeats 3, --warmup 0
    assert len(f["summary"]) == 10
EOF
  # A GPU path on a machine without one: skipped with the reason, and the run still succeeds.
  run_sb gpu 0 run "${tiny[@]}" --workloads subset-mean --paths gpu1 --out "$tmp/gpu.h5"
  has gpu err '\[1/1\] skipped subset-mean single-gpu +\(no (GPU|NVIDIA GPU driver)'
  ;;
report)
  r=$work/run-a.h5
  [ -s "$r" ] || { echo "FAIL: no $r (made by cli.run)"; exit 1; }
  run_sb default 0 report "$r"
  for f in table markdown csv json gbench-json html; do
    run_sb "$f" 0 report "$r" --format "$f"
    run_sb "$f-out" 0 report "$r" --format "$f" --out "$tmp/out.$f"
    cmp -s "$tmp/$f.out" "$tmp/out.$f" || bad "report --format $f: --out differs from stdout"
    [ -s "$tmp/$f-out.out" ] && bad "report --format $f --out also wrote to stdout"
  done
  cmp -s "$tmp/default.out" "$tmp/table.out" || bad "report without --format is not the table"
  has table out '^run ok: 10 ok, 0 failed, 0 skipped \(10 cases\)$' \
    '^scalebench [0-9.]+ \(git ([0-9a-f]+(-dirty)?|unknown)\), report schema 1$' '^scheduler local, preset tiny; 1 node' \
    '^case +workers +status +reps +median +min +max +stddev +throughput' \
    '^svd/single-cpu/chunk=500,condition=1,m=2000,n=50,seed=42 +1w×1t +ok +3 +[0-9.]+ ms'
  has markdown out '^## scalebench report' '^\| case \| workers \| status \| reps \|' \
    '^\| groupby/multi-cpu/.*query=by-key.* \| 1w×2t \| ok \| 3 \|'
  py_check "$tmp/csv.out" "$tmp/json.out" "$tmp/gbench-json.out" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 10 and all(r["status"] == "ok" and r["repeats"] == "3" for r in rows), rows
assert float(rows[0]["median_s"]) > 0
j = json.load(open(sys.argv[2]))
assert [c["id"] for c in j["cases"]] == [r["case"] for r in rows]
g = json.load(open(sys.argv[3]))
it = [b for b in g["benchmarks"] if b["run_type"] == "iteration"]
assert len(it) == 30 and all(b["time_unit"] == "ms" and b["real_time"] > 0 for b in it), len(it)
assert {b["name"] for b in it} == {r["case"] for r in rows}
assert g["context"]["host_name"], g["context"]
EOF
  has html out '^<!DOCTYPE html>' '<svg [^>]*class="chart" data-chart="speedup"' \
    'data-chart="scaling"' 'data-chart="phases"' 'data-chart="task-stream"'
  grep -Eiq '<script|src="https?:' "$tmp/html.out" && bad "the HTML page loads a script or a resource"
  ;;
compare)
  a=$work/run-a.h5 b=$tmp/run-b.h5
  [ -s "$a" ] || { echo "FAIL: no $a (made by cli.run)"; exit 1; }
  # The same report on both sides, 3 repeats: no case can be compared (the gate needs 5), which
  # is exit 4 (incomplete), or 0 with --allow-missing.
  run_sb self 4 compare "$a" "$a"
  has self out '^case +verdict +baseline +current +change +interval +p-value' \
    '^subset-mean/single-cpu/chunk=500,n=2000,seed=42 +too-few-repeats ' \
    '^10 case\(s\): 10 too-few-repeats; 0 compared: INCOMPLETE \(exit 4\)'
  run_sb self-allow 0 compare "$a" "$a" --allow-missing
  has self-allow out '^10 case\(s\): 10 too-few-repeats; 0 compared: no regression$'
  # A/A on two real runs (5 repeats: the gate needs 5): verdicts for every case; exit 0, 5 where
  # the busy machine's noise leaves a case undecided, or 1 where it reads as a regression.
  run_sb b 0 run --preset tiny "${three[@]}" --repeats 5 --warmup 0 --no-ceilings --paths cpu1,cpuN --out "$b"
  cp "$b" "$tmp/run-b2.h5"
  run_sb aa-same 0 compare "$b" "$tmp/run-b2.h5" --format markdown
  has aa-same out '^## scalebench compare' '^\| subset-mean/single-cpu/chunk=500,n=2000,seed=42 \| same \|'
  timeout 120 "$sb" run --preset tiny "${three[@]}" --repeats 5 --warmup 0 --no-ceilings \
    --paths cpu1,cpuN --out "$tmp/run-c.h5" >"$tmp/c.log" 2>&1 || bad "second run failed"
  timeout 60 "$sb" compare "$b" "$tmp/run-c.h5" --format junit --out "$tmp/aa.xml" >"$tmp/aa.out" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 5 ] || bad "A/A compare exited $rc"
  py_check "$tmp/aa.xml" "$rc" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert len(cases) == 10, len(cases)
failures = int(root.get("failures"))
assert (failures > 0) == (sys.argv[2] == "1"), (failures, sys.argv[2])
EOF
  ;;
submit)
  run_sb slurm 0 submit --scheduler slurm --nodes 2 --gpus-per-node 4 --time 00:30:00 \
    --partition gpu --account proj42 --dry-run -- "${tiny[@]}" --out "r a.h5"
  has slurm out '^#!/bin/bash$' '^#SBATCH --nodes=2$' '^#SBATCH --gpus-per-node=4$' \
    '^#SBATCH --time=00:30:00$' "^#SBATCH --partition='gpu'$" "^#SBATCH --account='proj42'$" \
    '^#SBATCH --signal=B:USR1@' \
    "run '--preset' 'tiny' '--repeats' '3' '--warmup' '0' '--no-ceilings' '--out' 'r a.h5' &$"
  bash -n "$tmp/slurm.out" || bad "the SLURM script is not valid bash"
  run_sb pbs 0 submit --scheduler pbs --nodes 2 --cpus-per-node 16 --gpus-per-node 2 \
    --time 26:00:00 --partition workq --dry-run -- "${tiny[@]}"
  has pbs out '^#PBS -l select=2:ncpus=16:mpiprocs=3:ngpus=2$' '^#PBS -l place=scatter:excl$' \
    '^#PBS -l walltime=26:00:00$' '^#PBS -q workq$' '^export PBS_NGPUS=\$\{PBS_NGPUS:-2\}$' \
    "run '--preset' 'tiny' "
  bash -n "$tmp/pbs.out" || bad "the PBS script is not valid bash"
  # Submitting: sbatch's job id on stdout; a refusal is exit 3 with sbatch's message in one line.
  printf '#!/bin/sh\ncp "$2" %q\necho "77;cluster"\n' "$tmp/held.sh" >"$tmp/sbatch"
  printf '#!/bin/sh\necho "sbatch: error: Invalid partition name specified" >&2\nexit 1\n' >"$tmp/refuse"
  chmod +x "$tmp/sbatch" "$tmp/refuse"
  SCALEBENCH_SBATCH=$tmp/sbatch run_sb submitted 0 submit --scheduler slurm -- "${tiny[@]}"
  has submitted out '^77$'
  has submitted err '^scalebench: submitted SLURM job 77$'
  has held sh "run '--preset' 'tiny'"
  SCALEBENCH_SBATCH=$tmp/refuse run_sb refused 3 submit --scheduler slurm --partition nope -- "${tiny[@]}"
  has refused err '^scalebench: sbatch refused the job \(exit 1\): sbatch: error: Invalid partition name specified$'
  [ "$(wc -l <"$tmp/refused.err")" -eq 1 ] || bad "a refused submission printed more than one line"
  ;;
help)
  # The git SHA of the build's tree, '-dirty' with uncommitted changes, 'unknown' for an export.
  version='^scalebench [0-9]+\.[0-9]+\.[0-9]+ \(([0-9a-f]+(-dirty)?|unknown)\)$'
  run_sb version 0 --version
  has version out "$version"
  run_sb top 0 --help
  for sub in run submit report compare history recover datagen info; do
    has top out "^  $sub +[A-Z]"
    run_sb "help-$sub" 0 "$sub" --help
    has "help-$sub" out "^Usage: .*scalebench $sub " '^  -h,--help '
    run_sb "version-$sub" 0 "$sub" --version
    has "version-$sub" out "$version"
  done
  for sub in add show report import; do
    run_sb "help-history-$sub" 0 history "$sub" --help
    has "help-history-$sub" out "^Usage: .*scalebench history $sub "
  done
  has help-history out '^  add +[A-Z]' '^  show +[A-Z]' '^  report +[A-Z]' '^  import +[A-Z]'
  has help-history-show out '^  --case ' '^  --format '
  has help-history-add out '^  --commit '
  has help-compare out '^  --on-noisy ' '^  --allow-missing' '^  --strict'
  has help-run out '^  --resume ' '^  --fresh-ceilings' '^  --trace' '^  --wide'
  has help-submit out '^  --batch-option '
  has help-run out '^  --preset ' '^  --paths ' '^  --suite ' '^  --repeats ' '^  --no-ceilings'
  has help-submit out '^  --scheduler ' '^  --dry-run' '^Example: scalebench submit'
  has help-report out '^  --format TEXT.*table\|markdown\|csv\|json\|gbench-json\|html'
  has help-compare out '^  --threshold ' '^  --alpha '
  has help-datagen out '^  --max-bytes '
  has help-info out '^  --format '
  ;;
history)
  a=$work/run-a.h5 store=$tmp/store.db
  [ -s "$a" ] || { echo "FAIL: no $a (made by cli.run)"; exit 1; }
  run_sb missing 2 history show "$store"
  has missing err 'does not exist \(`history add` creates it\)'
  run_sb add-a 0 history add "$store" "$a" --commit aaa
  has add-a out '^added .*run-a\.h5 \(commit aaa, [0-9T:.-]+Z, [^,]+, machine [0-9a-f]{12}\)$' \
    "^$store: 1 run\\(s\\)$"
  run_sb add-again 0 history add "$store" "$a" --commit aaa
  has add-again out '^already in the store: .*run-a\.h5 \(commit aaa,' "^$store: 1 run\\(s\\)$"
  run_sb add-b 0 history add "$store" "$a" --commit bbb
  has add-b out "^$store: 2 run\\(s\\)$"
  run_sb show 0 history show "$store"
  has show out '^machine [0-9a-f]{12}: 1 node: .*\(2 runs\)$' \
    '^svd/multi-cpu/chunk=500,condition=1,m=2000,n=50,seed=42: 2 runs, last [0-9.]+ ms; no step$' \
    '^2 +[0-9T:.-]+Z +bbb +[0-9.]+ ms +[0-9.]+ ms +3 +\+0\.0%'
  run_sb show-case 0 history show "$store" --case 'svd/*' --format markdown
  has show-case out '^## scalebench history' '^\*\*svd/single-cpu/.*\*\*: 2 runs' '^\| 1 \| [0-9T:.-]+Z \| aaa \|'
  grep -q 'subset-mean' "$tmp/show-case.out" && bad "history show --case 'svd/*' shows other cases"
  run_sb html 0 history report "$store"
  has html out '^<!DOCTYPE html>' '<svg'
  grep -Eiq '<script|src="https?:' "$tmp/html.out" && bad "the history page loads a script or a resource"
  run_sb om 0 history report "$store" --format openmetrics --out "$tmp/h.om"
  has h om '^# TYPE scalebench_case_seconds gauge$' '^scalebench_run_info\{.*commit="bbb".*\} 1 [0-9]+$'
  [ "$(tail -n 1 "$tmp/h.om")" = "# EOF" ] || bad "the OpenMetrics text does not end with # EOF"
  run_sb json 0 history show "$store" --format json
  "$py" -c 'import json, sys
doc = json.load(open(sys.argv[1]))
assert [r["commit"] for r in doc["runs"]] == ["aaa", "bbb"], doc["runs"]
assert all(len(t["points"]) == 2 for t in doc["trends"]), doc["trends"]' "$tmp/json.out" ||
    bad "history show --format json"
  run_sb new-h5 2 history add "$tmp/new.h5" "$a"
  has new-h5 err 'stores are SQLite databases; name the new one e\.g\. .*new\.db'
  [ ! -e "$tmp/new.h5" ] || bad "a refused add left $tmp/new.h5"
  run_sb no-pg 3 history show 'postgresql://ci:s3cret@/perf?host=/nonexistent&port=9'
  has no-pg err '^scalebench: cannot connect to history store postgresql://ci:\*\*\*@/perf'
  grep -q s3cret "$tmp/no-pg.err" && bad "the password is in the message"
  run_sb import 0 history import "$store" "$tmp/copy.db"
  has import out "^imported 2 run\\(s\\) from $store into $tmp/copy\\.db \\(0 already there\\); "
  ;;
recover)
  # A finished report: nothing to recover (a killed run's recovery is tests/runtime/
  # test_launcher_faults.cpp, and docs/reliability.md's).
  a=$work/run-a.h5
  [ -s "$a" ] || { echo "FAIL: no $a (made by cli.run)"; exit 1; }
  cp "$a" "$tmp/r.h5"
  run_sb none 0 recover "$tmp/r.h5"
  has none out '^scalebench: nothing to recover for .*/r\.h5 \(no work folder of a killed run\)$'
  cmp -s "$a" "$tmp/r.h5" || bad "recover changed a report that had nothing to recover"
  run_sb usage 2 recover
  ;;
*)
  echo "usage: cli_commands.sh SCALEBENCH PYTHON3 WORKDIR info|info-gpu|run|report|compare|submit|history|recover|help"
  exit 2
  ;;
esac
[ "$fail" -eq 0 ] && echo "cli.$part: passed"
exit "$fail"
