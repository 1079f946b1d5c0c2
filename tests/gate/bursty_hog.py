#!/usr/bin/env python3
"""A bursty CPU hog: another job sharing the machine, as on a shared CI runner.

usage: bursty_hog.py DUTY BURST_MIN_S BURST_MAX_S LIFETIME_S [SEED]
       bursty_hog.py --every GAP_MIN_S GAP_MAX_S BURST_MIN_S BURST_MAX_S LIFETIME_S [SEED]

Burns one core in bursts of BURST_MIN_S..BURST_MAX_S seconds (uniform), idle between them so
that it is busy a fraction DUTY of the time; or, with --every, a burst every GAP_MIN_S..GAP_MAX_S
seconds (uniform, from one burst's start to the next). Exits by itself after LIFETIME_S (the test
also ends it when it is done).
"""
import random
import sys
import time


def burn(seconds):
    stop = time.monotonic() + seconds
    x = 0
    while time.monotonic() < stop:
        for _ in range(2000):
            x += 1


def main():
    args = sys.argv[1:]
    every = bool(args) and args[0] == "--every"
    if every:
        args = args[1:]
        if len(args) not in (5, 6):
            sys.exit(__doc__)
        gap_lo, gap_hi, lo, hi, lifetime = (float(a) for a in args[:5])
    else:
        if len(args) not in (4, 5):
            sys.exit(__doc__)
        duty, lo, hi, lifetime = (float(a) for a in args[:4])
    rng = random.Random(int(args[-1]) if len(args) == (6 if every else 5) else 1)
    end = time.monotonic() + lifetime
    while time.monotonic() < end:
        start = time.monotonic()
        burst = rng.uniform(lo, hi)
        burn(burst)
        if every:
            time.sleep(max(0.0, start + rng.uniform(gap_lo, gap_hi) - time.monotonic()))
        else:
            time.sleep(burst * (1.0 - duty) / duty)


if __name__ == "__main__":
    main()
