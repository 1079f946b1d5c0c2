"""Independent reader of a scalebench report (HDF5 schema 1) with h5py and pandas only.

Usage: python3 read_report.py REPORT.h5  -> prints what it read as JSON on stdout.
Exit code 77 when h5py or pandas is missing (the test then skips).
"""
import json
import math
import sys

try:
    import h5py
    import numpy as np
    import pandas as pd
except ImportError as e:  # pragma: no cover
    print(f"missing python module: {e}", file=sys.stderr)
    sys.exit(77)


def plain(v):
    """numpy / h5py values -> JSON-able python values."""
    if isinstance(v, h5py.Empty):
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        f = float(v)
        return None if math.isnan(f) else f
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    return v


def frame(ds):
    """A compound dataset as a DataFrame with str (not bytes) text columns."""
    df = pd.DataFrame(ds[()])
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].map(lambda x: x.decode("utf-8") if isinstance(x, bytes) else x)
    return df


out = {}
with h5py.File(sys.argv[1], "r") as f:
    out["root"] = {k: plain(v) for k, v in f.attrs.items()}
    out["root_types"] = {k: type(v).__name__ for k, v in f.attrs.items()}
    out["groups"] = sorted(f.keys())
    names = list(f["cases"].keys())
    out["cases"] = names
    c0 = f["cases"][names[0]]
    out["case0_attrs"] = {k: plain(v) for k, v in c0.attrs.items()}
    out["case0_params"] = {k: plain(v) for k, v in c0["params"].attrs.items()}
    times = frame(c0["times"])
    out["times_columns"] = list(times.columns)
    out["times_total"] = times["total"].tolist()
    out["times_units"] = plain(c0["times"].attrs["units"])
    val = frame(c0["validation"])
    out["validation"] = val.to_dict(orient="records")
    te = frame(c0["task_events"])
    out["task_events_rows"] = len(te)
    out["task_events_columns"] = list(te.columns)
    out["task_events_phases"] = sorted(set(te["phase"]))
    out["result"] = {k: plain(v) for k, v in c0["result"].attrs.items()}
    out["metrics"] = {k: plain(v) for k, v in c0["metrics"].attrs.items()}
    out["work"] = {k: plain(v) for k, v in c0["work"].attrs.items()}
    svd = f["cases"][names[4]]
    out["svd_singular_values"] = plain(svd["result"]["singular_values"][()])
    routines = ["local_routine", "svd_routine"]
    out["svd_result_routines"] = {k: plain(svd["result"].attrs[k]) for k in routines}
    out["svd_results_routines"] = frame(svd["results"])[routines].to_dict(orient="records")
    summary = frame(f["summary"])
    out["summary_columns"] = list(summary.columns)
    out["summary"] = json.loads(summary.to_json(orient="records"))
    out["nodes"] = frame(f["system/nodes"]).to_dict(orient="records")
    out["gpus"] = frame(f["system/gpus"]).to_dict(orient="records")
    out["ceilings"] = frame(f["system/ceilings"]).to_dict(orient="records")
    out["versions"] = {k: plain(v) for k, v in f["system/versions"].attrs.items()}
    out["topology"] = plain(f["system"].attrs["topology"])
    out["startup"] = {k: plain(v) for k, v in f["system/startup"].attrs.items()}
    out["custom_matrix"] = plain(f["system/custom/matrix"][()])
    out["custom_bools"] = plain(f["system/custom/bools"][()])

print(json.dumps(out, default=plain))
