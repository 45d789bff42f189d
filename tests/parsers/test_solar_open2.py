"""The Solar Open 2 parser (``solar_open2``): rendered calls read back under every split, typed values, missing end
tokens, repeated keys, empty and broken calls, cut output (docs/formats.md, "Solar Open 2")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.solar_open2 import ARG_END, ARG_START, ARG_VALUE, CALL_END, CALL_START
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import (CHUNKINGS, assert_parses, assert_typed_arguments_read_back, json_values, stream_outcome,
                     typed_tool as tool, whole_outcome)

P = "solar_open2"
R = render.get(P)
SPECIALS = R.special_tokens


def call(name, *args, end=CALL_END):
    return f"{CALL_START}{name}\n" + "".join(args) + end


def arg(key, value, end=ARG_END + "\n"):
    return f"{ARG_START}{key}{ARG_VALUE}{value}{end}"


def check_all(text, content, calls, tools=()):
    assert_parses(P, text, content, calls, tools=tools, chunkings=CHUNKINGS, special_tokens=SPECIALS)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == CALL_START


def test_the_renderer_writes_the_engines_layout():
    # vLLM's tests/tool_parsers/test_solar_open2_tool_parser.py: one argument a line, calls joined by a newline
    text = R.render([Call("get_weather", {"city": "Seoul"}), Call("get_time", {})], content="I'll check.")
    assert text == ("I'll check.<|tool_call:start|>get_weather\n"
                    "<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>\n"
                    "<|tool_call:start|>get_time\n<|tool_call:end|>")


@pytest.mark.parametrize("calls,content", [
    ([Call("get_weather", {"city": "Paris", "days": 3})], "Hi."),
    ([Call("a", {"x": "1"}), Call("b", {}), Call("c", {"y": "z", "w": ""})], ""),
    ([Call("write_file", {"path": "a.py", "content": "if a < b:\n    print('<|tool_call:')\n"})], "Writing.\n"),
])
def test_rendered_calls_read_back_under_every_split(calls, content):
    tools = [tool("get_weather", city="string", days="integer"), tool("a", x="string"),
             tool("c", y="string", w="string"), tool("write_file", path="string", content="string")]
    check_all(R.render(calls, content=content), content, [(c.name, dict(c.arguments)) for c in calls], tools)


def test_values_are_typed_by_the_schema():
    t = tool("f", n="integer", x="number", ok="boolean", items="array", opts="object", maybe=["string", "null"])
    text = call("f", arg("n", "42"), arg("x", "1.5"), arg("ok", "True"), arg("items", '[1, "two"]'),
                arg("opts", '{"k": null}'), arg("maybe", "null"))
    check_all(text, "", [("f", {"n": 42, "x": 1.5, "ok": True, "items": [1, "two"], "opts": {"k": None},
                                "maybe": None})], [t])


def test_without_a_schema_a_value_is_its_text():
    check_all(call("f", arg("n", "42"), arg("s", " padded ")), "", [("f", {"n": "42", "s": " padded "})])


def test_text_after_a_call_is_content():
    # vLLM keeps only the text before the first call; the model's text is never dropped here
    check_all("pre" + call("f", arg("k", "v")) + "post", "prepost", [("f", {"k": "v"})])


def test_a_missing_arg_end_or_call_end_is_shown_by_the_next_token():
    text = (call("search", arg("query", "vLLM", end=""), arg("limit", "5"), end="")
            + "\n" + call("get_weather", arg("city", "Seoul")))
    check_all(text, "", [("search", {"query": "vLLM", "limit": 5}), ("get_weather", {"city": "Seoul"})],
              [tool("search", query="string", limit="integer"), tool("get_weather", city="string")])


def test_a_repeated_key_keeps_its_first_value():
    check_all(call("search", arg("query", "first"), arg("query", "second"), arg("n", "1")), "",
              [("search", {"query": "first", "n": "1"})])


def test_a_name_ended_by_a_token_is_the_calls():
    check_all(CALL_START + "f" + ARG_START + "k" + ARG_VALUE + "v" + ARG_END + CALL_END + CALL_START + "g" + CALL_END,
              "", [("f", {"k": "v"}), ("g", {})])


@pytest.mark.parametrize("env", [CALL_START + CALL_END, CALL_START + "\n" + CALL_END, CALL_START + "  " + CALL_END])
def test_an_empty_call_is_markup(env):
    check_all("Hi." + env + "Bye.", "Hi.Bye.", [])


def test_repeated_openers_are_markup_and_the_last_one_opens_the_call():
    check_all("Hi." + CALL_START * 5 + "f\n" + CALL_END, "Hi.", [("f", {})])


@pytest.mark.parametrize("bad", [
    "oops\n",  # text between arguments
    f"{ARG_START}bad key\n{ARG_VALUE}v{ARG_END}",  # a key over two lines
    f"{ARG_START}k{ARG_END}",  # a key ended by another token
])
def test_a_broken_calls_text_up_to_its_end_is_dropped_and_the_next_call_is_read(bad):
    text = "Hi." + call("f", bad) + "\n" + call("g", arg("k", "v")) + "Bye."
    whole = whole_outcome(P, text)
    assert (whole.content, whole.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})])
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec, SPECIALS))
        assert (got.content, got.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})]), spec


def test_prose_after_a_broken_call_without_its_end_is_content():
    got = whole_outcome(P, f"Hi.{CALL_START}f\nwait, no. Let me explain.")
    assert (got.content, got.complete_calls()) == ("Hi.wait, no. Let me explain.", [])


def test_output_cut_inside_a_call_leaves_no_markup_and_abandons_the_call_until_its_end():
    text = R.render([Call("f", {"a": "x" * 50})], content="Hi.")
    inside = {i for t in SPECIALS for at in range(len(text)) if text.startswith(t, at) for i in range(at + 1, at + len(t))}
    for k in range(text.index(CALL_START) + len(CALL_START), len(text)):
        if k in inside:
            continue  # (a special token arrives whole)
        got = whole_outcome(P, text[:k])
        done = [("f", {"a": "x" * 50})] if CALL_END in text[:k] else []
        assert (got.content, got.complete_calls()) == ("Hi.", done), (k, text[:k][-20:])


def test_a_long_value_streams_before_the_call_ends():
    parser = parsers.get(P)()
    text = "Hi." + call("write_file", arg("content", "x" * 1000))
    sent = []
    for i in range(0, text.index("x" * 1000) + 600, 7):
        result = parser.parse_streaming_increment(text[i:i + 7], [tool("write_file", content="string")])
        sent += [c.parameters for c in result.calls]
    assert len("".join(sent)) > 500


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text("abk_", min_size=1, max_size=4),
                       json_values(st.text("ab zé\n\t\"'\\{}[]<>|/:,.=0", max_size=8)), max_size=3),
       st.sampled_from(CHUNKINGS))
def test_generated_arguments_read_back(arguments, spec):
    assert_typed_arguments_read_back(P, arguments, spec)
