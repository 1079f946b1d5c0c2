#!/usr/bin/env bash
# Every subcommand end to end through the real binaries (CTest cli.<part>, label `cli`): what it
# prints, writes and exits with, on real tiny runs (--preset tiny --repeats 3 --warmup 0
# --no-ceilings). Bad input is tests/launcher/cli_bad_input.sh; datagen is
# tests/datagen/datagen_*.sh; report and compare formats on synthetic reports are
# tests/results/test_report_cli.cpp.
#
# usage: cli_commands.sh SCALEBENCH PYTHON3 WORKDIR PART
#   PART: info | info-gpu | run | report | compare | submit | history | recover | help | affinity
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
  # --list says what the run did: the same cases run, the comms cases skipped (one worker) with
  # the run's reason, an estimate from this report (measured) and a memory figure per case.
  run_sb list 0 run "${tiny[@]}" --workloads subset-mean,comms --paths cpu1,cpuN --list --out "$work/run-a.h5"
  has list out '^ *0  run +1w×1t +~[0-9.]+ m?s +[0-9.]+ [KMG]iB +subset-mean/single-cpu' \
    'skipped: comms needs at least 2 workers and multi-cpu has 1 here' \
    '^2 of [0-9]+ case\(s\) run, [0-9]+ skipped; estimated ~[0-9.]+ m?s \(2 measured\)' \
    '^time: measured = the case in an earlier report of this host'
  # A case too large for this node: listed as failing its memory check, with the run's line.
  SCALEBENCH_HOST_MEMORY_BYTES=1000000 run_sb list-mem 0 run "${tiny[@]}" --workloads svd --paths cpu1 --list
  has list-mem out '^ *0  fail ' 'will fail: svd: needs [0-9.]+ [KMG]iB of host memory per worker, this node has 977 KiB available'
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
    '^case +workers +status +reps +median +noise +min +max +stddev +throughput' \
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
  # The tidy export: parameters, host, commit and times as columns; per repeat on request.
  run_sb rec 0 report "$r" --format records
  run_sb per-repeat 0 report "$r" --format csv --per-repeat
  run_sb per-repeat-table 2 report "$r" --per-repeat
  has per-repeat-table err 'per-repeat applies to --format csv and records'
  py_check "$tmp/csv.out" "$tmp/rec.out" "$tmp/per-repeat.out" <<'EOF2'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for col in ("param_n", "param_seed", "run_host", "git_sha", "run_start_utc", "started_utc", "spread"):
    assert col in rows[0], (col, list(rows[0]))
assert rows[0]["param_n"] == "2000" and rows[0]["workload"] == "subset-mean", rows[0]
rec = json.load(open(sys.argv[2]))
assert len(rec) == 10 and rec[0]["param_n"] == 2000 and rec[0]["git_sha"], rec[0]
per = list(csv.DictReader(open(sys.argv[3])))
assert len(per) == 30 and {r["repeat"] for r in per} == {"0", "1", "2"}, len(per)
assert all(float(r["total_s"]) > 0 for r in per)
EOF2
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
  run_sb self-json 4 compare "$a" "$a" --format json
  py_check "$tmp/self-json.out" <<'EOF2'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "scalebench-compare/1" and j["outcome"] == "incomplete" and j["exit_code"] == 4, j
assert j["counts"] == {"too-few-repeats": 10} and len(j["cases"]) == 10, j["counts"]
assert all(c["verdict"] == "too-few-repeats" and c["params"] for c in j["cases"])
EOF2
  # At 80 and 120 columns the ids keep what tells the cases apart (groupby's query).
  for cols in 80 120; do
    COLUMNS=$cols run_sb "self-$cols" 4 compare "$a" "$a"
    has "self-$cols" out '^parameters of groupby: ' '^groupby/multi-cpu .*by-key +too-few' '^groupby/multi-cpu query=by-name +too-few'
    awk -v w="$cols" 'length($0) > w + 2 { print "too wide: " $0; bad = 1 } END { exit bad }' "$tmp/self-$cols.out" ||
      bad "compare at $cols columns has lines wider than that"
  done
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
  # The run options after -- are checked as `run` checks them, before anything is queued.
  run_sb typo 2 submit --scheduler slurm --nodes 2 --dry-run -- --presett small --workloads nope
  has typo err '^scalebench: run options after --: unknown option --presett \(did you mean --preset\?\) for scalebench run'
  [ -s "$tmp/typo.out" ] && bad "a refused submit printed a script"
  run_sb typo-workload 2 submit --scheduler pbs --nodes 2 --cpus-per-node 8 --dry-run -- --workloads nope
  has typo-workload err "unknown workload 'nope'"
  run_sb no-case 2 submit --scheduler slurm --dry-run -- --workloads comms --paths cpuN
  has no-case err 'no case would run in this job .*comms needs at least 2 workers'
  run_sb too-big 2 submit --scheduler slurm --nodes 2 --batch-option=--mem=1G --dry-run -- \
    --workloads svd --paths cpu1 --param svd.m=40000000 --param svd.n=1000 --param svd.chunk=2000
  has too-big err "would fail in the job: svd: needs [0-9.]+ GiB of host memory per worker, the job's nodes have 1.00 GiB"
  run_sb skips 0 submit --scheduler slurm --nodes 1 --dry-run -- "${tiny[@]}" --paths cpu1,cpuN,gpu1
  has skips err 'scalebench: [0-9]+ of [0-9]+ case\(s\) will be skipped in this job: comms needs at least 2 workers' \
    'will be skipped in this job: the job asks for no GPU'
  has skips out '^#SBATCH --nodes=1$'
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
  # Its one line comes last, after the forecast's notes on the cases the job would skip.
  [ "$(grep -c 'refused the job' "$tmp/refused.err")" -eq 1 ] && tail -n 1 "$tmp/refused.err" | grep -q 'refused the job' ||
    bad "a refused submission did not end with its one line"
  ;;
help)
  # The git SHA of the build's tree, '-dirty' with uncommitted changes, 'unknown' for an export.
  version='^scalebench [0-9]+\.[0-9]+\.[0-9]+ \(([0-9a-f]+(-dirty)?|unknown)\)$'
  run_sb version 0 --version
  has version out "$version"
  run_sb top 0 --help
  for sub in run submit report compare history recover datagen info completion; do
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
  has help-report out '^  --format TEXT' 'table\|markdown\|csv\|records\|json\|gbench-json\|html' '^  --per-repeat '
  has help-compare out '^  --threshold ' '^  --alpha '
  has help-datagen out '^  --max-bytes '
  has help-info out '^  --format '
  # Every help text fits 100 columns; info fits its terminal (or 100 columns in a pipe).
  for f in "$tmp"/top.out "$tmp"/help-*.out; do
    awk 'length($0) > 100 { print FILENAME ": " $0; bad = 1 } END { exit bad }' "$f" || bad "help wider than 100 columns"
  done
  run_sb info-narrow 0 info
  awk 'length($0) > 100 { print; bad = 1 } END { exit bad }' "$tmp/info-narrow.out" || bad "info wider than 100 columns"
  # "did you mean" for subcommands and options.
  run_sb reprot 2 reprot x.h5
  has reprot err "^scalebench: unknown subcommand 'reprot' of scalebench; did you mean \`scalebench report\`\?"
  run_sb presett 2 run --presett small
  has presett err '^scalebench: unknown option --presett \(did you mean --preset\?\) for scalebench run \(see scalebench run --help\)$'
  run_sb shwo 2 history shwo store.h5
  has shwo err "did you mean \`scalebench history show\`"
  # The man page and the completions, from the same definitions.
  run_sb man 0 completion man
  has man out '^\.TH SCALEBENCH 1' '^\.SS "scalebench submit' '^\\fB\\-\\-batch\\-option\\fR'
  if command -v man >/dev/null; then
    MANWIDTH=80 man -l "$tmp/man.out" >"$tmp/man.txt" 2>"$tmp/man.err" || bad "man -l cannot render the page"
  fi
  run_sb bash 0 completion bash
  bash -n "$tmp/bash.out" || bad "the bash completion is not valid bash"
  # Completing for real: subcommands, run's options, --preset's values, run's options after submit --.
  complete_words() {
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _scalebench; printf "%s\n" "${COMPREPLY[@]}"' \
      _ "$tmp/bash.out" "$@"
  }
  [ "$(complete_words scalebench rep | tr '\n' ' ')" = "report " ] || bad "bash: 'scalebench rep' does not complete to report"
  complete_words scalebench run --pre | grep -qx -- --preset || bad "bash: run --pre does not complete"
  [ "$(complete_words scalebench run --preset s | tr '\n' ' ')" = "small seed " ] || bad "bash: --preset values"
  complete_words scalebench submit --scheduler slurm -- --work | grep -qx -- --workloads || bad "bash: run options after submit --"
  run_sb zsh 0 completion zsh
  has zsh out '^#compdef scalebench$'
  if command -v zsh >/dev/null; then zsh -n "$tmp/zsh.out" || bad "the zsh completion is not valid zsh"; fi
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
affinity)
  # One allowed CPU (taskset): planned, recorded and shown as such, with a note.
  command -v taskset >/dev/null || { echo "SKIP: no taskset"; exit 77; }
  cores=$("$sb" info --format json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["cpus"]["node_cores"])')
  [ "$cores" -ge 2 ] || { echo "SKIP: one core only"; exit 77; }
  timeout 60 taskset -c 0 "$sb" info --format json >"$tmp/ts.json" 2>"$tmp/ts.err" || bad "info under taskset failed"
  py_check "$tmp/ts.json" <<'EOF2'
import json, sys
c = json.load(open(sys.argv[1]))["cpus"]
assert c["usable_cores"] == 1 and c["cpu_list"] == "0" and c["limited_by"] == "affinity mask", c
ranks = json.load(open(sys.argv[1]))["ranks"]
assert [r["threads"] for r in ranks if r["role"] == "worker"] == [1], ranks
EOF2
  timeout 60 taskset -c 0 "$sb" info >"$tmp/ts.out" 2>&1
  has ts out '^CPUs usable +1 of [0-9]+ cores; affinity mask: 1 core\(s\) \(CPUs 0\)'
  timeout 120 taskset -c 0 "$sb" run "${tiny[@]}" --workloads subset-mean --paths cpuN --out "$tmp/ts.h5" \
    >"$tmp/tsrun.out" 2>"$tmp/tsrun.err" || bad "run under taskset failed"
  has tsrun err '^scalebench: this process may use 1 of [0-9]+ cores \(affinity mask: CPUs 0\): planning 1 worker\(s\) × 1 thread\(s\)'
  has tsrun out '^subset-mean/multi-cpu/.* +1w×1t +ok '
  py_check "$tmp/ts.h5" <<'EOF2'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    n = f["system"]["nodes"][0]
    names = f["system"]["nodes"].dtype.names
    assert n[names.index("cores_usable")] == 1, dict(zip(names, n))
    lim = n[names.index("cpus_limited_by")]
    assert (lim.decode() if isinstance(lim, bytes) else lim) == "affinity mask", lim
EOF2
  # A cgroup v1 cpuset and CPU quota, for real (root, the controllers mounted and writable).
  for ctl in cpuset cpu; do
    d=/sys/fs/cgroup/$ctl/sb-cli-$$-t
    if [ "$(id -u)" -ne 0 ] || ! mkdir "$d" 2>/dev/null; then echo "skip: no writable cgroup v1 $ctl"; continue; fi
    if [ "$ctl" = cpuset ]; then
      echo 1 >"$d/cpuset.cpus"; cat /sys/fs/cgroup/cpuset/cpuset.mems >"$d/cpuset.mems"
      want='"cgroup cpuset"'
    else
      echo 100000 >"$d/cpu.cfs_period_us"; echo 100000 >"$d/cpu.cfs_quota_us"
      want='"cgroup CPU quota"'
    fi
    timeout 60 bash -c 'echo $$ > "$1/cgroup.procs" && exec "$2" info --format json' _ "$d" "$sb" >"$tmp/cg.json" 2>&1 ||
      bad "info in a cgroup v1 $ctl failed"
    "$py" - "$tmp/cg.json" "$want" <<'EOF2' || bad "cgroup v1 $ctl: not planned from it"
import json, sys
c = json.load(open(sys.argv[1]))["cpus"]
assert c["usable_cores"] == 1 and json.dumps(c["limited_by"]) == sys.argv[2], c
EOF2
    timeout 120 bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$d" "$sb" run "${tiny[@]}" \
      --workloads subset-mean --paths cpuN --out "$tmp/cg-$ctl.h5" >"$tmp/cg.out" 2>&1 || bad "run in a cgroup v1 $ctl failed"
    grep -Eq '^subset-mean/multi-cpu/.* +1w×1t +ok ' "$tmp/cg.out" || { bad "run in a cgroup v1 $ctl: not 1w×1t"; cat "$tmp/cg.out"; }
    rmdir "$d" 2>/dev/null
  done
  ;;
*)
  echo "usage: cli_commands.sh SCALEBENCH PYTHON3 WORKDIR info|info-gpu|run|report|compare|submit|history|recover|help|affinity"
  exit 2
  ;;
esac
[ "$fail" -eq 0 ] && echo "cli.$part: passed"
exit "$fail"
