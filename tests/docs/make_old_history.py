"""Writes a history store in the HDF5 layout of earlier scalebench versions (history version 1,
docs/history-schema.md, "Stores of earlier versions"), for the docs' `history import` entries.

    make_old_history.py REPORT STORE N [SLOW_FROM]

N runs of REPORT's cases, commits c1..cN a day apart (2026-01-01, ...); from run SLOW_FROM on,
every repeat takes 30% longer. $SB is the scalebench under test (it reads the report).
"""

import json
import math
import os
import subprocess
import sys

import h5py
import numpy as np


def fastest_third_mean(xs):
    v = sorted(xs)
    k = max(1, math.ceil(len(v) / 3))
    return sum(v[:k]) / k


def main() -> int:
    report, store, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    slow = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    model = json.loads(subprocess.check_output([os.environ["SB"], "report", report, "--format", "json"]))
    s = h5py.string_dtype()
    runs, cases, times = [], [], []
    for i in range(1, n + 1):
        f = 1.3 if slow and i >= slow else 1.0
        runs.append((i, f"c{i}", f"2026-01-{i:02d}T00:00:00.000Z", "node0", "0123456789ab",
                     "1 node: 2 cores, Old CPU", "0.1.0", "tiny", f"run-{i}.h5",
                     f"2026-01-{i:02d}T01:00:00Z"))
        for c in model["cases"]:
            totals = [r["total"] * f for r in c.get("repeats", []) if r.get("total") is not None]
            fast = fastest_third_mean(totals) if totals else float("nan")
            med = float(np.median(totals)) if totals else float("nan")
            params = ",".join(f"{k}={v}" for k, v in sorted(c.get("params", {}).items()))
            cases.append((i, c["id"], c["workload"], c["path"], params, c.get("status", "ok"),
                          len(totals), fast, med))
            times += [(i, c["id"], r, t) for r, t in enumerate(totals)]
    run_t = np.dtype([("run", "<i8"), ("commit", s), ("time_utc", s), ("host", s), ("machine", s),
                      ("machine_text", s), ("scalebench_version", s), ("preset", s), ("report", s),
                      ("added_utc", s)])
    case_t = np.dtype([("run", "<i8"), ("case", s), ("workload", s), ("path", s), ("params", s),
                       ("status", s), ("repeats", "<i8"), ("fast_s", "<f8"), ("median_s", "<f8")])
    time_t = np.dtype([("run", "<i8"), ("case", s), ("repeat", "<i8"), ("total", "<f8")])
    with h5py.File(store, "w") as h:
        h.attrs["kind"] = "scalebench history"
        h.attrs["history_version"] = np.int64(1)
        h.create_dataset("runs", data=np.array(runs, dtype=run_t))
        h.create_dataset("cases", data=np.array(cases, dtype=case_t))
        h.create_dataset("times", data=np.array(times, dtype=time_t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
