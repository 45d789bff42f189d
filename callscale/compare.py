"""Compare two ``scaling.csv`` files: did a parser get slower, or grow faster with length?

    >>> from callscale import compare
    >>> result = compare.compare(compare.load("base/scaling.csv"), compare.load("new/scaling.csv"))
    >>> print(compare.table(result)); result.worse

Per parser and workload present in both files (the ``null`` floor rows are
left out): the scaling exponent of each side (:func:`callscale.fit.exponent`
on the text lengths, characters), and at each length both figures and their
ratio ``new / base``. A pair is **worse** when its exponent grew by more than
``max_step``, its figure grew by more than ``max_ratio`` at any length, or it
failed (raised, timed out) in the new file only; or one request (the ``request`` column: a fresh parser
and its first delta) grew by more than ``max_ratio`` (under the time meter at least
:data:`REQUEST_MIN_RATIO`). Both files must come from
the same meter (instructions compare exactly; times move with load, so the
time defaults are looser). pytest-benchmark's ``compare`` is the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import fit as fitting, tables
from .config import format_size
from .report import fmt_figure

__all__ = ["CompareError", "DEFAULTS", "Pair", "Comparison", "load", "LIMITS", "check_rows", "check_base", "run_triples", "compare", "table", "summary"]

#: ``(max_ratio, max_step)`` per meter: the largest cost ratio and exponent increase that pass.
DEFAULTS = {"instructions": (1.05, 0.05), "time": (1.5, 0.25)}

#: The smallest ratio of one request's cost (the ``request`` column: a fresh parser and its first delta) that
#: fails, per meter, whatever ``max_ratio`` says: a request takes microseconds, so its time moves more than a
#: stream's; an instruction count is exact and takes ``max_ratio`` alone.
REQUEST_MIN_RATIO = {"time": 3.0}

REQUIRED = ("parser", "floor", "workload", "length", "chars", "meter", "seconds", "error")


class CompareError(ValueError):
    """A file that cannot be compared (unreadable, not a scaling.csv, or another meter); one-line message."""


@dataclass
class Pair:
    """One parser on one workload in both files: exponents and figures by length (characters)."""

    parser: str
    workload: str
    base_exponent: float | None
    new_exponent: float | None
    base: dict[int, float | None]
    new: dict[int, float | None]
    new_errors: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def worse(self) -> bool:
        return bool(self.reasons)

    def ratio(self, length: int) -> float | None:
        b, n = self.base.get(length), self.new.get(length)
        return n / b if b and n is not None else None


@dataclass
class Comparison:
    """The pairs in both files, the pairs only in one, the meter and the limits used."""

    meter: str
    max_ratio: float
    max_step: float
    pairs: list[Pair]
    only_base: list[tuple[str, str]]
    only_new: list[tuple[str, str]]

    @property
    def worse(self) -> list[Pair]:
        return [p for p in self.pairs if p.worse]


def load(path: Path | str) -> Any:
    """Read a ``scaling.csv`` (pandas DataFrame). Raises :class:`CompareError` when it cannot be used."""
    import pandas as pd

    path = Path(path)
    try:
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise CompareError(f"cannot read {path}: {' '.join(str(exc).split())}") from None
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise CompareError(f"{path} is not a scaling.csv (no column {missing[0]!r})")
    meters = sorted(set(df["meter"].astype(str)))
    if len(meters) != 1:
        raise CompareError(f"{path} holds {len(meters)} meters ({', '.join(meters)}); expected one")
    df.attrs["path"] = str(path)
    return df


#: The largest figure a row may hold, per meter (instructions; seconds): far past any case callscale measures
#: (10**15 instructions are days under callgrind; 10**5 seconds is a day per repeat), so a figure above it is
#: a corrupt or forged file, not a measurement. A meter not listed takes the time meter's limit.
LIMITS = {"instructions": 1e15, "time": 1e5}


def check_rows(df: Any, *, failed_ok: bool = False) -> None:
    """Refuse a scaling.csv whose figures would make a verdict fail open: raise :class:`CompareError`
    (one line naming the file and its first offending row, by line number) when a row's figure
    (``seconds``) is empty, not a number, zero, negative, not finite or above the meter's limit
    (:data:`LIMITS`), its length is not a whole number of characters, a row repeats an earlier one's
    parser, format, workload and length, or the file holds no rows. ``failed_ok``: a row that holds an
    error (a parser that raised or timed out) needs no figure (a run's own results, as ``gate --from``
    and ``compare``'s new file read them); otherwise such a row is refused too (a baseline needs a figure
    for every row). ``df``: from :func:`load`. The one check every figure that enters a verdict passes."""
    import pandas as pd

    path = df.attrs.get("path", "the file")
    if not len(df):
        raise CompareError(f"{path} holds no rows: nothing to judge")
    figures = pd.to_numeric(df["seconds"], errors="coerce")
    formats = df["format"] if "format" in df.columns else [""] * len(df)
    limit = LIMITS.get(str(df["meter"].iloc[0]), LIMITS["time"])
    seen: dict[tuple, int] = {}
    for at, (row, figure, fmt) in enumerate(zip(df.itertuples(index=False), figures, formats)):
        line = at + 2  # the header is line 1
        where = f"{path} line {line} ({row.parser} on {row.workload} at {_size(row.length)})"
        failed = isinstance(row.error, str) and bool(row.error.strip())
        if failed and not failed_ok:
            raise CompareError(f"{where}: the base run failed there ({' '.join(row.error.split())}); "
                               "a baseline needs a figure for every row")
        if not _whole(row.length):
            raise CompareError(f"{where}: length {row.length!s} is not a whole number of characters")
        if not failed:
            if pd.isna(row.seconds):
                raise CompareError(f"{where}: no figure (seconds is empty) and no error")
            if not math.isfinite(figure) or figure <= 0:
                shown = str(row.seconds) if pd.isna(figure) else f"{figure:g}"
                raise CompareError(f"{where}: figure {shown} is not a positive finite number")
            if figure > limit:
                raise CompareError(f"{where}: figure {figure:g} is above any measurement ({limit:g} under the "
                                   f"{df['meter'].iloc[0]} meter)")
        key = (str(row.parser), str(fmt), str(row.workload), str(row.length))
        if key in seen:
            raise CompareError(f"{where}: repeats line {seen[key]} (one row per parser, format, workload "
                               "and length)")
        seen[key] = line


def check_base(df: Any, run: Iterable[tuple[str, str, int]] | None = None) -> None:
    """Refuse a base file that would silently weaken the comparison: :func:`check_rows` (a row that
    holds an error refused too), and (``run``: the ``(parser, workload, length)`` triples the new run
    measures) no parser row of the file is one of ``run``'s. Raises :class:`CompareError`."""
    if not len(df):
        raise CompareError(f"{df.attrs.get('path', 'the base file')} holds no rows: nothing to compare with")
    check_rows(df)
    path = df.attrs.get("path", "the base file")
    if run is not None:
        wanted = {(str(p), str(w), int(n)) for p, w, n in run}
        ours = _series(df)
        if not any((p, w, int(n)) in wanted for (p, w), group in ours.items() for n in group["length"]):
            parsers = sorted({p for p, _, _ in wanted})
            raise CompareError(f"{path} shares no parser, workload and length with this run "
                               f"({', '.join(parsers[:4])}{', ...' if len(parsers) > 4 else ''} on "
                               f"{', '.join(sorted({w for _, w, _ in wanted}))} at "
                               f"{', '.join(_size(n) for n in sorted({n for _, _, n in wanted}))}): nothing to "
                               "compare with")


def _whole(value: Any) -> bool:
    try:
        return float(value) == int(float(value)) > 0
    except (TypeError, ValueError, OverflowError):
        return False


def _size(length: Any) -> str:
    try:
        return format_size(int(length)) if _whole(length) else str(length)
    except (TypeError, ValueError):
        return str(length)


def run_triples(df: Any) -> list[tuple[str, str, int]]:
    """The ``(parser, workload, length)`` of each parser row (not the floor's) of a scaling.csv."""
    return [(p, w, int(n)) for (p, w), group in _series(df).items() for n in group["length"] if _whole(n)]


def _series(df: Any) -> dict[tuple[str, str], Any]:
    rows = df[~df["floor"].astype(str).str.lower().isin(["true", "1"])]
    return {(str(p), str(w)): g.sort_values("length") for (p, w), g in rows.groupby(["parser", "workload"], sort=False)}


def _exponent(group: Any) -> float | None:
    ok = group[group["error"].isna() & (group["seconds"] > 0)]
    try:
        return fitting.exponent(list(ok["chars"].where(ok["chars"] > 0, ok["length"])), list(ok["seconds"]))
    except ValueError:
        return None


def _figures(group: Any) -> dict[int, float | None]:
    return {int(r.length): (None if isinstance(r.error, str) or not (r.seconds > 0) else float(r.seconds))
            for r in group.itertuples()}


def _requests(group: Any) -> dict[int, float]:
    """The per-request figures of a pair's rows by length (a file without the ``request`` column: none)."""
    if "request" not in group.columns:
        return {}
    return {int(r.length): float(r.request) for r in group.itertuples()
            if isinstance(r.request, (int, float)) and r.request == r.request and r.request > 0}


def compare(base: Any, new: Any, *, max_ratio: float | None = None, max_step: float | None = None) -> Comparison:
    """Pair up ``base`` and ``new`` (DataFrames from :func:`load`) and judge each pair.

    ``max_ratio`` / ``max_step``: default from :data:`DEFAULTS` for the
    files' meter. Raises :class:`CompareError` when the meters differ, the files share no parser x
    workload pair, or ``base`` is no usable baseline (:func:`check_base`).
    """
    meter_base, meter_new = str(base["meter"].iloc[0]), str(new["meter"].iloc[0])
    if meter_base != meter_new:
        raise CompareError(f"the files come from different meters ({meter_base} and {meter_new}); "
                           "compare runs of one meter")
    ratio_default, step_default = DEFAULTS.get(meter_new, DEFAULTS["time"])
    max_ratio = ratio_default if max_ratio is None else max_ratio
    max_step = step_default if max_step is None else max_step
    a, b = _series(base), _series(new)
    if not any(k in a for k in b):
        raise CompareError("the two files have no parser x workload pair in common: nothing to compare")
    check_rows(new, failed_ok=True)
    check_base(base, run_triples(new))
    pairs = []
    for key in [k for k in b if k in a]:
        pair = Pair(key[0], key[1], _exponent(a[key]), _exponent(b[key]), _figures(a[key]), _figures(b[key]))
        pair.new_errors = sorted({str(e) for e in b[key]["error"].dropna()})
        if pair.new_errors and not a[key]["error"].notna().any():
            pair.reasons.append(f"fails now: {pair.new_errors[0]}")
        if pair.base_exponent is not None and pair.new_exponent is not None \
                and pair.new_exponent - pair.base_exponent > max_step:
            pair.reasons.append(f"exponent {pair.base_exponent:.2f} -> {pair.new_exponent:.2f} "
                                f"(+{pair.new_exponent - pair.base_exponent:.2f} > {max_step:g})")
        for length in sorted(set(pair.base) & set(pair.new)):
            ratio = pair.ratio(length)
            if ratio is not None and ratio > max_ratio:
                pair.reasons.append(f"x{ratio:.3g} at {format_size(length)} (> {max_ratio:g})")
        old, now = _requests(a[key]), _requests(b[key])
        limit = max(max_ratio, REQUEST_MIN_RATIO.get(meter_new, max_ratio))
        for length in sorted(set(old) & set(now)):
            if now[length] / old[length] > limit:
                pair.reasons.append(f"a request x{now[length] / old[length]:.3g} at {format_size(length)} (> {limit:g})")
        pairs.append(pair)
    return Comparison(meter_new, max_ratio, max_step, pairs, [k for k in a if k not in b], [k for k in b if k not in a])


def _exponent_cell(pair: Pair) -> str:
    def one(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    cell = f"{one(pair.base_exponent)} -> {one(pair.new_exponent)}"
    if pair.base_exponent is not None and pair.new_exponent is not None:
        cell += f" ({pair.new_exponent - pair.base_exponent:+.2f})"
    return cell


def _length_cell(pair: Pair, length: int) -> str:
    b, n = pair.base.get(length), pair.new.get(length)
    if length not in pair.base or length not in pair.new:
        return "-"
    ratio = pair.ratio(length)
    return f"{fmt_figure(b)} -> {fmt_figure(n)}" + ("" if ratio is None else f" x{ratio:.3f}")


def table(result: Comparison) -> str:
    """Side by side: per pair the exponents and, per length, ``base -> new xratio``; the verdict last."""
    lengths = sorted({n for p in result.pairs for n in (set(p.base) | set(p.new))})
    header = ["parser", "workload", "exponent", *(format_size(n) for n in lengths), "verdict"]
    body = [[p.parser, p.workload, _exponent_cell(p), *(_length_cell(p, n) for n in lengths),
             "WORSE" if p.worse else "ok"] for p in result.pairs]
    lines = [tables.render(header, body)]
    for parser, workload in result.only_base:
        lines.append(f"(only in the base: {parser} on {workload})")
    for parser, workload in result.only_new:
        lines.append(f"(only in the new file: {parser} on {workload})")
    return "\n".join(lines)


def summary(result: Comparison) -> list[str]:
    """One line per worse pair and a closing line."""
    lines = [f"WORSE {p.parser} on {p.workload}: {'; '.join(p.reasons)}" for p in result.worse]
    n = len(result.pairs)
    if result.worse:
        lines.append(f"compare failed: {len(result.worse)} of {n} parser x workload pairs got worse "
                     f"(meter {result.meter}: cost ratio > {result.max_ratio:g} or exponent step > {result.max_step:g})")
    else:
        lines.append(f"compare passed: {n} parser x workload pair{'s' if n != 1 else ''}, every cost ratio <= "
                     f"{result.max_ratio:g} and exponent step <= {result.max_step:g} (meter {result.meter})")
    return lines
