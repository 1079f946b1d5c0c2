#!/usr/bin/env python3
"""The verdicts of `tools/gpu-campaign.sh scaling`: more GPUs never slower, and the large cases'
speedups, from the JSON reports it leaves in OUT (`scalebench report --format json`).

  scaling_verdicts.py OUT GPUS

  scaling-seed-all-{a,b}.json, scaling-seed-2-{a,b}.json   seed, gpu1,gpuN (every GPU / two)
  scaling-large-all-{a,b}.json, scaling-large-2.json        large svd and by-key, gpu1,gpuN
  scaling-startup-{1,2,3}.json                              a one-repeat run on every GPU

Each line says PASS or FAIL and what it compared:
  - seed: every workload's multi-gpu median at most its single-gpu median, in every run (or
    above it by less than the two medians' 95% intervals together; noted where a fifth of a
    case's repeats were host-stalled: that median measures the host);
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
    marked = len(reps) - len(kept)
    if not kept:  # every repeat marked: the report counts them all (case_record.cpp)
        kept = [r["total"] for r in reps]
    return (max(kept) / med if kept and med > 0 else float("nan")), marked


def noise(c):
    """Half-width of the case's median's 95% interval, seconds (report: repeat_stop/spread)."""
    return (c.get("repeat_stop") or {}).get("spread", 0.0) * c["metrics"]["median_s"]


def stalled_share(c):
    """Share of the case's repeats marked host-stalled."""
    reps = c.get("repeats") or []
    return sum(1 for r in reps if r.get("host_stalled")) / len(reps) if reps else 0.0


def submit_us(c):
    """Median of the case's `submit_task_s`, microseconds: how fast its host launched a task."""
    xs = sorted(r["submit_task_s"] for r in c.get("repeats") or [] if r.get("submit_task_s"))
    return xs[len(xs) // 2] * 1e6 if xs else None


def host_speed_note(multi_case, single_case):
    """Where a multi-gpu case on one GPU (the same launches as single-gpu) and single-gpu had
    hosts that launched a task at speeds 15% or more apart (a latency-bound case such as svd
    seed follows its host's speed), both figures."""
    if multi_case.get("workers") != 1:
        return ""
    m, s = submit_us(multi_case), submit_us(single_case)
    if not m or not s or max(m, s) < 1.15 * min(m, s):
        return ""
    return f"; submits {m:.0f} against {s:.0f} us a task: the host ran at another speed"


def seed_verdict(multi_case, single_case, text):
    """Multi-gpu no slower than single-gpu: its median at most single-gpu's, or above it by less
    than the two medians' 95% intervals together (the same work on one GPU differs by noise);
    never where a fifth of either case's repeats ran on a slow host (its median measures the
    host: run again)."""
    multi, single = multi_case["metrics"]["median_s"], single_case["metrics"]["median_s"]
    text += host_speed_note(multi_case, single_case)
    slow = max(stalled_share(multi_case), stalled_share(single_case))
    if slow >= 0.2:
        note = f" (the host ran slow in {slow:.0%} of a case's repeats"
        return multi <= single, text + note + (")" if multi <= single else ": run again)")
    if multi <= single:
        return True, text
    within = multi - single <= noise(multi_case) + noise(single_case)
    return within, text + (" (within the medians' 95% intervals)" if within else "")


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
            every = marked == len(c.get("repeats") or [])
            ok &= verdict(spread <= 1.5, f"{name} {key} {path}: worst kept repeat {spread:.2f}x "
                          f"the median ({marked} marked{', all, so all kept' if every else ''})")
            if path != "multi-gpu" or (key, "single-gpu") not in cs:
                continue
            single = cs[(key, "single-gpu")]["metrics"]["median_s"]
            multi = c["metrics"]["median_s"]
            ratio = single / multi
            if name.startswith("seed"):
                text = (f"{name} {key}: multi-gpu {multi * 1e3:.3f} ms on {c.get('workers')} of "
                        f"{n} GPUs, single-gpu {single * 1e3:.3f} ms")
                ok &= verdict(*seed_verdict(c, cs[(key, "single-gpu")], text))
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
