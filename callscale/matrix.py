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

import functools
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import fit as fitting
from .config import DEFAULTS, format_size
from .bounded import DEFAULT_MEMORY_LIMIT, Terminated, Workers
from .measure import METERS, NULL, Measurement, NullParser, measure
from .plugins import ParserSpec

__all__ = ["Row", "Run", "run", "fit_row", "make_case", "Interrupted", "Settings", "Plan", "plan"]


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


def fit_row(name: str, fmt: str | None, workload: str, ms: list[Measurement], threshold: float,
            floor: bool = False, cost_only: bool = False, **rules: float) -> Row:
    """One row of the table: ``ms`` (one parser x workload, any order) fitted and judged by
    :func:`callscale.fit.fit` under ``threshold`` and ``rules`` (``reference_length``, ``projection_factor``);
    ``floor``: the null parser's row; ``cost_only``: a wrong output passes when its cost does."""
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


def judge_request(row: Row, floors: dict[tuple[str, str, int], Measurement], factor: float) -> Row:
    """:func:`callscale.fit.judge_request` on ``row``: its per-request figure (the smallest of its
    measurements', :attr:`Measurement.request`) against the floor's at the same lengths (``floors``:
    :attr:`Run.floors`). Returns ``row`` (its fit changed in place)."""
    mine = [m.request for m in row.measurements if m.request is not None]
    theirs = [f.request for m in row.measurements if m.request is not None
              and (f := floors.get((m.format, m.workload, m.length))) is not None and f.request is not None]
    fitting.judge_request(row.fit, min(mine) if mine else None, min(theirs) if theirs else None, factor)
    return row


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


@dataclass(frozen=True)
class Settings:
    """How :func:`run` measures and judges; each field is a keyword argument of :func:`run`.

    ``chunking``: how a case's text is cut into deltas (``tokens:4``). ``repeats``: passes per
    measurement. ``threshold``: the exponent above which a pair fails. ``meter``: a name in
    :data:`callscale.measure.METERS` (``time``, ``instructions``, ...). ``seed``: the workloads'
    seed. ``latency`` / ``memory``: also take each delta's latency / the peak memory.
    ``progress``: show a tqdm bar on stderr (``None``: only when stderr is a terminal), its
    postfix naming the running case. ``case_maker``: ``(workload, format, length, seed) -> Case``
    (default :func:`make_case`). ``reference_length`` and ``projection_factor``: the projection
    rule of :func:`callscale.fit.fit`. ``timeout``: seconds each measurement (one parser on one
    case, all its passes) may take (``None``: no limit). ``memory_limit``: bytes of address space
    per worker (``None``: no limit). ``cost_only``: a wrong output does not fail the pair.
    ``verify``: compare each parser's result on each case with the case's before measuring it.
    ``on_measurement``: called with each measurement as it is taken. ``jobs``: callgrind
    children counting at once under the ``instructions`` meter (``None``:
    :func:`callscale.instructions.auto_jobs`).
    """

    chunking: Any = DEFAULTS.chunking
    repeats: int = DEFAULTS.repeats
    threshold: float = DEFAULTS.threshold
    meter: str = "time"
    seed: int = 0
    latency: bool = True
    memory: bool = True
    progress: bool | None = None
    case_maker: Callable[[str, str, int, int], Any] = make_case
    reference_length: float = DEFAULTS.reference_length
    projection_factor: float = DEFAULTS.projection_factor
    request_factor: float = DEFAULTS.request_factor
    timeout: float | None = None
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT
    cost_only: bool = False
    verify: bool = True
    on_measurement: Callable[[Measurement], None] | None = None
    jobs: int | None = None

    @property
    def rules(self) -> dict[str, float]:
        """The projection rule's keywords for :func:`callscale.fit.fit`."""
        return {"reference_length": self.reference_length, "projection_factor": self.projection_factor}

    @property
    def bar_disabled(self) -> bool | None:
        """tqdm's ``disable`` for ``progress`` (``None``: tqdm decides by the terminal)."""
        return None if self.progress is None else not self.progress


@dataclass(frozen=True)
class Plan:
    """What a run measures: the parsers under test (``tested``, the floor apart), the formats they
    read (in first-seen order; one format's text when only the floor was asked for), the workloads
    and the lengths (ascending, each once)."""

    tested: tuple[ParserSpec, ...]
    formats: tuple[str, ...]
    workloads: tuple[str, ...]
    lengths: tuple[int, ...]

    def group(self, fmt: str) -> list[tuple[int, ParserSpec]]:
        """The tested specs of ``fmt`` with their index in ``tested``."""
        return [(i, s) for i, s in enumerate(self.tested) if s.format == fmt]


def plan(specs: Sequence[ParserSpec], workloads: Sequence[str], lengths: Sequence[int]) -> Plan:
    """The :class:`Plan` of a run of ``specs`` (the ``null`` spec is the floor, measured anyway)."""
    tested = tuple(s for s in specs if s.name != NULL)
    formats = tuple(dict.fromkeys(spec.format for spec in tested))
    if not formats:  # only the floor was asked for: measure it on one format's text
        from callscale.workloads import render

        formats = tuple(render.names()[:1])
    return Plan(tested, formats, tuple(workloads), tuple(sorted(set(lengths))))


def run(specs: Sequence[ParserSpec], workloads: Sequence[str], lengths: Sequence[int], **settings: Any) -> Run:
    """Measure every spec on every workload at every length and fit each parser x workload.

    ``settings``: the fields of :class:`Settings` (keywords; an unknown one raises ``TypeError``).
    The steps: :func:`plan`, :meth:`_Matrix.count_up_front` (a meter that counts in children of
    its own), :meth:`_Matrix.measure` (every case, in workers), :meth:`_Matrix.fit` (with the
    second look, :meth:`_Matrix.second_look`).

    The exponent is fitted on the actual text lengths (``len(case.text)``,
    characters), which are close to the requested ones. A case that cannot be made, or a parser
    that raises, gives failed measurements (and an ``ERROR`` verdict); the run goes on.

    Isolation: every parser, and the ``null`` floor, is loaded and measured
    in a worker process of its own (:class:`callscale.bounded.Worker`),
    never in this one; each case is made here, once per format, and sent to
    the workers of that format. What a parser does to its process is its own
    row's: a worker that dies gives that measurement the reason in words
    (``exit 3``, ``killed by SIGSEGV``, ``out of memory``) and the next
    measurement of that parser starts a fresh worker. A measurement that overruns ``timeout`` is
    stopped: its error reads ``timeout after N s``, the parser's longer lengths of that workload
    are not run, and its verdict is ``timeout``. A spec marked ``broken`` (its loading
    failed, :func:`callscale.plugins.probe`) is not run: its measurements
    carry that reason.

    ``verify``: a row with a wrong case has the verdict ``wrong output``, which fails unless
    ``cost_only``. ``on_measurement``: e.g. the results journal, :func:`callscale.report.Journal`.

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
    """
    matrix = _Matrix(plan(specs, workloads, lengths), Settings(**settings))
    matrix.count_up_front()
    return matrix.measure_and_fit()


def _measure_job(factory: Callable[[], Any], name: str, chunking: Any, meter: str,
                 job: tuple[Any, int, bool, bool, bool]) -> Measurement:
    """A worker's handler: ``job`` is ``(case, repeats, latency, memory, verify)``."""
    case, reps, lat, mem, check = job
    return measure(factory, case, chunking, reps, parser_name=name, meter=meter, latency=lat,
                   memory=mem, verify=check)


class _Matrix:
    """One run's state across its steps: the result so far, the counts a prefetching meter took,
    the workers (one per parser, ``-1`` the floor) and the pairs that timed out."""

    def __init__(self, plan: Plan, settings: Settings) -> None:
        self.plan = plan
        self.s = settings
        self.result = Run(plan.lengths, plan.workloads, str(settings.chunking), settings.repeats,
                          settings.threshold, settings.meter)
        self.by_key: dict[tuple[str, str], list[Measurement]] = {}
        # what a prefetching meter counted, as it arrives: kept by an interrupted run (keep_counted)
        self.counted: dict[tuple[str, str, str, int], Measurement] = {}
        self.sizes: dict[tuple[str, str, int], tuple[int, int]] = {}
        self.workers = Workers(self.handler_for, settings.timeout, settings.memory_limit)
        self.timed_out: dict[tuple[str, str], int] = {}
        self.running = ""
        self.bar: Any = None

    # ------------------------------------------------------------------ recording
    def failed(self, name: str, fmt: str, workload: str, length: int, error: str,
               repeats: int | None = None) -> Measurement:
        s = self.s
        return _failed(name, fmt, workload, length, str(s.chunking), s.repeats if repeats is None else repeats,
                       s.meter, error)

    def record(self, m: Measurement) -> None:
        from . import tokenizers

        if m.tokenizer is None:
            m.tokenizer = tokenizers.for_chunking(m.format, str(self.s.chunking))
        self.result.measurements.append(m)
        if self.s.on_measurement is not None:
            self.s.on_measurement(m)

    def keep(self, name: str, workload: str, m: Measurement) -> None:
        """Record parser ``name``'s measurement and file it under its row on ``workload``."""
        self.record(m)
        self.by_key.setdefault((name, workload), []).append(m)

    # ------------------------------------------------------------------ counting up front
    def count_up_front(self) -> None:
        """A meter that works in child processes (instructions): run them all up front, in
        parallel; :meth:`measure` then reads the counts. Raises :class:`Interrupted` on Ctrl-C."""
        from tqdm import tqdm

        s, p = self.s, self.plan
        prefetch = getattr(METERS.get(s.meter), "prefetch", None)
        if prefetch is None:
            return
        jobs = [(spec.name, fmt, workload, p.lengths, str(s.chunking), s.seed)
                for workload in p.workloads for fmt in p.formats
                for spec in [ParserSpec(NULL, fmt, NullParser)] + [t for t in p.tested if t.format == fmt
                                                                    and t.broken is None]]
        with tqdm(total=len(jobs), unit="child", desc=s.meter, leave=False, dynamic_ncols=True,
                  disable=s.bar_disabled) as children:
            try:
                prefetch(jobs, workers=s.jobs, progress=children, timeout=s.timeout, on_count=self.on_count)
            except KeyboardInterrupt as exc:
                item = getattr(exc, "item", None)  # the case the meter's child was on
                self.keep_counted()
                raise Interrupted(f"{item[0]} on {item[2]} at {item[3]}" if item
                                  else f"nothing yet (the {s.meter} meter's child was starting)",
                                  self.result, isinstance(exc, Terminated)) from None
            except Exception:  # unavailable meter: each measurement reports it
                pass

    def on_count(self, job: tuple, length: int, got: Any) -> None:
        """The prefetching meter's callback: one count (or its error) of ``job`` at ``length``."""
        s = self.s
        name, fmt, workload = job[:3]
        if got.instructions is None:
            self.counted[(name, fmt, workload, length)] = self.failed(name, fmt, workload, length,
                                                                      got.error or "not counted")
            return
        chars, deltas, split = self.size(workload, fmt, length)
        deltas = (got.outcome or {}).get("deltas", deltas)  # a subject's own chunks (adapters/protocol.py)
        self.counted[(name, fmt, workload, length)] = Measurement(
            name, fmt, workload, length, chars, split, deltas, s.repeats, s.meter,
            seconds=float(got.instructions))

    def size(self, workload: str, fmt: str, length: int) -> tuple[int, int, str]:
        """The case's characters, deltas and chunking (its own delivery, else the run's), as measure()
        gives them (the case made here, once)."""
        key = (workload, fmt, length)
        if key not in self.sizes:
            try:
                case = self.s.case_maker(workload, fmt, length, self.s.seed)
                self.sizes[key] = (len(case.text), len(case.deltas(self.s.chunking)),
                                   getattr(case, "delivery", None) or str(self.s.chunking))
            except Exception:
                self.sizes[key] = (0, 0, str(self.s.chunking))
        return self.sizes[key]

    def keep_counted(self) -> None:
        """Record each count not yet measured in full: an interrupted run keeps what the meter counted."""
        done = {(m.parser, m.format, m.workload, m.length) for m in self.result.measurements}
        for key, m in self.counted.items():
            if key not in done:
                if m.parser == NULL and m.ok:
                    self.result.floors.setdefault((m.format, m.workload, m.length), m)
                self.record(m)

    # ------------------------------------------------------------------ measuring
    def measure_and_fit(self) -> Run:
        """:meth:`measure`, then :meth:`fit`; Ctrl-C stops every worker and raises :class:`Interrupted`."""
        from tqdm import tqdm

        p = self.plan
        self.bar = tqdm(total=len(p.tested) * len(p.workloads) * len(p.lengths), unit="run",
                        disable=self.s.bar_disabled, leave=False, dynamic_ncols=True)
        try:
            with self.workers:  # Ctrl-C kills every worker, the end closes them
                self.measure()
                self.fit()
        except KeyboardInterrupt as exc:
            self.keep_counted()
            raise Interrupted(self.running, self.result, isinstance(exc, Terminated)) from None
        finally:
            self.bar.close()
        return self.result

    def measure(self) -> None:
        """Every case, once per format, by the floor then each parser of that format.

        A format's lengths follow each other (all lengths of one format, then the next format), so
        a burst of load on the machine lands on the few pairs measured during it, not on one length
        of all."""
        for workload in self.plan.workloads:
            for fmt in self.plan.formats:
                for length in self.plan.lengths:
                    self.measure_case(workload, fmt, length)

    def measure_case(self, workload: str, fmt: str, length: int) -> None:
        s = self.s
        group = self.plan.group(fmt)
        try:
            case = s.case_maker(workload, fmt, length, s.seed)
        except Exception as exc:
            error = f"workload {workload} for {fmt}: {type(exc).__name__}: {exc}"
            for _, spec in group:
                self.keep(spec.name, workload, self.failed(spec.name, fmt, workload, length, error))
                self.bar.update(1)
            return
        self.running = f"{NULL} on {workload} at {length}"
        floor = self.bounded(-1, NULL, fmt, workload, length, case, s.repeats, s.latency, False, False)
        self.result.floors[(fmt, workload, length)] = floor
        self.record(floor)
        for i, spec in group:
            self.running = f"{spec.name} on {workload} at {length}"
            self.bar.set_postfix_str(self.running)
            if (spec.name, workload) in self.timed_out:
                m = self.failed(spec.name, fmt, workload, length,
                                f"timeout: not run (timed out at {format_size(self.timed_out[(spec.name, workload)])})")
            else:
                m = self.bounded(i, spec.name, fmt, workload, length, case, s.repeats, s.latency, s.memory,
                                 s.verify)
            self.keep(spec.name, workload, m)
            self.bar.update(1)

    def bounded(self, index: int, name: str, fmt: str, workload: str, length: int, case: Any, reps: int,
                lat: bool, mem: bool, check: bool) -> Measurement:
        """One measurement in the worker of spec ``index`` (``-1``: the floor), or why there is none."""
        if index >= 0 and self.plan.tested[index].broken is not None:
            return self.failed(name, fmt, workload, length, self.plan.tested[index].broken, reps)
        early = self.counted.get((name, fmt, workload, length))
        if early is not None and early.error is not None and early.error.startswith("timeout"):
            # the meter's child timed out on it: the worker would hang on it again (verifying)
            if early.error.startswith("timeout after"):
                self.timed_out[(name, workload)] = length
            return early
        answer = self.workers.call(index, (case, reps, lat, mem, check))
        if answer.timed_out:
            self.timed_out[(name, workload)] = length
        return answer.value if answer.ok else self.failed(name, fmt, workload, length, answer.error, reps)

    def handler_for(self, index: int) -> Callable[[tuple], Measurement]:
        """The measuring handler of spec ``index``'s worker (``-1``: the floor)."""
        spec = ParserSpec(NULL, None, NullParser) if index < 0 else self.plan.tested[index]
        return functools.partial(_measure_job, spec.factory, spec.name, self.s.chunking, self.s.meter)

    # ------------------------------------------------------------------ fitting
    def fit(self) -> None:
        """Per workload: the floor row (the null parser's low median over the formats), then each
        parser's row, a failing one by time after its :meth:`second_look`."""
        s = self.s
        for workload in self.plan.workloads:
            floor = self.floor_row(workload)
            if floor is not None:
                self.result.floor_rows.append(floor)
            for i, spec in enumerate(self.plan.tested):
                row = fit_row(spec.name, spec.format, workload, self.by_key.get((spec.name, workload), []),
                               s.threshold, cost_only=s.cost_only, **s.rules)
                if s.meter in CONFIRM_METERS and _verdict(row) == fitting.FAIL:
                    row = self.second_look(i, spec, workload, row)
                    self.result.second_looks.append((spec.name, workload, _verdict(row)))
                self.result.rows.append(judge_request(row, self.result.floors, s.request_factor))

    def floor_row(self, workload: str) -> Row | None:
        floors, chosen = self.result.floors, []
        for length in self.plan.lengths:
            found = [floors[(f, workload, length)] for f in self.plan.formats
                     if (f, workload, length) in floors and floors[(f, workload, length)].ok]
            if found:
                median = statistics.median_low([m.seconds for m in found])
                chosen.append(next(m for m in found if m.seconds == median))
        if not chosen:
            return None
        return fit_row(NULL, None, workload, chosen, self.s.threshold, floor=True, **self.s.rules)

    def second_look(self, index: int, spec: ParserSpec, workload: str, row: Row) -> Row:
        """Rounds of 2 x repeats more runs, the lengths taken in turn (one run of each, in an order shuffled
        each pass, then again) so a burst, or a slow phase of the machine's load, falls on every length alike; the minimum kept per length; another round, after a
        pause, while the pair still fails and a round is cheap. Returns the row fitted again."""
        import random

        s = self.s
        cases = {m.length: s.case_maker(workload, spec.format, m.length, s.seed) for m in row.measurements}
        order = random.Random(f"{spec.name}/{workload}")  # a pass's order of lengths: shuffled, the same each run
        for look in range(CONFIRM_ROUNDS):
            if look:
                time.sleep(CONFIRM_PAUSE * look)
            spent = 0.0
            for _ in range(2 * s.repeats):
                for m in order.sample(row.measurements, len(row.measurements)):
                    self.running = f"{spec.name} on {workload} at {m.length} (second look)"
                    self.bar.set_postfix_str(self.running)
                    again = self.bounded(index, spec.name, spec.format, workload, m.length, cases[m.length], 1,
                                         s.latency and m.max_increment_ms is not None, False, False)
                    if again.ok and again.seconds is not None and m.seconds is not None:
                        m.seconds = min(m.seconds, again.seconds)
                        if again.max_increment_ms is not None and m.max_increment_ms is not None:
                            m.max_increment_ms = min(m.max_increment_ms, again.max_increment_ms)
                        m.repeats += again.repeats
                        spent += again.seconds
            row = fit_row(spec.name, spec.format, workload, row.measurements, s.threshold,
                           cost_only=s.cost_only, **s.rules)
            if _verdict(row) != fitting.FAIL or spent > CONFIRM_ROUND_BUDGET:
                break
        return row


def _verdict(row: Row) -> str:
    """The row's verdict as the gate reads it: the cost rule's where it has one."""
    return row.fit.cost_verdict or row.fit.verdict
