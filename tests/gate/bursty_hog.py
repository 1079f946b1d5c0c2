#!/usr/bin/env python3
"""A bursty CPU hog: another job sharing the machine, as on a shared CI runner.

usage: bursty_hog.py DUTY BURST_MIN_S BURST_MAX_S LIFETIME_S [SEED]

Burns one core in bursts of BURST_MIN_S..BURST_MAX_S seconds (uniform), idle between them so
that it is busy a fraction DUTY of the time; exits by itself after LIFETIME_S (the test also
ends it when it is done).
"""
import random
import sys
import time


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    duty, lo, hi, lifetime = (float(a) for a in sys.argv[1:5])
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) == 6 else 1)
    end = time.monotonic() + lifetime
    while time.monotonic() < end:
        burst = rng.uniform(lo, hi)
        stop = time.monotonic() + burst
        x = 0
        while time.monotonic() < stop:
            for _ in range(2000):
                x += 1
        time.sleep(burst * (1.0 - duty) / duty)


if __name__ == "__main__":
    main()
