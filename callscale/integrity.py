"""The harness is not changed by what it measures: a run checks callscale's own files after it.

A parser or a workload generator under test runs code (at import, in its
constructor, in every delta) in processes that may write any file the user
can: one that rewrote ``callscale/__main__.py`` (``sys.exit(0)`` first) or
``callscale/fit.py`` would turn the next gate into a silent pass. The
children are separate processes, but they share the files the harness runs
from, and a process running as the user (or as root on a CI runner) can
write them; so :func:`guarded` hashes every file of the package (SHA-256,
``__pycache__`` left out) before the command and again after it, and a run
during which any of them changed, appeared or went away ends with the one
line ``COMMAND failed: callscale's own files changed during the run (NAMES)
...`` and exit status :data:`TAMPERED`, whatever the measurements said
(``gate``, ``scale`` and ``check`` run guarded).

What this cannot see: a change made before the run started (a previous
run's tampering; ``.ci/run`` compares the package's hash before and after
each of its steps, and requires a gate that exits 0 to have printed its
``gate passed:`` line, which a ``sys.exit(0)`` put first never prints), and
a parser that changes its own behaviour without writing any file (it can
detect a meter and behave only there: docs/gate.md says what each meter sees).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

__all__ = ["PACKAGE", "TAMPERED", "Tampered", "snapshot", "changes", "guarded"]

#: The package folder whose files are checked.
PACKAGE = Path(__file__).resolve().parent

#: The exit status of a run during which callscale's own files changed.
TAMPERED = 3


class Tampered(RuntimeError):
    """callscale's own files changed during a run (one-line message)."""


def snapshot(root: Path | str = PACKAGE) -> dict[str, str]:
    """``{path relative to root: SHA-256 of the file's bytes}`` for every file under ``root``
    (``__pycache__`` folders left out; a symbolic link as ``link:TARGET``, an unreadable file as
    ``unreadable``)."""
    root = Path(root)
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in files:
            path = Path(folder, name)
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = "link:" + os.readlink(path)
                continue
            try:
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                found[key] = "unreadable"
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The names that differ: changed ones as they are, ``+NAME`` added, ``-NAME`` removed; sorted."""
    names = sorted(set(before) | set(after))
    return [("+" if n not in before else "-" if n not in after else "") + n
            for n in names if before.get(n) != after.get(n)]


def guarded(command: Callable[[], int], what: str = "gate", root: Path | str = PACKAGE,
            say: Callable[[str], None] = print) -> int:
    """Run ``command`` (returns an exit status) between two :func:`snapshot` of ``root``; its status when
    nothing changed, else :data:`TAMPERED` after ``say``-ing ``WHAT failed: callscale's own files changed
    during the run (...)`` as the closing line. A ``SystemExit`` of ``command`` is judged the same way
    (then raised again when nothing changed)."""
    before = snapshot(root)
    try:
        status = command()
    except SystemExit:
        if changes(before, snapshot(root)):
            return _tampered(before, root, what, say)
        raise
    if changes(before, snapshot(root)):
        return _tampered(before, root, what, say)
    return status


def _tampered(before: dict[str, str], root: Path | str, what: str, say: Callable[[str], None]) -> int:
    changed = changes(before, snapshot(root))
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    say(f"{what} failed: callscale's own files changed during the run ({shown} in {root}): no figure or verdict "
        "of this run holds (a parser or workload measured may have written them; so may an edit made meanwhile)")
    return TAMPERED
