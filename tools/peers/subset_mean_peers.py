#!/usr/bin/env python3
"""Peer timings for subset-mean on one GPU: the chunk loops that PyTorch and CuPy users (and
Dask + CuPy underneath) run, at the seed preset by default (n = 10^5, chunk = 10^4: 10^10 fp64
draws in 100 chunks of 10^4 x 10^4).

Each peer draws every chunk (fp64 normals, written to GPU memory as those libraries do) and
reduces the [::2, ::2] subset of (x + 1) on the GPU; the per-chunk sums are added on the GPU.
Timed warm (one untimed run first), median of --repeats runs, with CUDA synchronisation
around each run.

    python3 tools/peers/subset_mean_peers.py [--n 100000] [--chunk 10000] [--repeats 5]
"""

import argparse
import statistics
import sys
import time


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


def torch_peers(n, chunk, repeats):
    import torch

    dev = torch.device("cuda")
    nb = (n + chunk - 1) // chunk
    gen = torch.Generator(device=dev)
    gen.manual_seed(42)

    def chunk_loop():
        acc = torch.zeros((), dtype=torch.float64, device=dev)
        for _ in range(nb * nb):
            x = torch.randn(chunk, chunk, dtype=torch.float64, device=dev, generator=gen)
            acc += x[::2, ::2].mean()
        return acc

    def chunk_loop_dask_like():  # (10 + z + 1)[::2, ::2] as the Dask expression builds it
        acc = torch.zeros((), dtype=torch.float64, device=dev)
        for _ in range(nb * nb):
            x = torch.randn(chunk, chunk, dtype=torch.float64, device=dev, generator=gen)
            x = x * 1.0 + 10.0
            acc += (x + 1)[::2, ::2].sum()
        return acc

    sync = torch.cuda.synchronize
    yield "torch chunk loop (randn + [::2,::2].mean)", timed(chunk_loop, sync, repeats)
    yield "torch chunk loop, dask-like ((x+1)[::2,::2])", timed(chunk_loop_dask_like, sync, repeats)


def cupy_peers(n, chunk, repeats):
    import cupy as cp

    nb = (n + chunk - 1) // chunk
    rs = cp.random.RandomState(42)

    def chunk_loop():  # what Dask + CuPy runs per chunk
        acc = cp.zeros((), dtype=cp.float64)
        for _ in range(nb * nb):
            x = rs.normal(10.0, 1.0, size=(chunk, chunk), dtype=cp.float64)
            acc += (x + 1)[::2, ::2].sum()
        return acc

    sync = cp.cuda.Device().synchronize
    yield "cupy chunk loop (normal + (x+1)[::2,::2].sum)", timed(chunk_loop, sync, repeats)

    try:
        from cupy.cuda import curand
    except ImportError:
        return
    gen = curand.createGenerator(curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
    curand.setPseudoRandomGeneratorSeed(gen, 42)
    buf = cp.empty((chunk, chunk), dtype=cp.float64)

    def curand_host():  # cuRAND host API into one buffer, then a reduction kernel
        acc = cp.zeros((), dtype=cp.float64)
        for _ in range(nb * nb):
            curand.generateNormalDouble(gen, buf.data.ptr, buf.size, 10.0, 1.0)
            acc += buf[::2, ::2].sum()
        return acc

    yield "cuRAND host API (Philox) + cupy reduce", timed(curand_host, sync, repeats)

    def curand_only():  # breakdown: generation alone
        for _ in range(nb * nb):
            curand.generateNormalDouble(gen, buf.data.ptr, buf.size, 10.0, 1.0)

    def reduce_only():  # breakdown: the strided subset reduction alone
        acc = cp.zeros((), dtype=cp.float64)
        for _ in range(nb * nb):
            acc += buf[::2, ::2].sum()
        return acc

    yield "  breakdown: cuRAND generate only", timed(curand_only, sync, repeats)
    yield "  breakdown: cupy [::2,::2].sum only", timed(reduce_only, sync, repeats)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--chunk", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    draws = float(args.n) * args.n
    rows = []
    for peers in (torch_peers, cupy_peers):
        try:
            for name, (med, best) in peers(args.n, args.chunk, args.repeats):
                rows.append((name, med, best))
                print(f"# {name}: median {med * 1e3:.1f} ms", file=sys.stderr, flush=True)
        except Exception as exc:  # a peer that is not installed or fails is reported, not fatal
            rows.append((f"{peers.__name__}: {type(exc).__name__}: {exc}", None, None))
    print(f"subset-mean peers, n={args.n}, chunk={args.chunk}, {draws:.3g} draws, "
          f"median of {args.repeats} warm runs")
    print(f"{'peer':<50} {'median ms':>10} {'min ms':>9} {'Gdraws/s':>9} {'GB/s eq':>8}")
    for name, med, best in rows:
        if med is None:
            print(f"{name:<50} {'-':>10}")
            continue
        print(f"{name:<50} {med * 1e3:>10.1f} {best * 1e3:>9.1f} {draws / med / 1e9:>9.2f} "
              f"{8 * draws / med / 1e9:>8.1f}")


if __name__ == "__main__":
    main()
