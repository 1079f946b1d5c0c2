#!/usr/bin/env python3
"""Checks scalebench's energy per case against nvidia-smi's power readings (issue #50).

usage: energy_vs_smi.py REPORT.json SMI.csv [--tolerance 0.05] [--min-seconds 2]

REPORT.json is `scalebench report R.h5 --format json` of a run with GPU cases; SMI.csv is

    nvidia-smi --query-gpu=timestamp,pci.bus_id,power.draw,power.draw.instant \
               --format=csv,noheader,nounits -lms 100

taken over the whole run. For every GPU case record whose energy counters spanned at least
--min-seconds, the power samples of its GPU (matched by PCI bus id through /system/gpus) are
integrated (trapezoids, the samples' own time stamps) over the record's span
[t_begin_unix, t_end_unix], and compared with the counters' joules over the same span. Prints
one line per record and PASS/FAIL per record; exit 1 when one is off by more than the tolerance.
power.draw.instant is used where the driver has it (power.draw is a one-second average on recent
drivers, which lags), else power.draw.
"""
import argparse
import datetime
import json
import sys


def parse_time(text):
    """nvidia-smi's "2026/12/02 10:00:00.123" (local time) as seconds since 1970."""
    text = text.strip()
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return datetime.datetime.strptime(text, fmt).timestamp()
        except ValueError:
            pass
    return None


def number(text):
    try:
        return float(text.strip())
    except ValueError:
        return None


def norm_bus(bus):
    """"00000000:19:00.0" and "0000:19:00.0" alike: the last 12 characters, lower case."""
    return bus.strip().lower()[-12:]


def read_smi(path):
    samples = {}  # bus -> [(t, watts)]
    for line in open(path, encoding="utf-8", errors="replace"):
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 3:
            continue
        t = parse_time(cells[0])
        bus = norm_bus(cells[1])
        instant = number(cells[3]) if len(cells) > 3 else None
        watts = instant if instant is not None else number(cells[2])
        if t is None or watts is None:
            continue
        samples.setdefault(bus, []).append((t, watts))
    for v in samples.values():
        v.sort()
    return samples


def integrate(samples, t0, t1):
    """Joules of the piecewise-linear power through `samples` over [t0, t1]; None when the
    samples do not cover the interval."""
    if not samples or samples[0][0] > t0 or samples[-1][0] < t1:
        return None

    def at(t):
        for (ta, pa), (tb, pb) in zip(samples, samples[1:]):
            if ta <= t <= tb:
                return pa if tb == ta else pa + (pb - pa) * (t - ta) / (tb - ta)
        return samples[-1][1]

    points = [(t0, at(t0))] + [(t, p) for t, p in samples if t0 < t < t1] + [(t1, at(t1))]
    return sum((tb - ta) * (pa + pb) / 2 for (ta, pa), (tb, pb) in zip(points, points[1:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("smi")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--min-seconds", type=float, default=2.0)
    args = ap.parse_args()
    model = json.load(open(args.report))
    smi = read_smi(args.smi)
    buses = {}
    for g in model.get("system", {}).get("gpus", []):
        node_gpu = g.get("node_gpu", g.get("index"))
        buses[(g.get("host"), node_gpu)] = norm_bus(g.get("pci_bus_id", ""))
    checked = failed = 0
    for c in model.get("cases", []):
        e = c.get("energy") or {}
        span = e.get("span") or {}
        if c.get("device") != "gpu" or not e.get("available") or c.get("gpu") is None:
            continue
        seconds = span.get("seconds") or 0
        name = c.get("id", "?")
        if seconds < args.min_seconds:
            print(f"  skip {name}: its timed repeats spanned {seconds:.2f} s "
                  f"(< {args.min_seconds} s: too few nvidia-smi samples)")
            continue
        bus = buses.get((c.get("host"), c.get("gpu")))
        ref = integrate(smi.get(bus, []), span["t_begin_unix"], span["t_end_unix"])
        if ref is None:
            print(f"  FAIL {name}: nvidia-smi has no samples of GPU {bus} over its span")
            failed += 1
            continue
        ours = span["joules"]
        off = ours / ref - 1
        ok = abs(off) <= args.tolerance
        checked += 1
        failed += not ok
        print(f"  {'PASS' if ok else 'FAIL'} {name}: {ours:.1f} J (scalebench) against "
              f"{ref:.1f} J (nvidia-smi) over {seconds:.2f} s: {100 * off:+.1f}%")
    if checked == 0:
        print("  FAIL: no GPU case long enough to compare")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
