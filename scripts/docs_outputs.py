"""Run the documented examples and rewrite their output blocks, so the docs' figures are what the tool prints.

    python scripts/docs_outputs.py            # run every marked example, rewrite its block, print the diff
    python scripts/docs_outputs.py --list     # the marked examples and their commands, nothing run
    python scripts/docs_outputs.py README.md  # only the examples of these files

A fenced block is regenerated when the line before its opening fence is the marker

    <!-- docs-output -->                       (or <!-- docs-output drop="REGEX" -->)

and its first line is the command, ``$ `` and the command (continued on the next lines after a trailing
``\\``). The command runs with ``bash -c`` from the repository's root (``cd tests/helpers && ...`` works), this
checkout first on ``PYTHONPATH``; its standard output replaces the block's lines after the command, less the
lines matching ``drop`` (a note too long to read in a README). Run it before a release, on a quiet machine,
and say in the prose around a block which machine and load it ran on when that matters (wall times).
Prints a unified diff of each file it changed; exit status 0, or 1 when a command could not be run.
``tests/project/test_docs_outputs.py`` checks that every marked command is still accepted by ``callscale``'s parser
and that each gate table's header is the one ``callscale`` prints now; in the integration tier (``-m slow``)
it runs every marked ``--meter instructions`` example and fails when a documented count (:func:`counts`)
differs from today's by more than :data:`COUNT_TOLERANCE`. Times are not asserted (they move 2x with the load).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r'^<!-- docs-output(?: drop="(?P<drop>[^"]*)")? -->\s*$')
COUNT_TOLERANCE = 0.005
"""How far (a fraction) a documented instruction count may be from today's: counts repeat to about 0.001%
from run to run (the interpreter's start-up aside); a change to a parser or the harness moves them more."""
_COUNT = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d.,]*\d)")


def counts(lines: list[str]) -> list[int]:
    """The counts in ``lines``, in order: the numbers written with thousands separators (``3,655,016``)."""
    return [int(m.group().replace(",", "")) for line in lines for m in _COUNT.finditer(line)]


@dataclass
class Example:
    """One marked block: where it is (``start``: the line index of its first line after the fence, ``end``:
    of its closing fence), its command and what to drop from the output."""

    path: Path
    start: int
    end: int
    command: str
    drop: str | None
    command_lines: int

    def argv(self) -> list[str]:
        """The ``callscale`` arguments of the command (after ``callscale``; empty when it runs something else)."""
        words = shlex.split(self.command.split("&&")[-1])
        return words[words.index("callscale") + 1:] if "callscale" in words else []


def examples(path: Path) -> list[Example]:
    """The marked blocks of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m or i + 2 >= len(lines) or not lines[i + 1].startswith("```"):
            continue
        start = i + 2
        end = next(j for j in range(start, len(lines)) if lines[j].startswith("```"))
        if not lines[start].startswith("$ "):
            continue
        parts, j = [lines[start][2:]], start
        while parts[-1].rstrip().endswith("\\") and j + 1 < end:
            parts[-1] = parts[-1].rstrip()[:-1]
            j += 1
            parts.append(lines[j].strip())
        found.append(Example(path, start, end, " ".join(p.strip() for p in parts), m.group("drop"), j - start + 1))
    return found


def run(example: Example) -> list[str] | None:
    """The command's output lines (``None`` when bash could not run it at all)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(["bash", "-c", example.command], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=3600, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"{example.path.name}: {example.command}: {exc}", file=sys.stderr)
        return None
    out = proc.stdout.rstrip("\n").splitlines()
    if example.drop:
        out = [line for line in out if not re.search(example.drop, line)]
    while out and not out[-1].strip():
        out.pop()
    return [re.sub(r"\s+$", "", line) for line in out]


def rewrite(path: Path, done: dict[int, list[str]]) -> str:
    """``path`` with the output of each example (by ``start``) put in place; returns the diff."""
    old = path.read_text(encoding="utf-8").splitlines(keepends=False)
    new = list(old)
    for example in sorted(examples(path), key=lambda e: -e.start):
        if example.start in done:
            keep = example.start + example.command_lines
            new[keep:example.end] = done[example.start]
    if new == old:
        return ""
    path.write_text("\n".join(new) + "\n", encoding="utf-8")
    return "".join(difflib.unified_diff([line + "\n" for line in old], [line + "\n" for line in new],
                                        str(path.relative_to(ROOT)), str(path.relative_to(ROOT))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="the Markdown files (default README.md and docs/*.md)")
    parser.add_argument("--list", action="store_true", help="list the marked examples; run nothing")
    args = parser.parse_args(argv)
    files = [p.resolve() for p in args.files] or DOCS
    status = 0
    ran: dict[tuple[str, str | None], list[str]] = {}  # a command documented twice runs once
    for path in files:
        found = examples(path)
        if args.list:
            for example in found:
                print(f"{path.relative_to(ROOT)}:{example.start}: {example.command}")
            continue
        done = {}
        for example in found:
            key = (example.command, example.drop)
            if key not in ran:
                print(f"running {path.relative_to(ROOT)}:{example.start}: {example.command}", file=sys.stderr)
            out = ran[key] if key in ran else run(example)
            if out is not None:
                ran[key] = out
            if out is None:
                status = 1
                continue
            done[example.start] = out
        diff = rewrite(path, done)
        if diff:
            print(diff, end="")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
