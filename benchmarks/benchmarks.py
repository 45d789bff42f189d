"""The asv suite: streaming cost of every parser on the headline workloads.

Parameter lists are fixed here, not read from the registry, so a benchmark
keeps its identity across commits; at a commit where a parser, a workload or
a harness module does not exist yet, ``setup`` raises ``NotImplementedError``,
which asv records as skipped.

- ``StreamTime.time_stream``: seconds to stream one case (``tokens:4``
  deltas) through a fresh parser and call ``finish``.
- ``StreamMemory.track_peak_traced_bytes``: peak memory traced by
  tracemalloc while streaming, in bytes (asv's ``peakmem_`` reads the whole
  process's max RSS and cannot see a parser's few kilobytes).
- ``ScalingExponent.track_scaling_exponent``: the fitted scaling exponent
  per parser and workload (least-squares slope of log cost on log length),
  so asv's regression detection flags the commit where an exponent jumps.
  The meter is ``time`` (process seconds) unless the environment variable
  ``CALLSCALE_METER=instructions`` selects the callgrind instruction count.
"""

from __future__ import annotations

import os

PARSERS = [
    "deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41",
    "qwen3", "qwen3_coder", "glm45", "glm47", "kimi_k2", "minimax_m2", "gemma4",
]
WORKLOADS = ["write_file", "many_short_calls", "repeated_opener"]
LENGTHS = [4096, 16384, 65536]
CHUNKING = "tokens:4"
#: Lengths the exponent is fitted over, per meter (instructions: small, exact).
FIT_LENGTHS = {"time": [4096, 16384, 65536], "instructions": [1024, 2048, 4096, 8192]}


def _case(parser: str, workload: str, length: int):
    """(parser factory, case) for one benchmark; NotImplementedError (asv: skipped) when unavailable here."""
    try:
        import parsers
        import workloads

        factory = parsers.get(parser)
        case = workloads.make(workload, parser, length)
    except (ImportError, KeyError, AttributeError) as exc:
        raise NotImplementedError(f"not available at this commit: {exc}") from None
    return factory, case


def _harness():
    """The harness module, or NotImplementedError at a commit without it."""
    try:
        from callscale import measure
    except ImportError as exc:
        raise NotImplementedError(f"no harness at this commit: {exc}") from None
    return measure


class StreamTime:
    params = (PARSERS, WORKLOADS, LENGTHS)
    param_names = ["parser", "workload", "length"]
    number = 1
    repeat = (1, 5, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300

    def setup(self, parser, workload, length):
        self.stream_once = _harness().stream_once
        self.factory, case = _case(parser, workload, length)
        self.deltas, self.tools = case.deltas(CHUNKING), list(case.tools)

    def time_stream(self, parser, workload, length):
        self.stream_once(self.factory(), self.deltas, self.tools)


class StreamMemory:
    params = (PARSERS, WORKLOADS, LENGTHS)
    param_names = ["parser", "workload", "length"]
    timeout = 300

    def setup(self, parser, workload, length):
        self.measure = _harness().measure
        self.factory, self.case = _case(parser, workload, length)

    def track_peak_traced_bytes(self, parser, workload, length):
        m = self.measure(self.factory, self.case, CHUNKING, repeats=1, latency=False, memory=True)
        if m.error:
            raise RuntimeError(m.error)
        return float(m.peak_bytes)

    track_peak_traced_bytes.unit = "bytes"


class ScalingExponent:
    params = (PARSERS, WORKLOADS)
    param_names = ["parser", "workload"]
    timeout = 900

    def setup(self, parser, workload):
        self.meter = os.environ.get("CALLSCALE_METER", "time")
        if self.meter not in FIT_LENGTHS:
            raise ValueError(f"CALLSCALE_METER must be time or instructions, not {self.meter!r}")
        self.measure = _harness().measure
        self.lengths = FIT_LENGTHS[self.meter]
        # fail fast (skip) when the parser or workload is missing here
        _case(parser, workload, self.lengths[0])

    def track_scaling_exponent(self, parser, workload):
        from callscale.fit import exponent

        if self.meter == "instructions":
            from callscale.instructions import count_instructions

            counts = count_instructions(parser, parser, workload, self.lengths, CHUNKING)
            return float(exponent(self.lengths, [counts[n] for n in self.lengths]))
        seconds = []
        for length in self.lengths:
            factory, case = _case(parser, workload, length)
            m = self.measure(factory, case, CHUNKING, repeats=3, latency=False, memory=False)
            if m.error:
                raise RuntimeError(m.error)
            seconds.append(m.seconds)
        return float(exponent(self.lengths, seconds))

    track_scaling_exponent.unit = "exponent"
