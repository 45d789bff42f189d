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
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import fit as fitting
from .config import format_size
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
             floor: bool = False, **rules: float) -> Row:
    ms = sorted(ms, key=lambda m: m.length)
    lengths = [m.chars or m.length for m in ms]
    result = fitting.fit(lengths, [m.seconds for m in ms], threshold, [m.error for m in ms], **rules)
    return Row(name, fmt, workload, ms, result, floor=floor)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`: ``running`` names the case being measured, ``run`` holds what was
    measured before (its ``measurements``; no fits)."""

    def __init__(self, running: str, run: "Run") -> None:
        super().__init__(running)
        self.running = running
        self.run = run


CONFIRM_METERS = frozenset({"time"})
"""Meters whose failing pairs are measured once more before the verdict (see :func:`run`)."""


def run(specs: Sequence[ParserSpec], workloads: Sequence[str], lengths: Sequence[int], *,
        chunking: str = "tokens:4", repeats: int = 3, threshold: float = 1.3, meter: str = "time",
        seed: int = 0, latency: bool = True, memory: bool = True, progress: bool | None = None,
        case_maker: Callable[[str, str, int, int], Any] = make_case,
        reference_length: float = fitting.REFERENCE_LENGTH,
        projection_factor: float = fitting.PROJECTION_FACTOR, timeout: float | None = None) -> Run:
    """Measure every spec on every workload at every length and fit each parser x workload.

    The exponent is fitted on the actual text lengths (``len(case.text)``,
    characters), which are close to the requested ones. ``progress``: show a
    tqdm bar on stderr (``None``: only when stderr is a terminal), its
    postfix naming the running case. A case that cannot be made, or a parser
    that raises, gives failed measurements (and an ``ERROR`` verdict); the
    run goes on. ``reference_length`` and ``projection_factor``: the
    projection rule of :func:`callscale.fit.fit`.

    ``timeout``: seconds each measurement (one parser on one case, all its
    passes) may take; the measurements then run in one reused worker process
    (:class:`callscale.bounded.Worker`) and one that overruns is stopped:
    its error reads ``timeout: ...``, the parser's longer lengths of that
    workload are not run, and its verdict is ``timeout``. ``None``: no limit,
    measured in this process.

    Under the ``time`` meter a pair that fails is measured once more at
    every length (``2 * repeats`` runs) and the smaller figure kept per
    length: load on a shared machine only ever slows a run down, so a
    linear parser that read one steep step by chance passes the second
    look, while a real quadratic term fails both.

    Raises :class:`Interrupted` on Ctrl-C.
    """
    from tqdm import tqdm

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
    prefetch = getattr(METERS.get(meter), "prefetch", None)
    if prefetch is not None:
        # A meter that works in child processes (instructions): run them all
        # up front, in parallel; the measurements below then read the counts.
        jobs = [(spec.name, fmt, workload, lengths, str(chunking), seed)
                for workload in workloads for fmt in formats
                for spec in [ParserSpec(NULL, fmt, NullParser)] + [s for s in tested if s.format == fmt]]
        with tqdm(total=len(jobs), unit="child", desc=meter, leave=False, dynamic_ncols=True,
                  disable=None if progress is None else not progress) as children:
            try:
                prefetch(jobs, progress=children, timeout=timeout)
            except Exception:  # unavailable meter: each measurement reports it
                pass

    factories = {i: spec.factory for i, spec in enumerate(tested)}
    cases: dict[tuple[str, str, int], Any] = {}

    def one(job: tuple[int, str, str, int, int, bool, bool]) -> Measurement:
        index, workload, fmt, length, reps, lat, mem = job
        key = (workload, fmt, length)
        if key not in cases:
            cases.clear()  # one case at a time: the lengths run in order
            cases[key] = case_maker(workload, fmt, length, seed)
        factory, name = (NullParser, NULL) if index < 0 else (factories[index], tested[index].name)
        return measure(factory, cases[key], chunking, reps, parser_name=name, meter=meter, latency=lat,
                       memory=mem)

    worker = Worker(one, timeout) if timeout is not None else None
    timed_out: dict[tuple[str, str], int] = {}
    running = ""

    def bounded(index: int, name: str, fmt: str, workload: str, length: int, reps: int, lat: bool,
                mem: bool) -> Measurement:
        job = (index, workload, fmt, length, reps, lat, mem)
        if worker is None:
            return one(job)
        try:
            return worker.call(job)
        except CaseTimeout as exc:
            timed_out[(name, workload)] = length
            return _failed(name, fmt, workload, length, str(chunking), reps, meter, f"timeout: {exc}")
        except Exception as exc:  # the worker died, or making the case failed
            return _failed(name, fmt, workload, length, str(chunking), reps, meter, str(exc))

    bar = tqdm(total=len(tested) * len(workloads) * len(lengths), unit="run",
               disable=None if progress is None else not progress, leave=False, dynamic_ncols=True)
    try:
        for workload in workloads:
            for length in lengths:
                for fmt in formats:
                    group = [(i, s) for i, s in enumerate(tested) if s.format == fmt]
                    try:
                        case = case_maker(workload, fmt, length, seed)
                        cases.clear()
                        cases[(workload, fmt, length)] = case
                    except Exception as exc:
                        error = f"workload {workload} for {fmt}: {type(exc).__name__}: {exc}"
                        for _, spec in group:
                            m = _failed(spec.name, fmt, workload, length, str(chunking), repeats, meter, error)
                            result.measurements.append(m)
                            by_key.setdefault((spec.name, workload), []).append(m)
                            bar.update(1)
                        continue
                    running = f"{NULL} on {workload} at {length}"
                    floor = bounded(-1, NULL, fmt, workload, length, repeats, latency, False)
                    result.floors[(fmt, workload, length)] = floor
                    result.measurements.append(floor)
                    for i, spec in group:
                        running = f"{spec.name} on {workload} at {length}"
                        bar.set_postfix_str(running)
                        if (spec.name, workload) in timed_out:
                            m = _failed(spec.name, fmt, workload, length, str(chunking), repeats, meter,
                                        f"timeout: not run (timed out at {format_size(timed_out[(spec.name, workload)])})")
                        else:
                            m = bounded(i, spec.name, fmt, workload, length, repeats, latency, memory)
                        result.measurements.append(m)
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
                row = _fit_row(spec.name, spec.format, workload, ms, threshold, **rules)
                if meter in CONFIRM_METERS and row.fit.verdict == fitting.FAIL:
                    for m in row.measurements:
                        running = f"{spec.name} on {workload} at {m.length} (second look)"
                        bar.set_postfix_str(running)
                        case = case_maker(workload, spec.format, m.length, seed)
                        cases.clear()
                        cases[(workload, spec.format, m.length)] = case
                        again = bounded(i, spec.name, spec.format, workload, m.length, 2 * repeats, False, False)
                        if again.ok and again.seconds is not None and m.seconds is not None:
                            m.seconds = min(m.seconds, again.seconds)
                            m.repeats += again.repeats
                    row = _fit_row(spec.name, spec.format, workload, row.measurements, threshold, **rules)
                    result.second_looks.append((spec.name, workload, row.fit.verdict))
                result.rows.append(row)
    except KeyboardInterrupt:
        raise Interrupted(running, result) from None
    finally:
        bar.close()
        if worker is not None:
            worker.close()
    return result
