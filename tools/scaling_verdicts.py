#!/usr/bin/env python3
"""The verdicts of `tools/gpu-campaign.sh scaling`: more GPUs never slower, and the large cases'
speedups, from the JSON reports it leaves in OUT (`scalebench report --format json`).

  scaling_verdicts.py OUT GPUS

  scaling-seed-all-{a,b}.json, scaling-seed-2-{a,b}.json   seed, gpu1,gpuN (every GPU / two)
  scaling-large-all-{a,b}.json, scaling-large-2.json        large svd and by-key, gpu1,gpuN
  scaling-startup-{1,2,3}.json                              a one-repeat run on every GPU

Each line says PASS or FAIL and what it compared:
  - seed: every workload's multi-gpu median at most its single-gpu median, in every run;
  - seed and large: no kept repeat (not throttled or host-stalled) above 1.5x its case's median;
  - large: by-key at least 3.0x (four GPUs) or 1.8x (two) single-gpu; svd at least 3.3x (four)
    or 1.8x (two), in every run;
  - start-up: /system/startup total_s at most 1.0 s with four GPU workers (reported otherwise).
"""
import glob
import json
import os
import sys

SPEEDUP = {  # GPUs -> workload -> least single/multi ratio
    4: {"groupby": 3.0, "svd": 3.3},
    2: {"groupby": 1.8, "svd": 1.8},
}


def cases(path):
    """(workload key, path) -> case, for one report."""
    out = {}
    for c in json.load(open(path)).get("cases", []):
        query = (c.get("params") or {}).get("query")
        key = c["workload"] + (f" {query}" if query else "")
        out[(key, c["path"])] = c
    return out


def kept_spread(c):
    """Largest kept repeat over the case's median, and how many repeats were marked."""
    med = c["metrics"]["median_s"]
    reps = c.get("repeats") or []
    kept = [r["total"] for r in reps if not (r.get("throttled") or r.get("host_stalled"))]
    return (max(kept) / med if kept and med > 0 else float("nan")), len(reps) - len(kept)


def verdict(ok, text):
    print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return ok


def main():
    out, gpus = sys.argv[1], int(sys.argv[2])
    ok = True
    for label in sorted(glob.glob(f"{out}/scaling-*.json")):
        name = os.path.basename(label)[len("scaling-"):-len(".json")]
        if name.startswith("startup"):
            continue
        cs = cases(label)
        n = gpus if "-all" in name else 2
        for (key, path), c in sorted(cs.items()):
            if c.get("status") != "ok":
                ok &= verdict(False, f"{name} {key} {path}: {c.get('status')}")
                continue
            spread, marked = kept_spread(c)
            ok &= verdict(spread <= 1.5, f"{name} {key} {path}: worst kept repeat {spread:.2f}x "
                          f"the median ({marked} marked)")
            if path != "multi-gpu" or (key, "single-gpu") not in cs:
                continue
            single = cs[(key, "single-gpu")]["metrics"]["median_s"]
            multi = c["metrics"]["median_s"]
            ratio = single / multi
            if name.startswith("seed"):
                ok &= verdict(multi <= single, f"{name} {key}: multi-gpu {multi * 1e3:.3f} ms on "
                              f"{c.get('workers')} of {n} GPUs, single-gpu {single * 1e3:.3f} ms")
            else:
                want = SPEEDUP.get(n, {}).get(key.split()[0])
                text = f"{name} {key}: {single * 1e3:.2f} -> {multi * 1e3:.2f} ms, {ratio:.2f}x"
                ok &= verdict(want is None or ratio >= want, text + (f" (>= {want}x)" if want else ""))
    totals = []
    for path in sorted(glob.glob(f"{out}/scaling-startup-*.json")):
        totals.append(json.load(open(path)).get("startup", {}).get("total_s", float("nan")))
    if totals:
        text = "start-up " + ", ".join(f"{t:.2f}" for t in totals) + f" s with {gpus} GPU workers"
        ok &= verdict(gpus != 4 or max(totals) <= 1.0, text + (" (<= 1.0 s)" if gpus == 4 else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
