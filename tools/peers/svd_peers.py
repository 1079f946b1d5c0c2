#!/usr/bin/env python3
"""Peer timings for the svd workload (docs/specification.md §4.2 and §10): thin SVD of a
tall-skinny uniform(0,1) float64 matrix, U kept, as the peers' users write it.

GPU peers (one device, warm, data already on the device, CUDA synchronisation around each run):
  torch.linalg.svd(A, full_matrices=False)
  torch QR + SVD(R): Q, R = torch.linalg.qr(A); Ur, S, Vh = torch.linalg.svd(R); U = Q @ Ur
  torch TSQR: the QR + SVD(R) above by row blocks (a QR of each block, a QR of their
    stacked R factors, the SVD of its R, U back through both Q factors), what a torch user
    writes once cuSOLVER's 32-bit workspace refuses the whole matrix (2e6 x 1000 already)
  cupy.linalg.svd(A, full_matrices=False)
CPU peer (--dask): dask.array.linalg.svd (tsqr) on da.random.random((m, n), chunks=(chunk, n))
with the single-threaded scheduler, input persisted first (what docs/specification.md §10
compares the CPU paths with); NumPy's BLAS threads are whatever the environment gives
(OPENBLAS_NUM_THREADS).

    python3 tools/peers/svd_peers.py [--sizes 10000x1000,1000000x1000] [--repeats 5] [--dask]

Prints one table: peer, size, median and min milliseconds, GFLOP/s at the 6mn^2 count of
docs/specification.md §4.2.
Peers whose library is missing are listed as skipped.
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


def attempt(fn, sync, repeats):
    """timed(), or the library's error (one peer's row says failed, the others still run)."""
    try:
        return timed(fn, sync, repeats)
    except RuntimeError as e:
        return e


def torch_peers(m, n, chunk, repeats):
    import torch

    if not torch.cuda.is_available():
        raise ImportError("torch without CUDA")
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(42)
    a = torch.rand(m, n, dtype=torch.float64, device=dev, generator=gen)
    sync = torch.cuda.synchronize

    def svd():
        return torch.linalg.svd(a, full_matrices=False)

    def qr_svd():
        q, r = torch.linalg.qr(a)
        ur, s, vh = torch.linalg.svd(r)
        return q @ ur, s, vh

    k = max(1, m // chunk)

    def tsqr_svd():
        # one QR a block: cuSOLVER's batched workspace overflows as the whole matrix's does
        qr = [torch.linalg.qr(a[i * chunk:(i + 1) * chunk]) for i in range(k)]
        q2, r2 = torch.linalg.qr(torch.cat([r for _, r in qr]))
        ur, s, vh = torch.linalg.svd(r2)
        w = q2.view(k, n, n) @ ur
        return torch.cat([q @ w[i] for i, (q, _) in enumerate(qr)]), s, vh

    # cuSOLVER refuses the whole matrix from about 2e9 elements on (its int workspace): a row
    # of its own, and the TSQR still runs
    yield "torch.linalg.svd", attempt(svd, sync, repeats)
    yield "torch QR + SVD(R)", attempt(qr_svd, sync, repeats)
    if m % chunk == 0 and k > 1:
        u, s, vh = tsqr_svd()  # a wrong factorisation is no peer (checked by blocks: memory)
        sv = s[:, None] * vh
        sq = sum(torch.linalg.matrix_norm(u[i * chunk:(i + 1) * chunk] @ sv
                                          - a[i * chunk:(i + 1) * chunk]).item() ** 2
                 for i in range(k))
        err = (sq ** 0.5) / torch.linalg.matrix_norm(a).item()
        if not err < 1e-10:
            raise ArithmeticError(f"TSQR residual {err:.1e}")
        del u, s, vh, sv
        yield f"torch TSQR (blocks of {chunk} rows)", timed(tsqr_svd, sync, repeats)
    del a
    torch.cuda.empty_cache()


def cupy_peers(m, n, chunk, repeats):
    import cupy as cp

    rs = cp.random.RandomState(42)
    a = rs.random_sample((m, n), dtype=cp.float64)
    sync = cp.cuda.Device().synchronize

    def svd():
        return cp.linalg.svd(a, full_matrices=False)

    yield "cupy.linalg.svd", timed(svd, sync, repeats)
    del a
    cp.get_default_memory_pool().free_all_blocks()


def dask_peers(m, n, chunk, repeats):
    import dask
    import dask.array as da

    x = da.random.random((m, n), chunks=(chunk, n)).persist(scheduler="single-threaded")

    def svd():
        u, s, v = da.linalg.svd(x)
        dask.compute(u, s, v, scheduler="single-threaded")

    yield f"dask.array.linalg.svd (tsqr, chunks={chunk})", timed(svd, lambda: None, repeats)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10000x1000,1000000x1000",
                   help="comma-separated m x n (chunk = m/10 for Dask, or 1000 at the seed size)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dask", action="store_true", help="also time Dask on the CPU")
    p.add_argument("--no-gpu", action="store_true", help="skip the GPU peers")
    args = p.parse_args()

    peers = [] if args.no_gpu else [torch_peers, cupy_peers]
    if args.dask:
        peers.append(dask_peers)
    rows = []
    for size in args.sizes.split(","):
        m, n = (int(float(v)) for v in size.lower().split("x"))
        chunk = 1000 if (m, n) == (10000, 1000) else max(n, m // 10)
        flops = 6.0 * m * n * n
        for peer in peers:
            try:
                for name, res in peer(m, n, chunk, args.repeats):
                    if isinstance(res, Exception):
                        rows.append((name, f"{m}x{n}", "failed",
                                     f"{type(res).__name__}: {res}"[:60], ""))
                        continue
                    med, best = res
                    rows.append((name, f"{m}x{n}", f"{1e3 * med:.1f}", f"{1e3 * best:.1f}",
                                 f"{flops / med * 1e-9:.1f}"))
            except ImportError as e:
                rows.append((peer.__name__.replace("_peers", ""), f"{m}x{n}", "skipped",
                             str(e)[:40], ""))
            except Exception as e:  # out of memory and the like: one line, keep going
                rows.append((peer.__name__.replace("_peers", ""), f"{m}x{n}", "failed",
                             f"{type(e).__name__}: {e}"[:60], ""))
    head = ("peer", "size", "median ms", "min ms", "GFLOP/s (6mn^2)")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
