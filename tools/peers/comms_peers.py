#!/usr/bin/env python3
"""Peer figures for the comms workload (docs/workloads.md): NCCL's all-reduce as PyTorch calls it
(torch.distributed, backend nccl), one process per GPU on this node, timed as nccl-tests and
scalebench time it: float32 sums out of place, one untimed call per size, then --iters calls from
a barrier to the stream's end, the time per call averaged over the ranks; algbw = S / t and
busbw = algbw * 2(n-1)/n. Compare its busbw with the `comms` multi-gpu all-reduce case of a
scalebench report made on the same GPUs in the same environment (NCCL_* variables included).

    python3 tools/peers/comms_peers.py [--gpus N] [--sizes 1M,64M,1G] [--iters 20] [--repeats 5]
"""

import argparse
import os
import socket
import statistics
import sys
import time


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def worker(rank, world, port, sizes, iters, repeats, queue):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    init = dict(backend="nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                world_size=world)
    try:  # binding the device connects NCCL eagerly (PyTorch 2.3 on)
        dist.init_process_group(**init, device_id=torch.device("cuda", rank))
    except TypeError:
        dist.init_process_group(**init)
    rows = []
    for size in sizes:
        count = size // 4
        send = torch.ones(count, dtype=torch.float32, device="cuda")
        recv = torch.empty_like(send)
        times = []
        for rep in range(repeats + 1):  # the first is a warm-up
            recv.copy_(send)
            dist.all_reduce(recv)
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(recv)
            torch.cuda.synchronize()
            t = torch.tensor([(time.perf_counter() - t0) / iters], device="cuda")
            dist.all_reduce(t)  # nccl-tests averages its ranks' times
            if rep > 0:
                times.append(t.item() / world)
        if rank == 0:
            t = statistics.median(times)
            algbw = size / t
            rows.append((size, t, algbw / 1e9, algbw * 2 * (world - 1) / world / 1e9))
    if rank == 0:
        queue.put(rows)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=0, help="GPUs (default: every visible one)")
    ap.add_argument("--sizes", default="1M,64M,1G", help="message sizes, K/M/G = x1024")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per size (median)")
    args = ap.parse_args()
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError as e:
        sys.exit(f"PyTorch is needed: {e}")
    world = args.gpus or torch.cuda.device_count()
    if world < 2:
        sys.exit("comms_peers.py needs two GPUs or more")
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(worker, args=(world, port, sizes, args.iters, args.repeats, queue), nprocs=world)
    rows = queue.get()
    print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
          f"{world} x {torch.cuda.get_device_name(0)}, "
          f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE', 'unset')}")
    print(f"{'bytes':>12} {'time_us':>10} {'algbw_GB/s':>11} {'busbw_GB/s':>11}")
    for size, t, algbw, busbw in rows:
        print(f"{size:>12} {t * 1e6:>10.1f} {algbw:>11.1f} {busbw:>11.1f}")


if __name__ == "__main__":
    main()
