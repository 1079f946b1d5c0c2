#!/usr/bin/env python3
"""docs.tooling: the docs-test tools on a small made-up checkout: how doc_units.py splits blocks
into commands, what coverage.py says about a command without an entry (the exact text, its doc
and line), about stale, nested and `requires` entries, and that run_docs.py skips an entry whose
requirement fails, saying why, and reports a test of only such entries as skipped (77)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import doc_units  # noqa: E402

FENCE = "```"
README = textwrap.dedent(f"""\
    # demo
    {FENCE}sh
    build/scalebench info          # a comment
    build/scalebench run --preset tiny \\
        --out run.h5
    # a line that is only a comment
    echo 'a quote
    that goes on'
    {FENCE}
    {FENCE}text
    not run
    {FENCE}
    """)
ACCEPT = textwrap.dedent(f"""\
    # acceptance
    {FENCE}sh
    sbatch accept.sh
    {FENCE}
    {FENCE}sh
    #SBATCH -N 8
    srun scalebench run --paths each-node --check
    {FENCE}
    {FENCE}sh
    scalebench run --paths each-gpu --check
    {FENCE}
    """)


def write(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


class Tooling(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        write(self.root, {"README.md": README, "docs/acceptance.md": ACCEPT})

    def tearDown(self):
        self.tmp.cleanup()

    def coverage(self, manifest: str, *extra: str) -> subprocess.CompletedProcess:
        (self.root / "manifest.toml").write_text(textwrap.dedent(manifest))
        return subprocess.run([sys.executable, str(HERE / "coverage.py"), str(self.root),
                               "--manifest", str(self.root / "manifest.toml"), *extra],
                              capture_output=True, text=True)

    def test_units(self):
        units, errors = doc_units.units(self.root, "README.md")
        self.assertEqual(errors, [])
        self.assertEqual([(u.line, u.key) for u in units], [
            (3, "build/scalebench info # a comment"),
            (4, "build/scalebench run --preset tiny --out run.h5"),
            (7, "echo 'a quote that goes on'"),
        ])

    def test_untagged_block(self):
        write(self.root, {"docs/x.md": "text\n```\nls\n```\n"})
        self.assertIn("fenced block without an info string", doc_units.units(self.root, "docs/x.md")[1][0])

    def test_missing_entry_names_the_command(self):
        r = self.coverage("""\
            [[entry]]
            doc = "README.md"
            command = "build/scalebench info   # a comment"
            """)
        self.assertEqual(r.returncode, 1)
        # Each command without an entry: its doc and line, then its text as the manifest wants it.
        self.assertIn("FAIL README.md:4: no entry in tests/docs/manifest.toml for this command:\n"
                      "        build/scalebench run --preset tiny --out run.h5\n", r.stdout)
        self.assertIn("FAIL docs/acceptance.md:7: no entry in tests/docs/manifest.toml for this "
                      "command:\n        srun scalebench run --paths each-node --check\n", r.stdout)
        self.assertNotIn("README.md:3:", r.stdout)  # blanks differ, same command: covered
        self.assertIn("5 documented unit(s) above have no entry", r.stdout)
        skeleton = self.coverage("", "--skeleton").stdout
        self.assertIn('command = \'scalebench run --paths each-gpu --check\'', skeleton)
        self.assertIn("# docs/acceptance.md:10", skeleton)

    def test_stale_nested_and_requires(self):
        r = self.coverage("""\
            [[entry]]
            doc = "README.md"
            command = "build/scalebench info # a comment"
            [[entry]]
            doc = "README.md"
            command = "build/scalebench run --preset tiny --out run.h5"
            [[entry]]
            doc = "README.md"
            command = "echo 'a quote that goes on'"
            [[entry]]
            doc = "README.md"
            command = "build/scalebench gone"
            [[entry]]
            doc = "docs/acceptance.md"
            command = "sbatch accept.sh"
            requires = "nodes:8"
            [[entry]]
            doc = "docs/acceptance.md"
            command = "srun scalebench run --paths each-node --check"
            nests = "sbatch accept.sh"
            [[entry]]
            doc = "docs/acceptance.md"
            command = "scalebench run --paths each-gpu --check"
            label = "gpu"
            """)
        self.assertIn("FAIL manifest [4] README.md: build/scalebench gone: README.md does not show "
                      "this command any more", r.stdout)
        self.assertIn("NESTED  [6] docs/acceptance.md: srun scalebench run --paths each-node "
                      "--check\n        runs inside [5] docs/acceptance.md: sbatch accept.sh", r.stdout)
        self.assertIn("1 problem(s)", r.stdout)

        bad = self.coverage("""\
            [[entry]]
            doc = "docs/acceptance.md"
            command = "srun scalebench run --paths each-node --check"
            nests = "no such command"
            requires = "a-kind-of-machine"
            """)
        self.assertIn("nests = 'no such command' names no single other entry", bad.stdout)
        self.assertIn("requires 'a-kind-of-machine': not a {test, why} table, nodes:N or one of",
                      bad.stdout)

    def test_requirements(self):
        tests = doc_units.requirements({"requires": ["nodes:8", {"test": "false", "why": "w"}]}, "gpu")
        self.assertEqual([why for _, why in tests[0]],
                         [doc_units.REQUIREMENTS["gpu"][1],
                          "needs an allocation of 8 nodes (run the docs tests inside one)", "w"])
        for test, want in (("nodes:8", 1), ("nodes:1", 0)):
            cond = doc_units.requirements({"requires": test}, "cpu")[0][0][0]
            rc = subprocess.run(["bash", "-c", cond], env={"SCALEBENCH_DOCS_NODES": "2"}).returncode
            self.assertEqual(rc != 0, bool(want), test)

    def test_run_docs_skips_and_nests(self):
        write(self.root, {"docs/x.md": "```sh\necho outer\necho inner\n```\n"})
        (self.root / "build").mkdir()
        (self.root / "manifest.toml").write_text(textwrap.dedent("""\
            [[entry]]
            doc = "docs/x.md"
            command = "echo outer"
            requires = { test = "false", why = "needs a machine we lack" }
            [[entry]]
            doc = "docs/x.md"
            command = "echo inner"
            nests = "echo outer"
            """))
        r = subprocess.run([sys.executable, str(HERE / "run_docs.py"), "--source", str(self.root),
                            "--build", str(self.root / "build"), "--python3", sys.executable,
                            "--manifest", str(self.root / "manifest.toml"), "--doc", "docs/x.md"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("SKIP [1] docs/x.md: echo outer (docs/x.md:2): needs a machine we lack", r.stdout)
        self.assertIn("in   [2] docs/x.md: echo inner: runs inside [1] docs/x.md: echo outer", r.stdout)
        self.assertIn("0 passed, 0 failed, 0 pending (expected failures), 1 skipped, 1 run inside "
                      "another", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
