"""The runnable examples that README.md and docs/*.md show, and the manifest that tests them.

A fenced block's info string says what it is:
  sh, bash, shell   commands: every line is one command (a line ending in a backslash, or with
                    a quote still open, goes on with the next; blank lines and lines that are
                    only a comment are skipped), except a block whose first line is `#!`,
                    which is one script
  python            one Python snippet (the whole block)
  anything else     not run (text, toml, json, ...); a block with no info string at all is an
                    error, so that no command hides in an untagged block
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shlex
import tomllib

SHELL = {"sh", "bash", "shell"}
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
KINDS = ("command", "script", "python")
LABELS = ("cpu", "long", "gpu", "slurm", "ci", "manual")


@dataclasses.dataclass
class Unit:
    doc: str  # path relative to the source root, e.g. "README.md", "docs/batch.md"
    line: int  # 1-based line of the unit's first line
    kind: str  # command | script | python
    text: str  # exactly as the doc shows it (continuation lines kept)

    @property
    def key(self) -> str:
        return normalize(self.kind, self.text)


def normalize(kind: str, text: str) -> str:
    """The form in which a unit and a manifest entry are matched: for a command, backslash
    continuations joined and runs of blanks made one; for a script or snippet, trailing blanks
    and surrounding blank lines dropped."""
    if kind == "command":
        return " ".join(text.replace("\\\n", " ").split())
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def complete(text: str) -> bool:
    """False while a shell command goes on with the next line: a trailing backslash, or a quote
    still open."""
    if text.rstrip().endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:  # "No closing quotation"
        return False
    return True


def doc_files(source: pathlib.Path) -> list[str]:
    docs = sorted(p.relative_to(source).as_posix() for p in (source / "docs").glob("*.md"))
    return ["README.md"] + docs


def fenced_blocks(path: pathlib.Path):
    """Yields (info, first body line number, body lines) for each fenced block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(2), m.group(3).lower(), i + 1
        j = start
        while j < len(lines) and not lines[j].lstrip().startswith(fence):
            j += 1
        yield info, start + 1, lines[start:j]
        i = j + 1


def units(source: pathlib.Path, doc: str) -> tuple[list[Unit], list[str]]:
    """The runnable units of one doc, and an error per untagged block."""
    out: list[Unit] = []
    errors: list[str] = []
    for info, first, body in fenced_blocks(source / doc):
        if info == "":
            errors.append(f"{doc}:{first - 1}: fenced block without an info string: tag it "
                          "```sh (commands, run by tests/docs) or ```text (not run)")
        elif info == "python":
            out.append(Unit(doc, first, "python", "\n".join(body)))
        elif info in SHELL:
            if body and body[0].startswith("#!"):
                out.append(Unit(doc, first, "script", "\n".join(body)))
                continue
            k = 0
            while k < len(body):
                start, parts = k, [body[k]]
                while not complete("\n".join(parts)) and k + 1 < len(body):
                    k += 1
                    parts.append(body[k])
                k += 1
                text = "\n".join(parts)
                stripped = text.strip()
                if stripped and not stripped.startswith("#"):
                    out.append(Unit(doc, first + start, "command", text))
    return out, errors


@dataclasses.dataclass
class Entry:
    index: int  # position in the manifest (1-based), for messages
    doc: str
    kind: str
    text: str
    label: str
    raw: dict

    @property
    def key(self) -> str:
        return normalize(self.kind, self.text)

    def get(self, name, default=None):
        return self.raw.get(name, default)

    def title(self) -> str:
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        if self.kind == "command":
            first = self.key
        more = "" if self.kind == "command" else f" ({self.kind})"
        return f"[{self.index}] {self.doc}: {first[:110]}{more}"


ENTRY_FIELDS = {"doc", "command", "script", "python", "label", "setup", "replace", "env", "exit",
                "stdout", "stderr", "stdout_not", "stderr_not", "files", "check", "timeout",
                "pending", "note", "ci", "cwd", "test", "serial",
                "requires", "nests"}

# Named requirements (`requires = "gpu"` or a list of names and {test, why} tables): a bash
# condition, run in the entry's folder with the entry's environment, and the reason printed when
# it fails (the entry is then skipped, never dropped silently). Label gpu implies "gpu".
REQUIREMENTS = {
    "gpu": (r"""[ "$("$SB" info --format json | "$SB_PYTHON3" -c 'import json, sys
print(json.load(sys.stdin)["gpus"]["visible"])')" -gt 0 ]""",
            "needs a GPU (scalebench info sees none here, or the build has no CUDA)"),
    "avx512": ("grep -qw avx512f /proc/cpuinfo", "needs a CPU with AVX-512"),
}
# "nodes:N": inside a batch allocation of at least N nodes (run the docs tests inside one, e.g.
# `salloc -N 8 ctest --test-dir build -L docs`).
NODES = re.compile(r"^nodes:([1-9][0-9]*)$")


def requirements(raw: dict, label: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The (bash test, reason) pairs of an entry's `requires` (plus "gpu" for label gpu), and an
    error per malformed item."""
    req = raw.get("requires", [])
    items = req if isinstance(req, list) else [req]
    if label == "gpu" and "gpu" not in items:
        items = ["gpu"] + items
    out, errors = [], []
    for item in items:
        if isinstance(item, dict) and "test" in item:
            out.append((item["test"], item.get("why", "its `requires` does not hold: " + item["test"])))
        elif isinstance(item, str) and item in REQUIREMENTS:
            out.append(REQUIREMENTS[item])
        elif isinstance(item, str) and NODES.match(item):
            n = NODES.match(item).group(1)
            out.append((f'[ "${{SLURM_JOB_NUM_NODES:-${{SCALEBENCH_DOCS_NODES:-1}}}}" -ge {n} ]',
                        f"needs an allocation of {n} nodes (run the docs tests inside one)"))
        else:
            errors.append(f"requires {item!r}: not a {{test, why}} table, nodes:N or one of "
                          f"{sorted(REQUIREMENTS)}")
    return out, errors


def load_manifest(path: pathlib.Path) -> tuple[list[Entry], list[str]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entries: list[Entry] = []
    errors: list[str] = []
    for i, raw in enumerate(data.get("entry", []), start=1):
        unknown = set(raw) - ENTRY_FIELDS
        kinds = [k for k in KINDS if k in raw]
        where = f"{path.name} entry {i}"
        if unknown:
            errors.append(f"{where}: unknown field(s) {sorted(unknown)}")
        if len(kinds) != 1:
            errors.append(f"{where}: needs exactly one of command / script / python")
            continue
        label = raw.get("label", "cpu")
        if label not in LABELS:
            errors.append(f"{where}: label '{label}' is not one of {LABELS}")
        if "doc" not in raw:
            errors.append(f"{where}: no doc")
            continue
        errors += [f"{where}: {e}" for e in requirements(raw, label)[1]]
        entries.append(Entry(i, raw["doc"], kinds[0], raw[kinds[0]], label, raw))
    errors += nesting_errors(entries)
    return entries, errors


def outer_entry(entry: Entry, entries: list[Entry]) -> Entry | None:
    """The entry that runs a nested one: `nests = "TEXT"` names the entry of the same doc whose
    command, script or snippet contains TEXT (it must be exactly one, and not nested itself)."""
    want = entry.get("nests")
    found = [e for e in entries if e is not entry and e.doc == entry.doc and want in e.key
             and not e.get("nests")]
    return found[0] if len(found) == 1 else None


def nesting_errors(entries: list[Entry]) -> list[str]:
    errors = []
    for e in entries:
        want = e.get("nests")
        if want is None:
            continue
        if not isinstance(want, str) or not want.strip():
            errors.append(f"{e.title()}: nests must be the text of the entry that runs it")
            continue
        outer = outer_entry(e, entries)
        if outer is None:
            errors.append(f"{e.title()}: nests = {want!r} names no single other entry of {e.doc} "
                          "that is not nested itself")
        elif outer.label == "manual":
            errors.append(f"{e.title()}: runs inside {outer.title()}, which the suite never runs")
    return errors


def block_after(path: pathlib.Path, info: str, after: str) -> str:
    """The first ```info block of `path` that follows a line matching the regex `after`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    anchor = next((i for i, line in enumerate(lines) if re.search(after, line)), None)
    if anchor is None:
        raise SystemExit(f"{path}: no line matches /{after}/")
    for blk_info, first, body in fenced_blocks(path):
        if blk_info == info and first - 1 > anchor:
            return "\n".join(body) + "\n"
    raise SystemExit(f"{path}: no ```{info} block after /{after}/")


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 5 and sys.argv[1] == "block":
        sys.stdout.write(block_after(pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
    else:
        raise SystemExit("usage: doc_units.py block DOC.md INFO AFTER_REGEX")
