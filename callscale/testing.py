"""callscale in a team's own test suite: assert that a parser stays linear and chunking-invariant.

    from callscale.testing import assert_linear, assert_chunking_invariant
    from my_engine.parsers import MyDeepSeekParser

    def test_linear():
        assert_linear(MyDeepSeekParser, "deepseek_v31")

    def test_chunking_invariant():
        assert_chunking_invariant(MyDeepSeekParser, "deepseek_v31")

Both raise :class:`AssertionError` whose message is the verdict: for
:func:`assert_linear` the rows of ``callscale gate``'s table that failed and
the rule each broke (``step``, ``projection``; see :mod:`callscale.fit`), for
:func:`assert_chunking_invariant` the failing streams by kind with the
smallest case (as ``callscale check`` prints them). The pytest plugin
(:mod:`callscale.pytest_plugin`) hands both out as fixtures.

A parser is given as any of: a registered name (``"deepseek_v31"``), an
importable ``"module.path:ClassOrFactory"`` string, or the class or factory
object itself. The instruction meter runs the streaming in a child process
under callgrind, which must import the parser: an object is passed on as
``module:qualname``, with the folder its module was imported from put on the
child's import path, so a class or a module-level factory defined in the test
module itself works. A factory defined inside a function (``<locals>``) cannot
be imported by a child: :func:`parser_path` raises ``TypeError`` saying so
(use the ``time`` meter, or move it to module level).

The meter: ``meter=None`` (the default) is the instruction meter (exact
counts, repeatable on any runner) where valgrind is installed, and otherwise
the test is skipped with the reason (``unittest.SkipTest``, which pytest
reports as a skip); ``meter="time"`` measures process time in this process
(noisy on a shared runner; a failing pair is measured twice, see
:func:`callscale.matrix.run`).
"""

from __future__ import annotations

import importlib
import sys
import unittest
from pathlib import Path
from typing import Any, Sequence

from . import check, config, matrix, plugins, report
from .config import DEFAULTS

__all__ = ["assert_linear", "assert_chunking_invariant", "parser_path", "DEFAULT_WORKLOADS",
           "DEFAULT_INSTRUCTION_LENGTHS", "DEFAULT_TIME_LENGTHS"]

#: Workloads :func:`assert_linear` measures by default (the gate's default rows: ``config.DEFAULTS.workloads``).
DEFAULT_WORKLOADS = config.DEFAULTS.workloads
#: Call lengths (characters) under the instruction meter: exact counts fit on small lengths.
DEFAULT_INSTRUCTION_LENGTHS = (1024, 2048, 4096, 8192)
#: Call lengths (characters) under the time meter.
DEFAULT_TIME_LENGTHS = (4096, 16384, 65536)


def parser_path(parser: Any) -> str:
    """The importable ``module:qualname`` of a class or factory (a string is returned as is).

    The folder the module was imported from (its package root for a dotted
    module) is added to ``sys.path``, which the instruction meter passes to
    its child. Raises ``TypeError`` for an object a child process cannot
    import (defined inside a function, or in ``__main__``).
    """
    if isinstance(parser, str):
        return parser
    module_name = getattr(parser, "__module__", None)
    qualname = getattr(parser, "__qualname__", None)
    if not module_name or not qualname or "<locals>" in qualname or "<lambda>" in qualname \
            or module_name == "__main__":
        raise TypeError(f"callscale: {parser!r} cannot be imported by the meter's child process "
                        f"(module {module_name!r}, name {qualname!r}); define it at module level of an "
                        "importable module, or pass meter='time'")
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not parser:
        raise TypeError(f"callscale: {module_name}:{qualname} does not name {parser!r} (rebound or shadowed)")
    source = getattr(module, "__file__", None)
    if source:
        root = Path(source).resolve().parent
        for _ in range(module_name.count(".") + (Path(source).name == "__init__.py")):
            root = root.parent
        if str(root) not in sys.path:
            sys.path.append(str(root))
    return f"{module_name}:{qualname}"


def _spec(parser: Any, fmt: str | None, meter: str) -> plugins.ParserSpec:
    """The :class:`callscale.plugins.ParserSpec` of ``parser`` (``TypeError`` for a bad selection)."""
    if isinstance(parser, str) and not plugins.is_plugin(parser):
        name = parser
    elif meter == "instructions" or isinstance(parser, str):
        name = parser_path(parser)
    else:  # measured in this process: the object itself
        factory = parser
        sample = factory()
        missing = [m for m in plugins.REQUIRED_METHODS if not callable(getattr(sample, m, None))]
        if missing:
            raise TypeError(f"callscale: {parser!r}() gives a {type(sample).__name__} without {', '.join(missing)}()")
        if fmt is None:
            raise TypeError("callscale: a parser object needs its format (the format whose workloads to render)")
        label = f"{getattr(parser, '__module__', '?')}:{getattr(parser, '__qualname__', repr(parser))}"
        return plugins.ParserSpec(label, plugins.known_workload_format(fmt, label), factory, plugin=True)
    try:
        spec = plugins.resolve(name, fmt if plugins.takes_format(name) else None)
        return plugins.probe([spec])[0]  # imported and built once in a child: a load error is named here
    except plugins.PluginError as exc:
        raise TypeError(f"callscale: {exc}") from None


def _meter(meter: str | None) -> str:
    """``meter`` checked; ``None``: the instruction meter, or a skip (``unittest.SkipTest``) without valgrind."""
    from .instructions import MeterUnavailable, check_available

    if meter is None or meter == "instructions":
        try:
            check_available()
        except MeterUnavailable as exc:
            if meter is None:
                raise unittest.SkipTest(f"callscale: the instruction meter is unavailable here ({exc}); "
                                        "pass meter='time' to measure process time instead") from None
            raise
        return "instructions"
    from .measure import METERS

    if meter not in METERS:
        raise ValueError(f"callscale: unknown meter {meter!r}; known: {', '.join(METERS)}")
    return meter


def _lengths(values: Sequence[int | str] | None, meter: str) -> tuple[int, ...]:
    if values is None:
        return DEFAULT_INSTRUCTION_LENGTHS if meter == "instructions" else DEFAULT_TIME_LENGTHS
    try:
        return tuple(config.parse_size(str(v)) for v in values)
    except config.ConfigError as exc:
        raise ValueError(f"callscale: lengths: {exc}") from None


def workload_names(workloads: Sequence[Any] | None, default: Sequence[str], formats: Sequence[str] = (),
                   lengths: Sequence[int] = ()) -> list[str]:
    """Workload names for a run: catalog names as they are; a team's own (``"module:function"``,
    ``"file:PATH"``, or the generator function itself) expanded (:func:`callscale.workloads.team.expand`)
    and made once in each of ``formats`` at the shortest and longest of ``lengths``. Raises ``ValueError``
    (one line) for one that cannot be used."""
    from callscale.workloads import team

    out: list[str] = []
    for w in workloads or default:
        name = w if isinstance(w, str) else parser_path(w)
        try:
            out += team.expand(name) if team.is_team(name) else [name]
        except team.TeamWorkloadError as exc:
            raise ValueError(f"callscale: {exc}") from None
    if lengths:
        try:
            team.validate(out, formats, lengths)
        except team.TeamWorkloadError as exc:
            raise ValueError(f"callscale: {exc}") from None
    return list(dict.fromkeys(out))


def assert_linear(parser: Any, format: str | None = None, *, meter: str | None = None,
                  lengths: Sequence[int | str] | None = None, workloads: Sequence[str] | None = None,
                  threshold: float = DEFAULTS.threshold, projection_factor: float = DEFAULTS.projection_factor,
                  reference_length: int = DEFAULTS.reference_length, chunking: str | None = None,
                  repeats: int = DEFAULTS.repeats, seed: int = 0, timeout: float = DEFAULTS.timeout) -> matrix.Run:
    """Measure ``parser`` on ``workloads`` at ``lengths`` and assert that every pair passes the gate.

    ``parser``: a registered name, ``"module:ClassOrFactory"`` or the object
    (see the module docstring); ``format``: the format whose workloads to
    render for it (a registered name's format is its own). ``lengths`` in
    characters (``"4k"`` allowed; default :data:`DEFAULT_INSTRUCTION_LENGTHS`
    or :data:`DEFAULT_TIME_LENGTHS`), at least three; ``workloads``: catalog
    names (default :data:`DEFAULT_WORKLOADS`), or a team's own (``"module:function"``, ``"file:PATH"``,
    or the generator function itself: :func:`workload_names`). The verdict is
    :func:`callscale.fit.fit`'s with ``threshold``, ``projection_factor`` and
    ``reference_length``, as ``callscale gate`` judges; each case runs under
    ``timeout`` seconds in a worker process. ``chunking``: how the text is cut
    into deltas (default ``tokens:4``, or the one delivery a subject streamed elsewhere takes:
    :meth:`callscale.adapters.protocol.Subject.chunking`).

    Returns the :class:`callscale.matrix.Run` when every pair passes. Raises
    ``AssertionError`` (the failing rows of the verdict table and each row's
    failed rule), ``unittest.SkipTest`` (default meter, no valgrind),
    ``TypeError`` (a parser that cannot be resolved or imported by the meter's
    child) or ``ValueError`` (a bad meter or length).
    """
    __tracebackhide__ = True  # pytest shows the message, not this function's source
    meter = _meter(meter)
    spec = _spec(parser, format, meter)
    if chunking is None:  # a subject streamed elsewhere takes its own delivery (adapters/protocol.py)
        from .adapters.protocol import subject_of

        chunking = subject_of(spec.factory).chunking(meter, "tokens:4", False)[0]
    names = workload_names(workloads, DEFAULT_WORKLOADS, [spec.format], _lengths(lengths, meter))
    run = matrix.run([spec], names, _lengths(lengths, meter), chunking=chunking,
                     repeats=repeats, threshold=threshold, meter=meter, seed=seed, latency=False, memory=False,
                     progress=False, reference_length=reference_length, projection_factor=projection_factor,
                     timeout=timeout)
    if run.passed:
        return run
    table = report.table(run).splitlines()
    offenders = {(row.parser, row.workload) for row in run.offenders}
    rows = [line for line in table[2:] if any(line.startswith(p + " ") and f" {w} " in line for p, w in offenders)]
    rules = [line for line in report.gate_lines(run) if line.startswith("FAIL ")]
    raise AssertionError("\n".join([f"callscale: {spec.name} is not linear ({meter} meter)", table[0], table[1],
                                    *rows, *rules]))


def assert_chunking_invariant(parser: Any, format: str | None = None, *, workloads: Sequence[str] | None = None,
                              lengths: Sequence[int | str] = (1024,), chunkings: Sequence[str] | None = None,
                              faults: bool = True, seed: int = 0, show: int = 5) -> check.CheckResult:
    """Stream the fault cases and workloads under every chunking and assert that each agrees with its
    expected outcome and with ``detect_and_parse`` (``callscale check``'s rule, :func:`callscale.check.run_check`).

    ``workloads``: catalog names (default: all of them) or a team's own (:func:`workload_names`); ``lengths``: call
    lengths in characters (default 1k); ``chunkings``: specs (default
    :data:`callscale.workloads.chunking.CHECK_CHUNKINGS`, none splitting a
    special token); ``faults``: include the shared fault cases of the format.
    Runs in this process. Returns the :class:`callscale.check.CheckResult`
    when every stream agrees; raises ``AssertionError`` naming the failing
    streams (at most ``show``) and, per kind, the count and the smallest case;
    ``TypeError`` for a parser that cannot be resolved.
    """
    __tracebackhide__ = True
    from callscale.workloads import catalog
    from callscale.workloads.chunking import CHECK_CHUNKINGS

    spec = _spec(parser, format, "time")
    items = check.fault_items(spec.format) if faults else []
    items += check.workload_items(spec.format, workload_names(workloads, catalog.names(), [spec.format],
                                                              _lengths(lengths, "time")),
                                  _lengths(lengths, "time"), seed)
    result = check.run_check(spec.name, spec.factory, items, list(chunkings or CHECK_CHUNKINGS))
    if result.passed:
        return result
    lines = [f"callscale: {spec.name} is not chunking-invariant: {len(result.failures)} of {result.streams} "
             f"streams differ ({result.items} texts)"]
    for f in result.failures[:show]:
        lines.append(f"FAIL {f.label} under {f.chunking}: " + "; ".join(f"{d.kind}: {d.detail}" for d in f.differences))
    for kind, (count, f) in result.by_kind().items():
        text = f.text if len(f.text) <= 300 else f.text[:150] + " ... " + f.text[-150:]
        lines.append(f"{kind}: {count} failing stream{'s' if count != 1 else ''}; smallest: {f.label} under "
                     f"{f.chunking}: {text!r}")
    raise AssertionError("\n".join(lines))
