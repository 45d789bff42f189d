"""The Step-3 parser (``step3``): rendered calls read back under every split, typed values, literal closing tags,
empty and broken calls, cut output (docs/formats.md, "Step-3")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.step3 import (CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, INVOKE_CLOSE, INVOKE_OPEN, KIND,
                                     PARAM_CLOSE, PARAM_OPEN, SEP, TAG_END)
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_parses, json_values, stream_outcome, whole_outcome

P = "step3"
R = render.get(P)
SPECIALS = R.special_tokens


def tool(name, **types):
    """A tool in OpenAI form whose parameters have the given JSON-schema types."""
    props = {k: {"type": t} for k, t in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def block(*calls):
    return CALLS_BEGIN + "\n" + "".join(calls) + CALLS_END


def call(name, *params, kind=KIND):
    return f"{CALL_BEGIN}{kind}{SEP}{INVOKE_OPEN}{name}{TAG_END}\n" + "".join(params) + f"{INVOKE_CLOSE}{CALL_END}\n"


def param(key, value):
    return f"{PARAM_OPEN}{key}{TAG_END}{value}{PARAM_CLOSE}\n"


def check_all(text, content, calls, tools=()):
    assert_parses(P, text, content, calls, tools=tools, chunkings=CHUNKINGS, special_tokens=SPECIALS)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == CALLS_BEGIN


def test_the_renderer_writes_the_engines_layout():
    # SGLang's step3_detector.py docstring: one call a line, parameters one a line
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3})], content="Hi.")
    assert text == ('Hi.<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">\n'
                    '<steptml:parameter name="city">Paris</steptml:parameter>\n'
                    '<steptml:parameter name="days">3</steptml:parameter>\n'
                    '</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>')


@pytest.mark.parametrize("calls,content", [
    ([Call("get_weather", {"city": "Paris", "days": 3})], "Hi."),
    ([Call("a", {"x": "1"}), Call("b", {}), Call("c", {"y": "z", "w": ""})], ""),
    ([Call("write_file", {"path": "a.py", "content": "if a < b:\n    print('<tag>')\n"})], "Writing.\n"),
])
def test_rendered_calls_read_back_under_every_split(calls, content):
    tools = [tool("get_weather", city="string", days="integer"), tool("a", x="string"),
             tool("c", y="string", w="string"), tool("write_file", path="string", content="string")]
    check_all(R.render(calls, content=content), content, [(c.name, dict(c.arguments)) for c in calls], tools)


def test_values_are_typed_by_the_schema():
    t = tool("f", n="integer", x="number", ok="boolean", items="array", opts="object", maybe=["string", "null"])
    text = block(call("f", param("n", "42"), param("x", "1.5"), param("ok", "true"), param("items", '[1, "two"]'),
                      param("opts", '{"k": null}'), param("maybe", "null")))
    check_all(text, "", [("f", {"n": 42, "x": 1.5, "ok": True, "items": [1, "two"], "opts": {"k": None},
                                "maybe": None})], [t])


def test_without_a_schema_a_value_is_its_text():
    check_all(block(call("f", param("n", "42"), param("s", " padded "))), "", [("f", {"n": "42", "s": " padded "})])


def test_a_value_that_does_not_convert_stays_the_text():
    check_all(block(call("f", param("n", "forty-two"))), "", [("f", {"n": "forty-two"})], [tool("f", n="integer")])


def test_literal_closing_tags_in_a_value_are_value_text():
    # an agent editing this very parser: </steptml:parameter> and </steptml:invoke> followed by other text
    value = f"a{PARAM_CLOSE} b\n{INVOKE_CLOSE} c{PARAM_CLOSE}\n{INVOKE_CLOSE}x"
    check_all("Hi." + block(call("f", param("code", value), param("n", "1"))), "Hi.", [("f", {"code": value, "n": "1"})])


def test_several_blocks_and_text_after_them():
    text = "One." + block(call("a")) + "\nTwo." + block(call("b", param("k", "v"))) + "\n Done."
    check_all(text, "One.\nTwo.\n Done.", [("a", {}), ("b", {"k": "v"})])


@pytest.mark.parametrize("env", [
    CALLS_BEGIN + CALLS_END,
    CALLS_BEGIN + CALL_BEGIN + CALL_END + CALLS_END,
    CALLS_BEGIN + "\n" + CALL_BEGIN + KIND + SEP + CALL_END + "\n" + CALLS_END,
    CALLS_BEGIN + CALL_BEGIN + KIND + SEP + INVOKE_OPEN + TAG_END + INVOKE_CLOSE + CALL_END + CALLS_END,
])
def test_an_empty_call_or_block_is_markup(env):
    check_all("Hi." + env + "Bye.", "Hi.Bye.", [])


def test_repeated_openers_are_markup_and_the_last_one_opens_the_block():
    check_all("Hi." + CALLS_BEGIN * 5 + "\n" + call("f") + CALLS_END, "Hi.", [("f", {})])


def test_a_call_of_another_kind_is_a_broken_call():
    # the engines read kind "function" only (vLLM and SGLang skip another): its text up to its end is dropped
    other = CALL_BEGIN + "python" + SEP + "print(1)"
    check_all("Hi." + CALLS_BEGIN + other + CALL_END + "\n" + call("f") + CALLS_END, "Hi.", [("f", {})])
    # with no end, it is content (prose after a broken call)
    got = whole_outcome(P, "Hi." + CALLS_BEGIN + other)
    assert (got.content, got.calls) == ("Hi." + other, [])


def test_a_head_ended_short_by_a_token_is_text():
    check_all("Hi." + CALLS_BEGIN + CALL_BEGIN + "x" + CALL_END + CALLS_END, "Hi." + CALL_BEGIN + "x" + CALL_END, [])


def test_text_in_a_block_outside_a_call_is_content_and_ends_the_block():
    check_all("Hi." + CALLS_BEGIN + "\nI changed my mind.", "Hi.\nI changed my mind.", [])


@pytest.mark.parametrize("bad", [
    "<steptml:oops/>\n",  # unexpected text inside the invoke
    f'{PARAM_OPEN}bad"key{TAG_END}v{PARAM_CLOSE}\n',  # a bad parameter name
])
def test_a_broken_calls_text_up_to_its_end_is_dropped_and_the_next_call_is_read(bad):
    broken = f"{CALL_BEGIN}{KIND}{SEP}{INVOKE_OPEN}f{TAG_END}\n{bad}{INVOKE_CLOSE}{CALL_END}\n"
    text = "Hi." + CALLS_BEGIN + "\n" + broken + call("g", param("k", "v")) + CALLS_END + "Bye."
    whole = whole_outcome(P, text)
    assert (whole.content, whole.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})])
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec, SPECIALS))
        assert (got.content, got.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})]), spec


def test_prose_after_a_broken_call_without_its_end_is_content():
    text = f"Hi.{CALLS_BEGIN}{CALL_BEGIN}{KIND}{SEP}{INVOKE_OPEN}f{TAG_END}\nwait, no. Let me explain."
    got = whole_outcome(P, text)
    assert (got.content, got.complete_calls()) == ("Hi.wait, no. Let me explain.", [])


def test_output_cut_inside_a_call_leaves_no_markup_and_abandons_the_call_until_its_end():
    text = R.render([Call("f", {"a": "x" * 50})], content="Hi.")
    inside = {i for t in SPECIALS for at in range(len(text)) if text.startswith(t, at) for i in range(at + 1, at + len(t))}
    for k in range(text.index(CALLS_BEGIN) + len(CALLS_BEGIN), len(text)):
        if k in inside:
            continue  # (a special token arrives whole)
        got = whole_outcome(P, text[:k])
        done = [("f", {"a": "x" * 50})] if CALL_END in text[:k] else []  # the call's end read: it is complete
        assert (got.content, got.complete_calls()) == ("Hi.", done), (k, text[:k][-20:])


def test_a_long_value_streams_before_the_call_ends():
    parser = parsers.get(P)()
    text = "Hi." + CALLS_BEGIN + "\n" + call("write_file", param("content", "x" * 1000))
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
    # every value declared by its JSON type: what the renderer writes, the schema types back
    types = {k: {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object",
                 type(None): "null"}[type(v)] for k, v in arguments.items()}
    tools = [tool("f", **types)]
    text = R.render([Call("f", arguments)], content="x")
    for got in (whole_outcome(P, text, tools), stream_outcome(P, chunk(text, spec, SPECIALS), tools)):
        assert got.content == "x" and got.complete_calls() == [("f", arguments)], (spec, text)
