#!/usr/bin/env python3
"""docs.coverage: every command the docs show has a manifest entry, and every entry is still in
the docs.

  coverage.py SOURCE            check (exit 1 with one line per problem)
  coverage.py SOURCE --pairs    print "doc|label|test|seconds|serial" for each doc, label and
                                `test` with entries (tests/docs/CMakeLists.txt makes a CTest test
                                of each)
  coverage.py SOURCE --skeleton print a manifest entry to fill in for each documented unit that
                                has none
  --manifest FILE               read FILE instead of tests/docs/manifest.toml

Checks: README.md and docs/*.md have no untagged fenced block; each command, script and Python
snippet of their ```sh/```bash/```python blocks is named by a manifest entry (tests/docs/
manifest.toml); each entry names a unit that its doc still shows; each `ci` entry (run by CI
itself, not by this suite) is found where its `ci` field says (e.g. .ci/run calls it); each
`nests` entry names the entry that runs it. Pending, manual and nested entries are listed.
"""

from __future__ import annotations

import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import doc_units  # noqa: E402


def toml_string(text: str) -> str:
    quote = "'" * 3
    if "\n" in text:
        return f"{quote}\n{text}\n{quote}"
    return f"'{text}'" if "'" not in text else f'"""{text}"""'


def skeleton(source: pathlib.Path, entries) -> int:
    keys = {(e.doc, e.kind, e.key) for e in entries}
    for doc in doc_units.doc_files(source):
        for u in doc_units.units(source, doc)[0]:
            if (u.doc, u.kind, u.key) in keys:
                continue
            text = u.key if u.kind == "command" else u.text
            print(f"[[entry]]  # {u.doc}:{u.line}")
            print(f'doc = "{u.doc}"')
            print(f"{u.kind} = {toml_string(text)}")
            print('label = "cpu"  # cpu | long | gpu | slurm | ci | manual')
            print('# requires = "gpu"  # or "nodes:8", or { test = "BASH", why = "..." }: skipped, saying why')
            print('# nests = "TEXT"  # or: it runs inside the entry of this doc whose text holds TEXT')
            print("exit = 0")
            print("stdout = []  # what the doc promises it prints")
            print("files = []\n")
    return 0


def main() -> int:
    args = sys.argv[1:]
    manifest = HERE / "manifest.toml"
    if "--manifest" in args:  # another manifest (tests/docs/test_tooling.py)
        i = args.index("--manifest")
        manifest = pathlib.Path(args[i + 1])
        del args[i:i + 2]
    if not args:
        raise SystemExit(__doc__)
    source = pathlib.Path(args[0]).resolve()
    mode = args[1] if len(args) > 1 else ""
    entries, problems = doc_units.load_manifest(manifest)
    if mode == "--pairs":
        if problems:
            raise SystemExit("\n".join(problems))
        budget: dict[tuple[str, str, str], int] = {}
        serial: set[tuple[str, str, str]] = set()
        for e in entries:
            if e.label != "ci" and not e.get("nests"):  # command, setup and check, a minute more
                k = (e.doc, e.label, e.get("test", ""))
                budget[k] = budget.get(k, 60) + int(e.get("timeout", 120)) + 60
                if e.get("serial") or e.label == "slurm":
                    serial.add(k)
        for k, seconds in sorted(budget.items()):
            print("|".join(k) + f"|{seconds}|{'serial' if k in serial else ''}")
        return 0
    if mode == "--skeleton":
        return skeleton(source, entries)

    docs = doc_units.doc_files(source)
    all_units = []
    for doc in docs:
        units, errors = doc_units.units(source, doc)
        all_units += units
        problems += errors
    keys = {(e.doc, e.kind, e.key) for e in entries}
    missing = [u for u in all_units if (u.doc, u.kind, u.key) not in keys]
    for u in missing:
        if u.kind == "command":
            shown = u.key
        else:
            lines = u.text.strip("\n").splitlines()
            shown = f"the {len(lines)}-line ```{'python' if u.kind == 'python' else 'sh'} block " \
                    f"that starts: {lines[0]}"
        problems.append(f"{u.doc}:{u.line}: no entry in tests/docs/manifest.toml for this {u.kind}:\n"
                        f"        {shown}")
    unit_keys = {(u.doc, u.kind, u.key) for u in all_units}
    for e in entries:
        if e.doc not in docs:
            problems.append(f"manifest {e.title()}: no doc {e.doc}")
        elif (e.doc, e.kind, e.key) not in unit_keys:
            problems.append(f"manifest {e.title()}: {e.doc} does not show this {e.kind} any more "
                            "(update or remove the entry)")
        if e.label == "ci":
            where = e.get("ci", [])
            if not where:
                problems.append(f"manifest {e.title()}: label ci needs `ci` (file and pattern)")
            for spec in where:
                f = source / spec["file"]
                text = f.read_text(encoding="utf-8") if f.exists() else ""
                if not re.search(spec["pattern"], text, re.MULTILINE):
                    problems.append(f"manifest {e.title()}: {spec['file']} does not match "
                                    f"/{spec['pattern']}/ ({spec.get('why', 'CI runs it there')})")
    pending = [e for e in entries if e.get("pending")]
    for e in pending:
        print(f"PENDING {e.title()}\n        {e.get('pending')}")
    for e in entries:
        if e.label == "manual":
            print(f"MANUAL  {e.title()} (not run by the test suite)")
            if not e.get("note"):
                problems.append(f"manifest {e.title()}: label manual needs a note saying why")
    for e in entries:
        if e.get("nests"):
            outer = doc_units.outer_entry(e, entries)
            print(f"NESTED  {e.title()}\n        runs inside {outer.title() if outer else '?'}")
    for p in problems:
        print("FAIL " + p)
    if missing:
        print(f"{len(missing)} documented unit(s) above have no entry: add one each to "
              "tests/docs/manifest.toml that runs it and checks its documented outcome "
              "(`coverage.py SOURCE --skeleton` prints them to fill in; docs/testing.md says how)")
    print(f"{len(all_units)} documented units in {len(docs)} docs, {len(entries)} manifest entries, "
          f"{len(pending)} pending, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
