#!/usr/bin/env python3
"""docs/performance.md stays a reference a newcomer can read (docs/testing.md, "The docs are tests").

  performance_page.py SOURCE_DIR

Fails, one line per problem, when the page is over 400 lines or has a line over 400 characters;
when it or a code comment cites a run id (R12, R84: a figure names its commit and date instead);
when a "What we tried" section is over ten lines; or when a row of a figures table (a table with
`cmd`, `commit` and `date` columns) lacks a figure, a command the page defines, a commit or a date.
"""
import pathlib
import re
import subprocess
import sys

MAX_LINES = 400
MAX_WIDTH = 400
MAX_TRIED = 10
RUN_ID = re.compile(r"\bR[0-9]{1,3}\b")
COMMIT = re.compile(r"^(not recorded|[0-9a-f]{7}( \(tree\))?)(, [0-9a-f]{7}( \(tree\))?)*$")
DATE = re.compile(r"^20[0-9]{2}-[01][0-9]-[0-3][0-9]$")
CODE = ("*.cpp", "*.hpp", "*.cu", "*.cuh", "*.h")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def page_problems(text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    if len(lines) > MAX_LINES:
        out.append(f"{len(lines)} lines: at most {MAX_LINES} (history belongs in git)")
    for n, line in enumerate(lines, 1):
        if len(line) > MAX_WIDTH:
            out.append(f"line {n}: {len(line)} characters, at most {MAX_WIDTH}")
        if RUN_ID.search(line):
            out.append(f"line {n}: a run id ({RUN_ID.search(line).group(0)}): name the commit and "
                       "date instead")
    # "What we tried" sections: their lines up to the next heading, blank lines aside.
    for n, line in enumerate(lines):
        if line.startswith("#") and "what we tried" in line.lower():
            body = []
            for later in lines[n + 1:]:
                if later.startswith("#"):
                    break
                if later.strip():
                    body.append(later)
            if len(body) > MAX_TRIED:
                out.append(f"line {n + 1}: '{line.lstrip('# ')}' has {len(body)} lines, at most "
                           f"{MAX_TRIED}")
    # The commands the `cmd` column may name: the Commands table's keys, `campaign MODE`, and
    # the page's own words for its blocks.
    known = {"cpu", "bench"}
    for line in lines:
        c = cells(line) if line.startswith("|") else []
        if len(c) == 2 and c[1].startswith("`") and re.fullmatch(r"[a-z0-9-]+", c[0]):
            known.add(c[0])
    header = None
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            header = None
            continue
        c = cells(line)
        if header is None:
            header = c
            continue
        if set(c) <= {"---", ""} or not {"cmd", "commit", "date"} <= set(header):
            continue
        row = dict(zip(header, c))
        if len(c) != len(header):
            out.append(f"line {n}: {len(c)} cells under a header of {len(header)}")
            continue
        figure = row.get("median", row.get("value", row.get("start-up", "x")))
        if not figure:
            out.append(f"line {n}: no figure")
        for cmd in row["cmd"].split(", "):
            name = cmd.split(" ")[0] if cmd.startswith("campaign ") else cmd
            if name != "campaign" and name not in known:
                out.append(f"line {n}: command '{cmd}' is not in the Commands table")
        if not COMMIT.match(row["commit"]):
            out.append(f"line {n}: commit '{row['commit']}' is not a commit")
        if not DATE.match(row["date"]):
            out.append(f"line {n}: date '{row['date']}' is not YYYY-MM-DD")
    return out


def comment_problems(source):
    """Code comments citing run ids (the hook's rule)."""
    files = subprocess.run(["git", "-C", str(source), "ls-files", "--", *CODE],
                           capture_output=True, text=True, check=False).stdout.split()
    out = []
    for f in files:
        path = source / f
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(errors="replace").split("\n"), 1):
            if re.search(r"(//|/\*|\*|#).*\bR[0-9]{2,3}\b", line):
                out.append(f"{f}:{n}: a run id in a comment: a comment says why")
    return out


def self_test():
    good = "\n".join([
        "| cmd | command |", "|---|---|", "| seed | `scalebench run` |", "",
        "| case | median | cmd | commit | date |", "|---|---|---|---|---|",
        "| a | 1 ms | seed | 62837f9 | 2026-11-26 |",
        "| b | 2 ms | campaign scaling | 9080d14 (tree) | 2026-11-27 |", "",
        "### What we tried (x)", "", "- one", ""])
    assert page_problems(good) == [], page_problems(good)
    bad = good.replace("| seed | 6", "| gone | 6").replace("62837f9", "R32")
    bad += "\n### What we tried (y)\n" + "- a\n" * 11
    found = page_problems(bad)
    assert any("run id" in p for p in found), found
    assert any("'gone'" in p for p in found), found
    assert any("not a commit" in p for p in found), found
    assert any("has 11 lines" in p for p in found), found
    assert any("lines: at most" in p for p in page_problems("x\n" * 401)), "length"
    print("self-test: the checks find what they look for")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) != 2:
        print(__doc__)
        return 2
    source = pathlib.Path(argv[1])
    problems = [f"docs/performance.md: {p}"
                for p in page_problems((source / "docs/performance.md").read_text())]
    problems += comment_problems(source)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("docs/performance.md: a reference (figures with command, commit and date); "
          "no run ids in code comments")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
