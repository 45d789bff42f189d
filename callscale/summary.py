"""The verdict where a team reads it: a short Markdown summary of a gate or compare run.

    >>> text = summary.gate_markdown(run, comparison)      # or summary.compare_markdown(comparison)
    >>> summary.write(text, "results/summary.md")           # and $GITHUB_STEP_SUMMARY when set

The summary opens with the verdict, then one table row per parser x workload
(the failing rows first): verdict, scaling exponent (and the steepest step),
the cost at the longest length and per delta there, the change against the
baseline (cost ratio at the longest length, exponent step), and, under the
table, each failing row's reason and the command that reproduces it. It
holds no links (a pull-request comment and a job summary render it as it is)
and stops listing passing rows after :data:`MAX_PASSING` (the CSVs hold them
all). Tables are :func:`callscale.tables.render` with ``markdown=True``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Sequence

from . import report, tables
from .config import format_size
from .report import fmt_figure

__all__ = ["MAX_PASSING", "FILE", "gate_markdown", "compare_markdown", "reproduce", "write"]

#: Passing rows listed at most; the rest are counted in one line (failing rows are always listed).
MAX_PASSING = 30
#: The summary's name in ``--out``.
FILE = "summary.md"

_UNIT = {"time": "s", "instructions": "instr"}


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
             f"meter {run.meter}; lengths {', '.join(format_size(n) for n in run.lengths)} characters; chunking "
             f"{run.chunking}; a pair fails when a step's exponent is over {run.threshold:g} or its projected cost "
             f"outgrows the linear one" + ("; against the baseline when it got worse" if comparison is not None
                                           else ""), ""]
    lines += [f"> {line}" for line in environment] + ([""] if environment else [])
    header = ["parser", "workload", "verdict", "exponent", f"cost @{longest}", f"per delta @{longest}",
              "vs baseline"]
    shown = failing + passing[:MAX_PASSING]
    body = []
    for row in shown:
        pair = pairs.get((row.parser, row.workload))
        cost, per = _cost(row, unit)
        body.append([f"`{row.parser}`", row.workload, _verdict(row, pair), _exponent(row.fit), cost, per,
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
            text = "; ".join(why)
            lines.append(f"- `{row.parser}` on {row.workload}{' ' if text.startswith('(') else ': '}{text}")
            lines.append(f"  reproduce: `{reproduce(row, run)}`")
    if comparison is not None and (comparison.only_base or comparison.only_new):
        lines += ["", "not in both runs: " + ", ".join(
            [f"{p} on {w} (base only)" for p, w in comparison.only_base]
            + [f"{p} on {w} (this run only)" for p, w in comparison.only_new])]
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
    lines = [head, "", f"`{base}` -> `{new}`; meter {result.meter}; a pair is worse when a cost ratio is over "
             f"{result.max_ratio:g} or its exponent grew by more than {result.max_step:g}", ""]
    lines += [f"> {line}" for line in environment] + ([""] if environment else [])
    lengths = sorted({k for p in result.pairs for k in set(p.base) & set(p.new)})
    header = ["parser", "workload", "verdict", "exponent", *(f"x @{format_size(k)}" for k in lengths)]
    ordered = worse + [p for p in result.pairs if not p.worse]
    shown = worse + [p for p in result.pairs if not p.worse][:MAX_PASSING]

    def exp(p: Any) -> str:
        if p.base_exponent is None or p.new_exponent is None:
            return "-"
        return f"{p.base_exponent:.2f} -> {p.new_exponent:.2f}"

    body = [[f"`{p.parser}`", p.workload, "**WORSE**" if p.worse else "ok", exp(p),
             *("-" if p.ratio(k) is None else f"x{p.ratio(k):.3f}" for k in lengths)] for p in shown]
    lines.append(tables.render(header, body, right=set(range(3, len(header))), markdown=True))
    if len(ordered) > len(shown):
        lines += ["", f"... and {len(ordered) - len(shown)} more pairs that did not get worse"]
    if worse:
        lines += ["", "#### Worse pairs", ""]
        lines += [f"- `{p.parser}` on {p.workload}: {'; '.join(p.reasons)}" for p in worse]
    return "\n".join(lines) + "\n"


def write(text: str, path: Path | str | None = None, environ: Any = None) -> list[Path]:
    """Write ``text`` to ``path`` (parent folders made; replaced) and append it to the file named by
    ``$GITHUB_STEP_SUMMARY`` when that is set (``environ``: the environment, default ``os.environ``).
    Returns the paths written; raises ``OSError``."""
    environ = os.environ if environ is None else environ
    written = []
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    step = environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
        written.append(Path(step))
    return written
