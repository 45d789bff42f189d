"""``callscale history``: a self-contained page of the exact series across commits, from asv's results.

asv stores one JSON file per commit and environment under
``results/asv/<machine>/<commit8>-<environment>.json`` (asv 0.6 layout:
``commit_hash``, ``date`` in milliseconds, ``env_name``, ``result_columns``
and ``results``, where each benchmark's ``result`` column lists its figures
over the product of its ``params`` in order, ``None`` where it was skipped or
failed). This module reads the exact series of the asv suite
(``benchmarks.InstructionCount.track_instructions``: callgrind instructions
per parser, workload and length; or, whatever it is named, the benchmark of
unit ``instructions`` over parser, workload and length, as ``callscale init``
writes for a team's repository: :func:`find_series`), fits the scaling exponent per commit, parser
and workload with :func:`callscale.fit.fit` (the same rule as ``callscale
gate``), and writes to ``--out``:

- ``instructions.png``: instructions per character at each length per
  commit, one panel per parser, one colour per workload, one line style per
  length (a linear parser's lines lie together; a rescan lifts the longest);
- ``exponents.png``: what the verdict judges per commit, one panel per
  parser: the steepest step exponent and the projection ratio, scaled so both
  limits are one dashed line (a FAIL is above it, circled);
- ``history.csv``: one row per commit, parser, workload: the counts, the
  exponent, the verdict, the steepest step and the projection ratio;
- ``index.html``: both images embedded as base64 data URIs, the commits where
  a verdict changed, the steps where a count moved by more than ``--factor``,
  and the commit list; no scripts, style sheets or fonts from anywhere else,
  so it opens offline (a CI artifact, a machine behind a firewall).

Commits are ordered by the commit date asv stored (the same second: by
git's history when the results folder is inside the repository). A commit hash links to
``--commit-url`` with ``{commit}`` replaced by the full hash (for example
``https://git.example.org/callscale/commit/{commit}``); without it, to the
commit's row in the page's own commit list, which gives the ``git show``
command (a page opened offline has no web view of the repository to link).
"""

from __future__ import annotations

import ast
import base64
import html
import io
import itertools
import json
import math
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd

from . import fit as fitting
from .compare import LIMITS
from .report import literal_text

__all__ = ["EXACT_SERIES", "find_series", "HistoryError", "BadFigure", "BadResults", "load_results", "exact_series", "exponents",
           "verdict_changes",
           "count_changes", "commit_link", "write"]

#: The asv benchmark whose figures are the exact series.
EXACT_SERIES = "benchmarks.InstructionCount.track_instructions"


class HistoryError(ValueError):
    """The results cannot give a history (missing folder, no results, bad option); the message is one line."""


class BadFigure(HistoryError):
    """A result file that reads but holds a figure no run gives (zero, negative, infinite, above
    :data:`LIMIT`, or one parameter combination given twice): the history is refused, ``--skip-bad`` or not."""


#: The largest instruction count a figure may be: the instruction meter's limit of every scaling.csv.
LIMIT = LIMITS["instructions"]


class BadResults(HistoryError):
    """Result files that cannot be read: ``files`` is a list of ``(path, why)``; the message names them."""

    def __init__(self, files: list[tuple[Path, str]]) -> None:
        self.files = files
        names = "; ".join(f"{path}: {why}" for path, why in files)
        super().__init__(f"{len(files)} unreadable result file{'s' if len(files) != 1 else ''} "
                         f"(--skip-bad passes over them): {names}")


def _file_rows(path: Path, benchmark: str, names: list[str]) -> list[dict]:
    """The rows of one asv result file (empty when it holds no figure of ``benchmark``); ``ValueError``
    saying why when the file is not a readable asv result file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (offset {exc.start})") from None
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"not an asv result file (a JSON {type(data).__name__})")
    results = data.get("results", {})
    if not isinstance(results, dict):
        raise ValueError("not an asv result file (results is not an object)")
    entry = results.get(benchmark)
    if not entry:
        return []
    if "commit_hash" not in data:
        raise ValueError("no commit_hash")
    columns = data.get("result_columns", ["result", "params"])
    if not isinstance(entry, list) or not isinstance(columns, list):
        raise ValueError(f"the entry of {benchmark} is not a list")
    record = dict(zip(columns, entry))
    values, params = record.get("result"), record.get("params") or []
    if values is None and isinstance(params, list) and all(isinstance(a, list) for a in params):
        values = [None] * math.prod(len(a) for a in params)  # the benchmark failed at this commit: no figures
    if not isinstance(values, list) or not isinstance(params, list) or not all(isinstance(a, list) for a in params):
        raise ValueError(f"the result of {benchmark} is not a list of figures")
    date = data.get("date", 0)
    if isinstance(date, bool) or not isinstance(date, (int, float)) or not math.isfinite(date):
        raise ValueError(f"bad date {date!r} (expected milliseconds since 1970)")
    try:
        stamp = pd.Timestamp(date, unit="ms", tz="UTC")
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"bad date {date!r}: {exc}") from None
    decoded = [[_decode(v) for v in axis] for axis in params]
    keys = names or [f"param{i + 1}" for i in range(len(decoded))]
    combos = list(itertools.product(*decoded))
    if len(combos) != len(values):
        raise ValueError(f"{len(values)} figures for {len(combos)} parameter combinations")
    rows = []
    seen: set = set()
    for combo, value in zip(combos, values):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"figure {value!r} for {dict(zip(keys, combo))} is not a number")
        where = f"{path}: {', '.join(f'{k} {v}' for k, v in zip(keys, combo))}"
        if combo in seen:
            raise BadFigure(f"{where}: given twice (one figure per parameter combination)")
        seen.add(combo)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):  # asv: None failed, NaN skipped
            if not math.isfinite(value) or value <= 0:
                raise BadFigure(f"{where}: figure {value:g} is not a positive finite number")
            if value > LIMIT:
                raise BadFigure(f"{where}: figure {value:g} is above any measurement ({LIMIT:g} instructions)")
        row = {"machine": path.parent.name, "env": data.get("env_name", ""), "commit": data["commit_hash"],
               "date": stamp, "file": str(path)}
        row.update(zip(keys, combo))
        row["value"] = float("nan") if value is None else float(value)
        rows.append(row)
    return rows


def load_results(results_dir: Path | str, benchmark: str = EXACT_SERIES, skip_bad: bool = False) -> pd.DataFrame:
    """Every stored figure of ``benchmark`` in an asv results folder, one row per figure.

    Columns: ``machine``, ``env``, ``commit`` (full hash), ``date``
    (``pandas.Timestamp``, UTC, the commit date asv stored), the benchmark's
    parameter names (values decoded from asv's ``repr`` strings) and
    ``value`` (``NaN`` where asv stored ``None``: skipped or failed).
    Raises :class:`HistoryError` when the folder does not exist, and
    :class:`BadResults` naming every file that cannot be read (not JSON, not
    an asv result file, a figure that is not a number, a bad date, figures
    that do not match the parameters) unless ``skip_bad``; then they are
    passed over and listed in the frame's ``attrs["bad"]`` (``(path, why)``).
    ``machine.json`` and result files without ``benchmark`` are passed over.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise HistoryError(f"no asv results folder {root} (run asv first: in callscale's checkout `asv run`, in a "
                           "team repository `callscale init` then `asv run`; docs/workflows.md)")
    names = _param_names(root, benchmark)
    rows = []
    bad: list[tuple[Path, str]] = []
    for path in sorted(root.glob("*/*.json")):
        if path.name == "machine.json":
            continue
        try:
            rows += _file_rows(path, benchmark, names)
        except BadFigure:
            raise  # a file that reads but holds a figure no run gives: refused, not passed over
        except ValueError as exc:
            bad.append((path, " ".join(str(exc).split())))
    if bad and not skip_bad:
        raise BadResults(bad)
    frame = pd.DataFrame(rows)
    key = [c for c in frame.columns if c not in ("date", "value", "file")]
    if len(frame) and frame.duplicated(key).any():
        twice = frame[frame.duplicated(key, keep=False)]
        raise BadFigure(f"{' and '.join(dict.fromkeys(twice['file']))}: the figures of commit "
                        f"{twice['commit'].iloc[0][:10]} on {twice['machine'].iloc[0]} ({twice['env'].iloc[0]}) "
                        "are given twice (one result file per commit and environment)")
    frame = frame.drop(columns=["file"], errors="ignore")
    frame.attrs["bad"] = bad
    frame.attrs["benchmark"] = benchmark
    return frame


def _param_names(root: Path, benchmark: str) -> list[str]:
    """The benchmark's parameter names from asv's ``benchmarks.json`` (the exact series' own without it)."""
    try:
        return list(json.loads((root / "benchmarks.json").read_text())[benchmark]["param_names"])
    except (OSError, ValueError, KeyError, TypeError):
        return ["parser", "workload", "length"] if benchmark.endswith(".track_instructions") else []


SERIES_PARAMS = ("parser", "workload", "length")


def find_series(results_dir: Path | str) -> str:
    """The name of the exact series in an asv results folder, whatever its benchmark is called.

    The exact series is a benchmark of unit ``instructions`` over the
    parameters :data:`SERIES_PARAMS`, as asv's ``benchmarks.json`` lists it:
    callscale's own (:data:`EXACT_SERIES`) when present, else the first such
    name (``callscale init`` writes ``callscale_series.CallscaleSeries.track_instructions``).
    Without ``benchmarks.json``, the first benchmark named ``*.track_instructions`` in a result
    file. :data:`EXACT_SERIES` when nothing matches (the error then names it).
    """
    root = Path(results_dir)
    try:
        listed = json.loads((root / "benchmarks.json").read_text())
    except (OSError, ValueError):
        listed = {}
    found = sorted(name for name, entry in listed.items() if isinstance(entry, dict)
                   and entry.get("unit") == "instructions" and tuple(entry.get("param_names") or ()) == SERIES_PARAMS)
    if not found:
        for path in sorted(root.glob("*/*.json")):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            found = sorted(n for n in (data.get("results") or {} if isinstance(data, dict) else {})
                           if n.endswith(".track_instructions"))
            if found:
                break
    if EXACT_SERIES in found or not found:
        return EXACT_SERIES
    return found[0]


def _decode(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def exact_series(results: pd.DataFrame, machine: str | None = None, env: str | None = None,
                 repo: Path | str | None = None) -> pd.DataFrame:
    """The instruction counts of one machine and environment: ``commit``, ``date``, ``parser``,
    ``workload``, ``length`` (characters), ``instructions``, ``order`` (the commit's place, from 0).

    Commits are ordered by date; commits of the same second (a rebase or a
    script commits many at once) by their order in git's history when
    ``repo`` (a folder inside the git repository) knows them, else by hash.

    ``machine`` / ``env``: which ones (default: the one with the most
    commits). Raises :class:`HistoryError` when there is nothing to show or
    the named machine or environment has no results.
    """
    if results.empty:
        raise HistoryError("no instruction counts in the results (`asv run --bench InstructionCount` in callscale's "
                           "checkout, `asv run` after `callscale init` in a team repository; docs/workflows.md)")
    for column, wanted in (("machine", machine), ("env", env)):
        if wanted is None:
            wanted = results.groupby(column)["commit"].nunique().idxmax()
        elif wanted not in set(results[column]):
            known = ", ".join(sorted(set(results[column])))
            raise HistoryError(f"no results for {column} {wanted!r} (results have: {known})")
        results = results[results[column] == wanted]
    series = results.dropna(subset=["value"]).rename(columns={"value": "instructions"})
    if series.empty:
        raise HistoryError(f"every result of {results.attrs.get('benchmark', EXACT_SERIES)} is n/a (skipped: "
                           "valgrind missing?)")
    series = series[["commit", "date", "parser", "workload", "length", "instructions"]]
    commits = series.drop_duplicates("commit")[["commit", "date"]]
    positions = _git_positions(list(commits["commit"]), repo)
    commits = commits.assign(_git=commits["commit"].map(lambda c: positions.get(c, len(positions))))
    commits = commits.sort_values(["date", "_git", "commit"], kind="stable")
    series = series.assign(order=series["commit"].map({c: i for i, c in enumerate(commits["commit"])}))
    return series.sort_values(["order", "parser", "workload", "length"], kind="stable").reset_index(drop=True)


def _git_positions(commits: Sequence[str], repo: Path | str | None) -> dict[str, int]:
    """Each commit's place in ``git rev-list --topo-order --reverse`` (parents first); ``{}`` without git."""
    if repo is None or not commits:
        return {}
    try:
        proc = subprocess.run(["git", "-C", str(repo), "rev-list", "--topo-order", "--reverse", *commits],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return {}
    if proc.returncode != 0:
        return {}
    place = {h: i for i, h in enumerate(proc.stdout.split())}
    return {c: place[c] for c in commits if c in place}


def _commits(series: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(series.sort_values("order", kind="stable")["commit"]))


def exponents(series: pd.DataFrame, threshold: float, rules: dict | None = None) -> pd.DataFrame:
    """Per commit, parser and workload: ``exponent`` and ``verdict`` of :func:`callscale.fit.fit`
    over the lengths measured (instruction counts), with ``date``; sorted by date. The exponent is the
    gate's: fitted on each case's text length (:func:`_text_lengths`), so the same counts give the same
    figure here, in ``gate`` and in asv's ``track_scaling_exponent``. ``rules``: the
    projection rule's keyword arguments of :func:`callscale.fit.fit` (``reference_length``,
    ``projection_factor``; default: its defaults)."""
    rows = []
    for (commit, parser, workload), group in series.groupby(["commit", "parser", "workload"], sort=False):
        lengths = _text_lengths(workload, parser, list(group["length"]))
        result = fitting.fit(lengths, list(group["instructions"]), threshold, **(rules or {}))
        rows.append({"commit": commit, "date": group["date"].iloc[0], "parser": parser, "workload": workload,
                     "exponent": result.exponent, "verdict": result.verdict, "steepest": result.steepest,
                     "projection_ratio": result.projection_ratio})
    out = pd.DataFrame(rows)
    order = {c: i for i, c in enumerate(_commits(series))}
    return out.sort_values(["parser", "workload"], kind="stable").sort_values(
        "commit", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def _text_lengths(workload: str, fmt: str, lengths: list) -> list:
    """The text lengths of the cases asv counted (:func:`callscale.workloads.catalog.text_lengths`, from this
    checkout's workloads: the same as at the commit measured where the workloads did not change); the
    requested lengths where this checkout cannot make the case (a format or workload it does not know)."""
    from .workloads.catalog import text_lengths

    try:
        return text_lengths(workload, fmt, [int(n) for n in lengths])
    except Exception:
        return lengths


def verdict_changes(fits: pd.DataFrame) -> pd.DataFrame:
    """The commits where a parser's verdict on a workload differs from the previous commit measured.

    Columns: ``commit``, ``parser``, ``workload``, ``before`` / ``after``
    (verdicts), ``exponent_before`` / ``exponent_after``, ``previous`` (hash).
    """
    rows = []
    for (parser, workload), group in fits.groupby(["parser", "workload"], sort=False):
        prev = None
        for row in group.itertuples(index=False):
            if prev is not None and row.verdict != prev.verdict:
                rows.append({"commit": row.commit, "parser": parser, "workload": workload,
                             "before": prev.verdict, "after": row.verdict, "exponent_before": prev.exponent,
                             "exponent_after": row.exponent, "previous": prev.commit})
            prev = row
    return pd.DataFrame(rows, columns=["commit", "parser", "workload", "before", "after", "exponent_before",
                                       "exponent_after", "previous"])


def count_changes(series: pd.DataFrame, factor: float) -> pd.DataFrame:
    """The steps where a count moved by more than ``factor`` (either way) from the previous commit measured.

    Columns: ``commit``, ``parser``, ``workload``, ``length``, ``before``,
    ``after`` (instructions), ``ratio`` (after / before), ``previous``.
    """
    order = {c: i for i, c in enumerate(_commits(series))}
    ordered = series.assign(_order=series["commit"].map(order)).sort_values("_order", kind="stable")
    rows = []
    for (parser, workload, length), group in ordered.groupby(["parser", "workload", "length"], sort=False):
        before = group["instructions"].shift()
        ratio = group["instructions"] / before
        moved = (ratio > factor) | (ratio < 1 / factor)
        for (_, row), b, r, prev in zip(group[moved].iterrows(), before[moved], ratio[moved],
                                        group["commit"].shift()[moved]):
            rows.append({"commit": row["commit"], "parser": parser, "workload": workload, "length": length,
                         "before": b, "after": row["instructions"], "ratio": r, "previous": prev})
    return pd.DataFrame(rows, columns=["commit", "parser", "workload", "length", "before", "after", "ratio",
                                       "previous"])


def commit_link(commit: str, template: str | None) -> str:
    """Where a commit hash links: ``template`` with ``{commit}`` replaced, or the page's own commit row."""
    return template.replace("{commit}", commit) if template else f"#commit-{commit}"


@dataclass
class Written:
    """The files :func:`write` wrote, and what the page shows (counts of rows)."""

    page: Path
    instructions_png: Path
    exponents_png: Path
    csv: Path
    commits: int
    verdict_changes: int
    count_changes: int


def _panels(parsers: Sequence[str]):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cols = min(4, len(parsers))
    rows = -(-len(parsers) // cols)
    width = max(7.0, 3.6 * cols + 0.6)  # one parser (a team's usual case) still has room for the legend
    fig = Figure(figsize=(width, 2.7 * rows + 1.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
    for ax in axes.flat[len(parsers):]:
        ax.set_visible(False)
    return fig, list(axes.flat[:len(parsers)])


def _legend(fig, entries: int, title: str) -> None:
    """The figure's legend above the panels, in as many columns as fit its width, the title wrapped."""
    from .report import wrap_title

    width = fig.get_figwidth()
    fig.legend(loc="outside upper center", ncols=max(1, min(entries, int(width / 1.9))), fontsize=7,
               title=wrap_title(title, width, 8), title_fontsize=8)


def _mark(ax, positions: Sequence[int]) -> None:
    for x in positions:
        ax.axvline(x, color="crimson", linewidth=1.2, linestyle=":", zorder=0)


def _xaxis(ax, commits: Sequence[str]) -> None:
    ax.set_xticks(range(len(commits)))
    ax.set_xticklabels([c[:8] for c in commits], rotation=60, fontsize=7, fontfamily="monospace")
    ax.set_xlim(-0.5, len(commits) - 0.5)


@literal_text
def _plot_instructions(series: pd.DataFrame, changed: pd.DataFrame, path: Path) -> Path:
    commits = _commits(series)
    x = {c: i for i, c in enumerate(commits)}
    parsers = sorted(series["parser"].unique())
    workloads = list(dict.fromkeys(series["workload"]))
    lengths = sorted(series["length"].unique())
    styles = ["-", "--", "-."]
    fig, axes = _panels(parsers)
    for ax, parser in zip(axes, parsers):
        mine = series[series["parser"] == parser]
        for wi, workload in enumerate(workloads):
            for li, length in enumerate(lengths):
                line = mine[(mine["workload"] == workload) & (mine["length"] == length)]
                if line.empty:
                    continue
                ax.plot(line["commit"].map(x), line["instructions"] / length, marker="o", markersize=3,
                        color=f"C{wi}", linestyle=styles[li % len(styles)],
                        label=f"{workload} @ {length}" if ax is axes[0] else None)
        _mark(ax, sorted({x[c] for c in changed[changed["parser"] == parser]["commit"]}))
        ax.set_ylim(bottom=0)
        ax.set_title(parser, fontsize=10)
        _xaxis(ax, commits)
    axes[0].set_ylabel("instructions per character")
    _legend(fig, len(workloads) * len(lengths),
            "workload @ length (characters): a linear parser's lines lie together and flat; "
            "dotted red: a verdict or a count changed")
    fig.savefig(path, dpi=110)
    return path


@literal_text
def _plot_exponents(fits: pd.DataFrame, changed: pd.DataFrame, threshold: float, path: Path,
                    factor: float = fitting.PROJECTION_FACTOR) -> Path:
    """The two figures the verdict judges, per commit: the steepest step exponent (solid, left axis) and
    the projection ratio (dotted, right axis), scaled so that both limits (``threshold``, ``factor``)
    are the one dashed line: a FAIL is above it, circled in red."""
    commits = list(dict.fromkeys(fits["commit"]))
    x = {c: i for i, c in enumerate(commits)}
    parsers = sorted(fits["parser"].unique())
    workloads = list(dict.fromkeys(fits["workload"]))
    to_left = threshold / factor  # a projection ratio drawn on the step axis
    cap = 2 * threshold  # the top of each panel: a figure above it is drawn on the edge and its value written
    fig, axes = _panels(parsers)
    for ax, parser in zip(axes, parsers):
        mine = fits[fits["parser"] == parser]
        for wi, workload in enumerate(workloads):
            line = mine[mine["workload"] == workload]
            xs = line["commit"].map(x)
            for values, style, marker, what, text in (
                    (line["steepest"].astype(float), "-", "o", "steepest step", "{:.2f}"),
                    (line["projection_ratio"].astype(float) * to_left, ":", "s", "projection ratio", None)):
                shown = values.clip(upper=cap)
                ax.plot(xs, shown, marker=marker, markersize=3, color=f"C{wi}", linestyle=style,
                        markerfacecolor="none" if marker == "s" else None,
                        label=f"{workload}: {what}" if ax is axes[0] else None)
                for xi, value in zip(xs[values > cap], values[values > cap]):
                    label = text.format(value) if text else f"{value / to_left:.0f}x"
                    ax.annotate(f"{label} ^", xy=(xi, cap), xytext=(0, -10), textcoords="offset points",
                                ha="center", fontsize=7, color=f"C{wi}")
            failed = line["verdict"] == fitting.FAIL
            worst = pd.concat([line["steepest"].astype(float), line["projection_ratio"].astype(float) * to_left],
                              axis=1).max(axis=1).clip(upper=cap)
            ax.scatter(xs[failed], worst[failed], s=70, facecolors="none", edgecolors="crimson", linewidths=1.5,
                       zorder=5, label="FAIL" if ax is axes[0] and wi == 0 else None)
        ax.axhline(threshold, color="black", linestyle="--", linewidth=1,
                   label=f"limit: step {threshold:g}, projection {factor:g}x" if ax is axes[0] else None)
        _mark(ax, sorted({x[c] for c in changed[changed["parser"] == parser]["commit"]}))
        ax.set_ylim(0, cap * 1.04)
        right = ax.secondary_yaxis("right", functions=(lambda y: y / to_left, lambda r: r * to_left))
        right.tick_params(labelsize=7)
        if parser == parsers[-1] or (parsers.index(parser) + 1) % min(4, len(parsers)) == 0:
            right.set_ylabel("projection / linear (dotted)", fontsize=8)
        ax.set_title(parser, fontsize=10)
        _xaxis(ax, commits)
    axes[0].set_ylabel("steepest step exponent (solid)")
    _legend(fig, 2 * len(workloads) + 2,
            f"what the verdict judges, on instruction counts: FAIL when the steepest step is over {threshold:g} "
            f"(left axis) or the projection over {factor:g}x the linear one (right axis), i.e. above the dashed "
            "line; dotted red: the verdict changed")
    fig.savefig(path, dpi=110)
    return path


def _table(frame: pd.DataFrame, template: str | None, empty: str) -> str:
    if frame.empty:
        return f"<p>{html.escape(empty)}</p>"
    shown = frame.copy()
    for column in shown.columns:  # names and verdicts came from asv's files: shown as text, never markup
        shown[column] = [html.escape(v) if isinstance(v, str) else v for v in shown[column]]
    for column in ("commit", "previous"):
        if column in shown:
            shown[column] = [f'<a href="{html.escape(commit_link(c, template))}"><code>{html.escape(c[:10])}</code></a>'
                             for c in frame[column]]
    return shown.to_html(index=False, escape=False, float_format=lambda v: f"{v:,.3f}" if abs(v) < 100 else f"{v:,.0f}",
                         border=0, classes="t")


_STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1400px;color:#222}
table.t{border-collapse:collapse;font-size:13px;margin-bottom:1em}
table.t th,table.t td{border:1px solid #ccc;padding:2px 8px;text-align:right}
table.t th{background:#eee} img{max-width:100%;border:1px solid #ddd} code{font-size:12px}
.fail{color:#b00;font-weight:bold}"""


def write(out: Path | str, results_dir: Path | str, threshold: float, factor: float = 1.05,
          commit_url: str | None = None, machine: str | None = None, env: str | None = None,
          rules: dict | None = None, skip_bad: bool = False) -> Written:
    """Read asv's results, write ``index.html``, the two PNGs and ``history.csv`` to ``out``.

    ``threshold``: the largest exponent that passes (``[tool.callscale]``);
    ``rules``: the projection rule (``reference_length``, ``projection_factor``), as for :func:`exponents`;
    ``factor``: a count that moved by more than this (either way, > 1) is
    listed; ``commit_url``: a template with ``{commit}`` (``None``: link to
    the page's commit list). Raises :class:`HistoryError` (one line) for a
    bad option or results with nothing to show; ``OSError`` when ``out``
    cannot be written.
    """
    if not factor > 1:
        raise HistoryError(f"--factor must be more than 1, got {factor}")
    if commit_url is not None and "{commit}" not in commit_url:
        raise HistoryError(f"--commit-url must contain {{commit}}, got {commit_url!r}")
    benchmark = find_series(results_dir)  # callscale's own series, or the one `callscale init` wrote
    series = exact_series(load_results(results_dir, benchmark, skip_bad=skip_bad), machine, env, repo=results_dir)
    fits = exponents(series, threshold, rules)
    verdicts = verdict_changes(fits)
    counts = count_changes(series, factor)
    marked = pd.concat([verdicts[["commit", "parser"]], counts[["commit", "parser"]]])
    from .exports import regular_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("instructions.png", "exponents.png", "history.csv", "index.html"):
        regular_file(out / name)  # never into a device, a directory or a pipe
    ipng = _plot_instructions(series, marked, out / "instructions.png")
    epng = _plot_exponents(fits, verdicts, threshold, out / "exponents.png",
                           (rules or {}).get("projection_factor", fitting.PROJECTION_FACTOR))
    wide = series.pivot_table(index=["commit", "parser", "workload"], columns="length", values="instructions",
                              sort=False)
    wide.columns = [f"instructions_{n}" for n in wide.columns]
    table = fits.merge(wide.reset_index(), on=["commit", "parser", "workload"])
    csv = out / "history.csv"
    table.to_csv(csv, index=False)
    commits = series.drop_duplicates("commit")[["commit", "date"]]  # in order
    commit_rows = "".join(
        f'<tr id="commit-{html.escape(c)}"><td><a href="{html.escape(commit_link(c, commit_url))}"><code>'
        f'{html.escape(c)}</code></a></td><td>{d:%Y-%m-%d %H:%M} UTC</td><td><code>git show '
        f'{html.escape(shlex.quote(c[:10]))}</code></td>'
        f'<td>{int((fits[(fits["commit"] == c)]["verdict"] != fitting.OK).sum())}</td></tr>'
        for c, d in commits.itertuples(index=False))
    page = out / "index.html"
    failing = fits[fits["commit"] == commits["commit"].iloc[-1]]
    failing = failing[failing["verdict"] != fitting.OK]
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>callscale history</title><style>{_STYLE}</style></head><body>
<h1>callscale: the exact series across commits</h1>
<p>{len(commits)} commit{'' if len(commits) == 1 else 's'} ({commits['date'].iloc[0]:%Y-%m-%d} to {commits['date'].iloc[-1]:%Y-%m-%d}),
{series['parser'].nunique()} parsers, {series['workload'].nunique()} workloads, lengths
{', '.join(str(n) for n in sorted(series['length'].unique()))} characters; callgrind instruction counts of
streaming (<code>{html.escape(benchmark)}</code>). Exponent: least-squares slope of log instructions on log length
of the case's text, over these lengths (<code>callscale.fit.exponent</code>, as <code>callscale gate</code> fits it over
its own lengths, 4k-64k by default: small lengths read lower, a call's fixed cost flattening them);
verdict as <code>callscale gate</code>, threshold {threshold:g}.
At the last commit: {'<span class="fail">' + str(len(failing)) + ' failing</span>' if len(failing) else 'every verdict ok'}.</p>
<h2>Verdict changes</h2>
{_table(verdicts, commit_url, "No verdict changed between the commits measured.")}
<h2>Instructions per character, per commit</h2>
<img alt="instruction counts per commit, one panel per parser" src="{_data_uri(ipng)}">
<h2>Scaling exponent per commit</h2>
<img alt="scaling exponent per commit, one panel per parser" src="{_data_uri(epng)}">
<h2>Counts that moved by more than {factor:g}x</h2>
{_table(counts, commit_url, f"No count moved by more than {factor:g}x between the commits measured.")}
<h2>Commits</h2>
<table class="t"><tr><th>commit</th><th>date</th><th>show it</th><th>verdicts not ok</th></tr>{commit_rows}</table>
<p>Data: <code>history.csv</code> beside this page. Written by <code>callscale history</code>.</p>
</body></html>
"""
    page.write_text(body, encoding="utf-8")
    return Written(page, ipng, epng, csv, len(commits), len(verdicts), len(counts))


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
