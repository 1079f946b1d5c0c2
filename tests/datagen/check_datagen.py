#!/usr/bin/env python3
"""Recomputes a case's answer from `scalebench datagen` output with NumPy / pandas only and
compares it with what `scalebench run` reported for the same case, and with the answer the
datagen file carries (scalebench's CPU code).

usage: check_datagen.py DATAGEN.h5 REPORT.h5

Tolerances: 1e-12 relative (svd: relative to sigma_max, as the workload's own checks), with an
absolute floor of 1e-12 times the sum of |terms| for sums and means, which may cancel to near
zero (a group's mean of uniform(-1, 1) values); group counts and keys exactly. Exit 0 when all
agree; 1 with one line per disagreement otherwise.
"""
import sys

import h5py
import numpy as np
import pandas as pd

REL = 1e-12
failures = []
checked = 0


def close(what, got, want, scale=None):
    """|got - want| <= 1e-12 * max(|want|, scale)."""
    global checked
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        failures.append(f"{what}: shape {got.shape} != {want.shape}")
        return
    ref = np.abs(want)
    if scale is not None:
        ref = np.maximum(ref, np.asarray(scale, dtype=np.float64))
    err = np.abs(got - want)
    bad = ~(err <= REL * ref)
    checked += got.size
    if bad.any():
        i = int(np.argmax(np.where(bad, err / np.maximum(ref, 1e-300), 0)))
        failures.append(f"{what}: {int(bad.sum())} of {got.size} differ, worst at {i}: "
                        f"{got.flat[i]!r} vs {want.flat[i]!r}")


def exact(what, got, want):
    global checked
    got = np.asarray(got)
    want = np.asarray(want)
    checked += want.size
    if got.dtype.kind in "iuf" and want.dtype.kind in "iuf":
        got, want = got.astype(np.int64), want.astype(np.int64)
    if got.shape != want.shape or not np.array_equal(got, want):
        failures.append(f"{what}: differ ({got[:5]} ... vs {want[:5]} ...)")


def text(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def report_case(report, case_id):
    for name, g in report["cases"].items():
        if g.attrs["id"] == case_id:
            if g.attrs["status"] != "ok":
                failures.append(f"{case_id}: status {g.attrs['status']} in the report")
            return g
    sys.exit(f"case {case_id} not in the report")


def check_subset_mean(d, report):
    x = d["x"][()]
    answer = (x + 1)[::2, ::2].mean()
    full_mean = x.mean()
    res = report_case(report, text(d["case_ids"][()])[0])["result"].attrs
    close("subset-mean answer vs report", answer, res["answer"])
    close("subset-mean full_mean vs report", full_mean, res["full_mean"])
    exact("subset-mean count vs report", (x.shape[0] // 2) ** 2, res["count"])
    a = d["answer"].attrs
    close("subset-mean answer vs datagen answer", answer, a["answer"])
    close("subset-mean full_mean vs datagen answer", full_mean, a["full_mean"])
    print(f"subset-mean: numpy {answer!r} report {res['answer']!r} datagen {a['answer']!r}")


def check_svd(d, report):
    s = np.linalg.svd(d["A"][()], compute_uv=False)
    res = report_case(report, text(d["case_ids"][()])[0])["result"].attrs
    close("svd sigma_max vs report", s[0], res["sigma_max"])
    close("svd sigma_min vs report", s[-1], res["sigma_min"], scale=s[0])
    close("svd singular values vs datagen answer", s, d["answer"]["singular_values"][()],
          scale=s[0])
    print(f"svd: numpy sigma {s[0]!r}..{s[-1]!r} report {res['sigma_max']!r}..{res['sigma_min']!r}")


def groupby_frame(d):
    t = d["table"]
    names = text(t["name_dictionary"][()])
    df = pd.DataFrame({
        "timestamp": pd.to_datetime(t["timestamp"][()], unit="ns"),
        "id": t["id"][()],
        "name": pd.Categorical.from_codes(t["name"][()], categories=names),
        "x": t["x"][()],
        "y": t["y"][()],
        "key": t["key"][()],
    })
    exact("groupby first timestamp is 2000-01-01", df["timestamp"].iloc[0].value,
          pd.Timestamp("2000-01-01").value)
    return df


def groupby_query(df, by):
    g = df.groupby(by, observed=True, sort=True)
    out = g.agg(mean_x=("x", "mean"), sum_y=("y", "sum"), count=("x", "size"),
                min_x=("x", "min"), max_x=("x", "max"))
    # Floors for sums / means that cancel: the sum of |terms| per group.
    out["abs_x"] = df.assign(ax=df["x"].abs()).groupby(by, observed=True, sort=True)["ax"].sum()
    out["abs_y"] = df.assign(ay=df["y"].abs()).groupby(by, observed=True, sort=True)["ay"].sum()
    return out


def check_table(what, got_group, want, key, key_values, columns):
    exact(f"{what} keys", key_values, want.index.to_numpy())
    for col in columns:
        if col not in got_group:
            failures.append(f"{what}: column {col} missing")
            continue
        got = got_group[col][()]
        if col == "count":
            exact(f"{what} {col}", got, want[col])
        elif col in ("mean_x",):
            close(f"{what} {col}", got, want[col], scale=want["abs_x"] / want["count"])
        elif col == "sum_y":
            close(f"{what} {col}", got, want[col], scale=want["abs_y"])
        else:
            close(f"{what} {col}", got, want[col])


def check_groupby(d, report):
    df = groupby_frame(d)
    answer = d["answer"] if "answer" in d else {}
    for case_id in text(d["case_ids"][()]):
        case = report_case(report, case_id)
        query = case["params"].attrs["query"]
        res = case["result"]
        if query == "by-name":
            want = groupby_query(df, "name")
            want.index = pd.Index(want.index.astype(str), name="name")
            want = want.sort_index()  # the 26 names sort as their codes do
            cols = ["mean_x"]
            check_table("by-name vs report", res["table"], want, "name",
                        text(res["table"]["name"][()]), cols)
            if "by-name" in answer:
                check_table("by-name vs datagen answer", answer["by-name"], want, "name",
                            text(answer["by-name"]["name"][()]), cols)
        elif query == "by-id":
            want = groupby_query(df, "id")
            cols = ["mean_x", "sum_y", "count"]
            check_table("by-id vs report", res["table"], want, "id", res["table"]["id"][()], cols)
            if "by-id" in answer:
                check_table("by-id vs datagen answer", answer["by-id"], want, "id",
                            answer["by-id"]["id"][()], cols)
        elif query == "by-key":
            want = groupby_query(df, "key")
            a = res.attrs
            exact("by-key groups vs report", len(want), a["groups"])
            exact("by-key sum_count vs report", want["count"].sum(), a["sum_count"])
            close("by-key sum_x vs report", df["x"].sum(), a["sum_x"], scale=df["x"].abs().sum())
            close("by-key sum_y vs report", df["y"].sum(), a["sum_y"], scale=df["y"].abs().sum())
            close("by-key sum_min_x vs report", want["min_x"].sum(), a["sum_min_x"],
                  scale=want["min_x"].abs().sum())
            close("by-key sum_max_x vs report", want["max_x"].sum(), a["sum_max_x"],
                  scale=want["max_x"].abs().sum())
            if "by-key" in answer:
                check_table("by-key vs datagen answer", answer["by-key"], want, "key",
                            answer["by-key"]["key"][()],
                            ["mean_x", "sum_y", "count", "min_x", "max_x"])
            else:
                failures.append("by-key: the datagen file has no answer at the tiny preset")
        else:
            failures.append(f"{case_id}: unknown query {query}")
        print(f"groupby {query}: {case_id} checked")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with h5py.File(sys.argv[1], "r") as d, h5py.File(sys.argv[2], "r") as report:
        if d.attrs["format"] != "scalebench-datagen":
            sys.exit(f"{sys.argv[1]} is not a scalebench datagen file")
        workload = d.attrs["workload"]
        {"subset-mean": check_subset_mean, "svd": check_svd, "groupby": check_groupby}[workload](
            d, report)
    for f in failures:
        print("FAIL:", f)
    print(f"{workload}: {checked} values compared, {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
