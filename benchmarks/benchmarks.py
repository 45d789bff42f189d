"""The asv suite: streaming cost of every parser on the headline workloads.

The parser list is the registry's (``callscale.parsers.names()``, sorted), read
when asv discovers the suite (in the newest commit's environment), so a new
format is benchmarked with no edit here; the other lists are fixed here. A
benchmark keeps its identity by parameter value across commits; at a commit
where a parser, a workload or a harness module does not exist yet, ``setup``
raises ``NotImplementedError``, which asv records as skipped (``n/a``), not
failed.

- ``StreamTime.time_stream``: process seconds (``time.process_time``, the
  ``time`` meter of ``callscale scale``) to stream one case (``tokens:4``
  deltas, made in ``setup``) through a fresh parser and call ``finish``.
- ``StreamMemory.track_peak_traced_bytes``: peak memory traced by
  tracemalloc while streaming, in bytes (asv's ``peakmem_`` reads the whole
  process's max RSS and cannot see a parser's few kilobytes).
- ``InstructionCount.track_instructions``: the exact series, callgrind
  instruction counts of the streaming alone (every
  ``parse_streaming_increment`` and ``finish``, :mod:`callscale.instructions`)
  per parser, workload and length (``INSTRUCTION_LENGTHS``). Counts repeat
  exactly for the same code, so a tight ``asv continuous --factor`` (1.05)
  gates a merge on them. asv runs every benchmark parameter in its own
  process, so all counts are taken once, in ``setup_cache``, by one
  callgrind child for every parser (a fork per parser and workload, as
  ``--meter instructions`` does; ``docs/exact.md``). Run asv with
  ``--launch-method forkserver`` so each parameter's process is a fork,
  not a new interpreter. Without valgrind, or at a commit without the
  instruction meter, every parameter is skipped (``n/a``).
- ``ScalingExponent.track_scaling_exponent``: the fitted scaling exponent
  per parser, workload and meter, as ``callscale gate`` and ``callscale history``
  fit it (:func:`callscale.fit.exponent`: least-squares slope of log cost on
  log length of the case's text, :func:`callscale.workloads.catalog.text_lengths`),
  so asv's regression detection flags the commit where an exponent jumps.
  Meter ``time``: process seconds at 4k, 16k, 64k characters; meter
  ``instructions``: the counts of ``InstructionCount`` (``INSTRUCTION_LENGTHS``,
  taken once in ``setup_cache``), so this series and ``callscale history`` show
  one figure for one set of counts (the gate's, at its own lengths, 4k-64k by
  default, reads higher for a quadratic parser: a call's fixed cost flattens
  small lengths). The environment variable ``CALLSCALE_METER``
  (comma-separated, default ``time``) says which meters run; the others are
  skipped, so each meter keeps its own series in the results.
- ``ModelStreamTime.time_stream`` and ``ModelInstructionCount.track_instructions``:
  the same two series under the ``model`` chunking (``MODEL_CHUNKING``: the
  model's own tokens, one a delta, :mod:`callscale.tokenizers`), for the
  parsers whose format has a real tokenizer installed (``pip install
  'callscale[tokenizers]'``); the others, and every one without the
  packages, are skipped with a note naming them (``n/a``). New classes, so
  the ``tokens:4`` series above keep their names and values.
"""

from __future__ import annotations

import os
import time

from callscale import parsers as _parsers
from callscale.config import DEFAULTS as _SETTINGS  # the one definition of a run's defaults

#: Every registered format (the registry's names, sorted).
PARSERS = _parsers.names()
WORKLOADS = ["write_file", "many_short_calls", "repeated_opener"]
#: Call lengths in characters (the gate's, :class:`callscale.config.Settings`).
LENGTHS = list(_SETTINGS.lengths)
CHUNKING = _SETTINGS.chunking
#: The chunking of the ``Model*`` benchmarks: the model's own tokens, where its tokenizer is installed.
MODEL_CHUNKING = "model"
METERS = ["time", "instructions"]
#: Call lengths in characters of the exact series (``InstructionCount``); three, 4x apart, so
#: ``callscale history`` fits an exponent per commit from them.
INSTRUCTION_LENGTHS = [512, 2048, 8192]
#: Lengths (characters) the exponent is fitted over, per meter (instructions: the exact series' own).
FIT_LENGTHS = {"time": list(_SETTINGS.lengths), "instructions": INSTRUCTION_LENGTHS}
#: Process-time runs per length for the ``time`` exponent; the minimum counts.
FIT_REPEATS = _SETTINGS.repeats


def selected_meters() -> list[str]:
    """The meters ``CALLSCALE_METER`` selects (comma-separated; default ``time``).

    Raises ``ValueError`` naming the known meters for an unknown one.
    """
    chosen = [m.strip() for m in os.environ.get("CALLSCALE_METER", "time").split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METERS]
    if unknown or not chosen:
        raise ValueError(f"CALLSCALE_METER must name meters from {', '.join(METERS)}, "
                         f"not {os.environ.get('CALLSCALE_METER')!r}")
    return chosen


def _case(parser: str, workload: str, length: int):
    """(parser factory, case) for one benchmark; NotImplementedError (asv: skipped) when unavailable here."""
    try:
        from callscale import parsers
        from callscale import workloads

        factory = parsers.get(parser)
        case = workloads.make(workload, parser, length)
    except (ImportError, KeyError, AttributeError) as exc:
        raise NotImplementedError(f"not available at this commit: {exc}") from None
    return factory, case


def _harness(*names: str):
    """The named functions of ``callscale.measure`` / ``callscale.fit``; NotImplementedError where missing."""
    try:
        from callscale import fit, measure
    except ImportError as exc:
        raise NotImplementedError(f"no harness at this commit: {exc}") from None
    found = []
    for name in names:
        value = getattr(measure, name, None) or getattr(fit, name, None)
        if value is None:
            raise NotImplementedError(f"the harness at this commit has no {name}")
        found.append(value)
    return found


def _model_tokenizer(parser: str) -> None:
    """Skip (NotImplementedError) unless ``parser``'s format has its real tokenizer installed here."""
    try:
        from callscale import tokenizers
    except ImportError as exc:
        raise NotImplementedError(f"no tokenizers at this commit: {exc}") from None
    if not tokenizers.available(parser):  # a parser's name is its format's (the workloads are made so)
        why = ("no package ships it" if parser not in tokenizers.PACKAGES
               else f"not installed ({tokenizers.MISSING_NOTE})")
        raise NotImplementedError(f"the model chunking is skipped for {parser}: its real tokenizer: {why}")


class StreamTime:
    params = (PARSERS, WORKLOADS, LENGTHS)
    param_names = ["parser", "workload", "length"]
    timer = time.process_time
    number = 1
    # 3 to 10 samples (asv reports their median), after streaming for 50 ms
    # untimed so first-use costs (regex compilation, caches) are not sampled
    repeat = (3, 10, 10.0)
    rounds = 1
    warmup_time = 0.05
    timeout = 300

    def setup(self, parser, workload, length):
        (self.stream_once,) = _harness("stream_once")
        self.factory, case = _case(parser, workload, length)
        self.deltas, self.tools = case.deltas(CHUNKING), list(case.tools)

    def time_stream(self, parser, workload, length):
        self.stream_once(self.factory(), self.deltas, self.tools)


class StreamMemory:
    params = (PARSERS, WORKLOADS, LENGTHS)
    param_names = ["parser", "workload", "length"]
    timeout = 300

    def setup(self, parser, workload, length):
        (self.measure,) = _harness("measure")
        self.factory, self.case = _case(parser, workload, length)

    def track_peak_traced_bytes(self, parser, workload, length):
        m = self.measure(self.factory, self.case, CHUNKING, repeats=1, latency=False, memory=True)
        if m.error:
            raise RuntimeError(m.error)
        return float(m.peak_bytes)

    track_peak_traced_bytes.unit = "bytes"


class ModelStreamTime(StreamTime):
    """``StreamTime`` under :data:`MODEL_CHUNKING` (the model's tokens; skipped without its tokenizer)."""

    def setup(self, parser, workload, length):
        _model_tokenizer(parser)
        (self.stream_once,) = _harness("stream_once")
        self.factory, case = _case(parser, workload, length)
        self.deltas, self.tools = case.deltas(MODEL_CHUNKING), list(case.tools)


def _count_all(chunking: str = CHUNKING, parsers_here=None) -> dict:
    """Every (parser, workload, length) instruction count of the exact series, for ``setup_cache``.

    Returns ``{"unavailable": reason}`` when the meter cannot run here (no
    valgrind, or no meter at this commit), else ``{"counts": {(parser,
    workload, length): instructions or error text}}``; parsers and workloads
    missing at this commit are left out (their benchmarks are skipped).
    """
    try:
        from callscale.instructions import InstructionMeter, MeterUnavailable, check_available
    except ImportError as exc:
        return {"unavailable": f"no instruction meter at this commit: {exc}"}
    try:
        check_available()
    except MeterUnavailable as exc:
        return {"unavailable": str(exc)}
    cases = {}
    for parser in PARSERS if parsers_here is None else parsers_here:
        for workload in WORKLOADS:
            try:
                cases[parser, workload] = {n: _case(parser, workload, n)[1] for n in INSTRUCTION_LENGTHS}
            except NotImplementedError:
                continue
    meter = InstructionMeter()
    meter.prefetch((parser, case[INSTRUCTION_LENGTHS[0]].format, workload, tuple(INSTRUCTION_LENGTHS), chunking,
                    getattr(case[INSTRUCTION_LENGTHS[0]], "seed", 0)) for (parser, workload), case in cases.items())
    counts = {}
    for (parser, workload), by_length in cases.items():
        for length, case in by_length.items():
            try:
                counts[parser, workload, length] = meter.total(None, case, (), [], 1, parser_name=parser,
                                                               chunking=chunking)
            except Exception as exc:  # the meter's error becomes this benchmark's failure
                counts[parser, workload, length] = f"{type(exc).__name__}: {exc}"
    return {"counts": counts}


class InstructionCount:
    """The exact series: instructions to stream one case, counted once per run in ``setup_cache``."""

    params = (PARSERS, WORKLOADS, INSTRUCTION_LENGTHS)
    param_names = ["parser", "workload", "length"]
    timeout = 60

    def setup_cache(self):
        return _count_all()

    setup_cache.timeout = 1800

    def setup(self, cache, parser, workload, length):
        if "unavailable" in cache:
            raise NotImplementedError(cache["unavailable"])
        if (parser, workload, length) not in cache["counts"]:
            raise NotImplementedError(f"not available at this commit: {parser} on {workload}")

    def track_instructions(self, cache, parser, workload, length):
        value = cache["counts"][parser, workload, length]
        if isinstance(value, str):
            raise RuntimeError(value)
        return float(value)

    track_instructions.unit = "instructions"


def _model_parsers() -> list[str]:
    """The parsers of :data:`PARSERS` whose real tokenizer is installed here."""
    found = []
    for parser in PARSERS:
        try:
            _model_tokenizer(parser)
        except NotImplementedError:
            continue
        found.append(parser)
    return found


class ModelInstructionCount(InstructionCount):
    """``InstructionCount`` under :data:`MODEL_CHUNKING`: counted once per run, for the parsers whose
    tokenizer is installed (the others skipped with a note)."""

    def setup_cache(self):
        return _count_all(MODEL_CHUNKING, _model_parsers())

    setup_cache.timeout = 1800

    def setup(self, cache, parser, workload, length):
        _model_tokenizer(parser)
        super().setup(cache, parser, workload, length)


class ScalingExponent:
    params = (PARSERS, WORKLOADS, METERS)
    param_names = ["parser", "workload", "meter"]
    timeout = 900

    def setup_cache(self):
        if "instructions" not in selected_meters():
            return {"unavailable": "meter instructions not selected (CALLSCALE_METER)"}
        return _count_all()

    setup_cache.timeout = 1800

    def setup(self, cache, parser, workload, meter):
        if meter not in selected_meters():
            raise NotImplementedError(f"meter {meter} not selected (CALLSCALE_METER)")
        self.measure, self.exponent = _harness("measure", "exponent")
        self.lengths = list(FIT_LENGTHS[meter])
        # skip fast when the parser or workload is missing here
        _case(parser, workload, self.lengths[0])
        if meter == "instructions":
            InstructionCount.setup(self, cache, parser, workload, self.lengths[0])

    def track_scaling_exponent(self, cache, parser, workload, meter):
        cases = [_case(parser, workload, length)[1] for length in self.lengths]
        if meter == "instructions":
            counts = [cache["counts"][parser, workload, n] for n in self.lengths]
            failed = [c for c in counts if isinstance(c, str)]
            if failed:
                raise RuntimeError(failed[0])
            return float(self.exponent([len(case.text) for case in cases], counts))
        seconds = []
        factory = _case(parser, workload, self.lengths[0])[0]
        for case in cases:
            m = self.measure(factory, case, CHUNKING, repeats=FIT_REPEATS, latency=False, memory=False)
            if m.error:
                raise RuntimeError(m.error)
            seconds.append(m.seconds)
        return float(self.exponent([len(case.text) for case in cases], seconds))

    track_scaling_exponent.unit = "exponent"
