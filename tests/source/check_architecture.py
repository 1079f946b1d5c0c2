#!/usr/bin/env python3
"""docs/architecture.md's map names every source file, and only files that exist.

  check_architecture.py SOURCE_DIR
  check_architecture.py --self-test

The map is the section "Where each concept lives": one part per layer (`### runtime/ ...`),
whose backticked names are paths in that layer's folder, written whole (`src/job_plan.cpp`), by
their end (`job_plan.cpp`, `batch/hostlist.hpp`), with braces (`report_{read,write}.cpp`) or
with a `*` that stands for part of one name (`dialect_*.cpp`, `file_sha256.*`). Every source
file under runtime/, workloads/, results/ and launcher/ must be named in its layer's part; a
name that matches no file is stale. Prints one line per problem and exits 1 when there is one.
"""
import fnmatch
import os
import re
import sys
import tempfile

LAYERS = ["runtime", "workloads", "results", "launcher"]
SOURCES = (".h", ".hpp", ".cuh", ".cpp", ".cu")
SECTION = "## Where each concept lives"
TICKED = re.compile(r"`([^`\s]+)`")


def expand(name):
    """`a_{x,y}.cpp` -> [a_x.cpp, a_y.cpp] (nested and repeated braces too)."""
    m = re.search(r"\{([^{}]*)\}", name)
    if not m:
        return [name]
    out = []
    for part in m.group(1).split(","):
        out += expand(name[:m.start()] + part + name[m.end():])
    return out


def layer_parts(text):
    """{layer: [names]} from the map's parts."""
    start = text.find(SECTION)
    if start < 0:
        return None
    body = text[start + len(SECTION):]
    end = re.search(r"^## ", body, re.M)
    body = body[:end.start()] if end else body
    parts = {}
    current = None
    for line in body.split("\n"):
        heading = re.match(r"^### (\w+)/", line)
        if heading:
            current = heading.group(1) if heading.group(1) in LAYERS else None
            if current:
                parts.setdefault(current, [])
            continue
        if current:
            for name in TICKED.findall(line):
                parts[current] += expand(name.strip("/"))
    return parts


def is_file_name(name):
    return "." in name.rsplit("/", 1)[-1] and not name.endswith((".md", ".toml", ".txt", ".py"))


def matches(name, path):
    """A name names a path (relative to its layer) by its whole end, with `*` inside one name."""
    if "*" in name:
        segments = name.count("/") + 1
        tail = "/".join(path.split("/")[-segments:])
        return fnmatch.fnmatchcase(tail, name)
    return path == name or path.endswith("/" + name)


def check(source):
    with open(os.path.join(source, "docs/architecture.md"), encoding="utf-8") as fh:
        parts = layer_parts(fh.read())
    if parts is None:
        return [f"docs/architecture.md has no section '{SECTION}'"]
    problems = []
    files = {}
    for layer in LAYERS:
        files[layer] = []
        for root, _, found in os.walk(os.path.join(source, layer)):
            for f in found:
                if f.endswith(SOURCES):
                    files[layer].append(os.path.relpath(
                        os.path.join(root, f), os.path.join(source, layer)).replace(os.sep, "/"))
    every = [f"{layer}/{f}" for layer in LAYERS for f in files[layer]]
    for layer in LAYERS:
        if layer not in parts:
            problems.append(f"docs/architecture.md: no part '### {layer}/' in the map")
        # A name in angle brackets is a pattern for the reader (`<name>.cpp`), not a file.
        names = [n for n in parts.get(layer, []) if is_file_name(n) and "<" not in n]
        for f in sorted(files[layer]):
            if not any(matches(n, f) for n in names):
                problems.append(f"{layer}/{f}: not named in docs/architecture.md ('### {layer}/')")
        for n in names:
            # Stale: it names no file at all (a part may name another layer's file it relies on,
            # or one outside the layers by its path from the top: `bench/bench_scheduler.cpp`).
            if ((n.endswith(SOURCES) or n.endswith(".*")) and not any(matches(n, f) for f in every)
                    and not os.path.isfile(os.path.join(source, n))):
                problems.append(f"docs/architecture.md: '{n}' ('### {layer}/') names no file")
    return problems


def self_test():
    def write(root, rel, text=""):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    assert expand("a_{x,y}.{hpp,cpp}") == ["a_x.hpp", "a_x.cpp", "a_y.hpp", "a_y.cpp"]
    assert matches("dialect_*.cpp", "batch/dialect_slurm.cpp")
    assert matches("file_sha256.*", "src/file_sha256.hpp")
    assert not matches("job.cpp", "src/other_job.cpp")
    with tempfile.TemporaryDirectory() as root:
        for layer in LAYERS:
            write(root, f"{layer}/keep.cpp")
        write(root, "runtime/src/job_plan.cpp")
        write(root, "runtime/src/forgotten.cpp")
        write(root, "launcher/batch/dialect_slurm.cpp")
        write(root, "docs/architecture.md", "\n".join([
            "# A", SECTION,
            "### runtime/ (ranks)", "| plans | `src/job_plan.cpp`, `keep.cpp`, `gone.hpp` |",
            "### workloads/", "`keep.cpp`", "### results/", "`keep.cpp`",
            "### launcher/", "`{keep,batch/dialect_*}.cpp`", "## Next", "`forgotten.cpp`"]))
        found = check(root)
        expected = ["runtime/src/forgotten.cpp: not named in docs/architecture.md ('### runtime/')",
                    "docs/architecture.md: 'gone.hpp' ('### runtime/') names no file"]
        if found != expected:
            print("self-test: expected\n  " + "\n  ".join(expected) + "\nfound\n  " +
                  "\n  ".join(found))
            return 1
    print("self-test: a file left out and a stale name are both found")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s): docs/architecture.md maps every source file "
              "(one concept per file, named after it)")
        return 1
    print("docs/architecture.md names every source file of runtime/, workloads/, results/ and "
          "launcher/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
