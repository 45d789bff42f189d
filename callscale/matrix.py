"""Run the measurement matrix (parsers x workloads x lengths) and fit each parser's scaling.

    >>> from callscale import matrix, plugins
    >>> run = matrix.run([plugins.resolve("deepseek_v32")], ["write_file"], [4096, 16384, 65536])
    >>> [(r.parser, r.workload, r.fit.exponent, r.fit.verdict) for r in run.rows]

Each case (format x workload x length) is made once, from
``callscale.workloads.catalog.make(workload, format, length, seed)``, and streamed by
every selected parser of that format and by the ``null`` floor parser, so
each measurement has a floor figure on the very same deltas.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import fit as fitting
from .config import format_size
from .bounded import DEFAULT_MEMORY_LIMIT, Terminated
from .measure import METERS, NULL, Measurement, NullParser, measure
from .plugins import ParserSpec

__all__ = ["Row", "Run", "run", "make_case", "Interrupted"]


def make_case(workload: str, fmt: str, length: int, seed: int = 0) -> Any:
    """One case from the workload catalog (``callscale.workloads.catalog.make``)."""
    from callscale.workloads import catalog

    return catalog.make(workload, fmt, length, seed=seed)


@dataclass
class Row:
    """One parser on one workload across the lengths: its measurements (ascending length) and fit."""

    parser: str
    format: str | None
    workload: str
    measurements: list[Measurement]
    fit: fitting.Fit
    floor: bool = False

    @property
    def errors(self) -> list[Measurement]:
        return [m for m in self.measurements if not m.ok]

    def x_floor(self, floors: dict[tuple[str, str, int], Measurement]) -> float | None:
        """Cost at the longest length as a multiple of the null parser's on the same case."""
        if not self.measurements:
            return None
        last = self.measurements[-1]
        floor = floors.get((last.format, last.workload, last.length))
        if last.seconds is None or floor is None or not floor.seconds:
            return None
        return last.seconds / floor.seconds

    @property
    def max_increment_ms(self) -> float | None:
        values = [m.max_increment_ms for m in self.measurements if m.max_increment_ms is not None]
        return max(values) if values else None


@dataclass
class Run:
    """What one matrix run measured.

    ``rows``: one per selected parser x workload (not the floor), in
    selection order grouped by workload. ``floor_rows``: one per workload, the
    null parser's median (low median) over the formats of the run. ``measurements``: every
    measurement including the null ones. ``floors``: the null measurement per
    ``(format, workload, length)``.
    """

    lengths: tuple[int, ...]
    workloads: tuple[str, ...]
    chunking: str
    repeats: int
    threshold: float
    meter: str
    rows: list[Row] = field(default_factory=list)
    floor_rows: list[Row] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    floors: dict[tuple[str, str, int], Measurement] = field(default_factory=dict)
    second_looks: list[tuple[str, str, str]] = field(default_factory=list)
    """``(parser, workload, verdict after)`` of each pair measured a second time (time meter)."""

    @property
    def passed(self) -> bool:
        """True when every parser row passes (the floor rows are not judged)."""
        return all(row.fit.passed for row in self.rows)

    @property
    def offenders(self) -> list[Row]:
        return [row for row in self.rows if not row.fit.passed]


def _failed(spec_name: str, fmt: str, workload: str, length: int, chunking: str, repeats: int,
            meter: str, error: str) -> Measurement:
    return Measurement(spec_name, fmt, workload, length, 0, chunking, 0, repeats, meter, error=error)


def _fit_row(name: str, fmt: str | None, workload: str, ms: list[Measurement], threshold: float,
             floor: bool = False, cost_only: bool = False, **rules: float) -> Row:
    ms = sorted(ms, key=lambda m: m.length)
    lengths = [m.chars or m.length for m in ms]
    # under the model's tokens the size is judged on characters and on deltas (callscale.fit, docs/gate.md)
    deltas = [m.deltas for m in ms] if any(str(m.chunking).startswith("model") for m in ms) else None
    result = fitting.fit(lengths, [m.seconds for m in ms], threshold, [m.error for m in ms], deltas=deltas, **rules)
    if not floor and all(m.max_increment_ms is not None for m in ms):  # the slowest increment (time meter)
        fitting.judge_increments(result, lengths, [m.max_increment_ms for m in ms], [m.seconds for m in ms],
                                 [m.deltas for m in ms])
    wrong = next((f"at {format_size(m.length)}: {m.wrong}" for m in ms if m.wrong), None)
    fitting.judge_output(result, wrong, cost_only)
    return Row(name, fmt, workload, ms, result, floor=floor)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`: ``running`` names the case being measured, ``run`` holds what was
    measured before (its ``measurements``; no fits)."""

    def __init__(self, running: str, run: "Run", terminated: bool = False) -> None:
        super().__init__(running)
        self.running = running
        self.run = run
        self.terminated = terminated
        """True when SIGTERM stopped the run (:class:`callscale.bounded.Terminated`)."""


CONFIRM_METERS = frozenset({"time"})
"""Meters whose failing pairs are measured again before the verdict (the second look, see :func:`run`)."""
CONFIRM_ROUNDS = 4
"""At most this many rounds of the second look (each: 2 x repeats runs of every length, in turn)."""
CONFIRM_PAUSE = 1.0
"""Seconds of pause before the second look's round k (k x this), so a burst of load can pass."""
CONFIRM_ROUND_BUDGET = 2.0
"""A round that measured more than this many seconds is the last: a pair that slow is not near the line
(a quadratic parser at 64k), so more rounds would only lengthen the run."""


def run(specs: Sequence[ParserSpec], workloads: Sequence[str], lengths: Sequence[int], *,
        chunking: str = "tokens:4", repeats: int = 3, threshold: float = 1.3, meter: str = "time",
        seed: int = 0, latency: bool = True, memory: bool = True, progress: bool | None = None,
        case_maker: Callable[[str, str, int, int], Any] = make_case,
        reference_length: float = fitting.REFERENCE_LENGTH,
        projection_factor: float = fitting.PROJECTION_FACTOR, timeout: float | None = None,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT, cost_only: bool = False,
        verify: bool = True, on_measurement: Callable[[Measurement], None] | None = None,
        jobs: int | None = None) -> Run:
    """Measure every spec on every workload at every length and fit each parser x workload.

    The exponent is fitted on the actual text lengths (``len(case.text)``,
    characters), which are close to the requested ones. ``progress``: show a
    tqdm bar on stderr (``None``: only when stderr is a terminal), its
    postfix naming the running case. A case that cannot be made, or a parser
    that raises, gives failed measurements (and an ``ERROR`` verdict); the
    run goes on. ``reference_length`` and ``projection_factor``: the
    projection rule of :func:`callscale.fit.fit`.

    Isolation: every parser, and the ``null`` floor, is loaded and measured
    in a worker process of its own (:class:`callscale.bounded.Worker`),
    never in this one; each case is made here, once per format, and sent to
    the workers of that format. What a parser does to its process is its own
    row's: a worker that dies gives that measurement the reason in words
    (``exit 3``, ``killed by SIGSEGV``, ``out of memory``) and the next
    measurement of that parser starts a fresh worker. ``timeout``: seconds
    each measurement (one parser on one case, all its passes) may take (``None``:
    no limit); one that overruns is stopped: its error reads ``timeout after
    N s``, the parser's longer lengths of that workload are not run, and its
    verdict is ``timeout``. ``memory_limit``: bytes of address space per
    worker (``None``: no limit). A spec marked ``broken`` (its loading
    failed, :func:`callscale.plugins.probe`) is not run: its measurements
    carry that reason.

    ``verify``: each parser's result on each case is compared with the
    case's (:mod:`callscale.verify`) before it is measured; a row with a
    wrong case has the verdict ``wrong output``, which fails unless
    ``cost_only``. ``on_measurement``: called with each measurement as it is
    taken (the results journal, :func:`callscale.report.Journal`).

    Under the ``time`` meter a pair that fails is measured once more at
    every length (``2 * repeats`` runs) and the smaller figure kept per
    length: load on a shared machine only ever slows a run down, so a
    linear parser that read one steep step by chance passes the second
    look, while a real quadratic term fails both.

    Raises :class:`Interrupted` on Ctrl-C (and on SIGTERM inside
    :func:`callscale.bounded.terminate_as_interrupt`); every worker is
    stopped first. Under a meter that counts in its own children up front
    (``instructions``), its counts so far are in the interrupted run's
    measurements (figures only: no latency, memory or verification), and
    ``running`` names the case its child was on; a case that child timed
    out on is not run again in a worker.
    ``jobs``: callgrind children counting at once under the ``instructions``
    meter (``None``: :func:`callscale.instructions.auto_jobs`).
    """
    from tqdm import tqdm

    from . import tokenizers
    from .bounded import CaseTimeout, Worker

    rules = {"reference_length": reference_length, "projection_factor": projection_factor}
    lengths = tuple(sorted(set(lengths)))
    specs = list(specs)
    tested = [s for s in specs if s.name != NULL]
    formats: list[str] = []
    for spec in tested:
        if spec.format not in formats:
            formats.append(spec.format)
    if not formats:  # only the floor was asked for: measure it on one format's text
        from callscale.workloads import render

        formats = render.names()[:1]
    result = Run(lengths, tuple(workloads), str(chunking), repeats, threshold, meter)
    by_key: dict[tuple[str, str], list[Measurement]] = {}

    def record(m: Measurement) -> None:
        if m.tokenizer is None:
            m.tokenizer = tokenizers.for_chunking(m.format, str(chunking))
        result.measurements.append(m)
        if on_measurement is not None:
            on_measurement(m)

    # what a prefetching meter counted, as it arrives: kept by an interrupted run (keep_counted)
    counted: dict[tuple[str, str, str, int], Measurement] = {}
    sizes: dict[tuple[str, str, int], tuple[int, int]] = {}

    def on_count(job: tuple, length: int, got: Any) -> None:
        name, fmt, workload = job[:3]
        if got.instructions is None:
            counted[(name, fmt, workload, length)] = _failed(name, fmt, workload, length, str(chunking), repeats,
                                                             meter, got.error or "not counted")
            return
        if (workload, fmt, length) not in sizes:  # the case's size, as measure() gives it (made here, ms)
            try:
                case = case_maker(workload, fmt, length, seed)
                sizes[(workload, fmt, length)] = (len(case.text), len(case.deltas(chunking)),
                                                  getattr(case, "delivery", None) or str(chunking))
            except Exception:
                sizes[(workload, fmt, length)] = (0, 0, str(chunking))
        chars, deltas, split = sizes[(workload, fmt, length)]
        counted[(name, fmt, workload, length)] = Measurement(name, fmt, workload, length, chars, split,
                                                             deltas, repeats, meter, seconds=float(got.instructions))

    def keep_counted() -> None:
        """Record each count not yet measured in full: an interrupted run keeps what the meter counted."""
        done = {(m.parser, m.format, m.workload, m.length) for m in result.measurements}
        for key, m in counted.items():
            if key not in done:
                if m.parser == NULL and m.ok:
                    result.floors.setdefault((m.format, m.workload, m.length), m)
                record(m)

    prefetch = getattr(METERS.get(meter), "prefetch", None)
    children_at_once = jobs  # ``jobs`` below are the meter's (parser, format, workload, ...) groups
    if prefetch is not None:
        # A meter that works in child processes (instructions): run them all
        # up front, in parallel; the measurements below then read the counts.
        jobs = [(spec.name, fmt, workload, lengths, str(chunking), seed)
                for workload in workloads for fmt in formats
                for spec in [ParserSpec(NULL, fmt, NullParser)] + [s for s in tested if s.format == fmt
                                                                    and s.broken is None]]
        with tqdm(total=len(jobs), unit="child", desc=meter, leave=False, dynamic_ncols=True,
                  disable=None if progress is None else not progress) as children:
            try:
                prefetch(jobs, workers=children_at_once, progress=children, timeout=timeout, on_count=on_count)
            except KeyboardInterrupt as exc:
                item = getattr(exc, "item", None)  # the case the meter's child was on
                keep_counted()
                raise Interrupted(f"{item[0]} on {item[2]} at {item[3]}" if item else f"nothing yet (the {meter} meter's child was starting)",
                                  result, isinstance(exc, Terminated)) from None
            except Exception:  # unavailable meter: each measurement reports it
                pass

    def handler_for(factory: Callable[[], Any], name: str) -> Callable[[tuple], Measurement]:
        def one(job: tuple[Any, int, bool, bool, bool]) -> Measurement:
            case, reps, lat, mem, check = job
            return measure(factory, case, chunking, reps, parser_name=name, meter=meter, latency=lat,
                           memory=mem, verify=check)
        return one

    workers: dict[int, Worker] = {}
    timed_out: dict[tuple[str, str], int] = {}
    running = ""

    def bounded(index: int, name: str, fmt: str, workload: str, length: int, case: Any, reps: int, lat: bool,
                mem: bool, check: bool) -> Measurement:
        if index >= 0 and tested[index].broken is not None:
            return _failed(name, fmt, workload, length, str(chunking), reps, meter, tested[index].broken)
        early = counted.get((name, fmt, workload, length))
        if early is not None and early.error is not None and early.error.startswith("timeout"):
            # the meter's child timed out on it: the worker would hang on it again (verifying)
            if early.error.startswith("timeout after"):
                timed_out[(name, workload)] = length
            return early
        worker = workers.get(index)
        if worker is None:
            factory = NullParser if index < 0 else tested[index].factory
            worker = workers[index] = Worker(handler_for(factory, name), timeout, memory_limit)
        try:
            return worker.call((case, reps, lat, mem, check))
        except CaseTimeout as exc:
            timed_out[(name, workload)] = length
            return _failed(name, fmt, workload, length, str(chunking), reps, meter, str(exc))
        except Exception as exc:  # the worker died, or the parser could not be loaded there
            return _failed(name, fmt, workload, length, str(chunking), reps, meter, str(exc))

    bar = tqdm(total=len(tested) * len(workloads) * len(lengths), unit="run",
               disable=None if progress is None else not progress, leave=False, dynamic_ncols=True)
    try:
        # a format's lengths follow each other (all lengths of one format, then the next format), so a
        # burst of load on the machine lands on the few pairs measured during it, not on one length of all
        for workload in workloads:
            for fmt in formats:
                group = [(i, s) for i, s in enumerate(tested) if s.format == fmt]
                for length in lengths:
                    try:
                        case = case_maker(workload, fmt, length, seed)
                    except Exception as exc:
                        error = f"workload {workload} for {fmt}: {type(exc).__name__}: {exc}"
                        for _, spec in group:
                            m = _failed(spec.name, fmt, workload, length, str(chunking), repeats, meter, error)
                            record(m)
                            by_key.setdefault((spec.name, workload), []).append(m)
                            bar.update(1)
                        continue
                    running = f"{NULL} on {workload} at {length}"
                    floor = bounded(-1, NULL, fmt, workload, length, case, repeats, latency, False, False)
                    result.floors[(fmt, workload, length)] = floor
                    record(floor)
                    for i, spec in group:
                        running = f"{spec.name} on {workload} at {length}"
                        bar.set_postfix_str(running)
                        if (spec.name, workload) in timed_out:
                            m = _failed(spec.name, fmt, workload, length, str(chunking), repeats, meter,
                                        f"timeout: not run (timed out at {format_size(timed_out[(spec.name, workload)])})")
                        else:
                            m = bounded(i, spec.name, fmt, workload, length, case, repeats, latency, memory, verify)
                        record(m)
                        by_key.setdefault((spec.name, workload), []).append(m)
                        bar.update(1)
        for workload in workloads:
            floor_ms = []
            for length in lengths:
                found = [result.floors[(f, workload, length)] for f in formats
                         if (f, workload, length) in result.floors and result.floors[(f, workload, length)].ok]
                if found:
                    median = statistics.median_low([m.seconds for m in found])
                    floor_ms.append(next(m for m in found if m.seconds == median))
            if floor_ms:
                result.floor_rows.append(_fit_row(NULL, None, workload, floor_ms, threshold, floor=True, **rules))
            for i, spec in enumerate(tested):
                ms = by_key.get((spec.name, workload), [])
                row = _fit_row(spec.name, spec.format, workload, ms, threshold, cost_only=cost_only, **rules)
                if meter in CONFIRM_METERS and (row.fit.cost_verdict or row.fit.verdict) == fitting.FAIL:
                    # the second look: rounds of 2 x repeats more runs, the lengths taken in turn (one run
                    # of each, then again) so a burst falls on every length alike; the minimum kept per
                    # length; another round, after a pause, while the pair still fails and a round is cheap
                    cases = {m.length: case_maker(workload, spec.format, m.length, seed) for m in row.measurements}
                    for look in range(CONFIRM_ROUNDS):
                        if look:
                            time.sleep(CONFIRM_PAUSE * look)
                        spent = 0.0
                        for _ in range(2 * repeats):
                            for m in row.measurements:
                                running = f"{spec.name} on {workload} at {m.length} (second look)"
                                bar.set_postfix_str(running)
                                again = bounded(i, spec.name, spec.format, workload, m.length, cases[m.length], 1,
                                                latency and m.max_increment_ms is not None, False, False)
                                if again.ok and again.seconds is not None and m.seconds is not None:
                                    m.seconds = min(m.seconds, again.seconds)
                                    if again.max_increment_ms is not None and m.max_increment_ms is not None:
                                        m.max_increment_ms = min(m.max_increment_ms, again.max_increment_ms)
                                    m.repeats += again.repeats
                                    spent += again.seconds
                        row = _fit_row(spec.name, spec.format, workload, row.measurements, threshold,
                                       cost_only=cost_only, **rules)
                        if (row.fit.cost_verdict or row.fit.verdict) != fitting.FAIL or spent > CONFIRM_ROUND_BUDGET:
                            break
                    result.second_looks.append((spec.name, workload, row.fit.cost_verdict or row.fit.verdict))
                result.rows.append(row)
    except KeyboardInterrupt as exc:
        for worker in workers.values():
            worker.stop()
        keep_counted()
        raise Interrupted(running, result, isinstance(exc, Terminated)) from None
    finally:
        bar.close()
        for worker in workers.values():
            worker.close()
    return result
