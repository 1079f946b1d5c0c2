#!/usr/bin/env python3
"""Runs the documented commands of tests/docs/manifest.toml and checks their documented outcome.

  run_docs.py --source SRC --build BUILD [--doc README.md] [--label cpu] [--test NAME]
              [--only TEXT] [--keep]

Each entry runs in a fresh scratch folder (see manifest.toml's header for what is in it); the
exit code, stdout/stderr patterns, files and `check` snippet of the entry are checked. An entry
marked `pending` is an expected failure: reported loudly, not failed; if it passes, the run
fails so that the mark is removed. `--label slurm` starts a real single-node SLURM
(tests/batch/slurm_cluster.sh) and runs the entries inside it.
Exit: 0 all passed (or pending), 1 a failure, 77 nothing could run (SLURM unavailable, or every
entry skipped for its `requires`).
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import doc_units  # noqa: E402

NESTED_ENV = "SCALEBENCH_DOCS_TEST_DEPTH"


def kill_group(proc: subprocess.Popen) -> None:
    """Ends what the entry started: its whole process group (its own session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


RUNNING: list[subprocess.Popen] = []  # the entry's process, for a signal to end
SCRATCH: list[pathlib.Path] = []  # the runner's temporary folder, removed on a signal too


def on_signal(signum, _frame) -> None:
    for proc in RUNNING:
        kill_group(proc)
    for d in SCRATCH:
        shutil.rmtree(d, ignore_errors=True)
    sys.exit(128 + signum)


def run_bash(script: str, cwd: pathlib.Path, env: dict, timeout: float, out, err) -> tuple[int, bool]:
    """Runs `script` with bash in its own session; returns (exit code, timed out)."""
    proc = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdout=out, stderr=err,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    RUNNING[:] = [proc]
    try:
        rc = proc.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        rc = 124
    kill_group(proc)  # background processes the command left behind, too
    proc.wait()
    RUNNING.clear()
    return rc, timed_out


class Runner:
    def __init__(self, args):
        self.source = pathlib.Path(args.source).resolve()
        self.build = pathlib.Path(args.build).resolve()
        self.python3 = args.python3 or shutil.which("python3", path="/usr/bin") or "python3"
        self.keep = args.keep
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="sb-docs-"))
        if not self.keep:
            SCRATCH.append(self.root)
        self.fixtures = self.root / "fixtures"
        self.fixtures.mkdir()
        bindir = self.root / "bin"
        bindir.mkdir()
        # `python3` in a command is Debian's (the set-up installs numpy/scipy/h5py for it), or
        # the one the build was configured with. A script, not a symlink: the interpreter of a
        # virtual environment finds its packages only when called by its own path.
        wrapper = bindir / "python3"
        wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(self.python3)} \"$@\"\n")
        wrapper.chmod(0o755)
        depth = int(os.environ.get(NESTED_ENV, "0") or 0)
        self.inside_suite = depth > 0  # a documented command (tools/sanitize) runs this suite
        self.env = dict(os.environ)
        self.env.update({
            "PATH": f"{bindir}:{self.build}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "SB": str(self.build / "scalebench"),
            "SB_SOURCE": str(self.source),
            "SB_BUILD": str(self.build),
            "SB_PYTHON3": self.python3,
            "DOCS_DIR": str(HERE),
            "DOCS_FIXTURES": str(self.fixtures),
            NESTED_ENV: str(depth + 1),
        })
        self.env.pop("BUILD_DIR", None)

    def folders(self, entry) -> tuple[pathlib.Path, pathlib.Path]:
        """(its own folder for logs and stubs, the scratch folder the command runs in)."""
        own = self.root / f"{entry.index:03d}"
        work = own / "work"
        (own / "bin").mkdir(parents=True)
        work.mkdir()
        (work / "build").symlink_to(self.build)
        for name in ("tools", "tests", "examples", "bench"):  # what the docs name by its path in a checkout
            (work / name).symlink_to(self.source / name)
        return own, work

    def command_text(self, entry, unit) -> str:
        text = unit.text
        for old, new in entry.get("replace", {}).items():
            if old not in text:
                raise ValueError(f"placeholder '{old}' is not in the {entry.kind}")
            text = text.replace(old, new)
        return text

    def snippet(self, name: str, body: str, cwd: pathlib.Path, env: dict, log_path) -> int:
        script = f'set -eo pipefail\nsource "$DOCS_DIR/helpers.sh"\n{body}\n'
        with open(log_path, "a") as log:
            log.write(f"---- {name}\n")
            log.flush()
            rc, timed_out = run_bash(script, cwd, env, 900, log, subprocess.STDOUT)
            if timed_out:
                log.write(f"{name}: timed out\n")
        return rc

    def run_entry(self, entry, unit) -> tuple[str, list[str]]:
        """Returns (PASS|FAIL|SKIP, problems)."""
        own, work = self.folders(entry)
        env = dict(self.env)
        env["PATH"] = f"{own / 'bin'}:{env['PATH']}"
        env.update({"ENTRY_DIR": str(own), "ENTRY_BIN": str(own / "bin"),
                    "SB_STDOUT": str(own / "stdout"), "SB_STDERR": str(own / "stderr")})
        log_path = own / "snippets.log"
        timeout = float(entry.get("timeout", 120))
        cwd = work
        if entry.get("cwd") == "source":
            uses_build = re.search(r"(^|\s)build(/|\s|$)", unit.text)
            if uses_build and (self.source / "build").resolve() != self.build:
                return "SKIP", [f"runs in the source tree, whose build/ is not {self.build}"]
            cwd = self.source
        env.update({k: str(v) for k, v in entry.get("env", {}).items()})
        for test, why in doc_units.requirements(entry.raw, entry.label)[0]:
            if run_bash(test, cwd, env, 60, subprocess.DEVNULL, subprocess.DEVNULL)[0]:
                return "SKIP", [why]
        if entry.get("setup") and self.snippet("setup", entry.get("setup"), work, env, log_path):
            return "FAIL", ["setup failed:\n" + log_path.read_text(errors="replace")]
        try:
            text = self.command_text(entry, unit)
        except ValueError as e:
            return "FAIL", [str(e)]
        if entry.kind == "script":
            (own / "script.sh").write_text(text + "\n")
            script = f"bash {shlex.quote(str(own / 'script.sh'))}"
        elif entry.kind == "python":
            (own / "snippet.py").write_text(text + "\n")
            script = f"python3 {shlex.quote(str(own / 'snippet.py'))}"
        else:
            script = text
        with open(own / "stdout", "w") as out, open(own / "stderr", "w") as err:
            rc, timed_out = run_bash(script, cwd, env, timeout, out, err)
        stdout = (own / "stdout").read_text(errors="replace")
        stderr = (own / "stderr").read_text(errors="replace")
        problems = []
        want = entry.get("exit", 0)
        want = want if isinstance(want, list) else [want]
        if timed_out:
            problems.append(f"timed out after {timeout:.0f} s")
        elif rc not in want:
            problems.append(f"exit {rc}, documented {' or '.join(map(str, want))}")
        for field, stream in (("stdout", stdout), ("stderr", stderr)):
            for pat in entry.get(field, []):
                if not re.search(pat, stream, re.MULTILINE):
                    problems.append(f"{field} does not match /{pat}/")
            for pat in entry.get(field + "_not", []):
                if re.search(pat, stream, re.MULTILINE):
                    problems.append(f"{field} matches /{pat}/, which it must not")
        for pattern in entry.get("files", []):
            found = [p for p in glob.glob(str(cwd / pattern)) if os.path.getsize(p) > 0]
            if not found:
                problems.append(f"no non-empty file {pattern} afterwards")
        env["SB_EXIT"] = str(rc)
        if not problems and entry.get("check"):
            if self.snippet("check", entry.get("check"), cwd, env, log_path):
                problems.append("check failed:\n" + log_path.read_text(errors="replace"))
        if problems:
            problems.append("---- stdout (last 30 lines)\n" + "\n".join(stdout.splitlines()[-30:]))
            problems.append("---- stderr (last 30 lines)\n" + "\n".join(stderr.splitlines()[-30:]))
        if entry.get("cwd") != "source" and not self.keep:
            shutil.rmtree(work, ignore_errors=True)
        return ("FAIL" if problems else "PASS"), problems

    def cleanup(self) -> None:
        if self.keep:
            print(f"kept {self.root}")
            return
        shutil.rmtree(self.root, ignore_errors=True)


def select(entries, args):
    out = []
    for e in entries:
        if args.doc and e.doc != args.doc:
            continue
        if args.label and e.label != args.label:
            continue
        if args.only and args.only not in e.key:
            continue
        if not args.only and args.test != e.get("test", ""):
            continue
        out.append(e)
    return out


def run_in_slurm(args) -> int:
    """Re-runs this script inside a real single-node SLURM, with the docs' partitions."""
    me = [sys.executable, str(pathlib.Path(__file__).resolve())] + sys.argv[1:]
    env = dict(os.environ)
    env["SB_SLURM_RUN"] = shlex.join(me)
    env["SB_SLURM_CONF_EXTRA"] = str(HERE / "slurm_extra.conf")
    cluster = pathlib.Path(args.source) / "tests" / "batch" / "slurm_cluster.sh"
    return subprocess.call(["bash", str(cluster), args.build, args.source], env=env)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--python3", default="")
    p.add_argument("--doc", default="")
    p.add_argument("--label", default="")
    p.add_argument("--test", default="", help="the entries of this `test` name (default: those without)")
    p.add_argument("--only", default="", help="run the entries whose command contains this text")
    p.add_argument("--keep", action="store_true", help="keep the scratch folders")
    p.add_argument("--manifest", default=str(HERE / "manifest.toml"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.label == "slurm" and not os.environ.get("SLURM_CONF"):
        return run_in_slurm(args)

    source = pathlib.Path(args.source).resolve()
    entries, errors = doc_units.load_manifest(pathlib.Path(args.manifest))
    if errors:
        print("\n".join(errors))
        return 1
    chosen = select(entries, args)
    if not chosen:
        print("no manifest entry selected")
        return 0
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    runner = Runner(args)
    docs_units = {}
    counts = {"PASS": 0, "FAIL": 0, "PENDING": 0, "SKIP": 0, "NESTED": 0}
    failed = False
    for entry in chosen:
        if entry.label == "ci":
            continue
        if entry.doc not in docs_units:
            docs_units[entry.doc] = doc_units.units(source, entry.doc)[0]
        matches = [u for u in docs_units[entry.doc] if u.kind == entry.kind and u.key == entry.key]
        if not matches:
            print(f"FAIL {entry.title()}\n     not in {entry.doc} any more (tests/docs/manifest.toml)")
            counts["FAIL"] += 1
            failed = True
            continue
        unit = matches[0]
        if entry.get("nests"):
            outer = doc_units.outer_entry(entry, entries)
            counts["NESTED"] += 1
            print(f"in   {entry.title()}: runs inside {outer.title() if outer else '?'}")
            continue
        if runner.inside_suite and entry.label == "long":
            counts["SKIP"] += 1
            print(f"SKIP {entry.title()}: this run is inside a documented command that runs the "
                  "test suite (tools/sanitize)")
            continue
        t0 = time.time()
        status, problems = runner.run_entry(entry, unit)
        dt = time.time() - t0
        where = f"{unit.doc}:{unit.line}"
        pending = entry.get("pending")
        if status == "SKIP":
            counts["SKIP"] += 1
            print(f"SKIP {entry.title()} ({where}): {problems[0]}")
        elif pending and status == "FAIL":
            counts["PENDING"] += 1
            print(f"PENDING {entry.title()} ({where}, {dt:.1f} s)")
            print(f"!!!!!!! expected failure, not counted: {pending}")
            print("        " + problems[0].splitlines()[0])
        elif pending:
            counts["FAIL"] += 1
            failed = True
            print(f"FAIL {entry.title()} ({where}, {dt:.1f} s)\n     marked pending ('{pending}') "
                  "but passes now: remove its `pending` line from tests/docs/manifest.toml")
        elif status == "FAIL":
            counts["FAIL"] += 1
            failed = True
            print(f"FAIL {entry.title()} ({where}, {dt:.1f} s)")
            print(f"     ran: {unit.text if entry.kind == 'command' else entry.kind + ' block'}")
            for prob in problems:
                print("     " + prob.replace("\n", "\n     "))
        else:
            counts["PASS"] += 1
            print(f"ok   {entry.title()} ({where}, {dt:.1f} s)")
        sys.stdout.flush()
    runner.cleanup()
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['PENDING']} pending "
          f"(expected failures), {counts['SKIP']} skipped, {counts['NESTED']} run inside another")
    if failed:
        return 1
    return 77 if counts["SKIP"] and not counts["PASS"] and not counts["PENDING"] else 0


if __name__ == "__main__":
    sys.exit(main())
