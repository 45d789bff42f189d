"""Drive a parser through a case and measure what it costs.

    >>> from callscale.measure import measure
    >>> m = measure(parsers.get("deepseek_v32"), case, "tokens:4", repeats=3)
    >>> m.seconds, m.max_increment_ms, m.peak_bytes, m.deltas

One measurement streams the case's deltas through a fresh parser per run
(``parse_streaming_increment`` per delta, then ``finish``), in three kinds of
pass so that no instrument inflates another's figure:

- the **meter** pass (``repeats`` runs): total cost of the streaming work,
  by default process time in seconds (``time.process_time``), the minimum
  over the runs. The deltas are made before any timing starts, so the
  figure is the parser's alone. The meter is pluggable (:data:`METERS`).
- the **latency** pass (``repeats`` runs): ``time.perf_counter`` around
  each call; the slowest single call in milliseconds, which is how long a
  server's event loop is blocked by one increment. Each call's time is the
  smallest over the runs before the slowest is taken, so the scheduler
  preempting the process during some call of a run does not count (it
  would have to hit the same call in every run), while a slow step the
  parser takes every time does.
- the **memory** pass (one run): peak memory traced by ``tracemalloc``
  while the parser streams, in bytes (the deltas themselves are allocated
  before tracing starts).

A parser that raises gives a failed :class:`Measurement` (``error`` holds
the exception as ``"Type: message"``); the caller goes on with the next one.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import asdict, dataclass
from typing import Any, Callable, Protocol, Sequence

from .streaming import NULL, NullParser
from .workloads.chunking import drive

__all__ = ["Measurement", "Meter", "ProcessTimeMeter", "METERS", "NullParser", "NULL", "measure",
           "stream_once"]

ParserFactory = Callable[[], Any]

@dataclass
class Measurement:
    """One parser on one case under one chunking.

    ``length``: the requested size (characters); ``chars``: ``len(case.text)``.
    ``seconds``: the meter's figure (for the ``time`` meter, process seconds,
    min over ``repeats``). ``max_increment_ms``: the slowest single call
    (milliseconds, wall clock; each call's time the smallest over ``repeats`` runs). ``peak_bytes``: peak traced memory (bytes).
    The latter two are ``None`` when their pass was not run. ``error``: the
    exception text of a failed run (then the figures are ``None``).
    """

    parser: str
    format: str
    workload: str
    length: int
    chars: int
    chunking: str
    deltas: int
    repeats: int
    meter: str = "time"
    seconds: float | None = None
    max_increment_ms: float | None = None
    peak_bytes: int | None = None
    error: str | None = None
    wrong: str | None = None
    """The first difference of the parser's streamed result from the case's (:mod:`callscale.verify`),
    or ``None`` when it parsed the case (or was not verified)."""
    tokenizer: str | None = None
    """What cut the deltas under a ``model`` chunking (:func:`callscale.tokenizers.for_chunking`: the real
    tokenizer's package and version, or ``stand-in``); ``None`` under the character chunkings."""
    request: float | None = None
    """The per-request cost, in the meter's unit: a fresh parser made and given the case's first delta
    (:func:`request_cost`; the instruction meter counts it at a row's first length only, else ``None``)."""

    @property
    def ok(self) -> bool:
        """True when the run did not raise."""
        return self.error is None

    def as_row(self) -> dict[str, Any]:
        """The measurement as a flat dict (one CSV row)."""
        return asdict(self)


class Meter(Protocol):
    """How the total cost of streaming a case is counted.

    ``name`` labels the figure (``time``); ``unit`` is its unit (``s``).
    ``total`` streams ``deltas`` through ``repeats`` fresh parsers and returns
    one figure (for ``time``, the minimum). ``case``, ``parser_name`` and
    ``chunking`` are passed for meters that rebuild the run elsewhere (the
    instruction meter streams in a child process under callgrind).
    """

    name: str
    unit: str

    def total(self, factory: ParserFactory, case: Any, deltas: Sequence[str], tools: list,
              repeats: int, *, parser_name: str, chunking: str) -> float: ...


def stream_once(parser: Any, deltas: Sequence[str], tools: list) -> None:
    """Feed every delta to ``parser``, then call ``finish`` (if it has one)."""
    step = parser.parse_streaming_increment
    for delta in deltas:
        step(delta, tools)
    finish = getattr(parser, "finish", None)
    if finish is not None:
        finish(tools)


class ProcessTimeMeter:
    """Process time (``time.process_time``, seconds) of the streaming, the minimum over runs.

    CPU time of this process, so other work on a shared machine inflates it
    less than wall time. The garbage collector is run before each run, outside
    the timed region (not disabled: collections a parser's garbage causes are
    part of its cost); in a worker (:mod:`callscale.bounded`) the objects the
    worker inherited are frozen (``gc.freeze()``), so that collection walks
    only the parser's own objects and costs the run next to nothing. The
    clock is the one :mod:`time` had when this module was imported, so a
    parser that patches ``time.process_time`` does not change its own figure.
    """

    name = "time"
    unit = "s"

    def request(self, factory: ParserFactory, case: Any, deltas: Sequence[str], tools: list,
                repeats: int, *, parser_name: str = "", chunking: str = "") -> float:
        """The per-request cost (:func:`request_cost`), process seconds."""
        return request_cost(factory, deltas, tools, repeats)

    def total(self, factory: ParserFactory, case: Any, deltas: Sequence[str], tools: list,
              repeats: int, *, parser_name: str = "", chunking: str = "") -> float:
        best = float("inf")
        clock = _PROCESS_TIME
        for _ in range(max(1, repeats)):
            parser = factory()
            gc.collect()
            start = clock()
            stream_once(parser, deltas, tools)
            best = min(best, clock() - start)
        return best


_PROCESS_TIME = time.process_time
_PERF_COUNTER = time.perf_counter

REQUEST_RUNS = 7
"""Runs of a request under the ``time`` meter, the minimum kept (a request takes microseconds)."""


def request_cost(factory: ParserFactory, deltas: Sequence[str], tools: list, repeats: int = REQUEST_RUNS) -> float:
    """Process seconds of one request, the minimum over ``max(repeats, REQUEST_RUNS)`` runs: a fresh parser
    made (``factory()``) and given the first of ``deltas``, what every request a server handles pays
    before any text is long (a parser that compiles patterns over a tokenizer's vocabulary in its
    constructor pays it here). The first run, in a fresh worker, carries first-use costs (imports, module
    patterns); the minimum leaves them out, as the instruction meter's warm-up does."""
    best = float("inf")
    clock = _PROCESS_TIME
    for _ in range(max(repeats, REQUEST_RUNS)):
        gc.collect()
        start = clock()
        parser = factory()
        if deltas:
            parser.parse_streaming_increment(deltas[0], tools)
        best = min(best, clock() - start)
        del parser
    return best


def _meters() -> dict[str, Meter]:
    from .instructions import InstructionMeter

    return {"time": ProcessTimeMeter(), "instructions": InstructionMeter()}


METERS: dict[str, Meter] = _meters()
"""The meters by name: ``time`` (the default) and ``instructions`` (callgrind, see callscale.instructions)."""


#: Fewest runs whose per-increment minimum the slowest increment is read from (rule ``increment``): a pause
#: of the machine falls on one run's increment, not on the same one in each (with one run, any pause on a
#: busy runner could be the slowest increment).
MIN_INCREMENT_RUNS = 3


def _slowest_increment_ms(factory: ParserFactory, deltas: Sequence[str], tools: list, repeats: int) -> float:
    """The slowest increment (milliseconds): the maximum over the calls of each call's minimum over
    ``repeats`` runs, at least :data:`MIN_INCREMENT_RUNS` (:func:`_increment_times`)."""
    best: list[float] | None = None
    for _ in range(max(MIN_INCREMENT_RUNS, repeats)):
        times = _increment_times(factory, deltas, tools)
        best = times if best is None else [min(a, b) for a, b in zip(best, times)]
    return max(best) * 1000.0 if best else 0.0


def _increment_times(factory: ParserFactory, deltas: Sequence[str], tools: list) -> list[float]:
    """Wall seconds of each call of one run: every increment, then ``finish``.

    The collector is off while the calls are timed (and on again after, whatever happens): a collection
    runs in whichever increment's allocation crosses its threshold, at the same increment in every run
    (the allocations repeat), so the minimum over the runs keeps it, and its pause, a few hundred times a
    short increment, would read as that increment's work (rule ``increment``, docs/gate.md). A parser's
    garbage still costs it in the total (:class:`ProcessTimeMeter`, collector on).
    """
    parser = factory()
    gc.collect()
    step = parser.parse_streaming_increment
    clock = _PERF_COUNTER
    times = [0.0] * (len(deltas) + 1)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for i, delta in enumerate(deltas):
            start = clock()
            step(delta, tools)
            times[i] = clock() - start
        finish = getattr(parser, "finish", None)
        if finish is not None:
            start = clock()
            finish(tools)
            times[-1] = clock() - start
    finally:
        if enabled:
            gc.enable()
    return times


def _peak_bytes(factory: ParserFactory, deltas: Sequence[str], tools: list) -> int:
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        parser = factory()
        stream_once(parser, deltas, tools)
        _, peak = tracemalloc.get_traced_memory()
        del parser
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - base)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        from .bounded import OUT_OF_MEMORY

        return OUT_OF_MEMORY
    text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def _measured_elsewhere(factory: Any, case: Any, chunking: Any, name: str, meter: Any, verify: bool, split: str,
                        deltas: int, repeats: int) -> Measurement:
    """:func:`measure` of a subject that makes no streamer here (:mod:`callscale.adapters.protocol`; a router an adapter drives):
    its count and outcome come from the meter, which had the subject count its own items
    (:meth:`callscale.adapters.protocol.Subject.count_items`); no latency or memory pass (the parser is not in
    this process); ``deltas`` are the subject's chunks."""
    from .verify import first_difference

    result = Measurement(parser=name, format=case.format, workload=case.workload, length=case.length,
                         chars=len(case.text), chunking=split, deltas=deltas, repeats=max(1, repeats),
                         meter=meter.name)
    outcome = getattr(meter, "outcome", None)
    try:
        if outcome is None:
            from .adapters.protocol import cannot

            raise TypeError(f"{name} is measured under the instructions meter only ({cannot(factory, 'time')})")
        result.seconds = meter.total(factory, case, (), [], repeats, parser_name=name, chunking=str(chunking))
        got = outcome(name, case, str(chunking)) or {}
        result.deltas = int(got.get("deltas", deltas))
        result.tokenizer = got.get("delivery")
        if verify:
            result.wrong = first_difference(got, case)
    except Exception as exc:
        result.seconds = None
        result.error = _error_text(exc)
    return result


def measure(factory: ParserFactory, case: Any, chunking: str = "tokens:4", repeats: int = 3, *,
            parser_name: str | None = None, meter: str | Meter = "time", latency: bool = True,
            memory: bool = True, verify: bool = False) -> Measurement:
    """Measure one parser on one case; see the module docstring for the passes.

    ``factory``: called with no arguments for each fresh parser (a parser
    class or any factory). ``case``: a :class:`callscale.workloads.case.Case` (uses
    ``text``, ``tools``, ``format``, ``workload``, ``length`` and
    ``deltas(chunking)``). ``repeats``: meter runs, at least 1.
    ``latency`` / ``memory``: run those passes (off: their fields are ``None``).
    ``verify``: first stream the case once, untimed, and compare the result
    with the case's (:func:`callscale.verify.verify_stream`); a difference
    goes to ``wrong`` (the figures are still measured).

    Never raises for a parser's exception (it becomes ``error``); raises
    ``KeyError`` for an unknown meter name and ``ValueError`` for a bad
    chunking spec.
    """
    the_meter = METERS[meter] if isinstance(meter, str) else meter
    deltas = case.deltas(chunking)
    # a workload's own delivery (``write_file+whole``) names the split in the results; the meter is told the
    # run's chunking (the instruction meter's counts, taken for the whole run, are keyed by it)
    split = getattr(case, "delivery", None) or str(chunking)
    tools = list(case.tools)
    name = parser_name or getattr(factory, "name", None) or getattr(factory, "__name__", repr(factory))
    from .adapters.protocol import cannot

    if cannot(factory, "stream"):  # a subject streamed elsewhere (a router an adapter drives): the meter holds its count
        return _measured_elsewhere(factory, case, chunking, name, the_meter, verify, split, len(deltas), repeats)
    factory = drive(factory, split)  # (detect: the non-streaming path; else the factory itself)
    result = Measurement(
        parser=name,
        format=case.format,
        workload=case.workload,
        length=case.length,
        chars=len(case.text),
        chunking=split,
        deltas=len(deltas),
        repeats=max(1, repeats),
        meter=the_meter.name,
    )
    try:
        if verify:
            from .verify import verify_stream

            result.wrong = verify_stream(factory, case, chunking, deltas)
        result.seconds = the_meter.total(factory, case, deltas, tools, repeats, parser_name=name,
                                         chunking=str(chunking))
        request = getattr(the_meter, "request", None)
        if request is not None:
            result.request = request(factory, case, deltas, tools, repeats, parser_name=name, chunking=str(chunking))
        if latency:
            result.max_increment_ms = _slowest_increment_ms(factory, deltas, tools, repeats)
        if memory:
            result.peak_bytes = _peak_bytes(factory, deltas, tools)
    except Exception as exc:  # a parser bug is a result, not a crash of the run
        result.seconds = result.max_increment_ms = result.peak_bytes = None
        result.error = _error_text(exc)
    return result
