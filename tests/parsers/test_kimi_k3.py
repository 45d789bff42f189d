"""The Kimi K3 parser (``kimi_k3``): the XTML rendering, reasoning and response channels, typed
arguments, literal closing tags, broken and truncated output, and a property test over rendered calls."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import check, parsers
from callscale.parsers.kimi_k3 import (
    ARG_CLOSE, CALL_CLOSE, END_OF_MSG, MESSAGE_CLOSE, RESPONSE_CLOSE, RESPONSE_OPEN, THINK_CLOSE, THINK_OPEN,
    TOOLS_CLOSE, TOOLS_OPEN, open_tag,
)
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_arguments_stream, assert_parses, split_at, stream_outcome, whole_outcome

P = "kimi_k3"
R = render.get(P)
SPECIALS = R.special_tokens


def call(name, *args, index=1):
    return open_tag("call", tool=name, index=str(index)) + "".join(args) + CALL_CLOSE


def arg(key, value, kind="string"):
    return open_tag("argument", key=key, type=kind) + value + ARG_CLOSE


def assert_complete(text, content, calls, tools=()):
    """detect_and_parse and streams under CHUNKINGS: ``content`` and the complete ``calls`` (broken ones abandoned)."""
    whole = whole_outcome(P, text, tools)
    assert (whole.content, whole.complete_calls()) == (content, calls)
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec, SPECIALS), tools)
        assert (got.content, got.complete_calls()) == (content, calls), spec


def tools_el(*calls):
    return TOOLS_OPEN + "".join(calls) + TOOLS_CLOSE


def test_registered_and_rendered():
    assert P in parsers.names() and P in render.names()
    assert R.opener == TOOLS_OPEN and set(SPECIALS) == {"<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"}


def test_the_rendering_is_the_encoders():
    # encoding_k3.py as vLLM's kimi_k3_tool_parser.py and structural_tag_registry.py quote it: no layout,
    # index from 1, type from the value, a string raw, attribute values escaped (& then ")
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3}), Call("f", {"q": 'a "b" & c', 'k"&': None})],
                    content="Hi.")
    assert text == (
        'Hi.<|close|>response<|sep|><|open|>tools<|sep|>'
        '<|open|>call tool="get_weather" index="1"<|sep|>'
        '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
        '<|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>'
        '<|close|>call<|sep|>'
        '<|open|>call tool="f" index="2"<|sep|>'
        '<|open|>argument key="q" type="string"<|sep|>a "b" & c<|close|>argument<|sep|>'
        '<|open|>argument key="k&quot;&amp;" type="null"<|sep|>null<|close|>argument<|sep|>'
        '<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>')
    assert_parses(P, text, "Hi.", [("get_weather", {"city": "Paris", "days": 3}),
                                   ("f", {"q": 'a "b" & c', 'k"&': None})], special_tokens=SPECIALS)
    assert R.render([], content="Just text.") == "Just text."


def test_reasoning_and_the_response_channel():
    text = (THINK_OPEN + "Let me think <b>.\n" + THINK_CLOSE + RESPONSE_OPEN + "Checking." + RESPONSE_CLOSE
            + tools_el(call("ping")) + MESSAGE_CLOSE + END_OF_MSG)
    assert_parses(P, text, "Checking.", [("ping", {})], reasoning="Let me think <b>.\n", special_tokens=SPECIALS)
    # no calls: the channels' markup is dropped, the answer is content
    assert_parses(P, THINK_OPEN + "r" + THINK_CLOSE + RESPONSE_OPEN + "Yes." + RESPONSE_CLOSE + MESSAGE_CLOSE
                  + END_OF_MSG, "Yes.", [], reasoning="r", special_tokens=SPECIALS)


def test_reasoning_cut_by_the_end_of_the_output_is_reasoning():
    assert_parses(P, THINK_OPEN + "still thinking", "", [], reasoning="still thinking")


def test_typed_arguments_follow_the_type_attribute():
    text = "x" + RESPONSE_CLOSE + tools_el(call("f", arg("n", "60", "number"), arg("b", "true", "boolean"),
                                                 arg("z", "null", "null"), arg("o", '{"a": [1, 2]}', "object"),
                                                 arg("l", "[1, \"x\"]", "array"), arg("s", "42")))
    assert_parses(P, text, "x", [("f", {"n": 60, "b": True, "z": None, "o": {"a": [1, 2]}, "l": [1, "x"], "s": "42"})])


def test_a_typed_value_that_does_not_read_keeps_the_string():
    text = tools_el(call("f", arg("n", "sixty", "number"), arg("o", "{nope", "object")))
    assert_parses(P, text, "", [("f", {"n": "sixty", "o": "{nope"})])


def test_without_a_type_attribute_the_schema_types_the_value():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "s": {"type": "string"}}}}}]
    head = '<|open|>argument key="{}"<|sep|>'
    text = tools_el(call("f", head.format("n") + "7" + ARG_CLOSE, head.format("s") + "7" + ARG_CLOSE,
                         head.format("u") + "7" + ARG_CLOSE))
    assert_parses(P, text, "", [("f", {"n": 7, "s": "7", "u": "7"})], tools=tools)


def test_a_json_body_is_the_arguments():
    body = '<|open|>json type="object"<|sep|>{"a": [1, {"b": null}], "c": "<|close|>call<|sep|>"}<|close|>json<|sep|>'
    text = "Hi." + RESPONSE_CLOSE + tools_el(call("f", body), call("g", arg("x", "1")))
    assert_parses(P, text, "Hi.", [("f", {"a": [1, {"b": None}], "c": "<|close|>call<|sep|>"}), ("g", {"x": "1"})])
    bad = tools_el(call("f", '<|open|>json type="object"<|sep|>[1, 2]<|close|>json<|sep|>'), call("g"))
    for deltas in ([bad], list(bad), chunk(bad, "tokens:1", SPECIALS)):
        got = stream_outcome(P, deltas)
        assert got.complete_calls() == [("g", {})] and got.content == "", deltas
    assert whole_outcome(P, bad).calls == [check.StreamedCall("g", "{}")]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_json_body_is_read_strictly(number):
    """A json body that is not strict JSON (RFC 8259) breaks the call: ``{"a": NaN}`` is never sent."""
    text = tools_el(call("f", f'<|open|>json type="object"<|sep|>{{"a": {number}}}<|close|>json<|sep|>'), call("g"))
    assert whole_outcome(P, text).calls == [check.StreamedCall("g", "{}")]
    for spec in CHUNKINGS[:5]:
        got = stream_outcome(P, chunk(text, spec, SPECIALS))
        assert got.complete_calls() == [("g", {})] and got.content == "", spec


@pytest.mark.parametrize("value", [
    ARG_CLOSE, ARG_CLOSE + "x", "a" + ARG_CLOSE + CALL_CLOSE + "b", CALL_CLOSE + TOOLS_CLOSE,
    "if s.endswith('" + ARG_CLOSE + "'):\n    return", TOOLS_OPEN + "<|open|>call tool=\"x\"<|sep|>",
])
def test_a_literal_closing_tag_in_a_value_is_text(value):
    text = "Editing." + RESPONSE_CLOSE + tools_el(call("w", arg("content", value), arg("path", "p.py")))
    assert_parses(P, text, "Editing.", [("w", {"content": value, "path": "p.py"})])


def test_a_closing_tag_followed_by_the_end_of_the_output_ends_the_call():
    text = TOOLS_OPEN + call("w", arg("content", "v"))
    assert_parses(P, text, "", [("w", {"content": "v"})])


def test_the_end_of_the_call_in_the_last_delta():
    text = "Hi." + RESPONSE_CLOSE + tools_el(call("w", arg("a", "long value " * 20)))
    cut = text.index(CALL_CLOSE)
    for deltas in ([text[:cut], text[cut:]], [text[:cut - 3], text[cut - 3:]], [text]):
        assert_parses(P, text, "Hi.", [("w", {"a": "long value " * 20})], chunkings=[], deltas=deltas)


def test_special_tokens_split_across_deltas():
    text = "Hi." + RESPONSE_CLOSE + tools_el(call("w", arg("a", "b<|c")))
    for k in range(1, len(text)):
        assert_parses(P, text, "Hi.", [("w", {"a": "b<|c"})], chunkings=[], deltas=[text[:k], text[k:]])


def test_string_values_stream_before_the_call_closes():
    assert_arguments_stream(P)


def test_repeated_opener_gives_nothing():
    assert_parses(P, TOOLS_OPEN * 50, "", [])


@pytest.mark.parametrize("broken", [
    '<|open|>call index="1"<|sep|>' + arg("a", "1") + CALL_CLOSE,  # no tool attribute
    call("f", "garbage" + arg("a", "1")),  # text between arguments
    call("f", arg("a", "1") + arg("a", "2")),  # a repeated key
    call("f", '<|open|>argument type="string"<|sep|>v' + ARG_CLOSE),  # no key
    call("f", "<|open|>weird<|sep|>v<|close|>weird<|sep|>"),  # an unknown element
])
def test_a_broken_call_is_dropped_and_the_next_one_read(broken):
    text = "Hi." + RESPONSE_CLOSE + TOOLS_OPEN + broken + call("g", arg("x", "1")) + TOOLS_CLOSE
    assert_complete(text, "Hi.", [("g", {"x": "1"})])


def test_prose_after_a_broken_call_is_content():
    text = "Hi." + RESPONSE_CLOSE + TOOLS_OPEN + '<|open|>call tool="f"<|sep|>' + "oops, never mind."
    got = whole_outcome(P, text)
    assert got.complete_calls() == [] and got.content == "Hi.oops, never mind."
    for spec in CHUNKINGS[:5]:
        assert not check.compare(stream_outcome(P, chunk(text, spec, SPECIALS)), got), spec


def test_text_in_the_tools_element_outside_calls_is_content():
    text = TOOLS_OPEN + "Note: " + call("f") + "\n" + TOOLS_CLOSE
    assert_parses(P, text, "Note: ", [("f", {})])


def test_an_unclosed_call_is_abandoned_and_content_kept():
    for tail in [call("f", arg("a", "never closed"))[:-len(ARG_CLOSE + CALL_CLOSE)],
                 call("f", arg("a", "v"))[:-len(CALL_CLOSE)] + '<|open|>argument key="b', '<|open|>call tool="f']:
        text = "Content." + RESPONSE_CLOSE + TOOLS_OPEN + call("ok", arg("x", "1")) + tail
        whole = whole_outcome(P, text)
        assert whole.content == "Content." and whole.complete_calls() == [("ok", {"x": "1"})], tail
        for spec in ["char", "fixed:3", "random:1:8", "tokens:1"]:
            assert not check.compare(stream_outcome(P, chunk(text, spec, SPECIALS)), whole), (tail, spec)


GOOD = R.render([Call("get_weather", {"city": "Zürich", "days": 2}),
                 Call("write", {"path": "x.py", "content": "a" + ARG_CLOSE + "b", "o": {"k": [1]}})],
                content="Sure, checking.")
GOOD_CALLS = [("get_weather", {"city": "Zürich", "days": 2}),
              ("write", {"path": "x.py", "content": "a" + ARG_CLOSE + "b", "o": {"k": [1]}})]


def test_truncated_output_never_raises_nor_invents_calls():
    for i in range(len(GOOD) + 1):
        prefix = GOOD[:i]
        whole = whole_outcome(P, prefix)
        calls = whole.complete_calls()
        assert calls == GOOD_CALLS[:len(calls)], i
        if i <= len("Sure, checking."):
            assert whole.content == prefix, i
        else:  # the cut may fall inside the first control token (then it is text)
            rest = whole.content[len("Sure, checking."):]
            assert whole.content.startswith("Sure, checking.") and any(t.startswith(rest) for t in SPECIALS), i
        for spec in ["char", "fixed:3"]:
            assert not check.compare(stream_outcome(P, chunk(prefix, spec)), whole), (i, spec)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(list("ab <|>\n\"=") + ["<|open|>", "<|close|>", "<|sep|>", "call", "tools",
                                                          "argument", "think", 'tool="f"', 'key="k"']),
                max_size=40).map("".join))
def test_odd_output_never_raises(text):
    whole = whole_outcome(P, text)
    streamed = stream_outcome(P, list(text))
    assert not check.compare(streamed, whole), (text, check.compare(streamed, whole))


# ---------------------------------------------------------------- property test
_FRAGMENTS = st.sampled_from([ARG_CLOSE, CALL_CLOSE, TOOLS_CLOSE, TOOLS_OPEN, "<|open|>", "<|sep|>", "<|close|>",
                              "\n", " ", '"', "\\", "<", ">", "é", "中文", "😀", "{", "}"])
_TEXT = st.lists(st.one_of(st.text(max_size=6), _FRAGMENTS, _FRAGMENTS), max_size=8).map("".join)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False), _TEXT)
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=6)
_KEY = st.text(st.characters(codec="utf-8", exclude_characters="<>|\n", exclude_categories=("Cs",)),
               min_size=1, max_size=8)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)


def _ambiguous(value):
    """A string value whose literal closing tag would read as the real one (the DSML rule)."""
    return isinstance(value, str) and any(
        value.endswith(t) for t in (ARG_CLOSE, CALL_CLOSE)) or isinstance(value, str) and (
        ARG_CLOSE + "<|open|>argument" in value or ARG_CLOSE + CALL_CLOSE in value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.builds(Call, _NAME, st.dictionaries(_KEY, st.one_of(_TEXT, _TEXT, _JSON), max_size=4)),
                      max_size=3),
       content=_TEXT.filter(lambda s: "<|" not in s), cuts=st.lists(st.integers(0, 3000), max_size=12))
def test_rendered_calls_parse_back_under_any_split(calls, content, cuts):
    calls = [Call(c.name, {k: v for k, v in c.arguments.items() if not _ambiguous(v)}) for c in calls]
    text = R.render(calls, content=content)
    expected = [(c.name, json.loads(json.dumps(dict(c.arguments)))) for c in calls]
    assert_parses(P, text, content, expected, chunkings=[], deltas=split_at(text, cuts))


def test_a_long_array_value_is_read_as_it_arrives():
    # a typed value goes through the one typed value writer (schema.TypedValue); an array is
    # read by the incremental literal reader piece by piece, not whole in the increment that ends it
    items = [f"item {i} \u00e9" for i in range(2000)]
    text = render.get("kimi_k3").render([render.Call("tag", {"items": items})], content="Hi.")
    parser = parsers.get("kimi_k3")()
    cut = text.index("item 1000")
    first = parser.parse_streaming_increment(text[:cut])
    assert parser._value.mode == "held" and parser._value._reader is not None
    rest = parser.parse_streaming_increment(text[cut:])
    last = parser.finish()
    assert json.loads("".join(c.parameters for c in first.calls + rest.calls + last.calls)) == {"items": items}
