"""What a run shows: the console table, the tidy CSVs, the log-log plot and the gate's verdict lines.

- :func:`table`: parser x workload -> figure at each length, growth per 4x
  (from the exponent, and measured between consecutive lengths), exponent,
  multiple of the ``null`` floor, slowest increment (ms), verdict.
- :func:`write_csv`: ``scaling.csv``, one row per measurement (tidy), and
  :func:`write_fits_csv`: ``scaling-fits.csv``, one row per parser x workload.
- :func:`plot`: ``scaling.png``, per workload each parser's cost as a multiple of the floor,
  failing parsers in colour, labels at line ends (matplotlib, Agg backend, no display needed).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from . import tables
from .config import DEFAULTS, format_size
from .fit import ERROR, FAIL, PROJECTION_MIN_STEP, TIMEOUT, WRONG_OUTPUT, request_words
from .matrix import Row, Run
from .measure import NULL, Measurement

__all__ = ["CSV_COLUMNS", "FIT_COLUMNS", "fmt_figure", "STYLES", "WIDTH", "GROUP_OVER", "compact", "show",
           "machine", "total_line", "stream", "table", "error_lines", "gate_lines", "frame",
           "why", "fits_frame", "write_csv", "write_fits_csv", "plot", "OUTPUTS", "PARTIAL", "write_outputs",
           "write_partial", "check_writable", "OutInUse", "lock_out", "JOURNAL", "Journal", "space_needed", "reserve", "Reservation"]

OUTPUTS = ("scaling.csv", "scaling-fits.csv", "scaling.png")
"""The set ``scale`` writes: measurements, fits, plot."""
PARTIAL = "scaling.partial.csv"
"""Where the measurements taken before an interrupt go."""
SUMMARY = "summary.md"
"""The Markdown summary's name in ``--out`` (:mod:`callscale.summary` writes it)."""
JOURNAL = "scaling.journal.{pid}.csv"
"""Where each measurement goes as it is taken (:class:`Journal`; ``{pid}`` the run's process id, so two
runs sharing one ``--out`` keep a journal each); removed once the set is written."""

CSV_COLUMNS = ["parser", "floor", "format", "workload", "length", "chars", "chunking", "deltas", "meter", "repeats",
               "seconds", "floor_seconds", "x_floor", "max_increment_ms", "peak_bytes", "error", "wrong", "tokenizer",
               "request"]
"""Columns of ``scaling.csv``: ``floor`` is true on the ``null`` parser's rows (pandas reads the
name ``null`` as missing unless ``keep_default_na=False``); lengths in characters, ``seconds`` the meter's figure
(process seconds, min over ``repeats``), ``floor_seconds`` the ``null`` parser's on the
same deltas, ``x_floor`` their ratio, ``max_increment_ms`` the slowest single call,
``peak_bytes`` peak traced memory, ``error`` the exception of a failed run (or why its process ended,
in words), ``wrong`` the first difference of the parser's result from the case's (:mod:`callscale.verify`),
``tokenizer`` what cut the deltas under a ``model`` chunking (the real tokenizer's package and version, or
``stand-in``; empty under the character chunkings), ``request`` the cost of one request in the meter's unit (a
fresh parser made and given the case's first delta; the instruction meter counts it at each row's first length
only, empty elsewhere)."""

FIT_COLUMNS = ["parser", "format", "workload", "lengths", "exponent", "growth_per_4x", "steepest_exponent",
               "threshold", "a", "b", "reference_length", "projected", "linear_projected", "projection_ratio",
               "projection_factor", "verdict", "rule", "reason", "axis", "request_ratio", "request_factor"]
"""Columns of ``scaling-fits.csv``: ``exponent`` the least-squares log-log slope, ``steepest_exponent`` the
largest step's; ``a``, ``b`` the non-negative fit ``cost = a*n + b*n**2`` (n in characters);
``projected`` that fit at ``reference_length`` characters, ``linear_projected`` the fit at the longest
length scaled linearly to it, ``projection_ratio`` their ratio; ``rule`` which rule failed (``step``,
``projection``, both joined by ``+``, ``timeout`` or ``error``; empty when the pair passed); ``axis`` the size
axis the fit is on: ``characters``, or ``deltas`` under a ``model`` chunking where that judged better
(:mod:`callscale.fit`; ``a``, ``b`` per delta then); ``request_ratio`` one request's cost (a fresh parser and its
first delta) over the floor's, ``request_factor`` the largest that passes (:func:`callscale.fit.judge_request`)."""

_METER_NOTE = {
    "time": "process seconds, min of {repeats} runs",
    "instructions": "instructions of the streaming alone, counted by callgrind (exact; meter: instructions)",
}
_UNIT = {"time": "s", "instructions": "instr"}


def fmt_figure(value: float | None) -> str:
    """A figure with three significant digits in fixed notation, thousands separated by commas from 100 up
    (``3,651,688``; ``-`` for ``None``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{digits}f}"


def _growth(row: Row) -> str:
    fit = row.fit
    if fit.growth_per_4x is None:
        return "-"
    steps = ", ".join(f"{s:.1f}" for s in fit.steps if not math.isnan(s))
    return f"{fit.growth_per_4x:.1f} ({steps})" if steps else f"{fit.growth_per_4x:.1f}"


def _failure(error: str) -> str:
    return TIMEOUT if error.startswith(TIMEOUT) else "error"


def _cells(row: Row, run: Run) -> list[str]:
    by_length = {m.length: m for m in row.measurements}
    figures = []
    for length in run.lengths:
        m = by_length.get(length)
        figures.append("-" if m is None else (_failure(m.error) if m.error else fmt_figure(m.seconds)))
    x_floor = "1.0" if row.floor else fmt_figure(row.x_floor(run.floors))
    verdict = "floor" if row.floor else row.fit.verdict
    rule = "-" if row.floor or not row.fit.rule else row.fit.rule
    fit = row.fit
    exponent = "-" if fit.exponent is None else f"{fit.exponent:.2f}"
    steepest = "-" if fit.steepest is None else f"{fit.steepest:.2f}"
    ratio = fit.projection_ratio
    projected = "-" if ratio is None else f"{fmt_figure(fit.projected)} ({ratio:.1f}x)"
    axis = [fit.axis if fit.exponent is not None else "-"] if _by_model(run) else []
    return [row.parser + (" (median floor)" if row.floor else ""), row.workload, *figures, *axis, _growth(row), exponent,
            steepest, projected, fmt_figure(fit.linear_projected), x_floor, fmt_figure(row.max_increment_ms),
            rule, verdict]


def _ordered_rows(run: Run) -> list[list[Row]]:
    groups = []
    for workload in run.workloads:
        group = [r for r in run.floor_rows if r.workload == workload]
        group += [r for r in run.rows if r.workload == workload]
        if group:
            groups.append(group)
    return groups


STYLES = ("table", "wide", "json", "csv", "markdown")
"""What ``scale`` and ``gate`` print (``--wide``, ``--format``): ``table`` the compact table that fits
:data:`WIDTH` columns (:func:`compact`), ``wide`` every column (:func:`table`); for machines and pull
requests ``json``, ``csv`` (the rows of ``scaling-fits.csv``) and ``markdown`` (:func:`machine`), alone on
stdout, the verdict lines on stderr."""
MACHINE = ("json", "csv", "markdown")
WIDTH = 120
"""The columns the compact output fits: a longer line (an exception's text, a failing pair's reason) is
wrapped, its rest indented."""
GROUP_OVER = 30
"""Passing pairs over which the compact table gives one line per parser (the range over its workloads)
in place of one per pair; a failing pair always has a line of its own, first."""


def _two(value: float | None) -> str:
    return "-" if value is None else f"{0.0 if abs(value) < 0.005 else value:.2f}"  # no "-0.00"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def _pair_cells(row: Row, run: Run) -> list[str]:
    """A compact line's cells: parser, workload, exponent, steepest, x linear, x floor, failed rule, verdict."""
    fit = row.fit
    axis = [fit.axis if fit.exponent is not None else "-"] if _by_model(run) else []
    return [row.parser + (" (median floor)" if row.floor else ""), row.workload, *axis, _two(fit.exponent),
            _two(fit.steepest), _times(fit.projection_ratio),
            "1.0" if row.floor else fmt_figure(row.x_floor(run.floors)),
            "-" if row.floor or not fit.rule else fit.rule, "floor" if row.floor else fit.verdict]


def _span(values: list[float], shown) -> str:
    """``lo..hi`` of ``values`` each ``shown`` (one figure when they show alike; ``-`` when none)."""
    if not values:
        return "-"
    lo, hi = shown(min(values)), shown(max(values))
    return lo if lo == hi else f"{lo}..{hi}"


def _group_cells(name: str, rows: list[Row], run: Run, of: int) -> list[str]:
    """One line for ``rows`` (one parser's passing pairs, or the floor's): the range of the exponent and of
    x floor over them, the highest steepest step and x linear, and their verdicts."""
    fits = [r.fit for r in rows]
    floors = [x for r in rows if (x := r.x_floor(run.floors)) is not None]
    verdicts = sorted({"floor" if r.floor else r.fit.verdict for r in rows})
    axis = ["/".join(sorted({f.axis for f in fits if f.exponent is not None})) or "-"] if _by_model(run) else []
    return [name, f"all {of}" if len(rows) == of else f"{len(rows)} of {of}", *axis,
            _span([f.exponent for f in fits if f.exponent is not None], _two),
            _two(max((f.steepest for f in fits if f.steepest is not None), default=None)),
            _times(max((f.projection_ratio for f in fits if f.projection_ratio is not None), default=None)),
            "1.0" if rows[0].floor else _span(floors, fmt_figure), "-", "/".join(verdicts)]


def _request_lines(run: Run, grouped: bool) -> list[list[str]]:
    """The compact table's request lines: per parser, one request's cost (a fresh parser and its first delta)
    as a multiple of the floor's, in the ``x floor`` column (the highest over its workloads); a parser whose
    request fails has a line of its own, the others one line when ``grouped``."""
    by_parser: dict[str, list[Row]] = {}
    for r in run.rows:
        if r.fit.request_ratio is not None:
            by_parser.setdefault(r.parser, []).append(r)
    dashes = ["-"] * (4 if _by_model(run) else 3)
    lines, passing = [], []
    for name, rows in by_parser.items():
        worst = max(r.fit.request_ratio for r in rows)
        if any("request" in r.fit.rule for r in rows):
            lines.append([name, "request", *dashes, fmt_figure(worst), "request", FAIL])
        else:
            passing.append((name, worst))
    if grouped and len(passing) > 1:
        lines.append([f"{len(passing)} parsers", "request", *dashes,
                      _span([x for _, x in passing], fmt_figure), "-", "ok"])
    else:
        lines += [[name, "request", *dashes, fmt_figure(x), "-", "ok"] for name, x in passing]
    return lines


def _request_factor(run: Run) -> float | None:
    """The per-request rule's factor where the run judged it (:func:`callscale.fit.judge_request`)."""
    return next((r.fit.request_factor for r in run.rows if r.fit.request_factor is not None), None)


def _request_note(run: Run) -> str:
    factors = {r.fit.request_factor for r in run.rows if r.fit.request_factor is not None}
    if not factors:
        return ""
    return (f"; request: one request (a fresh parser and its first delta) x the floor's, FAIL over "
            f"{'/'.join(f'{f:g}' for f in sorted(factors))} (rule request)")


def _compact_header(run: Run) -> list[str]:
    return ["parser", "workload", *(["axis"] if _by_model(run) else []), "exponent", "steepest", f"x linear @{format_size(int(_reference(run)))}",
            "x floor", "rule", "verdict"]


def _compact_figures(run: Run) -> set[int]:
    """The compact table's columns of figures (aligned right): exponent to x floor."""
    first = 3 if _by_model(run) else 2
    return set(range(first, first + 4))


def _failing_first(run: Run) -> tuple[list[Row], list[Row]]:
    failing = run.offenders
    return failing, [r for r in run.rows if r not in failing]


def compact(run: Run, *, out: Path | str | None = None) -> str:
    """The console table that fits :data:`WIDTH` columns: one line per parser x workload with what decides
    its verdict (exponent, steepest step, the projection's multiple of linear, x floor, failed rule,
    verdict), the failing pairs first, the ``null`` floor last; over :data:`GROUP_OVER` passing pairs, one
    line per parser for them (``all 6`` workloads, figures as ranges or the highest). Then what the columns
    are and where every figure is (``out``: the folder the CSVs go to; :func:`table` is the wide table)."""
    failing, passing = _failing_first(run)
    workloads = [w for w in run.workloads if any(r.workload == w for r in run.rows + run.floor_rows)]
    grouped = len(passing) > GROUP_OVER and len(workloads) > 1
    body: list[list[str] | None] = [_pair_cells(r, run) for r in failing]
    if grouped:
        parsers: dict[str, list[Row]] = {}
        for r in passing:
            parsers.setdefault(r.parser, []).append(r)
        good = [_group_cells(name, rows, run, len(workloads)) for name, rows in parsers.items()]
        floor = [_group_cells(f"{NULL} (median floor)", run.floor_rows, run, len(workloads))] if run.floor_rows else []
    else:
        good = [_pair_cells(r, run) for r in passing]
        floor = [_pair_cells(r, run) for r in run.floor_rows]
    for part in (good, _request_lines(run, grouped), floor):
        body += ([None] if body and part else []) + part
    reference = format_size(int(_reference(run)))
    note = _METER_NOTE.get(run.meter, run.meter).format(repeats=run.repeats)
    notes = [f"figures: {note}; chunking {run.chunking}; lengths {', '.join(format_size(n) for n in run.lengths)} "
             f"characters (k = 1024)" + ("; a workload named W+CHUNKING is split by that chunking"
                                         if any("+" in w for w in run.workloads) else "")
             + (_model_note(run) if _by_model(run) else ""),
             f"exponent: the log-log slope; steepest: the largest step's; x linear: the cost fitted at {reference} "
             f"over the linear projection (docs/gate.md); x floor: cost at {format_size(run.lengths[-1])} / the null "
             f"parser's",
             f"FAIL: steepest > {run.threshold:g} (rule step), or x linear > {_factor(run):g} with a step over "
             f"{PROJECTION_MIN_STEP:g} (rule projection)"
             + ("; a pair failing by time is measured again, the minimum kept" if run.meter == "time" else "")
             + _request_note(run)]
    where = f"; every figure: {Path(out) / OUTPUTS[0]}" if out is not None else ""
    if grouped:
        notes.append(f"passing pairs: a line per parser (exponent, x floor: lowest..highest; steepest, x linear: the "
                     f"highest); a line per pair: --wide or --format csv{where}")
    else:
        notes.append(f"every column: --wide{where}")
    return "\n".join([tables.render(_compact_header(run), body, right=_compact_figures(run)), "", *_wrapped(notes)])


def total_line(run: Run) -> str:
    """The one-line total: pairs, parsers x workloads, how many passed and failed (by verdict)."""
    parsers = len({r.parser for r in run.rows})
    workloads = len({r.workload for r in run.rows})
    counts: dict[str, int] = {}
    for r in run.rows:
        counts[r.fit.verdict] = counts.get(r.fit.verdict, 0) + 1
    failed = len(run.offenders)  # a wrong output judged by its cost alone (--cost-only) passes
    verdicts = ", ".join(f"{n:,} {v}" for v, n in sorted(counts.items(), key=lambda item: item[0] != "ok"))
    return (f"{len(run.rows):,} parser x workload pair{'s' if len(run.rows) != 1 else ''} ({parsers} parser"
            f"{'s' if parsers != 1 else ''} x {workloads} workload{'s' if workloads != 1 else ''}): "
            f"{verdicts or 'none'}" + ("" if failed else ", all passed"))


def _wrapped(lines: list[str], width: int = WIDTH) -> list[str]:
    """Each line cut at spaces to ``width`` columns, the rest indented by two spaces."""
    import textwrap

    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False,
                             break_on_hyphens=False) if len(line) > width else [line]
    return out


def machine(run: Run, style: str) -> str:
    """The run for a machine or a pull request: ``json`` (the run's settings, ``passed``, and per parser x
    workload the figure at each length (characters -> the meter's unit), the fit and the verdict; the
    floor rows with ``"floor": true``), ``csv`` (the rows of ``scaling-fits.csv``, :data:`FIT_COLUMNS`) or
    ``markdown`` (every pair's compact line, the failing first, and the total). Raises ``ValueError``
    on another ``style``."""
    if style == "json":
        import json

        pairs = []
        for row, record in zip([*run.floor_rows, *run.rows], _fit_records(run)):
            record = {k: v for k, v in record.items() if k not in ("lengths", "threshold")}
            record["floor"] = row.floor
            record["x_floor"] = 1.0 if row.floor else row.x_floor(run.floors)
            record["max_increment_ms"] = row.max_increment_ms
            record["figures"] = {str(m.length): m.seconds for m in row.measurements if not m.error}
            record["errors"] = {str(m.length): m.error for m in row.measurements if m.error}
            pairs.append(record)
        def finite(value: Any) -> Any:  # JSON has no NaN or infinity: null
            if isinstance(value, float) and not math.isfinite(value):
                return None
            if isinstance(value, dict):
                return {k: finite(v) for k, v in value.items()}
            if isinstance(value, list):
                return [finite(v) for v in value]
            return value

        return json.dumps(finite({"meter": run.meter, "unit": _UNIT.get(run.meter, run.meter),
                                  "chunking": str(run.chunking), "repeats": run.repeats, "lengths": list(run.lengths),
                                  "threshold": run.threshold, "passed": run.passed, "pairs": pairs}),
                          indent=2, allow_nan=False, default=str)
    if style == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, FIT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in _fit_records(run))
        return buffer.getvalue().rstrip("\n")
    if style == "markdown":
        failing, passing = _failing_first(run)
        body = [_pair_cells(r, run) for r in [*failing, *passing, *run.floor_rows]]
        return tables.render(_compact_header(run), body, right=_compact_figures(run), markdown=True) + "\n\n" + total_line(run)
    raise ValueError(f"no machine style {style!r}; one of {', '.join(MACHINE)}")


def stream(style: str):
    """Where the human lines go under ``style``: stdout, or stderr when stdout holds a machine style."""
    import sys

    return sys.stderr if style in MACHINE else sys.stdout


def show(run: Run, style: str = "table", *, gate: bool = False, out: Path | str | None = None) -> None:
    """Print ``run`` in ``style`` (:data:`STYLES`): the table (:func:`compact` or the wide :func:`table`)
    and the errors, then the gate's verdict lines (``gate``) or the :func:`total`; a machine style alone on
    stdout, the error and verdict lines on stderr. ``out``: where :func:`write_outputs` puts the files."""
    if style in MACHINE:
        print(machine(run, style))
    else:
        print(table(run) if style == "wide" else compact(run, out=out))
    say = stream(style)
    fit = _wrapped if style != "wide" else (lambda lines: lines)
    for line in fit([f"error: {line}" for line in error_lines(run)]):
        print(line, file=say)
    if gate:
        print(file=say)
        for line in fit(gate_lines(run)):
            print(line, file=say)
    elif style != "wide":
        print(total_line(run), file=say)


def table(run: Run) -> str:
    """The console table, grouped by workload, the ``null`` floor row first in each group."""
    unit = _UNIT.get(run.meter, run.meter)
    reference = format_size(int(_reference(run)))
    header = ["parser", "workload", *(f"{format_size(n)} {unit}" for n in run.lengths),
              *(["axis"] if _by_model(run) else []), "growth/4x",
              "exponent", "steepest", f"@{reference} (x linear)", f"linear @{reference}", "x floor", "max inc ms",
              "failed rule", "verdict"]
    groups = [[_cells(row, run) for row in group] for group in _ordered_rows(run)]
    numeric = set(range(2, len(header) - 2)) - ({header.index("axis")} if "axis" in header else set())
    body: list[list[str] | None] = []
    for i, group in enumerate(groups):
        body += ([None] if i else []) + group
    lines = [tables.render(header, body, right=numeric)]
    note = _METER_NOTE.get(run.meter, run.meter).format(repeats=run.repeats)
    lines.append("")
    lines.append(f"figures: {note}; chunking {run.chunking}; lengths in characters (k = 1024); "
                 f"growth/4x = 4**exponent (measured per step); x floor = cost at "
                 f"{format_size(run.lengths[-1])} / the null parser's on the same deltas (the median floor row: "
                 f"the median over the formats' floors); steepest = the largest exponent between two consecutive "
                 f"lengths; @{reference} = c + a*n + b*n**2 (a, b >= 0, least squares; docs/gate.md) at {reference} characters, "
                 f"(x linear) = over the linear projection of the longest length; verdict FAIL when "
                 f"steepest > {run.threshold:g} (rule step) or x linear > {_factor(run):g} with a step over "
                 f"{PROJECTION_MIN_STEP:g} (rule projection)"
                 + ("; or max inc ms (the slowest increment, each the minimum over the runs) grows between the two "
                    "longest lengths by an exponent over 0.5 and is over 100x the mean increment (rule increment)"
                    if run.meter == "time" and any(m.max_increment_ms is not None for m in run.measurements) else "")
                 + ("; a pair that fails by time is measured again and the minimum kept" if run.meter == "time" else "")
                 + ("; a workload named W+CHUNKING is split by that chunking" if any("+" in w for w in run.workloads)
                    else "")
                 + (_model_note(run) if _by_model(run) else ""))
    return "\n".join(lines)


def _by_model(run: Run) -> bool:
    """Whether the run's deltas are the model's tokens (a ``model`` chunking)."""
    return str(run.chunking).startswith("model")


def _model_note(run: Run) -> str:
    """The table note's part for a ``model`` chunking: the size axis, and the tokenizer per format."""
    named: dict[str, str] = {}
    for m in run.measurements:
        if m.tokenizer and m.format not in named:
            named[m.format] = m.tokenizer
        elif m.tokenizer and m.tokenizer not in named[m.format]:  # a subject's own delivery (adapters/protocol.py)
            named[m.format] += f" ({m.parser}: {m.tokenizer})"
    return (f"; axis = the size axis: characters, or the number of deltas (the model's tokens) where a pair "
            f"that fails on characters does better on it (docs/gate.md); growth, exponent, steepest and the "
            f"projection are on that axis, on deltas at {format_size(int(_reference(run)))} characters' worth of "
            f"deltas at the longest length's characters per delta"
            + (f"; tokenizers: {', '.join(f'{fmt} {name}' for fmt, name in named.items())}" if named else ""))


def _reference(run: Run) -> float:
    fits = [r.fit for r in run.rows + run.floor_rows]
    return fits[0].reference_length if fits else DEFAULTS.reference_length


def _factor(run: Run) -> float:
    fits = [r.fit for r in run.rows + run.floor_rows]
    return fits[0].projection_factor if fits else 2.0


def error_lines(run: Run) -> list[str]:
    """One line per parser x workload x exception: who, at which lengths, and the exception."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for m in run.measurements:
        if m.error:
            groups.setdefault((m.parser, m.workload, m.error), []).append(m.length)
    return [f"{parser} on {workload} at {', '.join(format_size(n) for n in lengths)}: {error}"
            for (parser, workload, error), lengths in groups.items()]


def _per_length(row: Row, unit: str = "s") -> str:
    parts = []
    for m in row.measurements:
        parts.append(f"{format_size(m.length)}: " + (_failure(m.error) if m.error else f"{fmt_figure(m.seconds)} {unit}"))
    return ", ".join(parts)


def why(row: Row, run: Run) -> str:
    """Why ``row`` (an offender of ``run``) failed, in one line: the rule with its figures, the exponent and
    the figure at each length (the part of its :func:`gate_lines` line after ``FAIL parser on workload``)."""
    fit = row.fit
    unit = _UNIT.get(run.meter, run.meter)
    if fit.verdict in (ERROR, TIMEOUT):
        return f"({fit.rule}): no exponent ({fit.reason}); {_per_length(row, unit)}"
    if fit.verdict == WRONG_OUTPUT:  # the parser did not parse the workload: its cost does not count
        return f"(wrong output): {fit.reason}"
    reasons = []
    if "step" in fit.rule:
        reasons.append(f"steepest step {fit.steepest:.2f} > {run.threshold:g}")
    if "projection" in fit.rule:
        ratio = fit.projection_ratio
        shown = "inf" if ratio is None else f"{ratio:.1f}x"
        reasons.append(f"projected at {format_size(int(fit.reference_length))} {shown} the linear projection > "
                       f"{fit.projection_factor:g}x")
    if "increment" in fit.rule and not reasons:
        reasons.append(fit.reason or "the slowest increment grows")
    if "request" in fit.rule:
        reasons.append(request_words(fit))
    exponent = "-" if fit.exponent is None else f"{fit.exponent:.2f}"
    return f"({fit.rule}): {'; '.join(reasons)} (exponent {exponent}); {_per_length(row, unit)}"


def gate_lines(run: Run) -> list[str]:
    """The gate's verdict: one line per offender (exponent and figure per length), then a summary."""
    lines = [f"FAIL {row.parser} on {row.workload} {why(row, run)}" for row in run.offenders]
    if run.second_looks:
        cleared = [f"{p} on {w}" for p, w, verdict in run.second_looks if verdict != FAIL]
        lines.append(f"second look: {len(run.second_looks)} pair(s) failed once by time and were measured again; "
                     f"{len(cleared)} passed then" + (f" ({', '.join(cleared)})" if cleared else ""))
    total = len(run.rows)
    factor = _request_factor(run)
    if factor is not None:
        failing = sum("request" in r.fit.rule for r in run.rows)
        lines.append(f"requests: {'every one' if not failing else f'{total - failing} of {total}'} within {factor:g}x the "
                     f"floor's (one request: a fresh parser and its first delta; rule request)")
    judged_alone = [r for r in run.rows if r.fit.verdict == WRONG_OUTPUT and r.fit.passed]
    if judged_alone:
        lines.append(f"--cost-only: {len(judged_alone)} pair(s) with wrong output judged by their cost alone ("
                     + ", ".join(f"{r.parser} on {r.workload}" for r in judged_alone) + ")")
    if run.passed:
        lines.append(f"gate passed: {total:,} parser x workload pair{'s' if total != 1 else ''}, "
                     f"every step exponent <= {run.threshold:g} and every projection at "
                     f"{format_size(int(_reference(run)))} <= {_factor(run):g}x the linear one"
                     + (f" or its steps within {PROJECTION_MIN_STEP:g} (fit.PROJECTION_MIN_STEP)"
                        if any((r.fit.projection_ratio or 0) > _factor(run) for r in run.rows) else ""))
    else:
        lines.append(f"gate failed: {len(run.offenders):,} of {total:,} parser x workload pairs broke a rule "
                     f"(step <= {run.threshold:g}, projection <= {_factor(run):g}x linear), timed out or raised")
    return lines


def closing(run: Run, *, worse: bool = False, written: bool = True, summary: bool = True,
            exported: bool = True) -> int:
    """The gate's exit status once everything after the verdict ran: 1 when the rules failed a pair
    (:func:`gate_lines` closed with ``gate failed:``), or when they passed but a pair got worse than the
    baseline or a result, the summary or an export could not be written: then the closing line
    ``gate failed: ...`` is printed here, so the last verdict line always says what the status says;
    else 0 (the ``gate passed:`` line stands)."""
    if not run.passed:
        return 1
    why = [what for what, bad in (("a pair got worse than the baseline", worse),
                                  ("the results could not be written", not written),
                                  ("the summary could not be written", not summary),
                                  ("an export could not be written", not exported)) if bad]
    if why:
        print(f"gate failed: {'; '.join(why)} (every pair passed the rules)")
        return 1
    return 0


def frame(run: Run):
    """The tidy table of measurements (pandas DataFrame, :data:`CSV_COLUMNS`)."""
    import pandas as pd

    return pd.DataFrame.from_records(_records(run), columns=CSV_COLUMNS)


def _records(run: Run) -> list[dict]:
    """One dict per measurement, the keys of :data:`CSV_COLUMNS` (what :func:`frame` tabulates)."""
    records = []
    for m in run.measurements:
        row = m.as_row()
        row["floor"] = m.parser == NULL
        floor = run.floors.get((m.format, m.workload, m.length))
        floor_s = floor.seconds if floor is not None else None
        row["floor_seconds"] = floor_s
        row["x_floor"] = m.seconds / floor_s if m.seconds is not None and floor_s else None
        records.append(row)
    return records


def fits_frame(run: Run):
    """One row per parser x workload (pandas DataFrame, :data:`FIT_COLUMNS`); floor rows included."""
    import pandas as pd

    return pd.DataFrame.from_records(_fit_records(run), columns=FIT_COLUMNS)


def _fit_records(run: Run) -> list[dict]:
    """One dict per parser x workload, the floor rows first (the keys of :data:`FIT_COLUMNS`)."""
    records = []
    for row in [*run.floor_rows, *run.rows]:
        records.append({
            "parser": row.parser,
            "format": row.format,
            "workload": row.workload,
            "lengths": ",".join(format_size(m.length) for m in row.measurements),
            "exponent": row.fit.exponent,
            "growth_per_4x": row.fit.growth_per_4x,
            "steepest_exponent": row.fit.steepest,
            "threshold": run.threshold,
            "a": row.fit.a,
            "b": row.fit.b,
            "reference_length": int(row.fit.reference_length),
            "projected": row.fit.projected,
            "linear_projected": row.fit.linear_projected,
            "projection_ratio": row.fit.projection_ratio,
            "projection_factor": row.fit.projection_factor,
            "verdict": "floor" if row.floor else row.fit.verdict,
            "rule": None if row.floor else (row.fit.rule or None),
            "reason": row.fit.reason or None,
            "axis": row.fit.axis,
            "request_ratio": row.fit.request_ratio,
            "request_factor": row.fit.request_factor,
        })
    return records


def write_csv(run: Run, path: Path | str) -> Path:
    """Write :func:`frame` to ``path`` (parent folders made); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame(run).to_csv(path, index=False)
    return path


def write_fits_csv(run: Run, path: Path | str) -> Path:
    """Write :func:`fits_frame` to ``path``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fits_frame(run).to_csv(path, index=False)
    return path


def _per_character(row: Row, scale: float) -> tuple[list[float], list[float]]:
    """The row's (length in characters, cost per character x ``scale``) points, where it was measured."""
    xs, ys = [], []
    for m in row.measurements:
        chars = m.chars or m.length
        if m.seconds and m.seconds > 0 and chars:
            xs.append(float(chars))
            ys.append(m.seconds / chars * scale)
    return xs, ys


def _spread(values: list[float], gap: float) -> list[float]:
    """Move sorted label positions (log10 units) apart by at least ``gap``, keeping their order."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed = list(values)
    for before, i in zip(order, order[1:]):
        placed[i] = max(placed[i], placed[before] + gap)
    return placed


def wrap_title(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``fontsize`` points (about 0.55 em a character)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(20, int(width_inches * 72 / (fontsize * 0.55)))))


PASSING_COLORS = ["#1b9e77", "#7570b3", "#66a61e", "#a6761d", "#1f78b4", "#666666", "#e6ab02", "#6a3d9a",
                  "#b15928", "#33a02c"]
"""The line colours of passing parsers in ``scaling.png``, one per parser in turn (no red: red is a failure)."""


def literal_text(draw):
    """``draw`` with every text of its figure shown as written: no mathtext, so a ``$`` in a parser's or a
    workload's name is a dollar sign, never a formula (nor a parse error at saving)."""
    import functools

    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return drawn


@literal_text
def plot(run: Run, path: Path | str) -> Path:
    """Write ``scaling.png``: per workload, each parser's cost per character against length.

    One panel per workload, log-log: cost per character (nanoseconds of
    process time, or instructions, per character of the call) against the
    call's length. A parser whose cost grows linearly is flat (or falls a
    little where a fixed cost spreads over more characters); a quadratic term
    rises, by x4 per 4x when it dominates (the dashed guide). The ``null``
    floor (the median floor row: receiving the deltas and nothing else) is the
    thick grey line. Passing parsers are thin, each in a muted colour of its own
    (:data:`PASSING_COLORS`, the same in every panel); failing ones (any rule,
    a timeout or an error) thick in bright colour. Each line is labelled at its end
    with the parser and its steepest step exponent, a failing one also with
    its projection ratio and verdict: the two figures the rules judge
    (:func:`callscale.fit.fit`). Uses the Agg backend directly (no display).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    workloads = [w for w in run.workloads if any(r.workload == w for r in run.rows)] or ["-"]
    width = max(7.5, 5.6 * len(workloads))
    fig = Figure(figsize=(width, 6.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(workloads), sharey=True, squeeze=False)[0]
    offenders = {(r.parser, r.workload) for r in run.offenders}
    bad_colors = ["#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    bad_index: dict[str, int] = {}
    good_index: dict[str, int] = {}
    scale, unit = (1e9, "ns of process time") if run.meter == "time" else (1.0, f"{run.meter}")
    panels = {w: ([_per_character(r, scale) for r in run.floor_rows if r.workload == w],
                  [(r, *_per_character(r, scale)) for r in run.rows if r.workload == w]) for w in workloads}
    values = [y for floors, rows in panels.values() for xs, ys in floors + [(x, y) for _, x, y in rows] for y in ys]
    firsts = [min(ys) for _, rows in panels.values() for _, xs, ys in rows if ys]
    x0 = min(run.lengths)
    if values:  # the guide starts under the lowest parser and rises x (longest / shortest)
        guide = min(firsts, default=min(values)) / 2
        lo = min(min(values), guide) / 1.5
        hi = max(max(values), guide * max(run.lengths) / x0) * 1.5
        decades = math.log10(hi / lo)
    for ax, workload in zip(axes, workloads):
        ax.set_xscale("log")
        ax.set_yscale("log")
        floors, rows = panels[workload]
        for xs, ys in floors:
            if xs:
                ax.plot(xs, ys, "-", color="0.6", linewidth=5, alpha=0.45, solid_capstyle="butt", zorder=1)
                ax.annotate("null floor (receiving the deltas)", xy=(xs[0], ys[0]), xytext=(2, -10),
                            textcoords="offset points", fontsize=7, color="0.35")
        ends = []
        for row, xs, ys in rows:
            if not xs:
                continue
            bad = (row.parser, row.workload) in offenders
            if bad:
                color = bad_colors[bad_index.setdefault(row.parser, len(bad_index)) % len(bad_colors)]
                ax.plot(xs, ys, "-o", color=color, linewidth=2.4, markersize=4, zorder=4)
            else:  # a muted colour of its own per parser (the same in every panel), no red: told apart at a glance
                color = PASSING_COLORS[good_index.setdefault(row.parser, len(good_index)) % len(PASSING_COLORS)]
                ax.plot(xs, ys, "-o", color=color, linewidth=1.1, markersize=2.5, alpha=0.85, zorder=3)
            tag = row.parser + ("" if row.fit.steepest is None else f" {row.fit.steepest:.2f}")
            if bad:
                ratio = row.fit.projection_ratio
                tag += ("" if ratio is None else f", {ratio:.1f}x @{format_size(int(row.fit.reference_length))}")
                tag += f" {row.fit.verdict}"
            ends.append((xs[-1], math.log10(ys[-1]), tag, color, bad))
        if ends:
            ys_all = [y for _, y, *_ in ends]
            # labels 8 points apart: the panel spans `decades` over about 4.6 inches
            gap = decades * (8 / 72) / 4.6
            placed = _spread(ys_all, gap)
            shift = min(0.0, math.log10(hi) - gap - max(placed))  # keep the labels inside the panel
            for (x, y, tag, color, bad), yl in zip(ends, placed):
                ax.annotate(tag, xy=(x, 10 ** y), xytext=(x * 1.12, 10 ** (yl + shift)), fontsize=7 if bad else 6,
                            color=color, va="center", fontweight="bold" if bad else "normal",
                            arrowprops=dict(arrowstyle="-", color=color, alpha=0.4, linewidth=0.5))
            x1 = max(x for x, *_ in ends)
            y0 = guide
            ax.plot([x0, x1], [y0, y0 * x1 / x0], color="black", linewidth=1.0, linestyle=(0, (5, 3)), zorder=2)
            ax.annotate("quadratic cost: x4 per 4x", xy=(x1, y0 * x1 / x0), xytext=(-4, 4),
                        textcoords="offset points", ha="right", fontsize=7)
            ax.set_xlim(x0 / 1.25, x1 * 5.5)  # room for the labels at the line ends
        if values:
            ax.set_ylim(lo, hi)
        ax.set_xticks([float(n) for n in run.lengths], [format_size(n) for n in run.lengths])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("call length (characters)")
        ax.set_title(workload)
        ax.grid(True, which="major", alpha=0.25)
    axes[0].set_ylabel(f"cost per character ({unit})")
    failing = len(run.offenders)
    fig.suptitle(wrap_title(
        f"Streaming cost per character, chunking {run.chunking}: flat = linear, rising = superlinear. "
        f"Labels: parser, steepest step exponent (fails over {run.threshold:g}); "
        f"{failing} failing pair{'s' if failing != 1 else ''} in colour, with the projection ratio", width, 9),
        fontsize=9)
    fig.savefig(path, dpi=110)
    return path


def check_writable(folder: Path | str) -> Path:
    """Make ``folder`` (and parents) and prove a file can be created in it; returns it.

    Raises ``OSError`` with a one-line message when it cannot (not a folder,
    no permission, a read-only or virtual file system such as ``/proc``, one of the files a run writes
    there is no regular file: :func:`callscale.exports.regular_file`).
    """
    import tempfile

    from .environment import FILE as ENVIRONMENT
    from .exports import NotRegularFile, regular_file

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".callscale-probe-"):
            pass
        for name in (*OUTPUTS, PARTIAL, SUMMARY, ENVIRONMENT):  # what a run writes there: regular files only
            regular_file(folder / name)
    except NotRegularFile:
        raise
    except OSError as exc:
        raise OSError(f"cannot write to {folder}: {exc.strerror or exc}") from None
    return folder


class OutInUse(OSError):
    """Another run holds ``--out``'s lock (one-line message)."""


def lock_out(folder: Path | str) -> int:
    """Hold a lock on the folder ``folder`` itself (``fcntl.flock`` on its descriptor, exclusive, not
    waiting; no file is left behind) until the returned descriptor is closed or the process ends: two runs
    writing one ``--out`` at once would lose one run's rows without a word. Raises :class:`OutInUse` when
    another run holds it, ``OSError`` when the folder cannot be made or opened."""
    import fcntl
    import os

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OutInUse(f"{folder} is being written by another callscale run; wait for it to end or give "
                       "another --out") from None
    return fd


def _umask_mode() -> int:
    """0666 less the process's umask: the mode ``open()`` gives a new file."""
    import os

    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _replace_all(pairs: list[tuple[Path, Path]]) -> None:
    """Rename each temporary file onto its final name with Ctrl-C held back, so the set changes at once."""
    import os
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    if main:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        for tmp, final in pairs:
            os.replace(tmp, final)
    finally:
        if main:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_outputs(run: Run, folder: Path | str) -> list[Path]:
    """Write :data:`OUTPUTS` into ``folder`` as a set: each to a temporary file first, then all
    renamed into place together (an interrupt leaves the old set or the new one, and no temporary
    files). Removes a stale :data:`PARTIAL`. Returns the paths; raises ``OSError``."""
    import os
    import tempfile

    from .exports import regular_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in OUTPUTS:
        regular_file(folder / name)
    writers = (lambda p: frame(run).to_csv(p, index=False), lambda p: fits_frame(run).to_csv(p, index=False),
               lambda p: plot(run, p))
    pairs: list[tuple[Path, Path]] = []
    try:
        for name, write in zip(OUTPUTS, writers):
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=Path(name).suffix)
            os.fchmod(fd, _umask_mode())  # mkstemp makes 0600; results are ordinary files
            os.close(fd)
            pairs.append((Path(tmp), folder / name))
            write(Path(tmp))
        _replace_all(pairs)
    finally:
        for tmp, _ in pairs:
            tmp.unlink(missing_ok=True)
    (folder / PARTIAL).unlink(missing_ok=True)
    return [final for _, final in pairs]


def write_partial(run: Run, folder: Path | str) -> Path:
    """Write the measurements of an interrupted run to :data:`PARTIAL` in ``folder`` (via a temporary file)."""
    import os
    import tempfile

    folder = Path(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{PARTIAL}.", suffix=".csv")
    os.fchmod(fd, _umask_mode())
    os.close(fd)
    try:
        import csv

        # the csv module, not pandas: an interrupted run is saved at once (importing pandas takes seconds)
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            out = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
            out.writeheader()
            out.writerows(_records(run))
        os.replace(tmp, folder / PARTIAL)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return folder / PARTIAL


# ----------------------------------------------------------------------- space and journal
_ROW_BYTES = 512
"""A generous size of one CSV row of :data:`CSV_COLUMNS` or :data:`FIT_COLUMNS` (bytes)."""
_PLOT_BYTES = 2 * 1024 * 1024
"""A generous size of ``scaling.png`` (bytes)."""


def space_needed(measurements: int, rows: int) -> int:
    """Bytes ``scale`` needs in ``--out`` for ``measurements`` measurements and ``rows`` parser x workload
    rows: the journal, the set's temporary files and the partial file (generous; see :data:`_ROW_BYTES`)."""
    journal = (measurements + 1) * _ROW_BYTES
    outputs = (measurements + rows + 2) * _ROW_BYTES + _PLOT_BYTES
    return journal + 2 * outputs


class Reservation:
    """Disk space held in ``folder`` for the results (a file of that many allocated bytes); :meth:`release`
    frees it right before the results are written, so a disk that fills meanwhile cannot lose them."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def release(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None

    def __enter__(self) -> "Reservation":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def reserve(folder: Path | str, nbytes: int) -> Reservation:
    """Allocate ``nbytes`` in ``folder`` (``os.posix_fallocate``: real blocks, not a sparse or empty file).

    Raises ``OSError`` with one line when the space is not there (``not enough free space in
    FOLDER: the results need N MB, M MB free``), so a run on a full disk stops before measuring.
    """
    import os
    import shutil
    import tempfile

    folder = Path(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".callscale-reserve-")
    try:
        try:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fd, 0, max(1, nbytes))
            else:  # pragma: no cover - not Linux
                os.write(fd, b"\0" * nbytes)
                os.fsync(fd)
        except OSError as exc:
            free = shutil.disk_usage(folder).free
            os.close(fd)
            fd = -1
            Path(tmp).unlink(missing_ok=True)
            raise OSError(f"not enough free space in {folder}: the results need {nbytes / 1e6:.1f} MB, "
                          f"{free / 1e6:.1f} MB free ({exc.strerror or exc})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    return Reservation(Path(tmp))


class Journal:
    """Each measurement appended to :data:`JOURNAL` in ``folder`` as it is taken (one CSV row of
    :data:`CSV_COLUMNS`, flushed), so whatever happens to the run afterwards (a full disk when the set
    is written, a crash) what was measured is on disk. ``count``: rows written; ``failed``: why
    appending stopped (the disk filled), or ``None``. :meth:`remove` once the set is written."""

    def __init__(self, folder: Path | str) -> None:
        import csv

        import os

        self.path = Path(folder) / JOURNAL.format(pid=os.getpid())
        self.count = 0
        self.failed: str | None = None
        self._file = open(self.path, "w", newline="", encoding="utf-8")
        self._csv = csv.DictWriter(self._file, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        self._write(self._csv.writeheader)

    def _write(self, action) -> None:
        if self.failed is not None:
            return
        try:
            action()
            self._file.flush()
        except OSError as exc:
            self.failed = exc.strerror or str(exc)

    def append(self, m: Measurement) -> None:
        row = m.as_row()
        row["floor"] = m.parser == NULL
        self._write(lambda: self._csv.writerow(row))
        if self.failed is None:
            self.count += 1

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as exc:
            self.failed = self.failed or exc.strerror or str(exc)

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
