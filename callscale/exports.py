"""The measured figures in other tools' formats: ``--export FORMAT:PATH`` of ``scale`` and ``gate``.

- ``bmf``: Bencher Metric Format JSON (``bencher run --adapter json --file PATH``). One benchmark per
  parser x workload x length, ``PARSER/WORKLOAD/LENGTH`` (length as ``4k``), with the meter's figure: measure
  ``instructions`` (the instruction meter's count) or ``latency`` (the time meter's seconds in nanoseconds,
  Bencher's built-in unit); and one benchmark per parser x workload, ``PARSER/WORKLOAD``, with the fit:
  ``scaling-exponent`` (the least-squares slope), ``steepest-exponent`` (the largest step's) and
  ``projection-ratio`` (projected over linear-projected cost at the reference length). A measurement that
  failed and a figure the fit could not give are left out. The ``null`` floor rows are left out.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from .config import format_size

__all__ = ["FORMATS", "ExportError", "NotRegularFile", "regular_file", "parse", "bmf", "write"]

#: The export formats and what each is.
FORMATS = {"bmf": "Bencher Metric Format JSON"}


class ExportError(ValueError):
    """An ``--export`` value that is not ``FORMAT:PATH`` with a known format (one-line message)."""


class NotRegularFile(OSError):
    """A path callscale would write that is there and is no regular file (one-line message)."""


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def regular_file(path: Path | str) -> Path:
    """``path`` when callscale may write a file there: nothing is there, or a regular file (not followed
    through a symbolic link). Every file callscale writes for a person or another tool (``--export``,
    ``--summary``, the results in ``--out``) passes here first, so no run replaces or writes into a
    device node (``/dev/full``, ``/dev/null``), a directory, a named pipe (which would block the run), a
    socket or a symbolic link. Raises :class:`NotRegularFile` saying what is there."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise NotRegularFile(f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        return path
    kind = next((name for test, name in _KINDS if test(mode)), "no regular file")
    raise NotRegularFile(f"{path} is {kind}; callscale writes only regular files (give a file's path)")


def parse(spec: str) -> tuple[str, Path]:
    """``"bmf:results/bmf.json"`` -> ``("bmf", Path("results/bmf.json"))``. Raises :class:`ExportError`
    for an unknown format and for a path where something other than a regular file is
    (:func:`regular_file`)."""
    fmt, sep, path = spec.partition(":")
    if not sep or not path or fmt not in FORMATS:
        raise ExportError(f"--export {spec}: expected FORMAT:PATH with FORMAT one of "
                          f"{', '.join(f'{k} ({v})' for k, v in FORMATS.items())}")
    try:
        return fmt, regular_file(path)
    except NotRegularFile as exc:
        raise ExportError(f"--export {spec}: {exc}") from None


def _metric(value: float | None) -> dict[str, float] | None:
    if value is None or not math.isfinite(value):
        return None
    return {"value": float(value)}


def bmf(run: Any) -> dict[str, dict[str, dict[str, float]]]:
    """The Bencher Metric Format document of ``run`` (:class:`callscale.matrix.Run`; the module docstring)."""
    measure, scale = ("instructions", 1.0) if run.meter == "instructions" else ("latency", 1e9)
    doc: dict[str, dict[str, dict[str, float]]] = {}
    for row in run.rows:
        for m in row.measurements:
            metric = _metric(None if m.error or m.seconds is None else m.seconds * scale)
            if metric is not None:
                doc[f"{row.parser}/{row.workload}/{format_size(m.length)}"] = {measure: metric}
        fit = {k: v for k, v in (("scaling-exponent", _metric(row.fit.exponent)),
                                 ("steepest-exponent", _metric(row.fit.steepest)),
                                 ("projection-ratio", _metric(row.fit.projection_ratio))) if v is not None}
        if fit:
            doc[f"{row.parser}/{row.workload}"] = fit
    return doc


def write(fmt: str, path: Path | str, run: Any) -> Path:
    """Write ``run`` as ``fmt`` to ``path`` (through a temporary file; parents made). Returns the path;
    raises ``OSError`` (:class:`NotRegularFile` when something other than a regular file is there)."""
    path = regular_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"bmf": bmf}[fmt](run), indent=1) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
