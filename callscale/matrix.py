"""Run the measurement matrix (parsers x workloads x lengths) and fit each parser's scaling.

    >>> from callscale import matrix, plugins
    >>> run = matrix.run([plugins.resolve("deepseek_v32")], ["write_file"], [4096, 16384, 65536])
    >>> [(r.parser, r.workload, r.fit.exponent, r.fit.verdict) for r in run.rows]

Each case (format x workload x length) is made once, from
``workloads.catalog.make(workload, format, length, seed)``, and streamed by
every selected parser of that format and by the ``null`` floor parser, so
each measurement has a floor figure on the very same deltas.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import fit as fitting
from .measure import METERS, NULL, Measurement, NullParser, measure
from .plugins import ParserSpec

__all__ = ["Row", "Run", "run", "make_case"]


def make_case(workload: str, fmt: str, length: int, seed: int = 0) -> Any:
    """One case from the workload catalog (``workloads.catalog.make``)."""
    from workloads import catalog

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
    null parser's median over the formats of the run. ``measurements``: every
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
             floor: bool = False) -> Row:
    ms = sorted(ms, key=lambda m: m.length)
    lengths = [m.chars or m.length for m in ms]
    result = fitting.fit(lengths, [m.seconds for m in ms], threshold, [m.error for m in ms])
    return Row(name, fmt, workload, ms, result, floor=floor)


def run(specs: Sequence[ParserSpec], workloads: Sequence[str], lengths: Sequence[int], *,
        chunking: str = "tokens:4", repeats: int = 3, threshold: float = 1.3, meter: str = "time",
        seed: int = 0, latency: bool = True, memory: bool = True, progress: bool | None = None,
        case_maker: Callable[[str, str, int, int], Any] = make_case) -> Run:
    """Measure every spec on every workload at every length and fit each parser x workload.

    The exponent is fitted on the actual text lengths (``len(case.text)``,
    characters), which are close to the requested ones. ``progress``: show a
    tqdm bar on stderr (``None``: only when stderr is a terminal). A case
    that cannot be made, or a parser that raises, gives failed measurements
    (and an ``ERROR`` verdict); the run goes on.
    """
    from tqdm import tqdm

    lengths = tuple(sorted(set(lengths)))
    specs = list(specs)
    tested = [s for s in specs if s.name != NULL]
    formats: list[str] = []
    for spec in tested:
        if spec.format not in formats:
            formats.append(spec.format)
    if not formats:  # only the floor was asked for: measure it on one format's text
        from workloads import render

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
                prefetch(jobs, progress=children)
            except Exception:  # unavailable meter: each measurement reports it
                pass
    bar = tqdm(total=len(tested) * len(workloads) * len(lengths), unit="run",
               disable=None if progress is None else not progress, leave=False, dynamic_ncols=True)
    try:
        for workload in workloads:
            for length in lengths:
                for fmt in formats:
                    group = [s for s in tested if s.format == fmt]
                    try:
                        case = case_maker(workload, fmt, length, seed)
                    except Exception as exc:
                        error = f"workload {workload} for {fmt}: {type(exc).__name__}: {exc}"
                        for spec in group:
                            m = _failed(spec.name, fmt, workload, length, str(chunking), repeats, meter, error)
                            result.measurements.append(m)
                            by_key.setdefault((spec.name, workload), []).append(m)
                            bar.update(1)
                        continue
                    floor = measure(NullParser, case, chunking, repeats, parser_name=NULL, meter=meter,
                                    latency=latency, memory=False)
                    result.floors[(fmt, workload, length)] = floor
                    result.measurements.append(floor)
                    for spec in group:
                        bar.set_postfix_str(f"{spec.name} {workload} {length}", refresh=False)
                        m = measure(spec.factory, case, chunking, repeats, parser_name=spec.name,
                                    meter=meter, latency=latency, memory=memory)
                        result.measurements.append(m)
                        by_key.setdefault((spec.name, workload), []).append(m)
                        bar.update(1)
    finally:
        bar.close()
    for workload in workloads:
        floor_ms = []
        for length in lengths:
            found = [result.floors[(f, workload, length)] for f in formats if (f, workload, length) in result.floors]
            if found:
                median = statistics.median_low([m.seconds for m in found])
                floor_ms.append(next(m for m in found if m.seconds == median))
        if floor_ms:
            result.floor_rows.append(_fit_row(NULL, None, workload, floor_ms, threshold, floor=True))
        for spec in tested:
            ms = by_key.get((spec.name, workload), [])
            result.rows.append(_fit_row(spec.name, spec.format, workload, ms, threshold))
    return result
