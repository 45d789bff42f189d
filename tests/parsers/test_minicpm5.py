"""The MiniCPM5 parser (``minicpm5``): rendered calls read back under every split, CDATA values, Python-literal
values typed by the schema, the ``<tool_call>`` envelope, literal closing tags, heads that are text, broken and cut
calls (docs/formats.md, "MiniCPM5")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.minicpm5 import (CDATA_CLOSE, CDATA_OPEN, FUNCTION_CLOSE, FUNCTION_OPEN, PARAM_CLOSE,
                                        PARAM_OPEN, TAG_END, TOOL_CALL_CLOSE, TOOL_CALL_OPEN)
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import (CHUNKINGS, assert_parses, assert_typed_arguments_read_back, json_values, stream_outcome,
                     typed_tool as tool, whole_outcome)

P = "minicpm5"
R = render.get(P)


def call(name, *params):
    return f"{FUNCTION_OPEN}{name}{TAG_END}" + "".join(params) + FUNCTION_CLOSE


def param(key, value):
    return f"{PARAM_OPEN}{key}{TAG_END}{value}{PARAM_CLOSE}"


def check_all(text, content, calls, tools=()):
    assert_parses(P, text, content, calls, tools=tools, chunkings=CHUNKINGS)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == FUNCTION_OPEN


def test_the_renderer_writes_the_templates_layout():
    # chat_template.jinja: a newline before each call (the first after content only), CDATA for <, & or \n,
    # other values as Jinja prints them (Python's str)
    calls = [Call("get_weather", {"city": "Paris", "days": 3}), Call("w", {"text": "a < b", "ok": True, "o": None})]
    assert R.render(calls, content="Hi.") == (
        'Hi.\n<function name="get_weather"><param name="city">Paris</param><param name="days">3</param></function>\n'
        '<function name="w"><param name="text"><![CDATA[a < b]]></param><param name="ok">True</param>'
        '<param name="o">None</param></function>')
    assert R.render(calls[:1]).startswith(FUNCTION_OPEN)


@pytest.mark.parametrize("calls,content", [
    ([Call("get_weather", {"city": "Paris", "days": 3})], "Hi."),
    ([Call("a", {"x": "1"}), Call("b", {}), Call("c", {"y": "z", "w": ""})], ""),
    ([Call("write_file", {"path": "a.py", "content": "if a < b:\n    print('</param></function>')\n"})], "Writing."),
])
def test_rendered_calls_read_back_under_every_split(calls, content):
    tools = [tool("get_weather", city="string", days="integer"), tool("a", x="string"),
             tool("c", y="string", w="string"), tool("write_file", path="string", content="string")]
    check_all(R.render(calls, content=content), content, [(c.name, dict(c.arguments)) for c in calls], tools)


def test_python_literal_values_are_typed_by_the_schema():
    t = tool("f", n="integer", ok="boolean", items="array", opts="object", maybe=["string", "null"])
    text = call("f", param("n", "42"), param("ok", "True"), param("items", "['a</param>', 2]"),
                param("opts", "{'k': None}"), param("maybe", "None"))
    check_all(text, "", [("f", {"n": 42, "ok": True, "items": ["a</param>", 2], "opts": {"k": None},
                                "maybe": None})], [t])


def test_a_cdata_value_is_its_text_and_an_inner_close_is_text():
    value = f"x {CDATA_CLOSE} y\n{PARAM_CLOSE} z"
    check_all(call("f", param("v", CDATA_OPEN + value + CDATA_CLOSE)), "", [("f", {"v": value})])


def test_a_literal_closing_tag_not_followed_by_markup_is_value_text():
    value = f"a{PARAM_CLOSE} b {FUNCTION_CLOSE} c"
    check_all("Hi." + call("f", param("code", value), param("n", "1")), "Hi.", [("f", {"code": value, "n": "1"})])


def test_the_tool_call_envelope_is_markup():
    text = f"{TOOL_CALL_OPEN}\n{call('f', param('k', 'v'))}\n{call('g')}\n{TOOL_CALL_CLOSE} after"
    check_all(text, " after", [("f", {"k": "v"}), ("g", {})])


@pytest.mark.parametrize("env", [TOOL_CALL_OPEN + TOOL_CALL_CLOSE, TOOL_CALL_OPEN + "\n \n" + TOOL_CALL_CLOSE])
def test_an_empty_envelope_is_markup(env):
    check_all("Hi." + env + "Bye.", "Hi.Bye.", [])


@pytest.mark.parametrize("text", [
    'Use <function name="a b"> in prose.',  # a bad name
    "<tool_call> is how Qwen writes it.",  # an envelope that holds no call
    '<function name="<function name="<function name="',  # repeated openers
    "<function name='single'>",  # single quotes: not the template's
])
def test_a_head_that_is_no_call_is_content(text):
    whole = whole_outcome(P, text)
    assert whole.calls == [] and (whole.content == text or text.endswith('name="'))


@pytest.mark.parametrize("before, content", [
    ('<function name="<function name="', '<function name="<function name="'),  # each but the last opener: text
    ('Hi.\n<function name="\n<function name="', 'Hi.\n<function name="\n<function name="'),
    ('<function name="ab<function name="', '<function name="ab<function name="'),  # a "<" after some name
    ('<function name="">', '<function name="">'),  # no name
    ('<function name="g"></function>\n<function name="', '\n<function name="'),  # after a call: layout, then text
])
def test_an_opener_again_in_a_calls_head_is_text_and_the_last_opens_the_call(before, content):
    calls = [("g", {})] if "</function>" in before else []
    check_all(before + call("f", param("k", "v")), content, calls + [("f", {"k": "v"})])


def test_prose_after_a_broken_call_without_its_end_is_content():
    got = whole_outcome(P, f'Hi.\n{FUNCTION_OPEN}f{TAG_END}wait, no. Let me explain.')
    assert (got.content, got.complete_calls()) == ("Hi.wait, no. Let me explain.", [])


def test_a_broken_calls_text_up_to_its_end_is_dropped_and_the_next_call_is_read():
    text = "Hi." + call("f", "junk", param("k", "v")) + "\n" + call("g", param("k", "v")) + "Bye."
    whole = whole_outcome(P, text)
    assert (whole.content, whole.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})])
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec))
        assert (got.content, got.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})]), spec


def test_output_cut_inside_a_call_abandons_it_until_its_end():
    text = R.render([Call("f", {"a": "x" * 50})], content="Hi.")
    for k in range(text.index(FUNCTION_OPEN) + len(FUNCTION_OPEN), len(text)):
        got = whole_outcome(P, text[:k])
        done = [("f", {"a": "x" * 50})] if text[:k].endswith(FUNCTION_CLOSE) else []
        assert got.complete_calls() == done and got.content.rstrip() == "Hi.", (k, text[:k][-20:], got.content)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text("abk_", min_size=1, max_size=4),
                       json_values(st.text("ab zé\n\t\"'\\{}[]<>|/:,.=0&", max_size=8)), max_size=3),
       st.sampled_from(CHUNKINGS))
def test_generated_arguments_read_back(arguments, spec):
    assert_typed_arguments_read_back(P, arguments, spec)
