#!/usr/bin/env python3
"""Whether a run beside the bursty hog kept the gate test's premise: enough repeats the hog
never touched, as fast as the quiet run's.

usage: clean_repeats.py QUIET.h5 BUSY.h5 THRESHOLD_PERCENT

A repeat of BUSY is clean when the share of the machine other processes took during it (the
runtime's per-repeat `other_cpu_fraction`, docs/report-schema.md "Telemetry") is no more than
the largest the QUIET run saw. The gate compares the mean of the fastest third of each run's
repeats, so the premise needs that many clean repeats, and their fastest third within
THRESHOLD_PERCENT of QUIET's: a virtual machine's cores can run slower for seconds with no
other process in sight, and then a quiet repeat is slow too.

Prints one line. Exit 0: the premise held (a regression verdict is the gate's own mistake);
3: the clean repeats were slower (the machine's speed changed); 4: too few clean repeats.
"""
import math
import sys

import h5py
import numpy as np

CASE = "cases/0000_subset-mean_multi-cpu"


def per_repeat(path):
    """Each timed repeat's total (s) and the largest other-process share among its workers."""
    with h5py.File(path, "r") as f:
        case = f[CASE]
        times = case["times"][()]
        rows = case["telemetry/repeats"][()]
    other = np.zeros(len(times))
    for row in rows:
        i = int(row["repeat"])
        if 0 <= i < len(other) and np.isfinite(row["other_cpu_fraction"]):
            other[i] = max(other[i], float(row["other_cpu_fraction"]))
    return np.asarray(times["total"], dtype=float), other


def fastest_third(totals):
    k = math.ceil(len(totals) / 3)
    return float(np.mean(np.sort(totals)[:k]))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    quiet_t, quiet_o = per_repeat(sys.argv[1])
    busy_t, busy_o = per_repeat(sys.argv[2])
    threshold = float(sys.argv[3]) / 100.0
    clean = busy_t[busy_o <= quiet_o.max()]
    need = math.ceil(len(busy_t) / 3)
    if len(clean) < need:
        print(f"premise: {len(clean)} of {len(busy_t)} repeats beside the hog were clean, "
              f"fewer than the fastest third's {need}")
        return 4
    quiet = fastest_third(quiet_t)
    fast = float(np.mean(np.sort(clean)[:need]))
    change = fast / quiet - 1.0
    print(f"premise: {len(clean)} of {len(busy_t)} repeats beside the hog were clean; their "
          f"fastest {need}: {fast * 1e3:.2f} ms against the quiet run's {quiet * 1e3:.2f} ms "
          f"({change * 100:+.1f}%)")
    return 3 if change > threshold else 0


if __name__ == "__main__":
    sys.exit(main())
