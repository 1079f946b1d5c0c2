#!/usr/bin/env python3
"""Peer timings for the groupby workload (docs/specification.md §4.3, §10) on the very columns
scalebench generates: PyTorch (unique + index_add, on the GPU when there is one), pandas (CPU) and,
with --dask, Dask's own timeseries groupby (the seed experiment).

The columns are made here with numpy from the mapping documented in
workloads/groupby/table.hpp (Philox4x32-10, counter = row, one stream per column group,
Poisson(1000) by inversion of the same deterministic table), so every peer aggregates the
same numbers as every scalebench path; --check prints the by-name means and checksums to
compare with a scalebench report. Generation is not timed; each peer is timed warm (one
untimed run first), median and min of --repeats runs, GPU work synchronised.

    python3 tools/peers/groupby_peers.py [--rows 2592000] [--cardinality 10000000]
        [--queries by-name,by-id,by-key] [--repeats 5] [--no-torch] [--no-pandas] [--dask]
"""

import argparse
import math
import statistics
import sys
import time

import numpy as np

NAMES = ["Alice", "Bob", "Charlie", "Dan", "Edith", "Frank", "George", "Hannah", "Ingrid",
         "Jerry", "Kevin", "Laura", "Michael", "Norbert", "Oliver", "Patricia", "Quinn", "Ray",
         "Sarah", "Tim", "Ursula", "Victor", "Wendy", "Xavier", "Yvonne", "Zelda"]
STREAM_X_NAME = 0x67620001
STREAM_Y_KEY = 0x67620002
M32 = np.uint64(0xFFFFFFFF)


def philox(rows, stream, seed):
    """Philox4x32-10 words of counters {lo32(r), hi32(r), stream, 0} for an array of rows."""
    c0 = rows & M32
    c1 = rows >> np.uint64(32)
    c2 = np.full_like(rows, stream)
    c3 = np.zeros_like(rows)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0)
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1)
        c1 = p1 & M32
        c3 = p0 & M32
        c0, c2 = n0, n2
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def centered(hi, lo):
    k = (hi << np.uint64(21)) | (lo >> np.uint64(11))
    u = np.minimum(k.astype(np.float64) * 2.0**-53 + 2.0**-54, 1.0 - 2.0**-53)  # u01's clamp
    return 2.0 * u - 1.0


def mul_hi64(u, card):
    uh, ul = u >> np.uint64(32), u & M32
    ch, cl = np.uint64(card >> 32), np.uint64(card & 0xFFFFFFFF)
    a, b, c, d = uh * cl, ul * ch, ul * cl, uh * ch
    mid = (c >> np.uint64(32)) + (a & M32) + (b & M32)
    return d + (a >> np.uint64(32)) + (b >> np.uint64(32)) + (mid >> np.uint64(32))


def poisson_table(lam=1000.0):
    """workloads/groupby/poisson.cpp, step for step (IEEE operations in the same order)."""
    mode = int(lam)
    half = int(math.ceil(15.0 * math.sqrt(lam))) + 20
    k0 = mode - half if mode > half else 0
    k1 = mode + half
    w = [0.0] * (k1 - k0 + 1)
    w[mode - k0] = 1.0
    for k in range(mode, k1):
        w[k - k0 + 1] = w[k - k0] * lam / float(k + 1)
    for k in range(mode, k0, -1):
        w[k - k0 - 1] = w[k - k0] * float(k) / lam
    total = 0.0
    for v in w:
        total += v
    t, cum, last = [0] * len(w), 0.0, len(w) - 1
    for i, v in enumerate(w):
        cum += v
        c = cum / total
        if c >= 1.0:
            last = i
            break
        t[i] = int(math.ldexp(c, 64))
    t[last] = 2**64 - 1
    first = 0
    while first < last and t[first] == 0:
        first += 1
    return k0 + first, np.array(t[first:last + 1], dtype=np.uint64)


def generate(rows, cardinality, seed, columns, chunk=10_000_000):
    out = {c: [] for c in columns}
    kmin, thresholds = poisson_table()
    for r0 in range(0, rows, chunk):
        r = np.arange(r0, min(rows, r0 + chunk), dtype=np.uint64)
        if {"x", "name", "id"} & set(columns):
            a = philox(r, STREAM_X_NAME, seed)
            if "x" in columns:
                out["x"].append(centered(a[0], a[1]))
            if "name" in columns:
                out["name"].append(((a[2] * np.uint64(26)) >> np.uint64(32)).astype(np.int32))
            if "id" in columns:
                u = (a[3] << np.uint64(32)) | np.uint64(0x80000000)
                j = np.minimum(np.searchsorted(thresholds, u, side="right"), len(thresholds) - 1)
                out["id"].append(kmin + j.astype(np.int64))
        if {"y", "key"} & set(columns):
            b = philox(r, STREAM_Y_KEY, seed)
            if "y" in columns:
                out["y"].append(centered(b[0], b[1]))
            if "key" in columns:
                u = (b[2] << np.uint64(32)) | b[3]
                out["key"].append(mul_hi64(u, cardinality).astype(np.int64))
    return {c: np.concatenate(v) for c, v in out.items()}


QUERY_COLUMNS = {"by-name": ["name", "x"], "by-id": ["id", "x", "y"], "by-key": ["key", "x", "y"]}
KEY = {"by-name": "name", "by-id": "id", "by-key": "key"}


def timed(fn, sync, repeats):
    fn()
    sync()
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def torch_peer(query, cols, repeats):
    import torch

    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    key = torch.from_numpy(cols[KEY[query]]).to(dev)
    x = torch.from_numpy(cols["x"]).to(dev)
    y = torch.from_numpy(cols["y"]).to(dev) if "y" in cols else None

    def run():
        uniq, inv = torch.unique(key, return_inverse=True)
        g = uniq.numel()
        count = torch.zeros(g, dtype=torch.float64, device=dev).index_add_(
            0, inv, torch.ones_like(x))
        mean_x = torch.zeros(g, dtype=torch.float64, device=dev).index_add_(0, inv, x) / count
        res = [mean_x]
        if query != "by-name":
            res.append(torch.zeros(g, dtype=torch.float64, device=dev).index_add_(0, inv, y))
            res.append(count)
        if query == "by-key":
            res.append(torch.empty(g, dtype=torch.float64, device=dev).scatter_reduce_(
                0, inv, x, reduce="amin", include_self=False))
            res.append(torch.empty(g, dtype=torch.float64, device=dev).scatter_reduce_(
                0, inv, x, reduce="amax", include_self=False))
        return res

    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    return f"torch unique+index_add ({dev.type})", timed(run, sync, repeats)


def pandas_peer(query, cols, repeats):
    import pandas as pd

    df = pd.DataFrame(cols)
    if query == "by-name":
        df["name"] = pd.Categorical.from_codes(df["name"], categories=NAMES)
        run = lambda: df.groupby("name", observed=True).x.mean()  # noqa: E731
    elif query == "by-id":
        run = lambda: df.groupby("id").agg(mean_x=("x", "mean"), sum_y=("y", "sum"),  # noqa
                                           count=("x", "count"))
    else:
        run = lambda: df.groupby("key").agg(mean_x=("x", "mean"), sum_y=("y", "sum"),  # noqa
                                            count=("x", "count"), min_x=("x", "min"),
                                            max_x=("x", "max"))
    return f"pandas {pd.__version__} groupby (CPU)", timed(run, lambda: None, repeats)


def dask_peer(repeats):
    import dask
    import dask.datasets

    def run():
        df = dask.datasets.timeseries(start="2000-01-01", end="2000-01-31", freq="1s",
                                      partition_freq="1d")
        return df.groupby("name").x.mean().compute()

    return (f"dask {dask.__version__} timeseries groupby('name').x.mean() (generation included)",
            timed(run, lambda: None, repeats))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=float, default=30 * 86400)
    ap.add_argument("--cardinality", type=float, default=1e7)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--queries", default="by-name,by-id,by-key")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-pandas", action="store_true")
    ap.add_argument("--dask", action="store_true", help="also time Dask's seed experiment")
    ap.add_argument("--check", action="store_true", help="print by-name means and checksums")
    args = ap.parse_args()
    rows, card = int(args.rows), int(args.cardinality)

    table = []
    for query in args.queries.split(","):
        t0 = time.perf_counter()
        cols = generate(rows, card, args.seed, QUERY_COLUMNS[query])
        print(f"# {query}: generated {rows} rows with numpy in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
        if args.check:
            print(f"# {query}: sum x = {cols['x'].sum():.12e}", file=sys.stderr)
            if query == "by-name":
                means = np.bincount(cols["name"], weights=cols["x"]) / np.bincount(cols["name"])
                for n, m in zip(NAMES, means):
                    print(f"#   {n:9s} {m:+.15f}", file=sys.stderr)
        peers = []
        if not args.no_torch:
            peers.append(torch_peer)
        if not args.no_pandas:
            peers.append(pandas_peer)
        for peer in peers:
            try:
                name, (med, best) = peer(query, cols, args.repeats)
            except ImportError as e:
                print(f"# skipped: {e}", file=sys.stderr)
                continue
            table.append((query, name, rows, med, best))
        del cols
    if args.dask:
        name, (med, best) = dask_peer(args.repeats)
        table.append(("by-name", name, 30 * 86400, med, best))

    print(f"{'query':8s} {'peer':72s} {'rows':>11s} {'median s':>10s} {'min s':>10s} "
          f"{'rows/s':>10s}")
    for query, name, n, med, best in table:
        print(f"{query:8s} {name:72s} {n:11d} {med:10.4f} {best:10.4f} {n / med:10.3e}")


if __name__ == "__main__":
    main()
