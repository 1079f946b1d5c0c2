#!/usr/bin/env bash
# Broken plugins through the real program: `run`, `info` and `datagen` with --plugin, and a
# suite file's `plugins`, must each exit 2 with exactly one line on stderr naming what is wrong,
# before anything starts (no report, no run folder, no job).
# usage: plugin_errors.sh SCALEBENCH FIXTURE_DIR
set -u
sb=$1 fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"
fail=0
check() {  # description expected_words args...
  local what=$1 words=$2
  shift 2
  "$sb" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local got=$? lines
  lines=$(wc -l <"$tmp/stderr")
  if [ "$got" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$words" "$tmp/stderr"; then
    echo "FAIL: $what: exit $got (want 2), $lines stderr lines (want 1 with '$words'):"
    cat "$tmp/stderr"
    fail=1
  elif [ -n "$(ls -A "$tmp/out")" ]; then
    echo "FAIL: $what: something was started: $(ls -A "$tmp/out")"
    fail=1
  else
    echo "ok: $what -> $(cat "$tmp/stderr")"
  fi
}
run() { check "$1" "$2" run --preset tiny --paths cpu1 --out "$tmp/out/r.h5" "${@:3}"; }

printf 'not a shared library\n' >"$tmp/libtext.so"
cp "$fx/libsb_fixture_plugin_good.so" "$tmp/libcopy.so"
run "missing file" "plugin $tmp/none.so: no such file" --plugin "$tmp/none.so"
run "a folder" "not a file" --plugin "$tmp"
run "not a library" "cannot be loaded" --plugin "$tmp/libtext.so"
run "no plugin symbols" "not a scalebench plugin" --plugin "$fx/libsb_fixture_plugin_no_symbols.so"
run "another API version" "built against workload API version" \
  --plugin "$fx/libsb_fixture_plugin_bad_version.so"
run "a missing symbol" "undefined symbol: sb::function_of_another_api(int)" --plugin "$fx/libsb_fixture_plugin_undefined_symbol.so"
run "a built-in name" "workload 'svd' is already registered by scalebench (built-in)" \
  --plugin "$fx/libsb_fixture_plugin_clash.so"
run "two plugins, one name" "workload 'fixture-a' is already registered by plugin" \
  --plugin "$fx/libsb_fixture_plugin_good.so" --plugin "$tmp/libcopy.so"
run "no workloads" "registers no workload" --plugin "$fx/libsb_fixture_plugin_empty.so"
run "a required member missing" "required member make_worker" \
  --plugin="$fx/libsb_fixture_plugin_incomplete.so"
run "after the options" "no such file" --workloads svd --plugin "$tmp/none.so"
check "info" "no such file" info --plugin "$tmp/none.so"
check "submit, before the job is queued" "no such file" \
  submit --scheduler slurm --dry-run -- --preset tiny --plugin "$tmp/none.so"
check "datagen" "built against workload API version" datagen tiled-dgemm --out "$tmp/out/d.h5" \
  --plugin "$fx/libsb_fixture_plugin_bad_version.so"
# A plugin whose constructor crashes, aborts or exits while it loads: tried in a child process
# first, named with the signal (or the exit), exit 2, on every command that loads plugins.
for cmd in run info datagen submit; do
  case $cmd in
    run) args=(run --preset tiny --paths cpu1 --out "$tmp/out/r.h5") ;;
    info) args=(info) ;;
    datagen) args=(datagen tiled-dgemm --out "$tmp/out/d.h5") ;;
    submit) args=(submit --scheduler slurm --dry-run -- --preset tiny) ;;
  esac
  check "$cmd: a constructor that segfaults" \
    "plugin $fx/libsb_fixture_plugin_crash_segv.so crashed while loading: SIGSEGV (Segmentation fault)" \
    "${args[@]}" --plugin "$fx/libsb_fixture_plugin_crash_segv.so"
  check "$cmd: a constructor that aborts" \
    "crashed while loading: SIGABRT (Aborted) (fixture: giving up while loading)" \
    "${args[@]}" --plugin "$fx/libsb_fixture_plugin_crash_abort.so"
  check "$cmd: a constructor that calls exit(0)" "ended the program while loading (it called exit(0))" \
    "${args[@]}" --plugin "$fx/libsb_fixture_plugin_crash_exit.so"
done
printf 'plugins = ["%s"]\n' "$fx/libsb_fixture_plugin_crash_segv.so" >"$tmp/crash.toml"
check "suite file: a constructor that segfaults" "crashed while loading: SIGSEGV" \
  run --suite "$tmp/crash.toml" --paths cpu1 --out "$tmp/out/r.h5"
# A suite file's plugins are relative to its folder and checked before anything starts.
mkdir -p "$tmp/suite"
printf 'plugins = ["../libtext.so"]\npreset = "tiny"\n' >"$tmp/suite/s.toml"
check "suite file" "plugin $tmp/suite/../libtext.so: cannot be loaded" \
  run --suite "$tmp/suite/s.toml" --paths cpu1 --out "$tmp/out/r.h5"
printf 'plugins = [""]\n' >"$tmp/suite/empty.toml"
check "suite file, empty path" "'plugins' holds an empty path" \
  run --suite "$tmp/suite/empty.toml" --out "$tmp/out/r.h5"
# The plugin's workloads in help texts and info; an unknown one names --plugin.
"$sb" run --help --plugin "$fx/libsb_fixture_plugin_good.so" >"$tmp/help" 2>&1
# (help wraps at 100 columns: the list may span lines)
if ! tr '\n' ' ' <"$tmp/help" | tr -s ' ' | grep -qE "subset-mean, svd, groupby(, [a-z0-9_-]+)*, fixture-a, fixture-b "; then
  echo "FAIL: run --help does not list the plugin's workloads:"; cat "$tmp/help"; fail=1
fi
"$sb" info --format json --plugin "$fx/libsb_fixture_plugin_good.so" >"$tmp/info.json"
if ! grep -q '"plugin": *"[^"]*libsb_fixture_plugin_good.so"' "$tmp/info.json"; then
  echo "FAIL: info does not name the plugin of its workloads"; fail=1
fi
run "unknown workload" "a plugin's workloads need --plugin LIB.so" --workloads fixture-a
exit $fail
