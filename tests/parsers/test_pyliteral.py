"""The one incremental Python literal reader (callscale.parsers.pyliteral): any split reads as the whole."""

from __future__ import annotations

import ast
import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscale.parsers.pyliteral import PyLiteralReader, member_head_pattern, read_python_literal
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


_QUOTE = st.sampled_from(["'", '"'])
_BLANK = st.sampled_from(["", " ", "  ", "\t", "\n", " \r\n "])
_HEAD_VALUE = st.sampled_from(["f", "get_weather", "a b", "é🙂", "x-y.z", "1"])


@st.composite
def _heads(draw):
    """The head of a call dict, ``{'name': 'V', 'arguments': {``, in any spelling the common head pattern takes."""
    b = [draw(_BLANK) for _ in range(7)]
    q = [draw(_QUOTE) for _ in range(3)]
    name = draw(_HEAD_VALUE)
    return (name, q, "{%s%sname%s%s:%s%s%s%s,%s%sarguments%s%s:%s{" % (
        b[0], q[0], q[0], b[1], b[2], q[1], name, q[1], b[3], q[2], q[2], b[4], b[5]))


@given(_heads(), _MEMBER_TEXT, st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=8))
@settings(max_examples=400, deadline=None)
def test_open_member_leaves_the_reader_where_feed_of_the_head_does(head, parts, cuts):
    # the common head matched whole, then open_member and member_state (as sarashina reads an element), against
    # the head read token by token, feed and take_member: the same text sent after every piece, the same
    # answer where the value ends, the same flags, the same value and JSON text at the end
    from callscale.parsers.pyliteral import member_state
    from callscale.parsers.scanner import MarkerScanner

    name, quotes, text = head
    hit = member_head_pattern(("name",), "arguments").match(text, 1)
    assert hit is not None and hit.end() == len(text) and (hit.group(1) or hit.group(2)) == name
    fast, plain = PyLiteralReader("arguments"), PyLiteralReader("arguments")
    assert fast.open_member({"name": name}, "'" not in hit.group()) == "{"
    assert plain.feed(text, True) == len(text) and plain.member_head == fast.member_head == {"name": name}
    assert plain.take_member() == "{"
    for slot in PyLiteralReader.__slots__:  # (the head's own JSON text, the member's outer pieces, not kept)
        want, got = getattr(plain, slot), getattr(fast, slot)
        if slot == "_stack":
            want, got = [entry[:5] for entry in want], [entry[:5] for entry in got]
        assert got == want, slot
    sc = MarkerScanner()
    machine = _MemberMachine(sc, fast)
    body = "".join(parts) + "}}"
    i = k = 0
    while i < len(body):
        piece = body[i:i + cuts[k % len(cuts)]]
        i, k = i + len(piece), k + 1
        sc.feed(piece)
        machine.sent, machine.reads = [], []
        member_state(machine, False)
        used = plain.feed(piece, True)
        assert "".join(machine.sent) == plain.take_member()
        if plain.closed or plain.failed:
            assert machine.reads == [(piece, used, False)]
            break
    assert (fast.closed, fast.failed, fast.maybe_json, fast.as_json) == \
        (plain.closed, plain.failed, plain.maybe_json, plain.as_json)
    assert not ("'" in quotes and fast.maybe_json)  # (a head in single quotes is no JSON)
    assert fast.end() == plain.end() and fast.json == plain.json


def test_the_common_head_pattern_takes_only_heads_of_plain_strings_in_order():
    pattern = member_head_pattern(("name",), "arguments")
    for text in ("'name': 'f', 'arguments': {", '"name":"f","arguments":{', "\t'name' :\n'f' ,'arguments': {"):
        assert pattern.match(text) is not None, text
    for text in ("'name': 'it\\'s', 'arguments': {",  # an escape: read by feed
                 "'name': \"it's\", 'arguments': {",  # a quote of the other kind inside
                 "'name': '', 'arguments': {",  # no name
                 "'arguments': {'a': 1}, 'name': 'f'",  # another order
                 "'name': 'f', 'id': 'x', 'arguments': {",  # a member between
                 "'name': 'f', 'arguments': [",  # no dict
                 "'name': 'f'\u00a0, 'arguments': {",  # whitespace the reader does not read between tokens
                 "'name': 'f', 'arguments' {"):
        assert pattern.match(text) is None, text
    two = member_head_pattern(("name", "id"), "params")
    hit = two.match("'name': 'f', \"id\": \"c1\", 'params': {")
    assert hit is not None and (hit.group(1), hit.group(4)) == ("f", "c1")
