"""Reads the routines of every svd case of a scalebench report with h5py only.

Usage: python3 read_svd_routines.py REPORT.h5 -> JSON on stdout:
  {"<case group>": {"result": {"local_routine": ..., "svd_routine": ...},
                    "results": [{"local_routine": ..., "svd_routine": ...}, ...]}, ...}
Exit code 77 when h5py is missing (the test then skips this part).
"""
import json
import sys

try:
    import h5py
except ImportError as e:  # pragma: no cover
    print(f"missing python module: {e}", file=sys.stderr)
    sys.exit(77)


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


KEYS = ("local_routine", "svd_routine")
out = {}
with h5py.File(sys.argv[1], "r") as f:
    for name, case in f["cases"].items():
        if text(case.attrs["workload"]) != "svd":
            continue
        result = {k: text(case["result"].attrs[k]) for k in KEYS}
        table = case["results"][()]  # compound dataset: one row per repeat
        rows = [{k: text(row[k]) for k in KEYS} for row in table]
        out[name] = {"result": result, "results": rows}
print(json.dumps(out))
