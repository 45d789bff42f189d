"""Whitespace after a call is held as its length (base ``Layout``: run lengths), in every registered format.

After a call, whitespace may be layout before the next call (dropped) or text before other content (kept
whole), so a parser holds it until what follows decides. Held as text, a parser's memory would grow with a
model that writes thousands of blank lines after a call; held as run lengths (``callscale.parsers.base.Layout``,
at most ``MAX_LAYOUT_RUNS`` runs), it does not. Each test runs over ``callscale.parsers.names()``: a call, then
``n`` characters of spaces and newlines in deltas of 4 characters.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from callscale import parsers
from callscale.workloads import render
from callscale.workloads.render import Call
from support import stream_outcome

NAMES = parsers.names()
ARGS = {"city": "Paris", "days": 3}
CALL = Call("get_weather", ARGS)
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
SMALL, LARGE = 4_096, 65_536
DELTA = 4  # characters a delta


def _whitespace(n: int) -> str:
    """``n`` characters of layout: spaces, then newlines, then spaces (three runs, as a model's blank lines)."""
    third = n // 3
    return " " * third + "\n" * third + " " * (n - 2 * third)


def _deltas(text: str) -> list[str]:
    return [text[i:i + DELTA] for i in range(0, len(text), DELTA)]


def _held_after_call(name: str, n: int) -> tuple[int, int]:
    """Bytes a parser holds after a call and ``n`` whitespace characters: (retained at the end, peak while fed).

    Measured with ``tracemalloc`` from after the call to after the last whitespace delta; the deltas are made
    before it starts and each result is dropped, so what is counted is what the parser keeps.
    """
    parser = parsers.get(name)()
    parser.parse_streaming_increment(render.get(name).render([CALL], content="Hi."), TOOLS)
    deltas = _deltas(_whitespace(n))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for delta in deltas:
            parser.parse_streaming_increment(delta, TOOLS)
        gc.collect()
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return now - before, peak - before


@pytest.mark.parametrize("name", NAMES)
def test_whitespace_held_after_a_call_does_not_grow_with_its_length(name):
    (small_now, small_peak), (large_now, large_peak) = _held_after_call(name, SMALL), _held_after_call(name, LARGE)
    # 16 times the whitespace; held as text it would be 61,440 bytes more (one byte a character)
    assert large_now <= small_now + 1024, (small_now, large_now)
    assert large_peak <= small_peak + 1024, (small_peak, large_peak)


@pytest.mark.parametrize("name", NAMES)
def test_whitespace_after_a_call_is_layout_or_text_by_what_follows_at_any_length(name):
    r = render.get(name)
    first = r.render([CALL], content="Hi.")
    second = r.render([Call("ping", {})])
    for n in (SMALL, LARGE):
        ws = _whitespace(n)
        # before the next call and at the end of the output: layout, dropped
        got = stream_outcome(name, [first] + _deltas(ws) + [second] + _deltas(ws), TOOLS)
        assert got.content.rstrip() == "Hi.", (n, got.content[:40])
        assert not got.content.endswith((" ", "\n")), (n, len(got.content))
        assert got.complete_calls() == [("get_weather", ARGS), ("ping", {})], n
        # before other text: the model's text, whole
        got = stream_outcome(name, [first] + _deltas(ws) + ["Bye."], TOOLS)
        assert got.content.endswith(ws + "Bye."), (n, len(got.content))
        assert got.content[:-len(ws + "Bye.")].rstrip() == "Hi.", (n, got.content[:40])
        assert got.complete_calls() == [("get_weather", ARGS)], n
