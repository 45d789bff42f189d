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


class _MemberMachine:
    """What ``pyliteral.member_state`` reads of a parser: its scanner, ``_reader``, the two hooks."""

    def __init__(self, sc, reader):
        self.scanner, self._reader = sc, reader
        self.sent: list[str] = []
        self.reads: list[tuple[str, int, bool]] = []

    def _emit_arguments(self, text):
        self.sent.append(text)

    def _member_read(self, text, used, final):
        self.reads.append((text, used, final))
        return False


_MEMBER_TEXT = st.lists(st.sampled_from(
    ["{'a': 'x y', 'n': [1, 22, (3,)], 'd': {'k': None}}", "'s\\n\\'q\"", '"é\\t"', "'\\x4", "1', ",
     "True}", "} ", "{", "]", "'", "\\", "ab", ", ", ": ", "x\n", '"', "\\u00e9", "'a\\\nb'"]), max_size=6)


@given(_MEMBER_TEXT, st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=8), st.booleans())
@settings(max_examples=400, deadline=None)
def test_member_state_agrees_with_feed_then_take_member(parts, cuts, final):
    # the plain path: feed(piece, True) then take_member() on an equal reader; the same text sent, the same
    # answer handed to the format's step (a piece read to its end while the value goes on: none unless final)
    from callscale.parsers.pyliteral import member_state
    from callscale.parsers.scanner import MarkerScanner

    head, body = "{'name': 'f', 'arguments': {", "".join(parts)
    fast, plain = PyLiteralReader("arguments"), PyLiteralReader("arguments")
    for r in (fast, plain):  # (the member opened and taken once, as a format's head read leaves it)
        assert r.feed(head, True) == len(head) and r.member_head == {"name": "f"}
        assert r.take_member() == "{"
    pieces, i, k = [], 0, 0
    while i < len(body):
        pieces.append(body[i:i + cuts[k % len(cuts)]])
        i += cuts[k % len(cuts)]
        k += 1
    sc = MarkerScanner()
    machine = _MemberMachine(sc, fast)
    for j, piece in enumerate(pieces):
        last = final and j == len(pieces) - 1
        sc.feed(piece)
        machine.sent, machine.reads = [], []
        member_state(machine, last)
        used = plain.feed(piece, True)
        want = plain.take_member()
        assert "".join(machine.sent) == want
        ends = used != len(piece) or plain.closed or plain.failed
        assert machine.reads == ([(piece, used, last)] if ends or last else [])
        assert sc.at_end()
        if ends:
            break
    assert (fast.closed, fast.failed, fast.maybe_json) == (plain.closed, plain.failed, plain.maybe_json)
