# Functions for the `setup` and `check` snippets of tests/docs/manifest.toml (sourced by
# run_docs.py; $SB, $SB_SOURCE, $SB_BUILD, $SB_PYTHON3, $DOCS_DIR and $DOCS_FIXTURES are set).

# tiny_run OUT [--option value]..: a report of a tiny run, made once per runner and copied.
# Defaults: --preset tiny --workloads subset-mean,svd --paths single-cpu --repeats 3 --warmup 0,
# no ceilings; an option given replaces its default. TAG=x makes a separate run (two real runs).
tiny_run() {
  local out=$1
  shift
  declare -A opt=([--preset]=tiny [--workloads]=subset-mean,svd [--paths]=single-cpu
                  [--repeats]=3 [--warmup]=0)
  while [ $# -ge 2 ]; do opt[$1]=$2; shift 2; done
  local args=(--no-ceilings) k
  for k in $(printf '%s\n' "${!opt[@]}" | sort); do args+=("$k" "${opt[$k]}"); done
  local key
  key=$(printf '%s\n' "${TAG:-}" "${args[@]}" | md5sum | cut -c1-12)
  local cached=$DOCS_FIXTURES/run-$key.h5
  if [ ! -s "$cached" ]; then
    "$SB" run "${args[@]}" --out "$cached.part.h5" >"$cached.log" 2>&1 ||
      { cat "$cached.log" >&2; return 1; }
    mv "$cached.part.h5" "$cached"
  fi
  mkdir -p "$(dirname "$out")"
  cp "$cached" "$out"
}

# slow_down FILE CASE_PREFIX: makes the matching cases of a report clearly slower (every
# repeat's total plus ten times the slowest one): a real regression for `compare`.
slow_down() {
  "$SB_PYTHON3" - "$1" "$2" <<'EOF'
import sys
import h5py
path, prefix = sys.argv[1], sys.argv[2]
done = 0
with h5py.File(path, "r+") as f:
    for g in f["cases"].values():
        cid = g.attrs["id"]
        cid = cid.decode() if isinstance(cid, bytes) else str(cid)
        if cid.startswith(prefix):
            t = g["times"][()]
            t["total"] += 10 * t["total"].max()
            g["times"][...] = t
            done += 1
assert done, f"no case of {path} starts with {prefix}"
EOF
}

# doc_block DOC INFO AFTER_REGEX: prints the first ```INFO block of DOC (relative to the source)
# that follows a line matching AFTER_REGEX (Python regex).
doc_block() {
  "$SB_PYTHON3" "$DOCS_DIR/doc_units.py" block "$SB_SOURCE/$1" "$2" "$3"
}

# cases FILE: one line per case of a report, "id<TAB>status" (through `scalebench report --format
# json`).
cases() {
  "$SB" report "$1" --format json |
    "$SB_PYTHON3" -c 'import json, sys
for c in json.load(sys.stdin)["cases"]:
    print(c["id"] + "\t" + c["status"])'
}

# expect_cases FILE REGEX..: every REGEX matches at least one "id<TAB>status" line of FILE.
expect_cases() {
  local file=$1 list
  shift
  list=$(cases "$file")
  local re
  for re in "$@"; do
    grep -Eq -- "$re" <<<"$list" || { echo "no case of $file matches /$re/; the cases:"; echo "$list"; return 1; }
  done
}

# slurm_job_field ID FIELD: a field of `scontrol show job ID` (e.g. NumNodes, Partition).
slurm_job_field() {
  scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# last_job_id: the job id on the last line of the command's standard output.
last_job_id() {
  tail -n 1 "$SB_STDOUT" | tr -d '[:space:]'
}

# written_report: the report the command wrote, from its "report written to PATH" line (wherever
# the default location is).
written_report() {
  local f
  f=$(sed -n 's/^scalebench: report written to //p' "$SB_STDERR" | tail -n 1)
  [ -n "$f" ] && [ -s "$f" ] || { echo "the command printed no 'report written to' line" >&2; return 1; }
  echo "$f"
}

# expect_repeats FILE N: every case of the report that ran (status ok) has N timed repeats.
expect_repeats() {
  "$SB" report "$1" --format json | "$SB_PYTHON3" -c 'import json, sys
n = int(sys.argv[1])
bad = [(c["id"], len(c["repeats"])) for c in json.load(sys.stdin)["cases"]
       if c["status"] == "ok" and len(c["repeats"]) != n]
assert not bad, f"cases without {n} repeats: {bad}"' "$2"
}

# history_runs STORE REPORT N [SLOW_FROM]: adds N copies of REPORT to STORE as the runs of commits
# c1..cN, a day apart; from run SLOW_FROM on, every repeat takes 30% longer (a step that
# `history show` must find there). STORE may be a postgresql:// URI.
history_runs() {
  local store=$1 report=$2 n=$3 slow=${4:-0} i
  for i in $(seq 1 "$n"); do
    cp "$report" "$ENTRY_DIR/run-$i.h5"
    "$SB_PYTHON3" - "$ENTRY_DIR/run-$i.h5" "$i" "$slow" <<'PY'
import sys
import h5py
path, i, slow = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with h5py.File(path, "r+") as f:
    f.attrs["start_utc"] = f"2026-01-{i:02d}T00:00:00.000Z"
    if slow and i >= slow:
        for g in f["cases"].values():
            t = g["times"][()]
            t["total"] *= 1.3
            g["times"][...] = t
PY
    "$SB" history add "$store" "$ENTRY_DIR/run-$i.h5" --commit "c$i" >/dev/null
  done
}

# pg_server: a private PostgreSQL server for this entry (tests/results/pg_temp_server.sh, in its
# own session so that it outlives the set-up); its URI is in $ENTRY_DIR/pg.uri, for a `replace`
# of the documented one. It stops when the entry's scratch folder is removed or the runner ends.
pg_server() {
  setsid --wait "$SB_SOURCE/tests/results/pg_temp_server.sh" start "$ENTRY_DIR/pg.state" "$PPID" "$PWD" \
    >"$ENTRY_DIR/pg.uri"
}

# drop_cases FILE CASE_PREFIX: removes the matching cases from a report (as if they never ran).
drop_cases() {
  "$SB_PYTHON3" - "$1" "$2" <<'PY'
import sys
import h5py
path, prefix = sys.argv[1], sys.argv[2]
with h5py.File(path, "r+") as f:
    gone = []
    for name, g in list(f["cases"].items()):
        cid = g.attrs["id"]
        if (cid.decode() if isinstance(cid, bytes) else str(cid)).startswith(prefix):
            gone.append(name)
            del f["cases"][name]
    assert gone, f"no case of {path} starts with {prefix}"
PY
}

# plugin_example [install|configure|build]: examples/plugin as docs/writing-a-workload.md builds
# it, in the current folder: scalebench installed into ./sb-prefix (made once per runner and
# copied: the installation is relocatable), then the plugin configured in ./build-plugin, or
# built there (./build-plugin/libtiled_dgemm.so; default: the runner's one build of it, made by
# the doc's own `cmake --build build-plugin` entry when that ran first, see plugin_example_keep).
plugin_example() {
  local step=${1:-build} cached=$DOCS_FIXTURES/plugin-example
  if [ ! -x "$cached/sb-prefix/bin/scalebench" ]; then
    rm -rf "$cached"
    mkdir -p "$cached"
    (cd "$cached" && cmake --install "$SB_BUILD" --prefix "$PWD/sb-prefix") >"$cached.log" 2>&1 ||
      { cat "$cached.log" >&2; return 1; }
  fi
  cp -r "$cached/sb-prefix" .
  case $step in
    install) ;;
    configure) cmake -S "$SB_SOURCE/examples/plugin" -B build-plugin \
                 -DCMAKE_PREFIX_PATH="$PWD/sb-prefix" >/dev/null ;;
    build)
      if [ ! -s "$cached/libtiled_dgemm.so" ]; then
        (cmake -S "$SB_SOURCE/examples/plugin" -B "$cached/build-plugin" \
           -DCMAKE_PREFIX_PATH="$cached/sb-prefix" && cmake --build "$cached/build-plugin" &&
          cp "$cached/build-plugin/libtiled_dgemm.so" "$cached/") >>"$cached.log" 2>&1 ||
          { cat "$cached.log" >&2; return 1; }
      fi
      mkdir -p build-plugin && cp "$cached/libtiled_dgemm.so" build-plugin/ ;;
  esac
}

# plugin_example_keep: after the doc's `cmake --build build-plugin` (its check), keeps what it
# built as the runner's build of the plugin, so that the entries after it do not build it again
# (the plugin finds nothing through the prefix it was configured with: its RUNPATH names the
# system's and CUDA's libraries only).
plugin_example_keep() {
  local cached=$DOCS_FIXTURES/plugin-example
  [ -s "$cached/libtiled_dgemm.so" ] && return 0
  cp build-plugin/libtiled_dgemm.so "$cached/libtiled_dgemm.so.tmp" &&
    mv "$cached/libtiled_dgemm.so.tmp" "$cached/libtiled_dgemm.so"
}

# plugin_example_slow: examples/plugin built with TILED_DGEMM_EXTRA_WORK_PERCENT=5 in
# ./build-plugin-slow (made once per runner), beside plugin_example's ./build-plugin and
# ./sb-prefix.
plugin_example_slow() {
  local cached=$DOCS_FIXTURES/plugin-example-slow
  plugin_example build
  if [ ! -s "$cached/libtiled_dgemm.so" ]; then
    rm -rf "$cached"
    mkdir -p "$cached"
    (cmake -S "$SB_SOURCE/examples/plugin" -B "$cached/build" -DCMAKE_PREFIX_PATH="$PWD/sb-prefix" \
       -DTILED_DGEMM_EXTRA_WORK_PERCENT=5 && cmake --build "$cached/build" &&
      cp "$cached/build/libtiled_dgemm.so" "$cached/") >"$cached.log" 2>&1 ||
      { cat "$cached.log" >&2; return 1; }
  fi
  mkdir -p build-plugin-slow && cp "$cached/libtiled_dgemm.so" build-plugin-slow/
}

# ab_sides [DIR]: ./main-build (the build under test standing for the target branch's build)
# and ./main-plugin, ./mr-plugin: examples/plugin built in the tree as it is and with 10% more
# work per task (tests/plugin/CMakeLists.txt), under the names docs/ci.md gives them.
ab_sides() {
  ln -sfn "$SB_BUILD" main-build
  mkdir -p main-plugin mr-plugin
  ln -sf "$SB_BUILD/tests/plugin/libsb_ab_dgemm_0.so" main-plugin/libtiled_dgemm.so
  ln -sf "$SB_BUILD/tests/plugin/libsb_ab_dgemm_10.so" mr-plugin/libtiled_dgemm.so
}

# fleet_folder DIR [NODES] [SLOW] [MISSING]: the folder of a fleet sweep as `submit --fleet-nodes`
# leaves it once its jobs have run: one report per node (a tiny each-node run of subset-mean,
# copied with its host renamed sbn1..sbnNODES, node SLOW's repeats 60% longer), fleet.json
# listing those nodes and MISSING more (sbn<NODES+1>..) whose job left no report (job 81235..).
fleet_folder() {
  local dir=$1 nodes=${2:-3} slow=${3:-2} missing=${4:-1} i
  tiny_run "$ENTRY_DIR/fleet-base.h5" --workloads subset-mean --paths each-node --repeats 5
  mkdir -p "$dir"
  for i in $(seq 1 "$nodes"); do cp "$ENTRY_DIR/fleet-base.h5" "$dir/node-sbn$i.h5"; done
  "$SB_PYTHON3" - "$dir" "$nodes" "$slow" "$missing" <<'PY'
import json, sys
import h5py
d, nodes, slow, missing = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
for i in range(1, nodes + 1):
    host = f"sbn{i}"
    with h5py.File(f"{d}/node-{host}.h5", "r+") as f:
        old = text(f.attrs["host"])
        f.attrs["host"] = host
        f.attrs["job_id"] = str(81230 + i)
        t = f["system/nodes"][()]
        t["host"] = [host.encode()] * len(t)
        f["system/nodes"][...] = t
        for g in f["cases"].values():
            for k in ("host", "id", "device_id"):
                if k in g.attrs:
                    g.attrs[k] = text(g.attrs[k]).replace(old, host)
            if "hosts" in g:
                del g["hosts"]
                g.create_dataset("hosts", data=[host.encode()], dtype=h5py.string_dtype())
            if i == slow and "times" in g:
                tt = g["times"][()]
                tt["total"] *= 1.6
                g["times"][...] = tt
                g["metrics"].attrs["median_s"] = float(g["metrics"].attrs["median_s"]) * 1.6
        if "verdicts" in f:
            del f["verdicts"]
elements = [{"element": f"node-sbn{i}", "node": f"sbn{i}", "job_id": str(81230 + i),
             "submitted_utc": "2026-12-02T09:00:00Z"} for i in range(1, nodes + missing + 1)]
json.dump({"format": "scalebench-fleet", "version": 1, "scheduler": "slurm",
           "submit": ["--scheduler", "slurm", "--gpus-per-node", "8", "--time", "00:30:00",
                      "--partition", "gpu"],
           "run": ["--preset", "seed", "--workloads", "subset-mean,svd", "--paths",
                   "each-gpu,each-node", "--check"],
           "elements": elements}, open(f"{d}/fleet.json", "w"), indent=1)
PY
}

# fake_submit NAME ANSWER: a submit program NAME on the entry's PATH that keeps every script it
# is given (job-N.sh, N from 1) and prints ANSWER with @N@ replaced by 80000 + N (sbatch
# --parsable prints "@N@", bsub "Job <@N@> is submitted to queue <normal>.").
fake_submit() {
  cat >"$ENTRY_BIN/$1" <<EOF_SH
#!/bin/bash
n=\$(( \$(cat "$ENTRY_DIR/submitted" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$ENTRY_DIR/submitted"
f=\${@: -1}
if [ \$# -eq 0 ] || [ "\$f" = -terse ]; then cat >"$PWD/job-\$n.sh"; else cp "\$f" "$PWD/job-\$n.sh"; fi
answer='$2'
echo "\${answer//@N@/\$((80000 + n))}"
EOF_SH
  chmod +x "$ENTRY_BIN/$1"
}
