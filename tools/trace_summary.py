#!/usr/bin/env python3
"""Per case of scalebench reports (JSON, `scalebench report --format json`): the median, the
runtime's own cost (the repeats' `runtime` and `messages`), the worst repeat against the median,
the telemetry sampler's longest read, and the --trace line of the worst repeat (from the .err
file beside each report). Used by tools/gpu-campaign.sh trace."""
import io
import json
import os
import statistics
import sys
import tarfile


def ms(x):
    return f"{x * 1e3:8.3f}" if isinstance(x, (int, float)) else "       -"


def reports(args):
    """(name, model, stderr lines) of each report: JSON files, or `--tgz FILE` of them."""
    if args[:1] == ["--tgz"]:
        with tarfile.open(args[1]) as t:
            files = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
        for name in sorted(n for n in files if n.endswith(".json")):
            err = files.get(name[:-5] + ".err", b"").decode(errors="replace")
            try:
                yield name, json.load(io.BytesIO(files[name])), err.splitlines()
            except ValueError as e:
                yield name, {"error": str(e)}, []
        return
    for path in args:
        err = path[:-5] + ".err"
        lines = open(err).read().splitlines() if os.path.exists(err) else []
        try:
            yield os.path.basename(path), json.load(open(path)), lines
        except (OSError, ValueError) as e:
            yield os.path.basename(path), {"error": str(e)}, []


args = sys.argv[1:]
brief = "--brief" in args
args = [a for a in args if a != "--brief"]
if brief:
    # One line per report and case, the devices of an each-gpu case together: the median of
    # their medians, the worst repeat over the median, the median runtime and messages.
    print(f"{'report':22} {'case':44} {'med ms':>8} {'worst/med':>9} {'runtime':>8} {'msgs':>7}")
    # each-gpu: the median of the devices' medians; worst/med: the worst repeat of any device
    for name, model, _ in reports(args):
        by = {}
        for c in model.get("cases", []):
            reps = [r for r in c.get("repeats", []) if isinstance(r, dict)]
            if reps:
                parts = c["id"].split("/")
                key = parts[0] + "/" + parts[1]  # workload/path
                if "query=" in c["id"]:
                    key += "/" + c["id"].split("query=")[1].split(",")[0]
                by.setdefault(key, []).append(reps)
        for case, devs in by.items():
            meds = [statistics.median(r["total"] for r in reps) for reps in devs]
            worst = max(max(r["total"] for r in reps) / m for reps, m in zip(devs, meds))
            rt = statistics.median(r.get("runtime", 0) for reps in devs for r in reps)
            mg = statistics.median(r.get("messages", 0) for reps in devs for r in reps)
            label = os.path.basename(name).removesuffix(".json").removeprefix("trace-")
            print(f"{label[:22]:22} {case[:44]:44} {statistics.median(meds) * 1e3:8.3f} "
                  f"{worst:9.2f} {rt * 1e3:8.3f} {mg * 1e3:7.3f}")
    sys.exit(0)

for name, model, lines in reports(args):
    print(f"== {name}" + (f": {model['error']}" if "error" in model else ""))
    for c in model.get("cases", []):
        reps = [r for r in c.get("repeats", []) if isinstance(r, dict)]
        if not reps:
            print(f"  {c.get('id', '?')[:70]:70} {c.get('status')}")
            continue
        tot = [r["total"] for r in reps]
        rt = [r.get("runtime", float("nan")) for r in reps]
        msg = [r.get("messages", float("nan")) for r in reps]
        med = statistics.median(tot)
        worst = max(range(len(tot)), key=lambda i: tot[i])
        read = c.get("telemetry", {}).get("read_s", {})
        rmax = " ".join(f"{k} {v.get('max', 0) * 1e3:.2f}/{v.get('mean', 0) * 1e3:.2f}x{v.get('count', 0)}"
                        for k, v in sorted(read.items()))
        cid = c["id"].replace(",seed=42", "").replace("cardinality=10000000,", "")
        name = f"{cid}" + (f" [{c.get('host', '')}:{c.get('gpu')}]" if "gpu" in c else "")
        print(f"  {name[:70]:70} med {ms(med)} runtime {ms(statistics.median(rt))} "
              f"messages {ms(statistics.median(msg))} worst {ms(tot[worst])} (#{worst}, "
              f"runtime {ms(rt[worst])}) read ms max/mean x count: {rmax}")
        if tot[worst] > 1.5 * med:
            tag = f"repeat trace {c['id']} repeat {worst}:"
            for line in lines:
                if line.startswith(tag):
                    print("     " + line[len("repeat trace "):][:700])
