"""The Cohere Command parser (``cohere_command``): rendered calls read back under every split, the plan as
reasoning, response tokens as markup, empty and broken blocks, cut output, SMG's and SGLang's examples
(docs/formats.md, "Cohere Command")."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.cohere import (END_ACTION, END_RESPONSE, END_TEXT, END_THINKING, START_ACTION,
                                      START_RESPONSE, START_TEXT, START_THINKING)
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_parses, json_values, stream_outcome, whole_outcome

P = "cohere_command"
R = render.get(P)
SPECIALS = R.special_tokens


def obj(i, name, args):
    return json.dumps({"tool_call_id": str(i), "tool_name": name, "parameters": args}, ensure_ascii=False)


def action(*objects, layout="\n    "):
    return START_ACTION + "[" + ",".join(layout + o for o in objects) + "\n]" + END_ACTION


def check_all(text, content, calls, reasoning=""):
    assert_parses(P, text, content, calls, chunkings=CHUNKINGS, special_tokens=SPECIALS, reasoning=reasoning)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == START_ACTION


def test_the_renderer_writes_the_templates_layout():
    # the Command R7B / Command A templates: "[" then each object on its own line, 4 spaces in, "\n]"
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3}), Call("ping", {})], content="Hi.")
    assert text == ('<|START_RESPONSE|>Hi.<|END_RESPONSE|><|START_ACTION|>[\n'
                    '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris", "days": 3}},\n'
                    '    {"tool_call_id": "1", "tool_name": "ping", "parameters": {}}\n'
                    ']<|END_ACTION|>')
    assert R.render([], content="Hello") == "Hello"  # (the workloads' plain prose)


@pytest.mark.parametrize("calls,content", [
    ([Call("get_weather", {"city": "Paris", "days": 3})], "Hi."),
    ([Call("a", {"x": "1"}), Call("b", {}), Call("c", {"y": [1, {"z": None}], "w": ""})], ""),
    ([Call("write_file", {"path": "a.py", "content": 'if a < b:\n    print("<|END_ACTION|>")\n'})], "Writing.\n"),
])
def test_rendered_calls_read_back_under_every_split(calls, content):
    check_all(R.render(calls, content=content), content, [(c.name, dict(c.arguments)) for c in calls])


def test_the_plan_is_reasoning_and_response_tokens_are_markup():
    # R7B's template: a tool-calling turn is the plan, then the action
    text = START_THINKING + "I will look up the weather." + END_THINKING + action(obj(0, "get_weather", {"city": "Paris"}))
    check_all(text, "", [("get_weather", {"city": "Paris"})], reasoning="I will look up the weather.")
    text = START_RESPONSE + "Hello, " + END_RESPONSE + START_TEXT + "world" + END_TEXT
    check_all(text, "Hello, world", [])


def test_smg_and_sglang_examples():
    # SMG cohere.rs tests: one object (no list) with whitespace around it; "name"/"arguments" as fallbacks;
    # an object with no parameters is a call with {}; nested JSON
    check_all(f'{START_RESPONSE}Let me search for that.{END_RESPONSE}\n{START_ACTION}\n'
              '{"tool_name": "search_web", "parameters": {"query": "latest news", "max_results": 5}}\n' + END_ACTION,
              "Let me search for that.\n", [("search_web", {"query": "latest news", "max_results": 5})])
    check_all(START_ACTION + '{"tool_name": "ping"}' + END_ACTION, "", [("ping", {})])
    check_all(START_ACTION + '[{"name": "f", "arguments": {"a": 1}}]' + END_ACTION, "", [("f", {"a": 1})])
    check_all(START_ACTION + '\n{"tool_name": "process", "parameters": {"config": {"nested": {"value": [1, 2, 3]}}}}\n'
              + END_ACTION, "", [("process", {"config": {"nested": {"value": [1, 2, 3]}}})])
    # SGLang's test: the call id of another spelling is dropped, not part of the arguments
    check_all(action(obj("call-0", "search", {"query": "sglang"})), "", [("search", {"query": "sglang"})])


@pytest.mark.parametrize("env", [
    START_ACTION + END_ACTION, START_ACTION + "[]" + END_ACTION, START_ACTION + "[\n]" + END_ACTION,
    START_ACTION + " [ ] " + END_ACTION,
])
def test_an_empty_block_is_markup(env):
    check_all("Hi." + env + "Bye.", "Hi.Bye.", [])


def test_a_malformed_call_is_dropped_and_the_next_one_read():
    # SMG's example: {"tool_name": invalid} gives no call; the list reads on at the next object
    # (the broken call started streaming: it is abandoned, never complete)
    text = "Hi." + START_ACTION + '[{"tool_name": "bad", "parameters": {"a": invalid}}, ' + obj(1, "g", {"k": "v"})
    text += "]" + END_ACTION + "Bye."
    for got in [whole_outcome(P, text)] + [stream_outcome(P, chunk(text, spec, SPECIALS)) for spec in CHUNKINGS]:
        assert (got.content, got.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})])


def test_an_action_token_followed_by_prose_is_markup_and_the_prose_content():
    check_all("Hi." + START_ACTION + " I changed my mind.", "Hi. I changed my mind.", [])
    check_all("Hi." + START_ACTION + "[not json] ok", "Hi.[not json] ok", [])


def test_several_blocks_and_text_after_them():
    text = "One." + action(obj(0, "a", {})) + "Two." + action(obj(1, "b", {"k": "v"})) + " Done."
    check_all(text, "One.Two. Done.", [("a", {}), ("b", {"k": "v"})])


def test_a_list_whose_end_token_is_missing_ends_at_end_action():
    check_all("Hi." + START_ACTION + "[" + obj(0, "a", {}) + END_ACTION + "Bye.", "Hi.Bye.", [("a", {})])


def test_prose_after_a_broken_call_without_its_end_is_content():
    text = "Hi." + START_ACTION + '[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1,' + " wait, no."
    got = whole_outcome(P, text)  # (the blank before the prose is JSON whitespace: the broken call's)
    assert (got.content, got.complete_calls()) == ("Hi.wait, no.", [])


def test_output_cut_inside_a_call_leaves_no_markup():
    text = R.render([Call("f", {"a": "x" * 50})], content="Hi.")
    inside = {i for t in SPECIALS for at in range(len(text)) if text.startswith(t, at) for i in range(at + 1, at + len(t))}
    for k in range(text.index(START_ACTION) + len(START_ACTION), len(text)):
        if k in inside:
            continue  # (a special token arrives whole)
        got = whole_outcome(P, text[:k])
        done = [("f", {"a": "x" * 50})] if "}}" in text[:k] else []  # the object closed: its call is complete
        assert (got.content, got.complete_calls()) == ("Hi.", done), (k, text[:k][-20:])


def test_a_long_value_streams_before_the_call_ends():
    parser = parsers.get(P)()
    text = START_ACTION + "[\n    " + obj(0, "write_file", {"content": "x" * 1000})
    sent = []
    for i in range(0, text.index("x" * 1000) + 600, 7):
        sent += [c.parameters for c in parser.parse_streaming_increment(text[i:i + 7], ()).calls]
    assert len("".join(sent)) > 500


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text("abk_", min_size=1, max_size=4),
                       json_values(st.text("ab zé\n\t\"'\\{}[]<>|/:,.=0", max_size=8)), max_size=3),
       st.sampled_from(CHUNKINGS))
def test_generated_arguments_read_back(arguments, spec):
    text = R.render([Call("f", arguments), Call("g", {})], content="x")
    for got in (whole_outcome(P, text), stream_outcome(P, chunk(text, spec, SPECIALS))):
        assert got.content == "x" and got.complete_calls() == [("f", arguments), ("g", {})], (spec, text)
