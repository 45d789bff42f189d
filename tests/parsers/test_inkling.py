"""The Inkling parser (``inkling``): rendered calls read back under every split, the message header, the object's
key order, thinking blocks, empty and broken blocks, cut output (docs/formats.md, "Inkling")."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.inkling import (CONTENT_TEXT, CONTENT_THINKING, END_MESSAGE, END_SAMPLING, INVOKE_TOOL_JSON,
                                       INVOKE_TOOL_TEXT, MESSAGE_MODEL, TOOL_ERROR)
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_parses, json_values, stream_outcome, whole_outcome

P = "inkling"
R = render.get(P)
SPECIALS = R.special_tokens


def check_all(text, content, calls, tools=(), reasoning=""):
    assert_parses(P, text, content, calls, tools=tools, chunkings=CHUNKINGS, special_tokens=SPECIALS,
                  reasoning=reasoning)


def obj(name, args, args_first=False):
    """A call object, compact as the engines spell it; ``args_first``: keys sorted, as the template ports write it."""
    pairs = [("args", args), ("name", name)] if args_first else [("name", name), ("args", args)]
    return json.dumps(dict(pairs), separators=(",", ":"), ensure_ascii=False)


def message(name, body, header=True):
    return (MESSAGE_MODEL + name if header else "") + INVOKE_TOOL_JSON + body + END_MESSAGE


def text_block(text):
    return CONTENT_TEXT + text + END_MESSAGE


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == INVOKE_TOOL_JSON and parsers.get(P).writes_reasoning


def test_the_renderer_writes_the_engines_layout():
    # the generation prompt ends in <|message_model|>: the output opens in a header (vLLM's initial state)
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3}), Call("ping", {})], content="Hi.")
    assert text == ('<|content_text|>Hi.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>'
                    '{"name":"get_weather","args":{"city":"Paris","days":3}}<|end_message|>'
                    '<|message_model|>ping<|content_invoke_tool_json|>{"name":"ping","args":{}}<|end_message|>'
                    '<|content_model_end_sampling|>')
    assert R.render([Call("f", {})]).startswith("f" + INVOKE_TOOL_JSON)


@pytest.mark.parametrize("calls,content", [
    ([Call("get_weather", {"city": "Paris", "days": 3})], "Hi."),
    ([Call("a", {"x": "1"}), Call("b", {}), Call("c", {"y": [1, {"z": None}], "w": ""})], ""),
    ([Call("write_file", {"path": "a.py", "content": 'if a < b:\n    print("<|end_message|>")\n'})], "Writing.\n"),
    ([Call("mcp:server/tool-name.v2", {"q": "é 中文 🎉"})], "Ok."),
])
def test_rendered_calls_read_back_under_every_split(calls, content):
    check_all(R.render(calls, content=content), content, [(c.name, dict(c.arguments)) for c in calls])


def test_args_before_name_stream_under_the_headers_name():
    # the template ports write the object's keys sorted: "args" first; the header names the call, so the
    # arguments stream as they arrive (SGLang: the header and the object's name must agree)
    big = "x" * 3000
    text = text_block("Hi.") + message("write_file", obj("write_file", {"content": big}, args_first=True))
    check_all(text, "Hi.", [("write_file", {"content": big})])
    parser = parsers.get(P)()
    sent = []
    for i in range(0, text.index(big) + 1500, 7):
        sent += [c.parameters for c in parser.parse_streaming_increment(text[i:i + 7], ()).calls]
    assert len("".join(sent)) > 1000


def test_without_a_header_the_object_names_the_call():
    check_all(text_block("Hi.") + INVOKE_TOOL_JSON + obj("f", {"k": "v"}, args_first=True) + END_MESSAGE, "Hi.",
              [("f", {"k": "v"})])
    check_all(INVOKE_TOOL_JSON + obj("f", {"k": "v"}) + END_MESSAGE, "", [("f", {"k": "v"})])


def test_a_header_and_an_object_that_disagree_are_a_broken_call():
    # SGLang rejects the call (InklingDetector: "header does not match payload name"); its text is dropped
    text = text_block("Hi.") + message("f", obj("g", {"k": "v"})) + MESSAGE_MODEL + "h" + INVOKE_TOOL_JSON \
        + obj("h", {}) + END_MESSAGE
    check_all(text, "Hi.", [("h", {})])


def test_text_before_a_tool_block_is_content_unless_it_names_the_call():
    # the output's first text is a header (vLLM); a name the object confirms is markup, other text is content
    check_all("f" + INVOKE_TOOL_JSON + obj("f", {}) + END_MESSAGE, "", [("f", {})])
    check_all("Sure." + INVOKE_TOOL_JSON + obj("f", {}, args_first=True) + END_MESSAGE, "Sure.", [("f", {})])
    check_all("Let me look it up: " + INVOKE_TOOL_JSON + obj("f", {}) + END_MESSAGE, "Let me look it up: ", [("f", {})])
    # the same between blocks, where the model left out <|message_model|>
    check_all(text_block("Hi.") + "f" + INVOKE_TOOL_JSON + obj("f", {}) + END_MESSAGE, "Hi.", [("f", {})])


def test_an_object_with_a_name_and_no_args_is_a_call_with_none():
    # vLLM's converter: no args value -> {}
    check_all(message("f", '{"name":"f"}'), "", [("f", {})])


def test_thinking_is_reasoning_and_text_blocks_are_content():
    text = (CONTENT_THINKING + "Check the record." + END_MESSAGE + MESSAGE_MODEL + text_block("Done.")
            + message("f", obj("f", {"a": 1})) + END_SAMPLING)
    check_all(text, "Done.", [("f", {"a": 1})], reasoning="Check the record.")
    # a tool call opened in a thinking block that was never closed (vLLM's "defensive" transition)
    check_all(CONTENT_THINKING + "hmm" + MESSAGE_MODEL + "f" + INVOKE_TOOL_JSON + obj("f", {}) + END_MESSAGE, "",
              [("f", {})], reasoning="hmm")


def test_raw_and_error_tool_blocks_are_visible_text():
    # vLLM: <|content_invoke_tool_text|> and <|content_tool_error|> blocks render as visible text
    text = MESSAGE_MODEL + INVOKE_TOOL_TEXT + "run ls" + END_MESSAGE + MESSAGE_MODEL + TOOL_ERROR + "no such tool" \
        + END_MESSAGE
    check_all(text, "run lsno such tool", [])


@pytest.mark.parametrize("env", [
    INVOKE_TOOL_JSON + END_MESSAGE,
    INVOKE_TOOL_JSON + " \n" + END_MESSAGE,
    MESSAGE_MODEL + "f" + INVOKE_TOOL_JSON + END_MESSAGE,
    MESSAGE_MODEL + CONTENT_TEXT + END_MESSAGE,
    MESSAGE_MODEL + END_MESSAGE + END_SAMPLING,
    INVOKE_TOOL_JSON * 5,
])
def test_an_empty_block_is_markup(env):
    check_all(text_block("Hi.") + env + MESSAGE_MODEL + text_block("Bye."), "Hi.Bye.", [])


def test_a_tool_block_with_no_call_object_is_content():
    check_all(text_block("Hi.") + INVOKE_TOOL_JSON + "I cannot call that." + END_MESSAGE, "Hi.I cannot call that.", [])


@pytest.mark.parametrize("bad", [
    '{"name":"f","args":{"k":"v"}} trailing',  # text after the object, before the block's end
    '{"name":"f","args":{"k":tru}}',  # a JSON error in the arguments
])
def test_a_broken_calls_text_up_to_its_end_is_dropped_and_the_next_call_is_read(bad):
    text = text_block("Hi.") + message("f", bad) + message("g", obj("g", {"k": "v"})) + MESSAGE_MODEL \
        + text_block("Bye.")
    whole = whole_outcome(P, text)
    assert (whole.content, whole.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})])
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec, SPECIALS))
        assert (got.content, got.complete_calls()) == ("Hi.Bye.", [("g", {"k": "v"})]), spec


def test_a_complete_object_ends_its_call_without_the_blocks_end():
    # the output ended (the end token stripped as EOS), or the next message opened with the end left out
    check_all(message("f", obj("f", {"a": 1}))[:-len(END_MESSAGE)], "", [("f", {"a": 1})])
    check_all(MESSAGE_MODEL + "f" + INVOKE_TOOL_JSON + obj("f", {}) + MESSAGE_MODEL + text_block("Bye."), "Bye.",
              [("f", {})])


def test_output_cut_inside_a_call_leaves_no_markup_and_abandons_the_call():
    text = R.render([Call("f", {"a": "x" * 50})], content="Hi.")
    inside = {i for t in SPECIALS for at in range(len(text)) if text.startswith(t, at) for i in range(at + 1, at + len(t))}
    end_of_object = text.index(END_MESSAGE, text.index(INVOKE_TOOL_JSON))
    for k in range(text.index(MESSAGE_MODEL) + len(MESSAGE_MODEL), len(text)):
        if k in inside:
            continue  # (a special token arrives whole)
        got = whole_outcome(P, text[:k])
        done = [("f", {"a": "x" * 50})] if k >= end_of_object else []  # the object complete: the call is
        assert (got.content, got.complete_calls()) == ("Hi.", done), (k, text[:k][-20:])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text("abk_", min_size=1, max_size=4),
                       json_values(st.text("ab zé\n\t\"'\\{}[]<>|/:,.=0", max_size=8)), max_size=3),
       st.sampled_from(CHUNKINGS), st.booleans())
def test_generated_arguments_read_back(arguments, spec, args_first):
    text = text_block("x") + message("f", obj("f", arguments, args_first))
    for got in (whole_outcome(P, text), stream_outcome(P, chunk(text, spec, SPECIALS))):
        assert got.content == "x" and got.complete_calls() == [("f", arguments)], (spec, text)


def test_a_header_the_output_cuts_is_markup_when_a_name_and_text_otherwise():
    check_all(text_block("Hi.") + MESSAGE_MODEL + "get_wea", "Hi.", [])
    check_all(text_block("Hi.") + MESSAGE_MODEL + "Sure, here it is.", "Hi.Sure, here it is.", [])
    check_all("Plain text, no token at all.", "Plain text, no token at all.", [])
