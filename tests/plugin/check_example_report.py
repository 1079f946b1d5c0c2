"""Checks a report of examples/plugin's tiled-dgemm (`scalebench report --format json` output).

usage: check_example_report.py REPORT.json PATHS LIB [--no-ceilings] [--datagen INPUTS.h5]

Every case of PATHS (comma-separated) is there and ok, every validation check passes (the
workload's own three and, on the paths after the reference, the cross-checks), each case has an
efficiency against the ceiling of its bound (flops: DGEMM on CPUs, fp64 GEMM on GPUs) unless
--no-ceilings, and the report records the plugin (path, workloads, API version, SHA-256 of LIB).
With --datagen, NumPy recomputes C = A B from the datagen file and must find the sums the
single-cpu case reported.
"""
import hashlib
import json
import math
import os
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    report_path, paths, lib = args[0], args[1].split(","), args[2]
    no_ceilings = "--no-ceilings" in args
    datagen = args[args.index("--datagen") + 1] if "--datagen" in args else None
    report = json.load(open(report_path))

    cases = [c for c in report["cases"] if c["workload"] == "tiled-dgemm"]
    # One case per path; each-gpu and each-node one per device (GPU or node) of the run.
    if sorted(set(c["path"] for c in cases)) != sorted(paths) or any(
            sum(c["path"] == p for c in cases) != 1 for p in paths if not p.startswith("each-")):
        fail(f"paths {[c['path'] for c in cases]}, expected {paths}")
    for c in cases:
        if c["status"] != "ok":
            fail(f"{c['id']}: {c['status']}: {c['message']}")
        names = [v["name"] for v in c["validation"]]
        for want in ("sampled_error_vs_bound", "sampled_entries", "sum_vs_identity"):
            if want not in names:
                fail(f"{c['id']}: no check {want} in {names}")
        if c["path"] != paths[0] and not any(n.startswith("cross:") for n in names):
            fail(f"{c['id']}: not cross-checked against {paths[0]}: {names}")
        for v in c["validation"]:
            if not v["pass"]:
                fail(f"{c['id']}: {v['name']} = {v['value']} (limit {v['limit']})")
        work = c["work"]
        m, n, k = (int(c["params"][key]) for key in ("m", "n", "k"))
        if work["bound"] != "flops" or work["flops"] != 2.0 * m * n * k:
            fail(f"{c['id']}: work {work}")

    for row in report["summary"]:
        if row["workload"] != "tiled-dgemm" or no_ceilings:
            continue
        want = "fp64_gemm" if row["path"].endswith("-gpu") else "dgemm"
        eff = row.get("efficiency")
        if row.get("ceiling") != want or eff is None or not (math.isfinite(eff) and eff > 0):
            fail(f"{row['case']}: efficiency {eff} against {row.get('ceiling')}, want {want}")

    plugins = report["attrs"].get("plugins", [])
    sha = hashlib.sha256(open(lib, "rb").read()).hexdigest()
    if len(plugins) != 1:
        fail(f"plugins recorded: {plugins}")
    p = plugins[0]
    if (p["path"] != os.path.realpath(lib) or p["workloads"] != "tiled-dgemm" or
            p["sha256"] != sha or not isinstance(p["api_version"], int)):
        fail(f"plugin record {p}, expected {os.path.realpath(lib)} {sha}")

    if datagen:
        import h5py
        import numpy as np
        ref = next(c for c in cases if c["path"] == "single-cpu")
        with h5py.File(datagen, "r") as f:
            a, b = f["A"][...], f["B"][...]
            answer = dict(f["answer"].attrs)
        if a.shape != (m, k) or b.shape != (k, n):
            fail(f"datagen shapes {a.shape} {b.shape}")
        c = a @ b
        for key, value in (("sum", c.sum()), ("sum_squares", (c * c).sum())):
            scale = math.sqrt(c.size * (c * c).sum()) if key == "sum" else value
            for who, got in (("report", ref["result"][key]), ("datagen answer", answer[key])):
                if abs(got - value) > 1e-10 * scale:
                    fail(f"{key}: NumPy {value!r}, {who} {got!r}")


if __name__ == "__main__":
    main()
