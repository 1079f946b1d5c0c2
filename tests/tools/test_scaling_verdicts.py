#!/usr/bin/env python3
"""tools.scaling_verdicts: what tools/scaling_verdicts.py says of JSON reports (the shape of
`scalebench report --format json`) made for each of its rules: more GPUs no slower at the seed
preset (within the medians' 95% intervals; a host that ran slow or at another speed is named), no kept repeat above
1.5x its median (every repeat marked: all count, as in the report), the large speedups, the
start-up."""

import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else str(
    pathlib.Path(__file__).resolve().parents[2] / "tools" / "scaling_verdicts.py")


def case(workload, path, median_ms, totals_ms=None, workers=1, query=None, spread=0.002,
         marked=(), throttled=()):
    totals = totals_ms or [median_ms] * 5
    reps = []
    for i, t in enumerate(totals):
        r = {"total": t * 1e-3}
        if i in marked:
            r["host_stalled"] = True
        if i in throttled:
            r["throttled"] = True
        reps.append(r)
    c = {"workload": workload, "path": path, "status": "ok", "workers": workers,
         "metrics": {"median_s": median_ms * 1e-3}, "repeats": reps,
         "repeat_stop": {"spread": spread}}
    if query:
        c["params"] = {"query": query}
    return c


class ScalingVerdicts(unittest.TestCase):
    def run_on(self, reports, gpus=2):
        with tempfile.TemporaryDirectory() as d:
            for name, cases in reports.items():
                body = {"startup": {"total_s": cases}} if name.startswith("startup") else {
                    "cases": cases}
                (pathlib.Path(d) / f"scaling-{name}.json").write_text(json.dumps(body))
            p = subprocess.run([sys.executable, SCRIPT, d, str(gpus)], capture_output=True,
                               text=True)
            return p.returncode, p.stdout.splitlines()

    def line(self, lines, text):
        hits = [ln for ln in lines if text in ln]
        self.assertEqual(len(hits), 1, f"{text!r} in {lines}")
        return hits[0]

    def test_multi_gpu_faster_passes_and_slower_fails(self):
        rc, out = self.run_on({"seed-all-a": [
            case("subset-mean", "single-gpu", 24.8), case("subset-mean", "multi-gpu", 12.4, workers=2),
            case("groupby", "single-gpu", 1.20, query="by-id"),
            case("groupby", "multi-gpu", 1.40, workers=2, query="by-id")]})
        self.assertEqual(rc, 1)
        self.assertTrue(self.line(out, "seed-all-a subset-mean: multi-gpu").startswith("PASS"))
        self.assertTrue(self.line(out, "seed-all-a groupby by-id: multi-gpu").startswith("FAIL"))

    def test_one_gpu_within_noise_passes(self):
        # svd planned on one GPU: the same work as single-gpu, 0.6% apart, intervals 0.5-1.3%.
        rc, out = self.run_on({"seed-all-b": [
            case("svd", "single-gpu", 14.604, spread=0.0127),
            case("svd", "multi-gpu", 14.695, spread=0.0046)]})
        self.assertEqual(rc, 0, out)
        self.assertIn("within the medians' 95% intervals", self.line(out, "svd: multi-gpu"))

    def test_a_host_of_another_speed_is_named(self):
        single = case("svd", "single-gpu", 14.353)
        multi = case("svd", "multi-gpu", 14.954)
        for c, us in ((single, 13e-6), (multi, 18.5e-6)):
            for r in c["repeats"]:
                r["submit_task_s"] = us
        rc, out = self.run_on({"seed-all-a": [single, multi]})
        self.assertEqual(self.line(out, "svd: multi-gpu"),
                         "FAIL  seed-all-a svd: multi-gpu 14.954 ms on 1 of 2 GPUs, single-gpu "
                         "14.353 ms; submits 18 against 13 us a task: the host ran at another "
                         "speed")

    def test_a_slow_host_is_named(self):
        totals = [3.96, 2.28, 2.12, 1.95, 1.82, 1.66, 1.62, 4.82, 4.56, 4.44]
        rc, out = self.run_on({"seed-all-a": [
            case("groupby", "single-gpu", 1.396, query="by-key"),
            case("groupby", "multi-gpu", 1.661, totals, query="by-key", spread=0.65,
                 marked=(0, 7, 8, 9))]})
        self.assertEqual(rc, 1)
        text = self.line(out, "by-key: multi-gpu")
        self.assertTrue(text.startswith("FAIL"), text)
        self.assertIn("the host ran slow in 40% of a case's repeats: run again", text)

    def test_worst_kept_repeat(self):
        rc, out = self.run_on({"seed-all-a": [
            case("svd", "single-gpu", 14.6, [14.6, 14.5, 25.3, 14.7, 14.6]),
            case("svd", "multi-gpu", 14.5, [14.5, 14.4, 25.3, 14.6, 14.5], marked=(2,))]})
        self.assertTrue(self.line(out, "svd single-gpu: worst kept").startswith("FAIL"))
        self.assertIn("1.73x", self.line(out, "svd single-gpu: worst kept"))
        self.assertTrue(self.line(out, "svd multi-gpu: worst kept").startswith("PASS"))
        self.assertIn("(1 marked)", self.line(out, "svd multi-gpu: worst kept"))

    def test_every_repeat_marked_counts_them_all(self):
        # Power-capped in every repeat: the report keeps them all, and so does the verdict.
        rc, out = self.run_on({"large-all-a": [
            case("svd", "single-gpu", 245.0, [244.0, 244.4, 252.7, 247.7, 245.0],
                 throttled=range(5)),
            case("svd", "multi-gpu", 133.2, [132.2, 134.0, 132.2, 134.3, 133.2], workers=2,
                 throttled=range(5))]})
        self.assertEqual(rc, 0, out)
        self.assertIn("(5 marked, all, so all kept)", self.line(out, "svd single-gpu: worst kept"))
        self.assertIn("1.84x (>= 1.8x)", self.line(out, "large-all-a svd: 245.00"))

    def test_large_speedups_on_four_gpus(self):
        rc, out = self.run_on({"large-all-a": [
            case("groupby", "single-gpu", 8.44, query="by-key"),
            case("groupby", "multi-gpu", 3.13, workers=4, query="by-key"),
            case("svd", "single-gpu", 231.8), case("svd", "multi-gpu", 68.3, workers=4)]}, gpus=4)
        self.assertEqual(rc, 1)
        self.assertTrue(self.line(out, "by-key: 8.44 -> 3.13 ms, 2.70x (>= 3.0x)").startswith("FAIL"))
        self.assertTrue(self.line(out, "svd: 231.80 -> 68.30 ms, 3.39x (>= 3.3x)").startswith("PASS"))

    def test_start_up_on_four_gpus(self):
        rc, out = self.run_on({"startup-1": 0.92, "startup-2": 1.05}, gpus=4)
        self.assertEqual(rc, 1)
        self.assertEqual(self.line(out, "start-up"), "FAIL  start-up 0.92, 1.05 s with 4 GPU workers (<= 1.0 s)")
        rc, out = self.run_on({"startup-1": 0.45}, gpus=2)
        self.assertEqual(rc, 0)


if __name__ == "__main__":
    unittest.main()
