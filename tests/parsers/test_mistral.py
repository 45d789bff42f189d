"""Mistral parser (``mistral``) and its renderer."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.base import MAX_HEAD
from callscale.parsers.mistral import ARGS, CALL_ID, SPECIAL_TOKENS, THINK, THINK_END, TOOL_CALLS
from support import (CHUNKINGS, assert_arguments_stream, assert_odd_output_agrees, assert_parses, calls_strategy,
                     split_at, stream_outcome, whole_outcome)
from callscale.workloads import render
from callscale.workloads.render import Call

M = "mistral"
CHUNKS = CHUNKINGS + ["tokens:1", "tokens:3"]


def parses(text, content, calls, reasoning="", **kw):
    kw.setdefault("chunkings", CHUNKS)
    assert_parses(M, text, content, calls, special_tokens=SPECIAL_TOKENS, reasoning=reasoning, **kw)


def v13(name, args):
    """One call as mistral-common's V13 instruct tokenizer writes it."""
    return f"{TOOL_CALLS}{name}{ARGS}{json.dumps(args, ensure_ascii=False)}"


# ----------------------------------------------------------------- the tokenizer versions' forms

def test_v3_json_array():
    # InstructTokenizerV3: [TOOL_CALLS] + json.dumps([{"name", "arguments"}, ...], ensure_ascii=False)
    calls = [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
             {"name": "search", "arguments": {"q": "東京 \"x\"", "n": 3}}]
    parses(TOOL_CALLS + json.dumps(calls, ensure_ascii=False), "",
           [("get_weather", {"city": "Paris", "unit": "celsius"}), ("search", {"q": "東京 \"x\"", "n": 3})])


def test_array_keys_in_any_order_a_parameter_named_name_and_other_keys():
    text = ('Sure. [TOOL_CALLS] [ {"arguments": {"name": "Ada", "id": 7}, "id": "abc123DEF", "name": "greet"} ,\n'
            '{"name": "ping", "arguments": {}}]  Bye')
    parses(text, "Sure.   Bye", [("greet", {"name": "Ada", "id": 7}), ("ping", {})])


def test_an_array_element_that_is_no_call_is_content():
    parses(TOOL_CALLS + '[{"name": 3, "arguments": {}}, {"name": "f", "arguments": {"a": 1}}]',
           '{"name": 3, "arguments": {}}', [("f", {"a": 1})])


def test_v11_call_id_before_args():
    # InstructTokenizerV11: [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{JSON}, per call
    text = (f'Checking.{TOOL_CALLS}get_weather{CALL_ID}a1B2c3D4e{ARGS}{{"city": "Paris"}}'
            f'{TOOL_CALLS}get_time{CALL_ID}Zz9{ARGS}{{}}')
    parses(text, "Checking.", [("get_weather", {"city": "Paris"}), ("get_time", {})])


def test_v13_name_args_repeated_tool_calls():
    text = "I'll run both." + v13("read_file", {"path": "a.py"}) + v13("search", {"q": "x", "limit": 5})
    parses(text, "I'll run both.", [("read_file", {"path": "a.py"}), ("search", {"q": "x", "limit": 5})])


def test_name_then_object_without_args_token():
    parses(f'{TOOL_CALLS}get_weather{{"city": "Rome"}}{TOOL_CALLS} ping {ARGS} {{}} then text',
           " then text", [("get_weather", {"city": "Rome"}), ("ping", {})])


def test_think_is_reasoning():
    text = f"{THINK}The user wants the weather.\nCall the tool.{THINK_END}Let me check.{v13('get_weather', {'city': 'Oslo'})}"
    parses(text, "Let me check.", [("get_weather", {"city": "Oslo"})],
           reasoning="The user wants the weather.\nCall the tool.")
    parses(f"{THINK}cut off [TOOL_CALLS]f[ARGS]{{}}", "", [], reasoning="cut off [TOOL_CALLS]f[ARGS]{}")


def test_the_call_ends_at_its_own_closing_bracket():
    args = {"o": {"a": {"b": []}}, "s": "}]{[", "n": [1, 2.5, None, True]}
    parses(v13("f", args) + "after", "after", [("f", args)])


# ----------------------------------------------------------------- malformed and degenerate output

def test_repeated_opener_gives_nothing():
    parses(TOOL_CALLS * 50, "", [])
    parses("Hi" + TOOL_CALLS * 3 + v13("f", {}), "Hi", [("f", {})])


def test_openers_in_a_row_are_dropped_with_whitespace_between_them():
    text = "Hi" + TOOL_CALLS + " " + TOOL_CALLS * 2 + v13("f", {"a": 1}) + TOOL_CALLS * 2
    parses(text, "Hi", [("f", {"a": 1})], deltas=[p for p in re.split(r"(\[TOOL_CALLS\])", text) if p])


def test_heads_that_are_no_call_are_content():
    parses(f"{TOOL_CALLS} sure, here it is", " sure, here it is", [])
    parses(f"{TOOL_CALLS}two words{ARGS}{{}}", "two words{}", [])
    parses(f"a{ARGS}b{CALL_ID}c{THINK_END}d", "abcd", [])


def test_a_head_past_max_head_is_content():
    junk = "w" * (MAX_HEAD + 10)
    parses(TOOL_CALLS + junk + ARGS + "{}", junk + "{}", [], chunkings=["whole", "fixed:7", "random:3:8"])


@pytest.mark.parametrize("bad", ['{"x": 1,}', '{"x": NaN}', '{"x": 1 "y": 2}'])
def test_arguments_that_are_not_one_json_object_abandon_the_call(bad):
    text = "Hi" + f"{TOOL_CALLS}a{ARGS}{bad}" + v13("b", {"y": 2}) + "!"
    for deltas in ([text], list(text), [text[i:i + 5] for i in range(0, len(text), 5)]):
        got = stream_outcome(M, deltas)
        assert (got.content, got.complete_calls()) == ("Hi!", [("b", {"y": 2})])
        assert [c.name for c in got.calls] == ["a", "b"]
    whole = whole_outcome(M, text)
    assert (whole.content, [c.name for c in whole.calls]) == ("Hi!", ["b"])


def test_arguments_that_do_not_start_with_a_brace_are_content():
    got = stream_outcome(M, list(f"{TOOL_CALLS}f{ARGS} [1, 2]"))
    assert (got.content, got.complete_calls()) == ("[1, 2]", [])


def test_long_content_without_calls():
    text = "plain [TOOL text [ARG and [/THINK more\n" * 300
    parses(text, text.replace(THINK_END, ""), [], chunkings=["whole", "fixed:7", "random:3:8"])


# ----------------------------------------------------------------- faults

def test_tokens_inside_a_json_string_are_text():
    value = f"if s.startswith('{TOOL_CALLS}'):\n    x = \"{ARGS}\" + '{CALL_ID}{THINK}' }} \\\\{TOOL_CALLS}\\\"\n"
    args = {"path": "mistral.py", "content": value}
    parses("Editing." + v13("write_file", args) + v13("ping", {}), "Editing.", [("write_file", args), ("ping", {})])


SAMPLE_CALLS = [("read_file", {"path": "a.txt", "range": [1, 20]}), ("search", {"q": f"x{TOOL_CALLS}y", "n": 3})]
SAMPLE = render.get(M).render([Call(n, a) for n, a in SAMPLE_CALLS], "Let me look.")


def test_the_end_of_a_call_in_the_last_delta():
    parses(SAMPLE, "Let me look.", SAMPLE_CALLS, deltas=[SAMPLE[:-1], SAMPLE[-1:]])


def test_truncated_output_never_raises_nor_invents_a_call():
    for cut in range(len(SAMPLE) + 1):
        text = SAMPLE[:cut]
        for got in (stream_outcome(M, [text[i:i + 3] for i in range(0, len(text), 3)]), whole_outcome(M, text)):
            done = got.complete_calls()
            assert done == SAMPLE_CALLS[:len(done)], (cut, done)
            # a name cut off by the end of the output is content; nothing of the arguments is
            assert got.content.startswith("Let me look."[:cut]), (cut, got)
            rest = got.content[len("Let me look."):]
            assert "{" not in rest and not any(t in rest for t in SPECIAL_TOKENS), (cut, got.content)


def test_odd_output_never_raises():
    odd = list(SPECIAL_TOKENS) + ["f", " ", "{", "}", "[", "]", '"', "\\", ",", ":", '"name"', '"arguments"', "x"]
    assert_odd_output_agrees(M, odd, seed=13)


def test_arguments_stream_as_they_arrive():
    args = {"path": "a.py", "content": "x = 'é\"\\\n' " * 200}
    text = render.get(M).render([Call("write_file", args)], "Writing.")
    assert_arguments_stream(M, text, args)


def test_registered_and_rendered():
    assert M in parsers.names()
    r = render.get(M)
    assert r.render([Call("a", {"x": "é"}), Call("b")], "Hi") == 'Hi[TOOL_CALLS]a[ARGS]{"x": "é"}[TOOL_CALLS]b[ARGS]{}'
    assert r.render([], "Hi") == "Hi"


# ----------------------------------------------------------------- property: render, split anywhere, parse

_calls = calls_strategy(SPECIAL_TOKENS, "ab zé東\n\t\"'\\{}[]:,.0")
_content = st.text(alphabet=st.sampled_from(list("ab \n[]{}_é\"TOL")), max_size=20)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls, content=_content, array=st.booleans(), data=st.data())
def test_rendered_calls_parse_back_under_any_split(calls, content, array, data):
    if array and calls:  # the V3 form
        text = content + TOOL_CALLS + json.dumps([{"name": c.name, "arguments": dict(c.arguments)} for c in calls],
                                                 ensure_ascii=False)
    else:
        text = render.get(M).render(calls, content)
    deltas = split_at(text, data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    expected = check.outcome_of(content, [(c.name, dict(c.arguments)) for c in calls])
    streamed = stream_outcome(M, deltas)
    whole = whole_outcome(M, text)
    assert not check.compare(streamed, expected), check.compare(streamed, expected)
    assert not check.compare(whole, expected), check.compare(whole, expected)
    assert len(streamed.calls) == len(calls)


def test_an_array_element_whose_name_is_a_lone_surrogate_is_no_call():
    # a differential fuzz: the array form took "\ud800" as a name (a name no server can encode as UTF-8); the JSON
    # call readers refuse it (jsonscan.is_call_name), and the element is content like another bad shape
    text = '[TOOL_CALLS][{"name": "\\ud800", "arguments": {}}, {"name": "ok", "arguments": {"a": 1}}]'
    got = parsers.get("mistral")().detect_and_parse(text)
    assert [(c.name, json.loads(c.parameters)) for c in got.calls] == [("ok", {"a": 1})]
    assert got.normal_text == '{"name": "\\ud800", "arguments": {}}'
