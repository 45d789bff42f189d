"""What a run shows: the console table, the tidy CSVs, the log-log plot and the gate's verdict lines.

- :func:`table`: parser x workload -> figure at each length, growth per 4x
  (from the exponent, and measured between consecutive lengths), exponent,
  multiple of the ``null`` floor, slowest increment (ms), verdict.
- :func:`write_csv`: ``scaling.csv``, one row per measurement (tidy), and
  :func:`write_fits_csv`: ``scaling-fits.csv``, one row per parser x workload.
- :func:`plot`: ``scaling.png``, log-log, one line per parser x workload,
  slope-1 and slope-2 guide lines (matplotlib, Agg backend, no display needed).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from .config import format_size
from .fit import ERROR
from .matrix import Row, Run
from .measure import NULL

__all__ = ["CSV_COLUMNS", "FIT_COLUMNS", "fmt_figure", "table", "error_lines", "gate_lines", "frame",
           "fits_frame", "write_csv", "write_fits_csv", "plot"]

CSV_COLUMNS = ["parser", "floor", "format", "workload", "length", "chars", "chunking", "deltas", "meter", "repeats",
               "seconds", "floor_seconds", "x_floor", "max_increment_ms", "peak_bytes", "error"]
"""Columns of ``scaling.csv``: ``floor`` is true on the ``null`` parser's rows (pandas reads the
name ``null`` as missing unless ``keep_default_na=False``); lengths in characters, ``seconds`` the meter's figure
(process seconds, min over ``repeats``), ``floor_seconds`` the ``null`` parser's on the
same deltas, ``x_floor`` their ratio, ``max_increment_ms`` the slowest single call,
``peak_bytes`` peak traced memory, ``error`` the exception of a failed run."""

FIT_COLUMNS = ["parser", "format", "workload", "lengths", "exponent", "growth_per_4x", "threshold",
               "verdict", "reason"]

_METER_NOTE = {
    "time": "process seconds, min of {repeats} runs",
    "instructions": "instructions of the streaming alone, counted by callgrind (exact; meter: instructions)",
}
_UNIT = {"time": "s", "instructions": "instr"}


def fmt_figure(value: float | None) -> str:
    """A figure with three significant digits in fixed notation (``-`` for ``None``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{digits}f}"


def _growth(row: Row) -> str:
    fit = row.fit
    if fit.growth_per_4x is None:
        return "-"
    steps = ", ".join(f"{s:.1f}" for s in fit.steps if not math.isnan(s))
    return f"{fit.growth_per_4x:.1f} ({steps})" if steps else f"{fit.growth_per_4x:.1f}"


def _cells(row: Row, run: Run) -> list[str]:
    by_length = {m.length: m for m in row.measurements}
    figures = []
    for length in run.lengths:
        m = by_length.get(length)
        figures.append("-" if m is None else ("error" if m.error else fmt_figure(m.seconds)))
    x_floor = "1.0" if row.floor else fmt_figure(row.x_floor(run.floors))
    verdict = "floor" if row.floor else row.fit.verdict
    exponent = "-" if row.fit.exponent is None else f"{row.fit.exponent:.2f}"
    return [row.parser + (" (floor)" if row.floor else ""), row.workload, *figures, _growth(row), exponent,
            x_floor, fmt_figure(row.max_increment_ms), verdict]


def _ordered_rows(run: Run) -> list[list[Row]]:
    groups = []
    for workload in run.workloads:
        group = [r for r in run.floor_rows if r.workload == workload]
        group += [r for r in run.rows if r.workload == workload]
        if group:
            groups.append(group)
    return groups


def table(run: Run) -> str:
    """The console table, grouped by workload, the ``null`` floor row first in each group."""
    unit = _UNIT.get(run.meter, run.meter)
    header = ["parser", "workload", *(f"{format_size(n)} {unit}" for n in run.lengths), "growth/4x",
              "exponent", "x floor", "max inc ms", "verdict"]
    groups = [[_cells(row, run) for row in group] for group in _ordered_rows(run)]
    every = [header] + [cells for group in groups for cells in group]
    widths = [max(len(cells[i]) for cells in every) for i in range(len(header))]
    numeric = set(range(2, len(header) - 1))

    def line(cells: list[str]) -> str:
        out = []
        for i, (cell, width) in enumerate(zip(cells, widths)):
            out.append(cell.rjust(width) if i in numeric else cell.ljust(width))
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines = [line(header), rule]
    for i, group in enumerate(groups):
        if i:
            lines.append("")
        lines.extend(line(cells) for cells in group)
    note = _METER_NOTE.get(run.meter, run.meter).format(repeats=run.repeats)
    lines.append("")
    lines.append(f"figures: {note}; chunking {run.chunking}; lengths in characters (k = 1024); "
                 f"growth/4x = 4**exponent (measured per step); x floor = cost at "
                 f"{format_size(run.lengths[-1])} / the null parser's on the same deltas; "
                 f"verdict: exponent <= {run.threshold:g}")
    return "\n".join(lines)


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
        parts.append(f"{format_size(m.length)}: " + ("error" if m.error else f"{fmt_figure(m.seconds)} {unit}"))
    return ", ".join(parts)


def gate_lines(run: Run) -> list[str]:
    """The gate's verdict: one line per offender (exponent and figure per length), then a summary."""
    lines = []
    unit = _UNIT.get(run.meter, run.meter)
    for row in run.offenders:
        if row.fit.verdict == ERROR:
            lines.append(f"FAIL {row.parser} on {row.workload}: no exponent ({row.fit.reason}); "
                         f"{_per_length(row, unit)}")
        else:
            lines.append(f"FAIL {row.parser} on {row.workload}: exponent {row.fit.exponent:.2f} > "
                         f"{run.threshold:g}; {_per_length(row, unit)}")
    total = len(run.rows)
    if run.passed:
        lines.append(f"gate passed: {total} parser x workload pair{'s' if total != 1 else ''}, "
                     f"every exponent <= {run.threshold:g}")
    else:
        lines.append(f"gate failed: {len(run.offenders)} of {total} parser x workload pairs over "
                     f"{run.threshold:g} or failed")
    return lines


def frame(run: Run):
    """The tidy table of measurements (pandas DataFrame, :data:`CSV_COLUMNS`)."""
    import pandas as pd

    records = []
    for m in run.measurements:
        row = m.as_row()
        row["floor"] = m.parser == NULL
        floor = run.floors.get((m.format, m.workload, m.length))
        floor_s = floor.seconds if floor is not None else None
        row["floor_seconds"] = floor_s
        row["x_floor"] = m.seconds / floor_s if m.seconds is not None and floor_s else None
        records.append(row)
    return pd.DataFrame.from_records(records, columns=CSV_COLUMNS)


def fits_frame(run: Run):
    """One row per parser x workload (pandas DataFrame, :data:`FIT_COLUMNS`); floor rows included."""
    import pandas as pd

    records = []
    for row in [*run.floor_rows, *run.rows]:
        records.append({
            "parser": row.parser,
            "format": row.format,
            "workload": row.workload,
            "lengths": ",".join(format_size(m.length) for m in row.measurements),
            "exponent": row.fit.exponent,
            "growth_per_4x": row.fit.growth_per_4x,
            "threshold": run.threshold,
            "verdict": "floor" if row.floor else row.fit.verdict,
            "reason": row.fit.reason or None,
        })
    return pd.DataFrame.from_records(records, columns=FIT_COLUMNS)


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


def _points(row: Row) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for m in row.measurements:
        if m.seconds and m.seconds > 0:
            xs.append(m.chars or m.length)
            ys.append(m.seconds)
    return xs, ys


def plot(run: Run, path: Path | str) -> Path:
    """Write the log-log plot of figure against length: one panel per workload, one line per parser.

    In each panel the ``null`` floor is drawn dotted grey and the slope-1 and
    slope-2 guides start at the geometric mean of the parsers' figures at the
    shortest length; the legend gives each parser's exponent per workload.
    Uses the Agg backend directly (no display, no pyplot state).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    workloads = [w for w in run.workloads if any(r.workload == w for r in run.rows + run.floor_rows)] or ["-"]
    fig = Figure(figsize=(4.6 * len(workloads) + 2.6, 5.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(workloads), sharey=True, squeeze=False)[0]
    parsers = list(dict.fromkeys(r.parser for r in run.rows))
    if len(parsers) <= 10:
        colors = {name: f"C{i}" for i, name in enumerate(parsers)}
    else:
        from matplotlib import colormaps

        palette = colormaps["tab20"]
        colors = {name: palette(i % 20) for i, name in enumerate(parsers)}
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    unit = "process seconds (min of %d)" % run.repeats if run.meter == "time" else run.meter
    handles: dict[str, Any] = {}
    for ax, workload in zip(axes, workloads):
        for row in run.floor_rows:
            xs, ys = _points(row)
            if row.workload == workload and xs:
                handles["null floor"] = ax.plot(xs, ys, ":", color="0.55", marker=".")[0]
        starts, ends = [], []
        for i, row in enumerate(r for r in run.rows if r.workload == workload):
            xs, ys = _points(row)
            if not xs:
                continue
            exponent = "" if row.fit.exponent is None else f" {row.fit.exponent:.2f}"
            line = ax.plot(xs, ys, "-", marker=markers[i % len(markers)], markersize=4,
                           color=colors[row.parser], label=f"{row.parser}{exponent}")[0]
            handles.setdefault(row.parser, line)
            starts.append((xs[0], ys[0]))
            ends.append(xs[-1])
        if starts:
            x0 = math.exp(sum(math.log(x) for x, _ in starts) / len(starts))
            y0 = math.exp(sum(math.log(y) for _, y in starts) / len(starts))
            x1 = max(ends)
            for slope, style, label in ((1, (0, (1, 2)), "slope 1 (linear)"), (2, (0, (6, 3)), "slope 2 (quadratic)")):
                handles[label] = ax.plot([x0, x1], [y0, y0 * (x1 / x0) ** slope], color="black", alpha=0.7,
                                         linewidth=1.4, linestyle=style)[0]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks([float(n) for n in run.lengths], [format_size(n) for n in run.lengths])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("call length (characters)")
        ax.set_title(workload)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize="xx-small", loc="lower right", title="exponent", title_fontsize="xx-small")
    axes[0].set_ylabel(unit)
    fig.suptitle(f"Streaming cost against call length, chunking {run.chunking}")
    fig.legend(list(handles.values()), list(handles.keys()), loc="outside right upper", fontsize="small")
    fig.savefig(path, dpi=110)
    return path
