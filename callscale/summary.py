"""The verdict where a team reads it: a short Markdown summary of a gate or compare run.

    >>> text = summary.gate_markdown(run, comparison)      # or summary.compare_markdown(comparison)
    >>> summary.write(text, "results/summary.md")           # and $GITHUB_STEP_SUMMARY when set

The summary opens with the verdict, then one table row per parser x workload
(the failing rows first): verdict, scaling exponent (and the steepest step),
the cost at the longest length and per delta there, the change against the
baseline (cost ratio at the longest length, exponent step), and, under the
table, each failing row's reason and the command that reproduces it. It
holds no links and no markup but its own (a pull-request comment and a job summary render it as it
is): every text that came from a parser, a workload, a file or an exception goes through :func:`text`
(Markdown and HTML shown literally) or :func:`code` (a code span no backtick can end)
and stops listing passing rows after :data:`MAX_PASSING` (the CSVs hold them
all). Tables are :func:`callscale.tables.render` with ``markdown=True``.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, Sequence

from . import report, tables
from .config import format_size
from .report import fmt_figure

__all__ = ["MAX_PASSING", "FILE", "text", "code", "gate_markdown", "compare_markdown", "reproduce", "write"]

#: Passing rows listed at most; the rest are counted in one line (failing rows are always listed).
MAX_PASSING = 30
#: The summary's name in ``--out`` (:data:`callscale.report.SUMMARY`, which the run's folder checks name too).
FILE = report.SUMMARY

_UNIT = {"time": "s", "instructions": "instr"}

#: Characters that are markup wherever they stand in GitHub Markdown (code, emphasis, links, images,
#: HTML, table cells, strikethrough, math); each is escaped with a backslash.
_ALWAYS = re.compile(r"([\\`*\[\]<&|~$])")
#: ``_`` opens or closes emphasis only where it is not between two letters or digits.
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
#: What makes a block when it starts a line: a heading, a list item, a quote, a rule, a table's rule.
_LINE_START = re.compile(r"^(\d*)([#>+=-]|(?<=\d)[.)](?=\s|$))")


def text(value: Any) -> str:
    """``value`` (a parser's or workload's name, a reason, an exception's text, a path: anything the
    harness did not write itself) as Markdown that shows it literally on one line: whitespace runs made
    one space, and each character that could start markup (:data:`_ALWAYS`, a ``_`` at a word's edge,
    a block marker at the start) escaped with a backslash, so no ``|`` adds a column, no ``<img ...>``
    is HTML and no ``[text](url)`` is a link."""
    one = " ".join(str(value).split())
    one = _UNDERSCORE.sub(r"\\_", _ALWAYS.sub(r"\\\1", one))
    return _LINE_START.sub(r"\1\\\2", one, count=1)


def code(value: Any, *, cell: bool = False) -> str:
    """``value`` as one inline code span that no backtick in it can end: fenced by one backtick more
    than its longest run of backticks, padded with a space where it starts or ends with one; line
    breaks made spaces. ``cell``: inside a table row, where GitHub splits cells at a ``|`` even in a
    code span, so each ``|`` is written ``\\|`` (shown as ``|``)."""
    one = " ".join(str(value).splitlines())
    fence = "`" * (max((len(run) for run in re.findall("`+", one)), default=0) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") or not one.strip() else ""
    if cell:
        one = one.replace("|", "\\|")
    return f"{fence}{pad}{one}{pad}{fence}"


def reproduce(row: Any, run: Any) -> str:
    """The ``callscale gate`` command line that measures ``row`` (a :class:`callscale.matrix.Row`) of
    ``run`` again, alone: its parser (and ``--workload-format`` for a plug-in), workload, lengths,
    chunking and meter."""
    parts = ["callscale", "gate", "--parser", row.parser]
    if ":" in row.parser and row.format:
        parts += ["--workload-format", row.format]
    parts += ["--workload", row.workload, "--lengths", ",".join(format_size(n) for n in run.lengths),
              "--chunking", str(run.chunking)]
    if run.meter != "time":
        parts += ["--meter", run.meter]
    return " ".join(shlex.quote(p) for p in parts)


def _cost(row: Any, unit: str) -> tuple[str, str]:
    """``(cost at the longest length, cost per delta there)`` as text; the failure word when it failed."""
    if not row.measurements:
        return "-", "-"
    last = row.measurements[-1]
    if last.error:
        return ("timeout" if last.error.startswith("timeout") else "error"), "-"
    per = fmt_figure(last.seconds / last.deltas) if last.seconds is not None and last.deltas else "-"
    return f"{fmt_figure(last.seconds)} {unit}", per


def _change(pair: Any) -> str:
    """The change against the baseline: cost ratio at the longest common length and exponent step."""
    if pair is None:
        return "-"
    common = sorted(set(pair.base) & set(pair.new))
    parts = []
    if common and pair.ratio(common[-1]) is not None:
        parts.append(f"x{pair.ratio(common[-1]):.3f} @{format_size(common[-1])}")
    if pair.base_exponent is not None and pair.new_exponent is not None:
        step = pair.new_exponent - pair.base_exponent
        parts.append(f"exp {0.0 if abs(step) < 0.005 else step:+.2f}")  # no "-0.00"
    text = ", ".join(parts) or "-"
    return f"**WORSE** {text}" if pair.worse else text


def _exponent(fit: Any) -> str:
    if fit.exponent is None:
        return "-"
    steepest = f" (step {fit.steepest:.2f})" if fit.steepest is not None else ""
    return f"{fit.exponent:.2f}{steepest}"


def _verdict(row: Any, pair: Any) -> str:
    if not row.fit.passed:
        return f"**{row.fit.verdict}**" + (f" ({row.fit.rule})" if row.fit.rule and row.fit.rule != "error" else "")
    return "**WORSE**" if pair is not None and pair.worse else row.fit.verdict


def gate_markdown(run: Any, comparison: Any = None, *, title: str = "callscale gate",
                  environment: Sequence[str] = ()) -> str:
    """The Markdown summary of ``run`` (:class:`callscale.matrix.Run`), with ``comparison``
    (:class:`callscale.compare.Comparison` against the baseline, or ``None``) and ``environment`` (lines
    saying how the baseline's environment differs, :func:`callscale.environment.differences`). Returns the
    text, ending in a newline."""
    pairs = {(p.parser, p.workload): p for p in (comparison.pairs if comparison is not None else [])}
    worse = {k for k, p in pairs.items() if p.worse}
    rows = list(run.rows)
    failing = [r for r in rows if not r.fit.passed or (r.parser, r.workload) in worse]
    passing = [r for r in rows if r not in failing]
    passed = not failing
    unit = _UNIT.get(run.meter, run.meter)
    longest = format_size(run.lengths[-1])
    if passed:
        head = f"### {title}: passed ({len(rows)} parser x workload pair{'s' if len(rows) != 1 else ''})"
    else:
        head = f"### {title}: FAILED ({len(failing)} of {len(rows)} parser x workload pairs)"
    lines = [head, "",
             f"meter {text(run.meter)}; lengths {', '.join(format_size(n) for n in run.lengths)} characters; "
             f"chunking {text(run.chunking)}; a pair fails when a step's exponent is over {run.threshold:g} or its projected cost "
             f"outgrows the linear one" + ("; against the baseline when it got worse" if comparison is not None
                                           else ""), ""]
    lines += [f"> {text(line)}" for line in environment] + ([""] if environment else [])
    header = ["parser", "workload", "verdict", "exponent", f"cost @{longest}", f"per delta @{longest}",
              "vs baseline"]
    shown = failing + passing[:MAX_PASSING]
    body = []
    for row in shown:
        pair = pairs.get((row.parser, row.workload))
        cost, per = _cost(row, unit)
        body.append([code(row.parser, cell=True), text(row.workload), _verdict(row, pair), _exponent(row.fit), cost, per,
                     _change(pair) if comparison is not None else "-"])
    lines.append(tables.render(header, body, right={3, 4, 5}, markdown=True))
    if len(passing) > MAX_PASSING:
        lines += ["", f"... and {len(passing) - MAX_PASSING} more passing pairs (scaling-fits.csv holds every row)"]
    if failing:
        lines += ["", "#### Failing pairs", ""]
        for row in failing:
            pair = pairs.get((row.parser, row.workload))
            why = []
            if not row.fit.passed:
                why.append(report.why(row, run))
            if pair is not None and pair.worse:
                why.append("against the baseline: " + "; ".join(pair.reasons))
            reason = text("; ".join(why))
            lines.append(f"- {code(row.parser)} on {text(row.workload)}{' ' if reason.startswith('(') else ': '}"
                         f"{reason}")
            lines.append(f"  reproduce: {code(reproduce(row, run))}")
    if comparison is not None and (comparison.only_base or comparison.only_new):
        lines += ["", "not in both runs: " + ", ".join(
            [f"{code(p)} on {text(w)} (base only)" for p, w in comparison.only_base]
            + [f"{code(p)} on {text(w)} (this run only)" for p, w in comparison.only_new])]
    return "\n".join(lines) + "\n"


def compare_markdown(result: Any, base: str = "base", new: str = "new",
                     environment: Sequence[str] = ()) -> str:
    """The Markdown summary of ``callscale compare`` (``result``: :class:`callscale.compare.Comparison`):
    verdict, then per pair (the worse first) exponents, cost ratio at each common length, verdict.
    ``environment``: lines saying how the two runs' environments differ (:func:`callscale.environment.differences`)."""
    worse = result.worse
    n = len(result.pairs)
    head = (f"### callscale compare: WORSE ({len(worse)} of {n} parser x workload pairs)" if worse
            else f"### callscale compare: no pair got worse ({n} parser x workload pair{'s' if n != 1 else ''})")
    lines = [head, "", f"{code(base)} -> {code(new)}; meter {text(result.meter)}; a pair is worse when a cost ratio is over "
             f"{result.max_ratio:g} or its exponent grew by more than {result.max_step:g}", ""]
    lines += [f"> {text(line)}" for line in environment] + ([""] if environment else [])
    lengths = sorted({k for p in result.pairs for k in set(p.base) & set(p.new)})
    header = ["parser", "workload", "verdict", "exponent", *(f"x @{format_size(k)}" for k in lengths)]
    ordered = worse + [p for p in result.pairs if not p.worse]
    shown = worse + [p for p in result.pairs if not p.worse][:MAX_PASSING]

    def exp(p: Any) -> str:
        if p.base_exponent is None or p.new_exponent is None:
            return "-"
        return f"{p.base_exponent:.2f} -> {p.new_exponent:.2f}"

    body = [[code(p.parser, cell=True), text(p.workload), "**WORSE**" if p.worse else "ok", exp(p),
             *("-" if p.ratio(k) is None else f"x{p.ratio(k):.3f}" for k in lengths)] for p in shown]
    lines.append(tables.render(header, body, right=set(range(3, len(header))), markdown=True))
    if len(ordered) > len(shown):
        lines += ["", f"... and {len(ordered) - len(shown)} more pairs that did not get worse"]
    if worse:
        lines += ["", "#### Worse pairs", ""]
        lines += [f"- {code(p.parser)} on {text(p.workload)}: {text('; '.join(p.reasons))}" for p in worse]
    return "\n".join(lines) + "\n"


def write(text: str, path: Path | str | None = None, environ: Any = None) -> list[Path]:
    """Write ``text`` to ``path`` (parent folders made; replaced) and append it to the file named by
    ``$GITHUB_STEP_SUMMARY`` when that is set (``environ``: the environment, default ``os.environ``).
    Returns the paths written; raises ``OSError`` (:class:`callscale.exports.NotRegularFile` when ``path``
    holds something other than a regular file)."""
    from .exports import regular_file

    environ = os.environ if environ is None else environ
    written = []
    if path is not None:
        path = regular_file(path)  # never a device, a directory or a pipe
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    step = environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
        written.append(Path(step))
    return written
