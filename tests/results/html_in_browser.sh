#!/usr/bin/env bash
# `scalebench report --format html` in a real headless browser (Debian's chromium): the headline
# comes first with the run's status, tally and host; the charts (speedup, repeat distributions,
# scaling, phase breakdown, task streams, node acceptance's verdict heat map and telemetry
# timelines) are laid out with shapes and no text cut off, each with
# a legend explaining every colour it paints; the summary rows do not wrap; no script error; and
# a screenshot shows them (check_html_render.py).
# usage: html_in_browser.sh SCALEBENCH PYTHON3      (exit 77: skipped, no chromium)
set -u
sb=$1 py=$2
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then browser=$(command -v "$b"); break; fi
done
if [ -z "$browser" ] || [ -z "$py" ]; then echo "SKIP: needs chromium and python3"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A folder name long enough that the command line alone is wider than a 1280-pixel window: the
# page must still not scroll sideways (the run's attributes and headline wrap it).
out="$tmp/a-report-folder-whose-name-alone-makes-the-command-line-wider-than-the-window/r.h5"
mkdir -p "$(dirname "$out")"
"$sb" run --preset tiny --workloads subset-mean,groupby --paths cpu1,cpuN,each-node --repeats 2 --warmup 0 \
  --out "$out" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; exit 1; }
"$sb" report "$out" --format html --out "$tmp/r.html" || exit 1
"$py" "$(dirname "$0")/check_html_render.py" "$browser" "$tmp/r.html" "$tmp" verdicts,telemetry
