"""Kimi K2 parser (``kimi_k2``) and its renderer."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.kimi import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    SECTION_BEGIN,
    SECTION_BEGIN_SINGULAR,
    SECTION_END,
    SECTION_END_SINGULAR,
    SPECIAL_TOKENS,
    call_name,
)
from support import (CHUNKINGS, assert_arguments_stream, assert_parses, assert_round_trip, json_values, load_cases,
                     split_at, stream_outcome, whole_outcome)
from callscale.workloads import render
from callscale.workloads.render import Call
from callscale.workloads.chunking import chunk

K2 = "kimi_k2"
CHUNKS = CHUNKINGS + ["tokens:1", "tokens:3"]


def one(call_id, args):
    """One call: ``args`` is the raw arguments text."""
    return f"{CALL_BEGIN}{call_id}{ARGUMENT_BEGIN}{args}{CALL_END}"


def section(*calls, begin=SECTION_BEGIN, end=SECTION_END):
    return begin + "".join(calls) + end


def parses(text, content, calls, **kw):
    kw.setdefault("chunkings", CHUNKS)
    assert_parses(K2, text, content, calls, special_tokens=SPECIAL_TOKENS, **kw)


# ----------------------------------------------------------------- the shared fault cases

CASES = load_cases(K2)


def test_the_fault_cases_are_there():
    assert {c["id"] for c in CASES} >= {"kimi-k2-call-end-and-next-begin-one-delta", "kimi-k2-missing-section-end"}


# ----------------------------------------------------------------- well-formed output

def test_one_call_with_content_before_and_after():
    text = "I'll check. " + section(one("functions.get_weather:0", '{"city": "Beijing"}')) + " Done."
    parses(text, "I'll check.  Done.", [("get_weather", {"city": "Beijing"})])


def test_several_calls_and_nested_arguments():
    args = {"q": 'café "best"\n\\', "n": [1, 2.5, None, True], "o": {"a": {"b": []}}, "u": "東京😀"}
    text = section(one("functions.search:0", json.dumps(args, ensure_ascii=False)),
                   one("functions.search:1", json.dumps(args)),
                   one("functions.get_time:2", "{}"))
    parses(text, "", [("search", args), ("search", args), ("get_time", {})])


@pytest.mark.parametrize("call_id, name", [
    ("functions.get_weather:0", "get_weather"),
    ("get_weather:12", "get_weather"),
    ("functions.get_weather", "get_weather"),
    (" functions.mcp.fs.read:3\n", "mcp.fs.read"),
    ("functions.ns:tool:1", "ns:tool"),
    ("functions.ns:tool", "ns:tool"),
    ("functions.:0", ""),
    ("", ""),
])
def test_call_name(call_id, name):
    assert call_name(call_id) == name


def test_ids_without_the_functions_prefix():
    text = section(one("ping:0", "{}"), one(" functions.mcp.fs.read:1 ", '{"p": 1}'))
    parses(text, "", [("ping", {}), ("mcp.fs.read", {"p": 1})])


def test_singular_section_tokens():
    text = "a" + section(one("functions.ping:0", "{}"), begin=SECTION_BEGIN_SINGULAR, end=SECTION_END_SINGULAR) + "b"
    parses(text, "ab", [("ping", {})])


def test_text_in_a_section_outside_calls_is_not_content():
    # the one exception to DESIGN.md's content rule: it is not the model's answer
    text = (SECTION_BEGIN + "\n " + one("functions.a:0", "{}") + "\n" + one("functions.b:1", " {\"x\": 1} \n")
            + " note \n" + one("functions.c:2", "{}") + "\n" + SECTION_END + " after")
    parses(text, " after", [("a", {}), ("b", {"x": 1}), ("c", {})], strip_content=False)


def test_empty_arguments_give_an_empty_object():
    parses(section(one("functions.now:0", ""), one("functions.today:1", "  ")), "", [("now", {}), ("today", {})])


def test_a_missing_call_end_before_the_next_call_or_the_end():
    text = (SECTION_BEGIN + CALL_BEGIN + "functions.a:0" + ARGUMENT_BEGIN + '{"x": 1}'
            + CALL_BEGIN + "functions.b:1" + ARGUMENT_BEGIN + '{"y": 2}' + SECTION_END + "after"
            + SECTION_BEGIN + CALL_BEGIN + "functions.c:2" + ARGUMENT_BEGIN + '{"z": 3}')
    parses(text, "after", [("a", {"x": 1}), ("b", {"y": 2}), ("c", {"z": 3})])


# ----------------------------------------------------------------- special tokens inside JSON strings

def test_tokens_inside_a_json_string_are_text():
    value = (f"if s.endswith('{CALL_END}'):\n    x = \"{SECTION_END}\" + '{CALL_BEGIN}{ARGUMENT_BEGIN}'\n"
             f"{CALL_END}{SECTION_BEGIN}\\\\{CALL_END}\\\"{CALL_END}")
    args = {"path": "kimi.py", "content": value}
    text = "Editing." + section(one("functions.write_file:0", json.dumps(args, ensure_ascii=False)),
                                one("functions.ping:1", "{}"))
    parses(text, "Editing.", [("write_file", args), ("ping", {})])


def test_a_string_never_closed_stops_at_a_call_end_before_the_next_call():
    text = section(one("functions.a:0", '{"x": "oops}'), one("functions.b:1", '{"y": 2}')) + "tail"
    got = stream_outcome(K2, list(text))
    assert (got.content, got.complete_calls()) == ("tail", [("b", {"y": 2})])
    assert [c.name for c in got.calls] == ["a", "b"]
    whole = whole_outcome(K2, text)
    assert (whole.content, whole.complete_calls()) == ("tail", [("b", {"y": 2})])


# ----------------------------------------------------------------- malformed and degenerate output

@pytest.mark.parametrize("bad", ['{"x": 1,}', "not json", '["a"]', '{"x": 1} extra', '"s"', "{"])
def test_arguments_that_are_not_one_json_object_abandon_the_call(bad):
    text = "Hi" + section(one("functions.a:0", bad), one("functions.b:1", '{"y": 2}')) + "!"
    for deltas in ([text], list(text), [text[i:i + 5] for i in range(0, len(text), 5)]):
        got = stream_outcome(K2, deltas)
        assert (got.content, got.complete_calls()) == ("Hi!", [("b", {"y": 2})])
        assert [c.name for c in got.calls] == ["a", "b"]
    whole = whole_outcome(K2, text)
    assert (whole.content, [c.name for c in whole.calls]) == ("Hi!", ["b"])


def test_nan_is_not_json():
    # Python's json reads NaN, so a client may too; the call is still abandoned (left out of the whole parse)
    text = section(one("functions.a:0", '{"x": NaN}'), one("functions.b:1", '{"y": Infinity} '), one("functions.c:2", "{}"))
    whole = whole_outcome(K2, text)
    assert [(c.name, c.arguments_text) for c in whole.calls] == [("c", "{}")]
    # Found by fuzzing: streaming sent '{"x": NaN}' whole, which a client's
    # json.loads takes for a complete call. The strict validator stops the
    # stream at the N, so the abandoned calls' streamed text is no object.
    for spec in CHUNKS:
        got = stream_outcome(K2, chunk(text, spec, SPECIAL_TOKENS))
        assert [(c.name, c.arguments_text) for c in got.calls] == [
            ("a", '{"x": '), ("b", '{"y": '), ("c", "{}")], spec
        assert got.complete_calls() == [("c", {})], spec
        assert not check.compare(got, whole), spec


def test_stray_tokens_make_no_call_and_section_text_is_dropped():
    text = (SECTION_BEGIN + CALL_END + ARGUMENT_BEGIN + "x" + CALL_BEGIN + "functions.a:0" + CALL_END
            + CALL_BEGIN + ARGUMENT_BEGIN + '{"q": 1}' + CALL_END + one("functions.b:1", "{}") + SECTION_END + "y")
    parses(text, "y", [("b", {})])


def test_repeated_opener_gives_nothing():
    parses("Thinking." + SECTION_BEGIN * 40, "Thinking.", [])
    parses(SECTION_BEGIN * 5 + one("functions.a:0", "{}") + SECTION_BEGIN_SINGULAR * 3 + SECTION_END + "x",
           "x", [("a", {})])


def test_long_content_without_calls():
    text = "plain <|text|> <|tool_calls and more\n" * 300
    parses(text, text, [], chunkings=["whole", "fixed:7", "random:3:8"])


def test_an_unclosed_call_is_abandoned():
    text = "Hi." + section(one("functions.a:0", '{"x": 1}')).removesuffix(SECTION_END) + \
        CALL_BEGIN + "functions.b:1" + ARGUMENT_BEGIN + '{"content": "long'
    got = stream_outcome(K2, [text[i:i + 4] for i in range(0, len(text), 4)])
    assert (got.content, got.complete_calls()) == ("Hi.", [("a", {"x": 1})])
    assert [c.name for c in got.calls] == ["a", "b"]
    whole = whole_outcome(K2, text)
    assert (whole.content, [c.name for c in whole.calls]) == ("Hi.", ["a"])


SAMPLE_CALLS = [("read_file", {"path": "a.txt", "range": [1, 20]}), ("search", {"q": f"x{CALL_END}y", "n": 3})]
SAMPLE = "Let me look." + render.get(K2).render([Call(n, a) for n, a in SAMPLE_CALLS])


def test_truncated_output_never_raises_nor_invents_a_call():
    parses(SAMPLE, "Let me look.", SAMPLE_CALLS)
    for cut in range(len(SAMPLE) + 1):
        text = SAMPLE[:cut]
        for got in (stream_outcome(K2, [text[i:i + 3] for i in range(0, len(text), 3)]),
                    whole_outcome(K2, text)):
            assert got.content.startswith("Let me look."[:cut]), (cut, got.content)
            done = got.complete_calls()
            assert done == SAMPLE_CALLS[:len(done)], (cut, done)


def test_odd_output_never_raises():
    odd = list(SPECIAL_TOKENS) + ["functions.f:0", "{", "}", '"', "\\", " ", "x", ":", "<|", "|>"]
    rng = random.Random(11)
    for _ in range(300):
        text = "".join(rng.choice(odd) for _ in range(rng.randint(1, 30)))
        stream_outcome(K2, list(text))
        stream_outcome(K2, [text])
        whole_outcome(K2, text)


# ----------------------------------------------------------------- streaming

def test_arguments_stream_as_they_arrive():
    assert_arguments_stream(K2)


def test_finish_twice():
    p = parsers.get(K2)()
    assert p.parse_streaming_increment("a<|tool_calls", []).normal_text == "a"
    assert p.finish().normal_text == "<|tool_calls"
    assert p.finish().normal_text == ""


def test_registered_and_rendered():
    assert K2 in parsers.names()
    r = render.get(K2)
    assert r.render([Call("a", {"x": "é"}), Call("b")], "Hi") == (
        'Hi<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": "é"}'
        "<|tool_call_end|><|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_calls_section_end|>")
    assert r.render([], "Hi") == "Hi"
    assert r.opener == SECTION_BEGIN and set(r.special_tokens) == set(SPECIAL_TOKENS)


# ----------------------------------------------------------------- property: render, split anywhere, parse

_text = st.lists(st.one_of(st.text(alphabet=st.sampled_from(list("ab zé東\n\t\"'\\{}[]<>|:,.0") + ["😀"]), max_size=8),
                           st.sampled_from(SPECIAL_TOKENS)), max_size=5).map("".join)
_json = json_values(_text)
_calls = st.lists(st.builds(Call, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True),
                            st.dictionaries(_text, _json, max_size=4)), max_size=3)
_content = st.lists(st.sampled_from(list("ab \n<>|_é\"") + ["<|tool_call_end|>", "<|tool_calls", "<|"]),
                    max_size=20).map("".join).filter(lambda s: SECTION_BEGIN not in s and SECTION_BEGIN_SINGULAR not in s)


_AMBIGUOUS = re.compile(re.escape(CALL_END) + r"\s*(" + "|".join(
    re.escape(t) for t in (CALL_BEGIN, SECTION_END, SECTION_END_SINGULAR)) + ")")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls, content=_content, tail=_content, data=st.data())
def test_rendered_calls_parse_back_under_any_split(calls, content, tail, data):
    for call in calls:  # a call end before another call or the section end is a real end, even in a string
        assume(not _AMBIGUOUS.search(json.dumps(dict(call.arguments), ensure_ascii=False)))
    size = len(render.get(K2).render(calls, content) + (tail if calls else ""))
    assert_round_trip(K2, calls, content, tail, data.draw(st.lists(st.integers(1, max(1, size - 1)), max_size=12)))


# ----------------------------------------------------------------- what models really write
WEATHER_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
                 {"type": "function", "function": {"name": "mcp.files/read", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize("call_id, name", [
    ("functions_get_weather_1", "get_weather"), ("functions.get_weather_0", "get_weather"),
    ("get_weather_12", "get_weather"), ("functions_mcp_files_read_0", "mcp.files/read"),
    ("functions.get_weather:0", "get_weather"),
    ("functions_get_time_1", "functions_get_time_1"),  # matches no tool: the id's own name
])
def test_a_sanitised_call_id_names_its_tool(call_id, name):
    text = section(one(call_id, '{"city": "Oslo"}'))
    assert_parses(K2, text, "", [(name, {"city": "Oslo"})], tools=WEATHER_TOOLS, special_tokens=SPECIAL_TOKENS)


def test_without_tools_a_sanitised_id_keeps_its_own_name():
    parses(section(one("functions_get_weather_1", "{}")), "", [("functions_get_weather_1", {})])


@pytest.mark.parametrize("args_text, expected", [
    ('"{\\"items\\": [1, 2]}"', {"items": [1, 2]}),
    (' "{}" ', {}),
])
def test_arguments_written_as_a_json_string_holding_an_object_are_that_object(args_text, expected):
    parses(section(one("functions.f:0", args_text)), "", [("f", expected)])


@pytest.mark.parametrize("args_text", ['"[1, 2]"', '"not json"', '"{\\"a\\": NaN}"', '"{\\"a\\": 1}" x', "3"])
def test_a_json_string_not_holding_an_object_abandons_the_call_and_streams_nothing(args_text):
    text = section(one("functions.f:0", args_text), one("functions.g:1", "{}"))
    for spec in CHUNKS:
        got = stream_outcome(K2, chunk(text, spec, SPECIAL_TOKENS))
        assert got.complete_calls() == [("g", {})], spec
        assert got.calls[0].arguments_text.strip() == "", (spec, got.calls[0])
    assert whole_outcome(K2, text).complete_calls() == [("g", {})]


def test_prose_after_a_broken_call_is_content_text_up_to_its_end_token_is_not():
    broken = SECTION_BEGIN + CALL_BEGIN + "functions.f:0" + ARGUMENT_BEGIN + '{"a": 1}\n'
    for text, content, calls in ((broken + "I will wait.", "I will wait.", []),
                                 (broken + "oops" + CALL_END + one("functions.g:1", "{}") + SECTION_END, "",
                                  [("g", {})])):
        assert (whole_outcome(K2, text).content, whole_outcome(K2, text).complete_calls()) == (content, calls)
        for spec in CHUNKS:
            got = stream_outcome(K2, chunk(text, spec, SPECIAL_TOKENS))
            assert (got.content, got.complete_calls()) == (content, calls), spec
            assert got.calls[0].arguments_text == '{"a": 1', spec  # never the complete object
