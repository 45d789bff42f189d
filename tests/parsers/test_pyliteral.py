"""The one incremental Python literal reader (callscale.parsers.pyliteral): any split reads as the whole."""

from __future__ import annotations

import ast
import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscale.parsers.pyliteral import PyLiteralReader, read_python_literal
from callscale.parsers.schema import TypedValue, convert, json_text, parameter_typing

SAMPLES = [
    "['a', 'b']", "{'k': (1, True, None)}", '[1, 2.5, -3e2, "x\\ty", \'\\x41\\u00e9\\101\']', "[1, 2,]",
    "{'a': 1, 'b': [], 'a': 3}", "()", "[[[]]]", "[1_000, .5, 5., +1]", "[true, false, null]", '["\\ud83d"]',
    "[1 2]", "[1,,2]", "{1: 2}", "[007]", "[1e999]", "['a' 'b']", "[Truex]", "{'a' 1}", "['unclosed", "[1]]",
    "  [1]  ", "[None, 'it\\'s', \"q\\\"\"]", "['\\\n']", "{'a': {'b': (1, [2, {'c': 'd'}])}}",
]


def _pieces(text, cuts):
    out, last = [], 0
    for c in sorted(set(cuts)):
        out.append(text[last:c])
        last = c
    out.append(text[last:])
    return out


def _incremental(pieces):
    reader = PyLiteralReader()
    for piece in pieces:
        reader.feed(piece)
    ok, value = reader.end()
    return ok, value, reader.json


@pytest.mark.parametrize("text", SAMPLES)
def test_every_split_reads_as_python_reads_the_whole(text):
    try:
        # JSON's true/false/null read as Python's words (the reader's rule)
        python = text.replace("true", "True").replace("false", "False").replace("null", "None")
        expected = (True, ast.literal_eval(python.strip()))
        if isinstance(expected[1], (set, complex, bytes)) or "{1:" in text or "e999" in text or "' '" in text:
            expected = (False, None)
    except (ValueError, SyntaxError):
        expected = (False, None)
    if isinstance(expected[1], tuple):
        expected = (True, list(expected[1]))
    whole = read_python_literal(text)
    assert json.dumps(whole, default=list) == json.dumps(expected, default=list), text
    for k in range(len(text) + 1):
        ok, value, written = _incremental([text[:k], text[k:]])
        assert (ok, value) == whole, (text, k)
        if ok:
            assert written == json_text(value), (text, k)
    ok, value, written = _incremental(list(text))
    assert (ok, value) == whole


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=8), lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c,
                                                                                         max_size=4), max_leaves=12),
       st.lists(st.integers(0, 200), max_size=8))
def test_any_python_repr_streams_to_its_json(value, cuts):
    text = repr(value)
    ok, got, written = _incremental(_pieces(text, [c for c in cuts if c <= len(text)]))
    assert ok and got == value and written == json_text(value)


def test_a_long_list_value_is_typed_while_it_streams():
    # a Python-literal list was parsed whole in the increment that ended it; now the
    # reader keeps only what the value needs and the end joins the JSON text written as it came
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string"}}}}}}]
    typing = parameter_typing(tools, "f", "items")
    items = [f"item {i}" for i in range(4000)]
    text = repr(items)
    tv = TypedValue(typing)
    assert tv.head() == ""
    for i in range(0, len(text), 40):
        assert tv.feed(text[i:i + 40]) == ""
    assert json.loads(tv.end()) == items
    assert convert(text, typing) == (True, items)
    bad = TypedValue(typing)
    bad.feed("['a', oops]")
    assert bad.end() == json.dumps("['a', oops]")


def test_python_number_gives_plain_digits_as_themselves_and_reads_python_int_forms():
    # PyArgumentReader sends plain digits (no leading zero) without calling python_number: its answer is the digits
    from callscale.parsers.pyliteral import python_number
    for digits in ("0", "7", "10", "996", "123456789012345678901234567890"):
        assert python_number(digits) == digits
    assert python_number("0x1f") == "31" and python_number("1_000") == "1000" and python_number("-2.5") == "-2.5"
    assert python_number("1e999") is None and python_number("1.5.2") is None  # not finite; no number
