#!/usr/bin/env python3
"""The layers keep themselves (docs/architecture.md, "Layers").

Bottom to top: runtime/, workloads/, results/, launcher/. A file may include a header of its own
layer or of a lower one, never one that lives only in a higher layer; a library of a layer may
link libraries of its own layer or of lower ones, never a higher layer's. A program
(add_executable) is where the layers are put together and may link any of them.

  check_layers.py SOURCE_DIR TARGETS_TSV   the tree (TARGETS_TSV: tests/source/CMakeLists.txt)
  check_layers.py --self-test              the checker on a made-up tree that breaks both rules

Prints one line per breach (file:line, or the library) and exits 1 when there is one.
"""
import os
import re
import sys
import tempfile

LAYERS = ["runtime", "workloads", "results", "launcher"]
HEADERS = (".h", ".hpp", ".cuh")
SOURCES = HEADERS + (".cpp", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
WORD = re.compile(r"[A-Za-z0-9_.+-]+")


def layer_of(rel):
    """The layer of a path relative to the source tree, or None."""
    top = rel.replace(os.sep, "/").split("/", 1)[0]
    return top if top in LAYERS else None


def files_of(src):
    """Every source file of the layers, relative to `src`."""
    out = []
    for layer in LAYERS:
        for root, _, names in os.walk(os.path.join(src, layer)):
            for n in names:
                if n.endswith(SOURCES):
                    out.append(os.path.relpath(os.path.join(root, n), src))
    return sorted(out)


def upward_includes(src):
    """Lines of a layer's files that include a header found only in a higher layer."""
    files = files_of(src)
    headers = [f.replace(os.sep, "/") for f in files if f.endswith(HEADERS)]
    breaches = []
    for f in files:
        rank = LAYERS.index(layer_of(f))
        here = os.path.dirname(f)
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                beside = os.path.normpath(os.path.join(here, name)).replace(os.sep, "/")
                if beside in headers:
                    found = [beside]
                else:
                    found = [h for h in headers if h == name or h.endswith("/" + name)]
                if not found:
                    continue  # a system, third-party or generated header
                if any(LAYERS.index(layer_of(h)) <= rank for h in found):
                    continue
                breaches.append(f"{f}:{number}: includes \"{name}\", which lives in "
                                f"{', '.join(sorted(found))}: a layer above {LAYERS[rank]}/")
    return breaches


def upward_links(tsv):
    """Libraries of a layer that link a library of a higher layer."""
    targets = {}
    with open(tsv, encoding="utf-8") as fh:
        for row in fh:
            parts = row.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            name, kind, folder, links = parts
            targets[name] = (kind, layer_of(folder) if folder else None, links)
    breaches = []
    for name, (kind, layer, links) in sorted(targets.items()):
        if layer is None or kind == "EXECUTABLE" or not links:
            continue
        rank = LAYERS.index(layer)
        linked = {w for token in links.split() if not token.startswith("::@")
                  for w in WORD.findall(token) if w in targets}
        for other in sorted(linked):
            other_layer = targets[other][1]
            if other_layer is not None and LAYERS.index(other_layer) > rank:
                breaches.append(f"library {name} ({layer}/) links {other} ({other_layer}/), "
                                f"a layer above it")
    return breaches


def check(src, tsv):
    breaches = upward_includes(src) + upward_links(tsv)
    for b in breaches:
        print(b)
    return breaches


def self_test():
    """A tree with one breach of each kind and a clean twin: both found, nothing else."""
    def write(root, rel, text):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    with tempfile.TemporaryDirectory() as root:
        write(root, "runtime/include/scalebench/clock.hpp", "#pragma once\n")
        write(root, "runtime/src/job.cpp",
              '#include "scalebench/clock.hpp"\n#include <vector>\n#include "gen.h"\n')
        write(root, "runtime/src/stall.cpp", '#include "scalebench/stats.hpp"\n')
        write(root, "results/include/scalebench/stats.hpp", "#pragma once\n")
        write(root, "results/src/summary.cpp",
              '#include "scalebench/stats.hpp"\n#include "scalebench/clock.hpp"\n')
        write(root, "workloads/comms/link.hpp", "#pragma once\n")
        write(root, "workloads/comms/link.cpp", '#include "comms/link.hpp"\n')
        write(root, "launcher/console.hpp", "#pragma once\n")
        write(root, "results/src/format.cpp", '\n#  include "console.hpp"\n')
        tsv = os.path.join(root, "targets.tsv")
        write(root, "targets.tsv",
              "sb_core\tSTATIC_LIBRARY\truntime\tfmt::fmt\n"
              "sb_runtime\tSTATIC_LIBRARY\truntime\tsb_core ::@(0x1) sb_results ::@\n"
              "sb_workloads\tINTERFACE_LIBRARY\tworkloads\t$<LINK_LIBRARY:WHOLE_ARCHIVE,sb_w>\n"
              "sb_w\tSTATIC_LIBRARY\tworkloads/w\tsb_core\n"
              "sb_results\tSTATIC_LIBRARY\tresults\tsb_core\n"
              "sb_launcher\tSTATIC_LIBRARY\tlauncher\tsb_results sb_workloads\n"
              "scalebench-rank\tEXECUTABLE\truntime\tsb_runtime sb_workloads\n"
              "test_x\tEXECUTABLE\ttests/x\tsb_launcher\n")
        found = check(root, tsv)
        expected = [
            'runtime/src/stall.cpp:1: includes "scalebench/stats.hpp", which lives in '
            "results/include/scalebench/stats.hpp: a layer above runtime/",
            'results/src/format.cpp:2: includes "console.hpp", which lives in '
            "launcher/console.hpp: a layer above results/",
            "library sb_runtime (runtime/) links sb_results (results/), a layer above it",
        ]
        if sorted(found) != sorted(expected):
            print("self-test: expected\n  " + "\n  ".join(expected))
            return 1
        os.remove(os.path.join(root, "runtime/src/stall.cpp"))
        os.remove(os.path.join(root, "results/src/format.cpp"))
        write(root, "targets.tsv", "sb_runtime\tSTATIC_LIBRARY\truntime\tsb_core\n"
                                   "sb_core\tSTATIC_LIBRARY\truntime\t\n")
        if check(root, tsv):
            print("self-test: the clean tree has breaches")
            return 1
    print("self-test: both kinds of breach found, the clean tree passes")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print(__doc__)
        return 2
    breaches = check(argv[1], argv[2])
    if breaches:
        print(f"{len(breaches)} breach(es) of the layers (bottom to top: "
              f"{', '.join(LAYERS)}): a helper shared by layers lives once, in the lowest layer "
              "that needs it")
        return 1
    print(f"layers kept: {len(files_of(argv[1]))} files, bottom to top {', '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
