"""Fit the scaling of a parser's cost and judge it by its shape.

Three figures per series of (length, cost) points, lengths in characters:

- the **exponent**: the least-squares slope of ``log(seconds)`` on
``log(length)`` (``numpy.polyfit`` of degree 1) over at least three lengths:
a parser whose cost grows linearly with the call length gets about 1, one
that rescans its whole buffer per increment about 2. ``growth per 4x`` is
``4 ** exponent``: how much the cost grows when the call gets four times
longer (4 for linear, 16 for quadratic). Only ratios inside one run enter,
so a uniformly slower machine does not move the exponent.
- the **steepest step**: the largest exponent between two consecutive
  lengths (``log(growth) / log(length ratio)``). One slope over all lengths
  hides a quadratic term that only wins at the longer lengths; the
  steepest step does not.
- the **projection**: the series fitted as ``cost = c + a*n + b*n**2`` by
  non-negative least squares (``scipy.optimize.nnls``; exact under the
  instruction meter), evaluated at a reference length (default 256k
  characters, longer than the lengths measured, as users' calls are), next
  to the **linear projection** ``c + (a + b*longest) * reference``: the
  fixed cost plus the cost per character at the longest measured length
  kept up to the reference length. Their ratio is how much the cost per
  character grows from the longest measured length to the reference
  length: 1 for a linear parser. The constant ``c``, of either sign (a
  parser's fixed cost per stream, or a workload's framing text that costs
  less per character than the call's body), keeps such an offset from
  reading as curvature: without it, ``a*n + b*n**2`` had to bend to pass
  through the shortest points and projected a false quadratic term
  (``minimax_m2`` on write_file at 512..4k under the instruction meter: per-2x
  growth 1.77, 1.88, 1.93, projected 3.1x; with ``c``: 1.3x). Fitting ``c``
  is judging the marginal cost per character between the lengths. The series is fitted
  both with ``c`` and with ``c = 0``, and the fit that projects the smaller
  growth is kept: a quadratic term must show in both to fail. (With three
  points the fit with ``c`` passes through every point, so timing noise at
  short lengths, projected 64x beyond them, would read as curvature; the fit
  without ``c`` does not, and a real quadratic term shows in it as before.)

The verdict (:func:`fit`) fails on either rule: the steepest step over the
threshold (rule ``step``), or the projection over ``projection_factor``
times the linear one while the steepest step is over
:data:`PROJECTION_MIN_STEP` (rule ``projection``).

The size axis is the text's length in characters. Given the number of
deltas too (``deltas=``, what :mod:`callscale.matrix` passes under a
``model`` chunking), a series that fails on characters is judged on deltas
too and the better verdict kept (``Fit.axis`` says which): a streaming
parser works per character and per delta, and under the model's tokens the
two are not proportional, because the characters per token of a workload's
text change with what the text is (``write_file`` under DeepSeek's
tokenizer: 3.55 at 1k, 2.79 at 8k, 3.42 at 64k), so a parser whose cost is
flat per delta (ours: within 5% from 1k to 8k) read as 1.2 steps and
projected 5.5x on characters. A quadratic cost (work per delta growing with
the text before it: deltas x characters) grows with the square of either
axis, so it fails on both; the deltas axis's reference length is
``reference_length`` characters at the longest length's characters per
delta (``Fit.reference_x``). The rule's account: docs/gate.md.

Apart from the cost, a row whose parser got a case wrong (:mod:`callscale.verify`) has the verdict
:data:`WRONG_OUTPUT` (rule ``output``; :func:`judge_output`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .config import DEFAULTS

__all__ = ["Fit", "exponent", "step_growth", "step_exponents", "quadratic_fit", "fit", "judge_output", "judge_request", "request_words", "OK", "FAIL",
           "ERROR", "TIMEOUT", "WRONG_OUTPUT", "REFERENCE_LENGTH", "PROJECTION_FACTOR",
           "PROJECTION_MIN_STEP"]

OK = "ok"
FAIL = "FAIL"
ERROR = "ERROR"
TIMEOUT = "timeout"
"""The verdict of a series with a run stopped for overrunning its time budget (an error text ``timeout ...``)."""
WRONG_OUTPUT = "wrong output"
"""The verdict of a series whose parser streamed a result other than the case's (:mod:`callscale.verify`)."""
MIN_POINTS = 3
REFERENCE_LENGTH = DEFAULTS.reference_length
"""Default length (characters) the fitted cost is projected to (:class:`callscale.config.Settings`)."""
PROJECTION_FACTOR = DEFAULTS.projection_factor
"""Default largest ratio of the projected cost to the linear projection that passes
(:class:`callscale.config.Settings`)."""
THRESHOLD = DEFAULTS.threshold
"""Default largest step exponent that passes (:class:`callscale.config.Settings`)."""

PROJECTION_MIN_STEP = 1.05
"""The projection rule fails a series only when its steepest step is over this: a quadratic term the
lengths measured show at all. Below it the cost grew within 5% of linear between every two lengths,
and a projection far beyond short lengths reads the workload's make-up as curvature (deepseek_v31 on
write_file at 512, 1k, 2k under the instruction meter: steps 1.013 and 1.016, exact, projected 3.2x;
at 4k-64k its steps are 1.00 and 1.01). Nothing is lost where the longest length is 10k or more: a term
that projects to 3x at 256k makes the last 2x step exceed 1.05 there (docs/gate.md)."""


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
    other spacings are scaled to a 4x step: ``4 ** exponent`` of the step
    (:func:`step_exponents`); ``inf`` where that is beyond a float (two lengths
    a few characters apart), ``nan`` where a figure or length is not positive.
    """
    out = []
    for e in step_exponents(lengths, seconds):
        try:
            out.append(4.0 ** e)
        except OverflowError:
            out.append(math.inf)
    return out


def step_exponents(lengths: Sequence[float], seconds: Sequence[float]) -> list[float]:
    """The exponent of each step between consecutive lengths (sorted): ``log(s1 / s0) / log(l1 / l0)``;
    ``nan`` where a figure or length is not positive or two lengths are equal."""
    points = sorted(zip(lengths, seconds))
    out = []
    for (l0, s0), (l1, s1) in zip(points, points[1:]):
        if l1 > l0 > 0 and s0 > 0 and s1 > 0:
            out.append(math.log(s1 / s0) / math.log(l1 / l0))
        else:
            out.append(float("nan"))
    return out


def quadratic_fit(lengths: Sequence[float], seconds: Sequence[float], constant: bool = True
                  ) -> tuple[float, float, float]:
    """``(c, a, b)`` of ``cost = c + a*n + b*n**2``, ``a`` and ``b`` >= 0, by non-negative least squares
    (``constant=False``: ``c`` is held at 0, ``cost = a*n + b*n**2``).

    ``c`` may take either sign: a fixed cost per stream (positive), or text
    around the call that costs less per character than the call's body
    (negative: a workload's framing is a fixed number of characters of the
    length). Either way it is not curvature; fitting ``c`` is the same as
    judging the marginal cost per character between the lengths.

    ``lengths`` in characters, ``seconds`` in the meter's unit; ``c`` is the
    fixed cost, ``a`` per character, ``b`` per character squared. The
    residuals are plain (not relative), so the longer lengths, where a
    quadratic term shows, weigh most, and the workloads' small-size
    irregularities at the shortest lengths do not pass for curvature.
    Raises ``ValueError`` on fewer than two points or a figure that is not
    positive.
    """
    from scipy.optimize import nnls

    if len(lengths) != len(seconds) or len(lengths) < 2:
        raise ValueError("need at least two (length, figure) pairs for the quadratic fit")
    n = np.asarray(lengths, float)
    y = np.asarray(seconds, float)
    if not (n > 0).all() or not (y > 0).all():
        raise ValueError("lengths and figures must all be positive")
    scale = n.max()
    u = n / scale  # columns of similar size: a well-conditioned problem
    top = y.max()
    if constant:  # c = c1 - c2, either sign; a, b >= 0
        (c1, c2, ca, cb), _ = nnls(np.column_stack([np.ones_like(u), -np.ones_like(u), u, u * u]), y / top)
        cc = c1 - c2
    else:
        cc, ((ca, cb), _) = 0.0, nnls(np.column_stack([u, u * u]), y / top)
    return float(cc * top), float(ca * top / scale), float(cb * top / scale ** 2)


@dataclass
class Fit:
    """The scaling of one parser on one workload.

    ``lengths``: the x values (characters), ascending; ``seconds``: the
    figures at those lengths (``None`` where a run failed). ``exponent`` and
    ``growth_per_4x`` are ``None`` when no fit was possible (then ``reason``
    says why). ``steps``: measured growth per 4x between consecutive
    lengths. ``steepest``: the largest step exponent. ``c``, ``a``, ``b``: the
    fit ``cost = c + a*n + b*n**2``; ``projected``: that fit at
    ``reference_length``; ``linear_projected``: ``c + (a + b*longest) *
    reference_length``; ``projection_ratio``: their ratio. ``verdict``:
    :data:`OK`, :data:`FAIL` (``rule`` names the rules that failed:
    ``step``, ``projection`` or ``step+projection``), :data:`TIMEOUT`,
    :data:`ERROR` (a run raised or no fit; ``rule`` is ``error``), or
    :data:`WRONG_OUTPUT` (``rule`` ``output``, ``reason`` the first
    difference; ``cost_verdict`` what the cost alone gave).
    ``passed``: the verdict is OK, or it is WRONG_OUTPUT with
    ``cost_only`` and an OK ``cost_verdict``.
    """

    lengths: list[float]
    seconds: list[float | None]
    threshold: float
    exponent: float | None = None
    growth_per_4x: float | None = None
    steps: list[float] = field(default_factory=list)
    verdict: str = ERROR
    reason: str = ""
    steepest: float | None = None
    a: float | None = None
    b: float | None = None
    reference_length: float = REFERENCE_LENGTH
    projection_factor: float = PROJECTION_FACTOR
    projected: float | None = None
    linear_projected: float | None = None
    rule: str = ""
    c: float | None = None
    cost_verdict: str | None = None
    cost_only: bool = False
    axis: str = "characters"
    """The size axis of ``lengths``, the fit and the rules: ``characters``, or ``deltas`` (the number of
    deltas; kept when it judged better, see the module docstring)."""
    reference_x: float | None = None
    """``reference_length`` on the axis: the same number of characters, or under ``deltas`` that many
    characters at the longest length's characters per delta."""
    increment_steepest: float | None = None
    """The exponent of the slowest single increment between the two longest lengths (:func:`judge_increments`; time meter)."""
    increment_ratio: float | None = None
    """The slowest increment at the longest length over the mean increment there."""
    request_ratio: float | None = None
    """One request's cost (a fresh parser and its first increment) over the floor's on the same delta
    (:func:`judge_request`; ``None`` where either was not measured)."""
    request_factor: float | None = None
    """The largest :attr:`request_ratio` that passes, where it was judged."""

    @property
    def projection_ratio(self) -> float | None:
        if self.projected is None or not self.linear_projected:
            return None
        return self.projected / self.linear_projected

    @property
    def passed(self) -> bool:
        if self.verdict == WRONG_OUTPUT:
            return self.cost_only and self.cost_verdict == OK
        return self.verdict == OK


INCREMENT_THRESHOLD = 0.5
"""The slowest-increment rule: the exponent of the slowest single increment between the two longest
lengths above which it grows with what the parser has received (a linear parser's is flat, 0; a parser
that re-reads all it received in one delta, 1). The shorter steps are not judged: a linear parser's
slowest increment may still rise from 4k to 16k (qwen3_coder on write_file@mixed: 10 us, 46 us, 44 us)."""
INCREMENT_FACTOR = 100.0
"""... and the slowest increment at the longest length must be over this many times the mean increment
(the cost over the deltas) there: a spike a linear parser also has (a buffer's realloc, a collection, a
held marker prefix released) is at most about 70 times the mean at 64k (glm47 on write_file@mixed: 68x),
while re-reading 64k characters in one delta is thousands of times a 4-character delta."""


def judge_increments(result: Fit, lengths: Sequence[float], slowest: Sequence[float | None],
                     seconds: Sequence[float | None], deltas: Sequence[int]) -> Fit:
    """The slowest-increment rule (docs/gate.md): fail ``result`` (rule ``increment`` added) when the
    slowest single increment (``slowest``, per length, in the unit of ``seconds`` times 1000: ms
    against s) grows between the two longest lengths by an exponent over :data:`INCREMENT_THRESHOLD` and
    is, at the longest length, over :data:`INCREMENT_FACTOR` times the mean increment (``seconds / deltas``).

    Judged only where every length has its figures and the verdict so far is OK or FAIL; that exponent
    is kept in ``result.increment_steepest``, the ratio in ``result.increment_ratio``. Returns ``result``
    (changed in place).
    """
    points = sorted(zip(lengths, slowest, seconds, deltas), key=lambda p: p[0])
    if result.verdict not in (OK, FAIL) or len(points) < 2 \
            or not all(p[1] and p[1] > 0 and p[2] and p[2] > 0 and p[3] for p in points):
        return result
    xs = [float(p[0]) for p in points]
    result.increment_steepest = step_exponents(xs, [float(p[1]) for p in points])[-1]
    longest = points[-1]
    result.increment_ratio = longest[1] / (1000.0 * longest[2] / longest[3])
    if result.increment_steepest > INCREMENT_THRESHOLD and result.increment_ratio > INCREMENT_FACTOR:
        result.verdict = FAIL
        result.rule = "+".join(r for r in (result.rule, "increment") if r)
        result.reason = (f"slowest increment grows (last step {result.increment_steepest:.2f} > "
                         f"{INCREMENT_THRESHOLD}) to {result.increment_ratio:.0f}x the mean increment")
    return result


def judge_request(result: Fit, request: float | None, floor_request: float | None, factor: float) -> Fit:
    """The per-request rule (docs/gate.md): fail ``result`` (rule ``request`` added) when one request,
    a fresh parser made and given the case's first delta (``request``, in the meter's unit), costs more
    than ``factor`` times the floor's (``floor_request``, the ``null`` parser on the same delta): what
    every request a server handles pays whatever the length, so no length axis shows it (a parser that
    compiles patterns over a tokenizer's vocabulary in its constructor). The ratio is kept in
    ``result.request_ratio``; judged where both figures exist and the verdict so far is OK or FAIL.
    Returns ``result`` (changed in place)."""
    if request is None or not floor_request or floor_request <= 0:
        return result
    result.request_ratio, result.request_factor = request / floor_request, factor
    if result.verdict in (OK, FAIL) and result.request_ratio > factor:
        result.verdict = FAIL
        result.rule = "+".join(r for r in (result.rule, "request") if r)
        result.reason = result.reason or request_words(result)
    return result


def request_words(result: Fit) -> str:
    """The per-request rule's figures in words (:func:`judge_request`)."""
    return (f"a request (a fresh parser and its first delta) costs {result.request_ratio:,.0f}x the floor's "
            f"> {result.request_factor:g}x")


def judge_output(result: Fit, wrong: str | None, cost_only: bool = False) -> Fit:
    """Mark ``result`` :data:`WRONG_OUTPUT` when ``wrong`` (the first difference of a case) is given and
    the cost was judged (verdict OK or FAIL); ``cost_only``: it still passes when the cost does.
    Returns ``result`` (changed in place)."""
    result.cost_only = cost_only
    if wrong and result.verdict in (OK, FAIL):
        result.cost_verdict = result.verdict
        result.verdict = WRONG_OUTPUT
        result.rule = "output" + (f"+{result.rule}" if result.rule else "")
        result.reason = wrong
    return result


def fit(lengths: Sequence[float], seconds: Sequence[float | None], threshold: float,
        errors: Sequence[str | None] = (), *, reference_length: float = REFERENCE_LENGTH,
        projection_factor: float = PROJECTION_FACTOR, deltas: Sequence[float] | None = None) -> Fit:
    """Fit the series and judge its shape (see the module docstring for the two rules and the axes).

    ``deltas``: the number of deltas at each length (same order as
    ``lengths``); when given and the series fails on characters, it is
    judged on deltas too and that fit kept when it does better: it passes,
    or it fails with a smaller projection (``Fit.axis`` is then ``deltas``,
    ``Fit.lengths`` holds the deltas, ``reference_length`` stays in
    characters).

    ``OK`` when every step exponent is ``<= threshold`` and the projection at
    ``reference_length`` (characters) is at most ``projection_factor`` times
    the linear projection. (The least-squares exponent is a weighted mean of
    the step exponents, so it is never over the steepest one.)

    ``errors``: per point, the exception text of a failed run (or ``None``);
    any failed run makes the verdict :data:`ERROR` with that text as the
    reason, as does a figure that is missing or not positive.
    """
    result = _fit(lengths, seconds, threshold, errors, reference_length, projection_factor)
    if deltas is None or result.verdict not in (OK, FAIL) or len(deltas) != len(lengths) \
            or not all(d and d > 0 for d in deltas):
        return result
    by_length = sorted(zip(lengths, deltas))
    reference_x = reference_length * by_length[-1][1] / by_length[-1][0]
    other = _fit(deltas, seconds, threshold, errors, reference_x, projection_factor)
    if other.verdict not in (OK, FAIL):
        return result
    other.axis, other.reference_x, other.reference_length = "deltas", reference_x, float(reference_length)

    def worse(f: Fit) -> tuple:
        return f.verdict != OK, f.projection_ratio if f.projection_ratio is not None else math.inf, f.steepest

    return other if result.verdict != OK and worse(other) < worse(result) else result


def _fit(lengths: Sequence[float], seconds: Sequence[float | None], threshold: float, errors: Sequence[str | None],
         reference_length: float, projection_factor: float) -> Fit:
    """:func:`fit` on one axis (``lengths`` its values, ``reference_length`` on that axis)."""
    points = sorted(zip(lengths, seconds, list(errors) + [None] * (len(lengths) - len(errors))),
                    key=lambda p: p[0])
    xs = [float(p[0]) for p in points]
    ys = [p[1] for p in points]
    result = Fit(xs, ys, float(threshold), reference_length=float(reference_length),
                 projection_factor=float(projection_factor), reference_x=float(reference_length))
    result.rule = "error"
    failed = [p[2] for p in points if p[2]]
    if failed:
        result.reason = failed[0]
        if any(e.startswith("timeout") for e in failed):
            result.verdict = TIMEOUT
            result.rule = "timeout"
            result.reason = next(e for e in failed if e.startswith("timeout"))
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
    result.steepest = max(step_exponents(xs, ys))
    longest = xs[-1]
    best = None
    for constant in (True, False):  # the model that projects the smaller growth is kept
        c, a, b = quadratic_fit(xs, ys, constant)
        projected = c + a * reference_length + b * reference_length ** 2
        linear = c + (a + b * longest) * reference_length
        ratio = projected / linear if linear else math.inf
        if best is None or ratio < best[0]:
            best = (ratio, c, a, b, projected, linear)
    _, result.c, result.a, result.b, result.projected, result.linear_projected = best
    rules = []
    if result.steepest > threshold:
        rules.append("step")
    ratio = result.projection_ratio
    if ratio is None or (ratio > projection_factor and result.steepest > PROJECTION_MIN_STEP):
        rules.append("projection")
    result.rule = "+".join(rules)
    result.verdict = FAIL if rules else OK
    return result
