#!/usr/bin/env python3
"""Every workload, built-in or the example plugin, has examples/plugin's layout
(docs/writing-a-workload.md, "A built-in workload"): the same file names for the same roles.

  check_workload_layout.py SOURCE_DIR

For workloads/<folder>/ and examples/plugin/ (whose description is tiled_dgemm.cpp):
  <folder>.cpp            the description, with SB_REGISTER_WORKLOAD
  config.hpp, config.cpp  the parameters: `Config parse(const ...Params&)`
  scheduler.cpp           make_scheduler(const ...CaseSpec&)
  worker_cpu.cpp          make_cpu_worker
  worker_gpu.cu           make_gpu_worker (where the workload has CUDA code)
and no other file registers a workload, turns parameters into a Config or defines a worker's
entry point. Prints one line per
problem and exits 1 when there is one.
"""
import os
import re
import sys

ROLES = [
    ("config.hpp", re.compile(r"\bConfig\s+parse\(const\s+(sb::)?Params&"),
     "declares Config parse(const Params&)"),
    ("config.cpp", re.compile(r"\bConfig\s+parse\(const\s+(sb::)?Params&"),
     "defines Config parse(const Params&)"),
    ("scheduler.cpp", re.compile(r"make_scheduler\(const\s+(sb::)?CaseSpec&"),
     "defines make_scheduler(const CaseSpec&)"),
    ("worker_cpu.cpp", re.compile(r"\bmake_cpu_worker\("), "defines make_cpu_worker"),
]
GPU_ROLE = ("worker_gpu.cu", re.compile(r"\bmake_gpu_worker\("), "defines make_gpu_worker")
SOURCES = (".cpp", ".cu", ".hpp", ".cuh")
ENTRY = re.compile(r"^[\w:<>\s]*\bmake_(cpu|gpu)_worker\([^;]*\)\s*\{", re.M)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def check_folder(folder, description):
    problems = []
    shown = os.path.relpath(folder, SOURCE)
    desc = os.path.join(folder, description)
    if not os.path.isfile(desc) or "SB_REGISTER_WORKLOAD(" not in read(desc):
        problems.append(f"{shown}/{description}: missing, or without SB_REGISTER_WORKLOAD")
    roles = list(ROLES)
    if any(f.endswith((".cu", ".cuh")) for _, _, fs in os.walk(folder) for f in fs):
        roles.append(GPU_ROLE)
    for name, pattern, what in roles:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            problems.append(f"{shown}/{name}: missing (it {what})")
        elif not pattern.search(read(path)):
            problems.append(f"{shown}/{name}: does not {what.replace('defines', 'define')}"
                            .replace("does not declares", "does not declare"))
    for root, _, files in os.walk(folder):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), folder)
            if not f.endswith(SOURCES) or rel in (description, "config.hpp", "config.cpp"):
                continue
            text = read(os.path.join(root, f))
            if re.search(r"^SB_REGISTER_WORKLOAD\(", text, re.M):
                problems.append(f"{shown}/{rel}: registers a workload (only {description} does)")
            if re.search(r"^\s*(\[\[nodiscard\]\]\s*)?Config\s+\w*parse\w*\(const", text, re.M):
                problems.append(f"{shown}/{rel}: turns parameters into a Config (config.cpp does)")
            entry = ENTRY.search(text)
            if entry and rel != f"worker_{entry.group(1)}.cpp" and rel != f"worker_{entry.group(1)}.cu":
                problems.append(f"{shown}/{rel}: defines make_{entry.group(1)}_worker "
                                f"(worker_{entry.group(1)} does)")
    return problems


def main(argv):
    global SOURCE
    if len(argv) != 2:
        print(__doc__)
        return 2
    SOURCE = argv[1]
    problems = []
    workloads = os.path.join(SOURCE, "workloads")
    folders = sorted(d for d in os.listdir(workloads)
                     if os.path.isfile(os.path.join(workloads, d, "CMakeLists.txt")))
    for d in folders:
        problems += check_folder(os.path.join(workloads, d), d + ".cpp")
    problems += check_folder(os.path.join(SOURCE, "examples/plugin"), "tiled_dgemm.cpp")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s): docs/writing-a-workload.md, \"A built-in workload\", "
              "names each role's file")
        return 1
    print(f"workload layout kept: {', '.join(folders)} and examples/plugin")
    return 0


SOURCE = "."
if __name__ == "__main__":
    sys.exit(main(sys.argv))
