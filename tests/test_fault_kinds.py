"""Issue 26: the kinds of fault real outputs still found, each fixed once in the shared layer.

Each kind is tested for every format it applies to, under every chunking of ``support.CHUNKINGS``
(whole, one character, fixed sizes, seeded random splits inside special tokens too).
"""

from __future__ import annotations

import tracemalloc

import pytest

from callscale import check, parsers
from callscale.parsers.schema import tool_list
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_parses

NAMES = parsers.names()
ARGS = {"city": "Paris", "days": 3}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def _drive(name, deltas, tools):
    """Stream ``deltas`` through a fresh parser passing ``tools`` exactly as given (no copy into a list)."""
    parser = parsers.get(name)()
    results = [parser.parse_streaming_increment(d, tools) for d in deltas]
    results.append(parser.finish(tools))
    return check.assemble(results)


# --------------------------------------------------------------------------- a bad tool list
#: ``tools`` that is not a list: no tools (schema.tool_list), the same at every split.
BAD_TOOLS = [5, 2.5, True, "get_weather", b"x", {"type": "function", "function": TOOLS[0]["function"]},
             object()]


def test_tool_list_keeps_lists_and_tuples_only():
    assert tool_list(TOOLS) is TOOLS
    assert tool_list(tuple(TOOLS)) == tuple(TOOLS)
    for bad in [None, *BAD_TOOLS, iter(TOOLS)]:
        assert tool_list(bad) == ()


@pytest.mark.parametrize("name", NAMES)
def test_a_tool_list_that_is_no_list_reads_as_no_tools_at_any_split(name):
    """qwen3_coder with ``tools=5``: whole, the call was abandoned and its text came back as content;
    by characters it was a call: now both read the call as without tools (values untyped)."""
    r = render.get(name)
    text = r.render([Call("get_weather", ARGS)], content="Hi.")
    want = _drive(name, [text], [])
    assert want.content.strip() == "Hi." and [c for c, _ in want.complete_calls()] == ["get_weather"]
    for bad in BAD_TOOLS + [iter(TOOLS)]:
        for spec in CHUNKINGS[:4]:
            got = _drive(name, chunk(text, spec, r.special_tokens), bad)
            assert not check.compare(got, want), (bad, spec, check.compare(got, want))
        assert not check.compare(check.whole(parsers.get(name)(), text, ()), want)


def test_qwen3_coder_integer_value_with_a_number_as_tools():
    # the report's case: `\n12\n</parameter>...` reached content whole (the int tools raised mid-call)
    text = "<tool_call>\n<function=f>\n<parameter=a>\n12\n</parameter>\n</function>\n</tool_call>"
    for deltas in ([text], list(text), chunk(text, "fixed:3")):
        got = _drive("qwen3_coder", deltas, 5)
        assert (got.content, got.complete_calls()) == ("", [("f", {"a": "12"})]), deltas


# --------------------------------------------------------------------------- held whitespace
def _peak(name, prefix, ws, n):
    parser = parsers.get(name)()
    parser.parse_streaming_increment(prefix, [])
    piece = ws * 4
    tracemalloc.start()
    try:
        for _ in range(n // 4):
            parser.parse_streaming_increment(piece[:], [])
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31"])
def test_whitespace_inside_a_calls_block_is_held_bounded(name):
    """Whitespace between the block opener and a call was kept as a list of its pieces (64k spaces: 1 MB);
    now as run lengths (base.Layout): memory does not grow with it."""
    opener = "Hi.<｜tool▁calls▁begin｜>"
    for ws in (" ", "\n"):
        small, large = _peak(name, opener, ws, 4096), _peak(name, opener, ws, 65536)
        assert large < 8000 and large < small * 2 + 2000, (ws, small, large)


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31"])
def test_whitespace_inside_a_calls_block_is_layout_until_text_or_past_the_bound(name):
    from callscale.parsers.base import MAX_LAYOUT_RUNS

    r = render.get(name)
    block = r.render([Call("get_weather", ARGS)])
    opener = "<｜tool▁calls▁begin｜>"
    assert block.startswith(opener)
    calls = [("get_weather", ARGS)]
    assert_parses(name, "Hi." + opener + " " * 300 + "\n" + block[len(opener):], "Hi.", calls)
    # whitespace of more runs than the bound is decided as content, by the same rule at every split
    many = " \n" * MAX_LAYOUT_RUNS
    assert_parses(name, "Hi." + opener + many + block[len(opener):], "Hi." + many, calls)
