#!/bin/sh
# source.clang_tidy: clang-tidy with the repository's .clang-tidy, every finding an error, on a
# sample of the code (a file or two of each layer, chosen for their light includes: a whole run
# takes an hour on two cores, the sample a minute). The checks in .clang-tidy are those the whole
# code keeps; this keeps them from rotting. Run it on any file:
#   clang-tidy -p build --warnings-as-errors='*' FILE
# Usage: check_clang_tidy.sh SOURCE_DIR BUILD_DIR FILE... (exit 77: no clang-tidy or no
# compile_commands.json, the test is skipped).
set -u
src=$1
build=$2
shift 2
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || {
  echo "source.clang_tidy: no clang-tidy (Debian package clang-tidy, tools/deps.txt)"
  exit 77
}
[ -f "$build/compile_commands.json" ] || {
  echo "source.clang_tidy: no $build/compile_commands.json"
  exit 77
}
status=0
for f in "$@"; do
  if ! "$tidy" -p "$build" --quiet --warnings-as-errors='*' "$src/$f" 2>/dev/null; then
    echo "source.clang_tidy: $f breaks a check of .clang-tidy"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "source.clang_tidy: $# files keep every check of .clang-tidy"
exit "$status"
