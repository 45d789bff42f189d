"""A schema-typed object/array value streams to the arguments of the value read whole, for every escape.

The rule is docs/formats.md, "Schema typing" (5): a value that is JSON is read with JSON's escapes
(``\\/`` is ``/``, a surrogate pair one character), any other is a Python literal throughout with
Python's escapes; ``schema.typed_json`` reads it whole, ``schema.TypedValue`` while it streams
(its incremental reader, ``parsers/pyliteral.py``), and the two must give the same arguments text.
A differential fuzz found them apart on ``\\/``: glm47 sent ``["a\\\\/b"]`` for
``["a\\/b"]``, which ``typed_json`` reads as ``["a/b"]``.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import check, parsers
from callscale.parsers.schema import Typing, TypedValue, json_as_written, parameter_typing, typed_json
from callscale.workloads import render
from callscale.workloads.render import Call
from formats import FORMATS

#: Every format whose parameter values are typed by the request's schema (``Format.typed`` of
#: tests/helpers/formats.py). The DSML spellings type a value by its ``string`` attribute (JSON, else the raw
#: text, read whole: ``schema.json_as_written``).
TYPED_FORMATS = [n for n, row in FORMATS.items() if row.typed in ("schema", "schema, type written")]
DSML_FORMATS = sorted(n for n, row in FORMATS.items() if row.typed == "string attribute")
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"x": {"type": "array"}}}}}]
_RAW = "__RAW__"


def call_text(fmt: str, value: str) -> str:
    """Format ``fmt``'s text (its renderer's markup) of a call ``f`` with the value text ``value`` for ``x``."""
    if FORMATS[fmt].typed != "schema":  # a list is written with its type (type="array", string="false")
        text = render.get(fmt).render([Call("f", {"x": [_RAW]})])
        placeholder = json.dumps([_RAW])
    else:  # the value text where the renderer writes a string's text verbatim; the schema types it
        text = render.get(fmt).render([Call("f", {"x": _RAW})])
        placeholder = _RAW
    assert text.count(placeholder) == 1, text
    return text.replace(placeholder, value)


def whole_value(fmt: str, value: str) -> str:
    """The arguments the format gives for ``value`` read whole, by its own whole-value reader."""
    if fmt in DSML_FORMATS:
        return '{"x": ' + json_as_written(value) + "}"
    return '{"x": ' + typed_json(value, parameter_typing(TOOLS, "f", "x")) + "}"


def test_the_list_holds_every_format_that_types_values_by_schema():
    # a parser class (or a class of this project it inherits from) that writes values with the shared writer
    typed = {name for name in parsers.names()
             if any(re.search(r"\b(TypedValue|typed_value|typed_json)\(", inspect.getsource(k))
                    for k in parsers.get(name).__mro__ if k.__module__.startswith("callscale.parsers."))}
    assert typed == set(TYPED_FORMATS + DSML_FORMATS)


# (value text, what a client decodes from the arguments' "x", whether the text is JSON)
ESCAPES = [
    ('["a\\/b", "\\u00e9"]', ["a/b", "é"], True),  # case
    ('["\\/"]', ["/"], True),
    ('["\\b\\f"]', ["\b\f"], True),
    ('["\\n\\r\\t"]', ["\n\r\t"], True),
    ('["\\u00e9\\u00E9\\u0041"]', ["ééA"], True),
    ('["\\ud83d\\ude00"]', ["😀"], True),  # a surrogate pair: one character
    ('["\\uD83D\\uDE00x"]', ["😀x"], True),
    ('["\\ud800"]', ["\ud800"], True),  # a lone surrogate: kept (sent escaped)
    ('["\\udc00\\ud800"]', ["\udc00\ud800"], True),  # surrogates in the wrong order: two lone ones
    ('["\\"q\\""]', ['"q"'], True),
    ('["\\\\", "\\\\/"]', ["\\", "\\/"], True),
    ('[{"k\\/": "\\u2028"}, 1.5, null]', [{"k/": "\u2028"}, 1.5, None], True),
    ('["a\\/b"]\u3000', ["a/b"], False),  # whitespace str.strip removes, which JSON does not
    # Python-literal spellings: Python's escapes, throughout the value
    ("['a\\/b', True]", ["a\\/b", True], False),  # Python keeps an unknown escape's backslash
    ('["a\\/b", None]', ["a\\/b", None], False),
    ("['\\u00e9', False]", ["é", False], False),
    ("['\\ud83d\\ude00']", ["😀"], False),  # two code points, sent escaped: a client decodes the pair
    ("['\\ud800']", ["\ud800"], False),
    ("['\\x41\\101\\U0001F600']", ["AA😀"], False),
    ("['it\\'s', \"\\\"\"]", ["it's", '"'], False),
    ("['\\b\\f\\\\']", ["\b\f\\"], False),
    ("(1, 'a',)", [1, "a"], False),
    ("[True, False, None]\x0c", [True, False, None], False),
]


def _split(text):
    return {"detect_and_parse": None, "one character a delta": list(text)}


@pytest.mark.parametrize("fmt", TYPED_FORMATS + DSML_FORMATS)
@pytest.mark.parametrize("value,decoded,is_json", ESCAPES)
def test_streamed_equals_whole_for_every_escape(fmt, value, decoded, is_json):
    text = call_text(fmt, value)
    want = whole_value(fmt, value)
    for label, deltas in _split(text).items():
        got = (check.whole(parsers.get(fmt)(), text, TOOLS) if deltas is None
               else check.stream(parsers.get(fmt)(), deltas, TOOLS))
        assert [c.name for c in got.calls] == ["f"], (label, got)
        assert got.calls[0].arguments_text == want, (label, value)
    if fmt in DSML_FORMATS and not is_json:
        assert json.loads(want) == {"x": value}  # DSML: not JSON is the raw text (docs/formats.md)
    else:
        assert json.loads(want) == {"x": decoded}


# ----------------------------------------------------------------- generated values and spellings
_ALPHABET = "ab/\\\"'\b\f\n\t\x01 é\u2028😀"
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
              st.text(_ALPHABET, max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(_ALPHABET, max_size=3), inner,
                                                                         max_size=3)), max_leaves=8)


def _json_char(draw, c):
    """One character of a JSON string, in one of the spellings JSON allows for it."""
    code = ord(c)
    if code > 0xFFFF:
        hi, lo = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        return draw(st.sampled_from([c, "\\u%04x\\u%04x" % (hi, lo), "\\u%04X\\u%04X" % (hi, lo)]))
    short = {"/": "\\/", "\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\t": "\\t"}.get(c)
    raw = [] if c in '"\\' or code < 0x20 else [c]
    return draw(st.sampled_from(raw + ([short] if short else []) + ["\\u%04x" % code, "\\u%04X" % code]))


def _py_char(draw, c, quote):
    """One character of a Python string in ``quote``, in a spelling Python reads (``\\/`` too: kept as written)."""
    code = ord(c)
    short = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\t": "\\t"}.get(c)
    raw = [] if c in (quote, "\\") or code < 0x20 else [c]
    forms = raw + ([short] if short else []) + ["\\U%08x" % code]
    if c == "/":
        forms.append("\\/")  # an unknown escape: Python keeps the backslash
    if code <= 0xFFFF:
        forms.append("\\u%04x" % code)
    if code < 0x100:
        forms += ["\\x%02x" % code, "\\%o" % code]
    return draw(st.sampled_from(forms))


def _spell(draw, value, python):
    """``value`` as a model may write it: JSON (any escape JSON allows) or a Python literal."""
    sep = lambda: draw(st.sampled_from([", ", ",", ",\n "]))  # noqa: E731
    if value is None or isinstance(value, bool):
        words = {None: "None", True: "True", False: "False"} if python else {None: "null", True: "true", False: "false"}
        return words[value]
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        quote = draw(st.sampled_from(["'", '"'])) if python else '"'
        return quote + "".join(_py_char(draw, c, quote) if python else _json_char(draw, c) for c in value) + quote
    if isinstance(value, list):
        opener, closer = ("(", ")") if python and value and draw(st.booleans()) else ("[", "]")
        body = sep().join(_spell(draw, v, python) for v in value)
        trailing = "," if python and value and (opener == "(" or draw(st.booleans())) else ""
        return opener + body + trailing + closer
    return "{" + sep().join(_spell(draw, k, python) + ": " + _spell(draw, v, python) for k, v in value.items()) + "}"


@st.composite
def _spelled(draw, lists_only=False):
    lists = st.lists(_values, max_size=4)
    value = draw(lists if lists_only else st.one_of(lists, st.dictionaries(st.text(_ALPHABET, max_size=3), _values,
                                                                            max_size=3)))
    python = draw(st.booleans())
    text = draw(st.sampled_from(["", " ", "\n", "\u3000"])) + _spell(draw, value, python) + \
        draw(st.sampled_from(["", " ", "\n", "\x0c", "\xa0"]))
    return value, python, text


def _oracle(text):
    """The value of ``text`` by Python's own readers: ``json.loads``, else ``ast.literal_eval`` (the rule's order)."""
    try:
        return json.loads(text.strip())
    except ValueError:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "\\/" is an invalid escape to Python: kept, with a warning
            return ast.literal_eval(text.strip())


def _client_view(value):
    """What a client decodes from the JSON of ``value`` (escaped surrogate pairs become one character)."""
    return json.loads(json.dumps(value))


def _stream(typing, pieces):
    tv = TypedValue(typing)
    return tv.head() + "".join(tv.feed(p) for p in pieces) + tv.end()


_TYPINGS = [Typing(("array",)), Typing(("object",)), Typing(("object", "array")), Typing(("array",), True),
            Typing(("integer", "array", "string"))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_spelled(), st.sampled_from(_TYPINGS), st.lists(st.integers(0, 400), max_size=6))
def test_generated_values_stream_as_they_read_whole(spelled, typing, cuts):
    value, python, text = spelled
    expected = _oracle(text)
    if not python:
        assert expected == value  # JSON: every escape reads back to its character
    points = [0, *sorted({c for c in cuts if c < len(text)}), len(text)]
    streamed = _stream(typing, [text[a:b] for a, b in zip(points, points[1:])])
    assert streamed == _stream(typing, list(text)) == typed_json(text, typing)
    allowed = "array" if isinstance(expected, (list, tuple)) else "object"
    if allowed in typing.types:
        assert json.loads(streamed) == _client_view(expected)
    else:
        assert json.loads(streamed) == text  # a value of no type the schema allows stays the text


@pytest.mark.parametrize("fmt", TYPED_FORMATS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_spelled(lists_only=True))
def test_every_typed_format_streams_generated_values_as_they_read_whole(fmt, spelled):
    value, python, text = spelled
    call = call_text(fmt, text)
    want = whole_value(fmt, text)
    assert json.loads(want) == {"x": _client_view(_oracle(text))}
    assert check.whole(parsers.get(fmt)(), call, TOOLS).calls[0].arguments_text == want
    assert check.stream(parsers.get(fmt)(), list(call), TOOLS).calls[0].arguments_text == want


def test_a_json_value_is_not_read_a_second_time_at_its_end(monkeypatch):
    # the incremental reader's value is JSON's unless the text has an escape the two read apart (\/, an escaped
    # surrogate): only then does the end read the whole text again, as JSON
    from callscale.parsers import schema

    reads = []
    real = schema._json
    monkeypatch.setattr(schema, "_json", lambda text: reads.append(text) or real(text))
    items = [f"item {i}: \"q\" \\ \u00e9 \n" for i in range(2000)]
    text = json.dumps(items, ensure_ascii=False)
    typing = Typing(("array",))
    assert json.loads(_stream(typing, [text[i:i + 7] for i in range(0, len(text), 7)])) == items
    assert reads == []
    for text, value in (('["a\\/b"]', ["a/b"]), ('["\\ud83d\\ude00"]', ["😀"])):
        assert json.loads(_stream(typing, list(text))) == value
    assert reads == ['["a\\/b"]', '["\\ud83d\\ude00"]']
