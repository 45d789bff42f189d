"""Fit the scaling exponent of a parser's cost and judge it against a threshold.

The exponent is the least-squares slope of ``log(seconds)`` on
``log(length)`` (``numpy.polyfit`` of degree 1) over at least three lengths:
a parser whose cost grows linearly with the call length gets about 1, one
that rescans its whole buffer per increment about 2. ``growth per 4x`` is
``4 ** exponent``: how much the cost grows when the call gets four times
longer (4 for linear, 16 for quadratic). Only ratios inside one run enter,
so a uniformly slower machine does not move the exponent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["Fit", "exponent", "step_growth", "fit", "OK", "FAIL", "ERROR"]

OK = "ok"
FAIL = "FAIL"
ERROR = "ERROR"
MIN_POINTS = 3


def exponent(lengths: Sequence[float], seconds: Sequence[float]) -> float:
    """The least-squares slope of log(seconds) on log(lengths).

    Raises ``ValueError`` when there are fewer than three points, fewer than
    two distinct lengths, or a length or a figure that is not positive.
    """
    if len(lengths) != len(seconds):
        raise ValueError(f"{len(lengths)} lengths but {len(seconds)} figures")
    if len(lengths) < MIN_POINTS:
        raise ValueError(f"need at least {MIN_POINTS} lengths to fit an exponent, got {len(lengths)}")
    if any(not (x > 0) for x in lengths) or any(not (y > 0) for y in seconds):
        raise ValueError("lengths and figures must all be positive to fit on a log scale")
    if len(set(lengths)) < 2:
        raise ValueError("need at least two distinct lengths to fit an exponent")
    slope, _ = np.polyfit(np.log(np.asarray(lengths, float)), np.log(np.asarray(seconds, float)), 1)
    return float(slope)


def step_growth(lengths: Sequence[float], seconds: Sequence[float]) -> list[float]:
    """The measured growth per 4x between consecutive lengths (sorted by length).

    For lengths 4x apart this is the plain ratio ``seconds[i+1] / seconds[i]``;
    other spacings are scaled to a 4x step: ``ratio ** (log 4 / log(l[i+1] / l[i]))``.
    """
    points = sorted(zip(lengths, seconds))
    out = []
    for (l0, s0), (l1, s1) in zip(points, points[1:]):
        if l1 > l0 > 0 and s0 > 0 and s1 > 0:
            out.append((s1 / s0) ** (math.log(4) / math.log(l1 / l0)))
        else:
            out.append(float("nan"))
    return out


@dataclass
class Fit:
    """The scaling of one parser on one workload.

    ``lengths``: the x values (characters), ascending; ``seconds``: the
    figures at those lengths (``None`` where a run failed). ``exponent`` and
    ``growth_per_4x`` are ``None`` when no fit was possible (then ``reason``
    says why). ``steps``: measured growth per 4x between consecutive
    lengths. ``verdict``: :data:`OK` (exponent <= threshold), :data:`FAIL`,
    or :data:`ERROR` (a run raised or no fit).
    """

    lengths: list[float]
    seconds: list[float | None]
    threshold: float
    exponent: float | None = None
    growth_per_4x: float | None = None
    steps: list[float] = field(default_factory=list)
    verdict: str = ERROR
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict == OK


def fit(lengths: Sequence[float], seconds: Sequence[float | None], threshold: float,
        errors: Sequence[str | None] = ()) -> Fit:
    """Fit the exponent and judge it: ``OK`` when ``exponent <= threshold``.

    ``errors``: per point, the exception text of a failed run (or ``None``);
    any failed run makes the verdict :data:`ERROR` with that text as the
    reason, as does a figure that is missing or not positive.
    """
    points = sorted(zip(lengths, seconds, list(errors) + [None] * (len(lengths) - len(errors))),
                    key=lambda p: p[0])
    xs = [float(p[0]) for p in points]
    ys = [p[1] for p in points]
    result = Fit(xs, ys, float(threshold))
    failed = [p[2] for p in points if p[2]]
    if failed:
        result.reason = failed[0]
        return result
    if any(y is None or not (y > 0) for y in ys):
        result.reason = "a figure is missing or not positive"
        return result
    try:
        result.exponent = exponent(xs, ys)
    except ValueError as exc:
        result.reason = str(exc)
        return result
    result.growth_per_4x = 4.0 ** result.exponent
    result.steps = step_growth(xs, ys)
    result.verdict = OK if result.exponent <= threshold else FAIL
    return result
