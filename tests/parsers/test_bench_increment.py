"""pytest-benchmark micro-benchmarks: what a streaming increment costs each parser on a long call.

Skipped in the default test run; run them with

    python -m pytest tests/parsers/test_bench_increment.py --run-benchmarks
    python -m pytest tests/parsers/test_bench_increment.py --run-benchmarks --benchmark-autosave
    python -m pytest tests/parsers/test_bench_increment.py --run-benchmarks --benchmark-compare

(saved runs go to ``.benchmarks/``; ``--benchmark-compare`` compares with the
latest saved one, ``--benchmark-compare-fail=min:25%`` fails on a slowdown).

Each parser streams a 16k-character ``write_file`` call (``tokens:4`` deltas,
about 4,100 of them):

- ``test_whole_call``: the whole stream and ``finish``, one fresh parser a
  round; ``extra_info["per_increment_us"]`` is the fastest round divided by
  the number of calls (microseconds an increment, on average);
- ``test_increments_deep_in_call``: the parser is first fed all but the last
  256 deltas (not timed), then the last 256 increments and ``finish`` are
  timed; ``extra_info["per_increment_us"]`` is the fastest round over 257.
  This is the cost of an increment 16k characters into a call, where a
  parser that rescans its buffer pays the most.

Both check that the streamed result is the case's content and call, so a
parser that stops early cannot look fast.
"""

from __future__ import annotations

import pytest

from callscale import parsers
from callscale import workloads
from callscale import check

pytestmark = pytest.mark.benchmark_suite

LENGTH = 16384
"""Call length in characters."""
CHUNKING = "tokens:4"
TAIL = 256
"""Increments timed at the end of the call by test_increments_deep_in_call."""
WHOLE_ROUNDS = 20
TAIL_ROUNDS = 50


@pytest.fixture(scope="module", params=parsers.names())
def case(request):
    """``(parser name, case, deltas)`` for the 16k write_file call in the parser's format."""
    name = request.param
    the_case = workloads.make("write_file", name, LENGTH)
    return name, the_case, the_case.deltas(CHUNKING)


def _feed(parser, deltas, tools, results):
    for delta in deltas:
        results.append(parser.parse_streaming_increment(delta, tools))
    return results


def _assert_streamed_the_case(results, the_case):
    outcome = check.assemble(results)
    assert outcome.content == the_case.content
    assert outcome.complete_calls() == [(c.name, dict(c.arguments)) for c in the_case.calls]


def _per_increment_us(benchmark, calls: int):
    stats = getattr(benchmark, "stats", None)  # None under --benchmark-disable
    if stats is None:
        return None
    return stats.stats.min / calls * 1e6


@pytest.mark.benchmark(group="whole 16k write_file call")
def test_whole_call(benchmark, case):
    name, the_case, deltas = case
    factory, tools = parsers.get(name), list(the_case.tools)

    def stream(parser):
        results = _feed(parser, deltas, tools, [])
        results.append(parser.finish(tools))
        return results

    results = benchmark.pedantic(stream, setup=lambda: ((factory(),), {}), rounds=WHOLE_ROUNDS,
                                 warmup_rounds=1)
    _assert_streamed_the_case(results, the_case)
    benchmark.extra_info.update(parser=name, chars=len(the_case.text), deltas=len(deltas),
                                per_increment_us=_per_increment_us(benchmark, len(deltas) + 1))


@pytest.mark.benchmark(group="last 256 increments of a 16k write_file call")
def test_increments_deep_in_call(benchmark, case):
    name, the_case, deltas = case
    factory, tools = parsers.get(name), list(the_case.tools)
    head, tail = deltas[:-TAIL], deltas[-TAIL:]

    def fed_head():
        parser = factory()
        return (parser, _feed(parser, head, tools, [])), {}

    def stream_tail(parser, results):
        _feed(parser, tail, tools, results)
        results.append(parser.finish(tools))
        return results

    results = benchmark.pedantic(stream_tail, setup=fed_head, rounds=TAIL_ROUNDS, warmup_rounds=1)
    _assert_streamed_the_case(results, the_case)
    benchmark.extra_info.update(parser=name, chars_before=sum(map(len, head)), timed_calls=TAIL + 1,
                                per_increment_us=_per_increment_us(benchmark, TAIL + 1))
