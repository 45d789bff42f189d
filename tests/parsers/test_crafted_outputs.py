"""Faults found by hand-crafted and differential outputs: each test asserts the value
docs/formats.md gives; a fault not yet fixed is an xfail (strict)."""

from __future__ import annotations

import pytest

from callscale import check, parsers
from callscale.workloads.chunking import chunk


def _both(name, text, tools=()):
    """detect_and_parse's outcome and the outcome streamed one character a delta (they must agree)."""
    whole = check.whole(parsers.get(name)(), text, list(tools))
    streamed = check.stream(parsers.get(name)(), chunk(text, "char"), list(tools))
    assert check.compare(streamed, whole) == [] and streamed.content == whole.content
    return whole


@pytest.mark.parametrize("number", ["01", "1_", "1__0", "0_1", "1_.5", "1E+_1", "1e1__0", "0x1f_"])
def test_llama4_a_number_python_does_not_read_is_no_value(number):
    # docs/formats.md, Llama 4 pythonic: values are Python literals; a bad word or number breaks the call and
    # is content from there (`[f(a=foo)]` leaves `foo)]`). Python reads none of these as a number
    # (leading zero of a decimal integer, an underscore not between digits); they were read as 1, 10, 1.5, ...
    out = _both("llama4_pythonic", f"[f(a={number})]")
    assert out.complete_calls() == []
    assert out.content == f"{number})]"


@pytest.mark.parametrize("number, value", [("00", 0), ("0x_1f", 31), ("1_0.5_5", 10.55), ("1e1_0", 1e10), ("0o1_7", 15)])
def test_llama4_python_number_forms_still_read(number, value):
    out = _both("llama4_pythonic", f"[f(a={number})]")
    assert out.complete_calls() == [("f", {"a": value})] and out.content == ""


@pytest.mark.parametrize("cut", ["<", "<|content_invoke_tool_json", "<|content_invoke_tool_json|"])
def test_inkling_a_name_header_cut_inside_its_token_is_no_content(cut):
    # docs/formats.md, Inkling: "a <|message_model|> header that is a name, cut by the end of the output, is
    # markup (a cut call's head)"; DESIGN.md: part of a token of a cut call never reaches content. Without the
    # partial token the header is dropped; with it, 'get_weather<|content_invoke_tool_json' came out as content.
    out = _both("inkling", "<|content_text|>Hi<|end_message|><|message_model|>get_weather" + cut)
    assert out.complete_calls() == []
    assert out.content == "Hi"


_ARRAY_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {"type": "array"}}}}}]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_python_line_continuation_over_crlf(newline):
    # docs/formats.md, Llama 4 pythonic: Python's escapes, line continuation among them; Schema typing 5: a value
    # that is not JSON is a Python literal with Python's escapes. Python reads a backslash before CRLF or CR as a
    # line continuation (ast.literal_eval("'a\\\r\nb'") == 'ab'); 'a\\\r\nb' came out (backslash and CRLF kept).
    out = _both("llama4_pythonic", f"[f(a='a\\{newline}b')]")
    assert out.complete_calls() == [("f", {"a": "ab"})]
    text = f"<tool_call>\n<function=f>\n<parameter=a>\n['a\\{newline}b']\n</parameter>\n</function>\n</tool_call>"
    assert _both("qwen3_coder", text, _ARRAY_TOOLS).complete_calls() == [("f", {"a": ["ab"]})]


def test_mistral_array_element_with_a_json_error_does_not_swallow_the_rest():
    # docs/formats.md, Mistral: an element that is no call is content (a broken call's text is dropped up to the
    # bracket that closes its object, content when [TOOL_CALLS] or the end comes first); DESIGN.md: after a
    # malformed call both paths keep the content around it and every other call. Here the element's NaN made the
    # reader wait for a close that never comes: ' ok' and the next [TOOL_CALLS] call g were lost (content '').
    out = _both("mistral", '[TOOL_CALLS][{"a": NaN}] ok[TOOL_CALLS]g[ARGS]{}')
    assert out.complete_calls() == [("g", {})]
    assert out.content == '{"a": NaN} ok'  # an element of another shape is content
    # the array goes on after it; [TOOL_CALLS] before its close ends it (its text content)
    out = _both("mistral", '[TOOL_CALLS][{"a": NaN, "b": "}"}, {"name": "f", "arguments": {"x": 1}}] ok')
    assert out.complete_calls() == [("f", {"x": 1})] and out.content == '{"a": NaN, "b": "}"} ok'
    out = _both("mistral", '[TOOL_CALLS][{"a": NaN ok[TOOL_CALLS]g[ARGS]{}')
    assert out.complete_calls() == [("g", {})] and out.content == '{"a": NaN ok'


# --------------------------------------------------------------------------- a differential guard (passes today)
import re  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from callscale.parsers import base  # noqa: E402
from callscale.workloads import render  # noqa: E402
from callscale.workloads.render import Call  # noqa: E402

_FORMATS = sorted(n for n in parsers.names() if parsers.canonical(n) == n)
_TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
    "s": {"type": "string"}, "n": {"type": "integer"}, "o": {"type": "object"}, "l": {"type": "array"},
    "u": {"type": ["string", "null"]}}}}} for name in ("f", "g")]
_ODD = ["x", " ", "\n", "\r\n", "😀", "\ud800", "\x00", '"', "\\", "{", "}", "[", "]", "null", "1", ",", ":", "<",
        ">", "</", "=", "'", "(", ")"]


def _pieces(fmt):
    """The format's rendered calls cut at its markup, its special tokens and closing tags, and odd characters."""
    r = render.get(fmt)
    text = r.render([Call("f", {"s": "v<x>", "n": 3, "o": {"a": [1, "b"]}}), Call("g", {"l": ["q"], "u": None})],
                    content="Hi. ")
    marks = sorted({*r.special_tokens, *r.closing_tags, r.opener} - {""}, key=len, reverse=True)
    cut = re.compile("(" + "|".join(map(re.escape, marks)) + r"|[<>\"{}\[\](),:=\n]|\s+)")
    return [p for p in cut.split(text) if p] + marks + _ODD


@pytest.mark.parametrize("fmt", _FORMATS)
def test_grammar_mixed_outputs_agree_under_any_split_and_no_state_fails(fmt, monkeypatch):
    # Pieces of the format's markup, shuffled, repeated, dropped, with odd characters, and tools with schemas of
    # every JSON type: streamed at random splits (empty deltas among them) = detect_and_parse, and no state raises
    # (a parser bug is swallowed by ToolParser._failed, which would hide it from both paths alike).
    failures = []
    original = base.ToolParser._failed

    def failed(self):
        failures.append(type(self).__name__)
        original(self)

    monkeypatch.setattr(base.ToolParser, "_failed", failed)
    pieces = _pieces(fmt)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(pieces), max_size=40), st.lists(st.integers(0, 200), max_size=8),
           st.booleans())
    def run(parts, cuts, with_tools):
        text = "".join(parts)
        tools = _TOOLS if with_tools else []
        whole = check.whole(parsers.get(fmt)(), text, tools)
        bounds = sorted({min(c, len(text)) for c in cuts})
        deltas, last = [], 0
        for c in bounds + [len(text)]:
            deltas += [text[last:c], ""]
            last = c
        for split in (deltas, list(text)):
            got = check.stream(parsers.get(fmt)(), split, tools)
            assert check.compare(got, whole) == [] and got.content == whole.content, (text, split)
        assert failures == [], text

    run()
