"""The one schema typing (parsers/schema.py) and every schema-typed format held to it."""

from __future__ import annotations

import json
import tracemalloc
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale.parsers.schema import (
    json_as_written,
    json_container_or_string,
    MAX_LITERAL_DEPTH,
    UNTYPED,
    TypedValue,
    Typing,
    convert,
    parameter_type,
    parameter_typing,
    read_python_literal,
    typed_json,
)
from support import assert_parses, stream_outcome, whole_outcome


def tools_with(props, **root):
    return [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": props, **root}}}]


def typing_of(spec, **root):
    return parameter_typing(tools_with({"p": spec}, **root), "f", "p")


# ----------------------------------------------------------------- reading the schema
@pytest.mark.parametrize("spec,expected", [
    ({"type": "integer"}, Typing(("integer",))),
    ({"type": ["string", "null"]}, Typing(("string",), True)),
    ({"type": ["null", "integer", "boolean"]}, Typing(("boolean", "integer"), True)),
    ({"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object"}]}, Typing(("object",))),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}, Typing(("integer", "string"), True)),
    ({"anyOf": [{"type": "integer"}, {"type": "number"}]}, Typing(("number",))),
    ({"enum": ["a", 1, None]}, Typing(("integer", "string"), True, ("a", 1, None))),
    ({"type": "string", "enum": ["x"]}, Typing(("string",), False, ("x",))),
    ({"const": 3}, Typing(("integer",), False, (3,))),
    ({"description": "no type"}, Typing()),
    ({"type": "mystery"}, Typing()),
    ("not a schema", Typing()),
])
def test_typing_of_a_schema(spec, expected):
    assert typing_of(spec) == expected


def test_refs_to_defs_and_definitions_nested():
    defs = {"Loc": {"anyOf": [{"$ref": "#/$defs/City"}, {"type": "null"}]}, "City": {"type": "object"}}
    assert typing_of({"$ref": "#/$defs/Loc"}, **{"$defs": defs}) == Typing(("object",), True)
    assert typing_of({"$ref": "#/definitions/N"}, definitions={"N": {"type": "integer"}}) == Typing(("integer",))
    # pydantic's allOf wrapper around a $ref
    assert typing_of({"allOf": [{"$ref": "#/$defs/City"}], "default": None}, **{"$defs": defs}) == Typing(("object",))
    # a missing or cyclic reference gives up quietly
    assert typing_of({"$ref": "#/$defs/Nope"}) == Typing()
    assert typing_of({"$ref": "#/$defs/A"}, **{"$defs": {"A": {"$ref": "#/$defs/A"}}}) == Typing()
    loop = {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "boolean"}]}}
    assert typing_of({"$ref": "#/$defs/A"}, **{"$defs": loop}) == Typing(("boolean",))
    # a branching cycle is read once per schema object, not 2**depth times
    fork = {"A": {"anyOf": [{"$ref": "#/$defs/A"}] * 50 + [{"type": "integer"}]}}
    assert typing_of({"$ref": "#/$defs/A"}, **{"$defs": fork}) == Typing(("integer",))


def test_parameter_type_is_one_name():
    tools = tools_with({"a": {"type": ["null", "integer"]}, "b": {"anyOf": [{"type": "string"}, {"type": "array"}]},
                        "c": {"type": "null"}})
    assert [parameter_type(tools, "f", k) for k in "abcd"] == ["integer", "array", "null", "string"]
    assert parameter_type(tools, "g", "a") == "string"


# ----------------------------------------------------------------- converting text
@pytest.mark.parametrize("text,spec,expected", [
    ("60.0", {"type": "integer"}, (True, 60)),
    (" 1e2 ", {"type": "integer"}, (True, 100)),
    ("60.5", {"type": "integer"}, (False, None)),
    ("2026-03-01", {"type": "integer"}, (False, None)),
    ("-1.5e3", {"type": "number"}, (True, -1500.0)),
    ("7", {"type": "number"}, (True, 7)),
    ("1e999", {"type": "number"}, (False, None)),
    ("NaN", {"type": "number"}, (False, None)),
    ("True", {"type": "boolean"}, (True, True)),
    ("false", {"type": ["boolean", "null"]}, (True, False)),
    ("yes", {"type": "boolean"}, (False, None)),
    ("null", {"type": ["integer", "null"]}, (True, None)),
    ("None", {"type": "object"}, (True, None)),
    ("null", {"type": ["string", "null"]}, (True, None)),
    ("null and void", {"type": ["string", "null"]}, (False, None)),
    ("null", {"type": "string"}, (False, None)),
    ("null", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, (False, None)),
    ("42", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, (True, 42)),
    ("0042", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, (False, None)),
    ('{"a": 1}', {"anyOf": [{"type": "array"}, {"type": "object"}]}, (True, {"a": 1})),
    ("[1]", {"type": "object"}, (False, None)),
    ("{'a': (1, True)}", {"type": "object"}, (True, {"a": [1, True]})),
    ("1", {"enum": ["1", 2]}, (True, "1")),
    ("2.0", {"enum": ["1", 2]}, (True, 2)),
    ("3", {"enum": ["1", 2]}, (True, 3)),
    (" x ", {"enum": ["x", 2]}, (True, "x")),
    ("5", {"type": "string"}, (False, None)),
    ("5", {}, (False, None)),
    ("0", {"type": "null"}, (False, None)),
])
def test_convert(text, spec, expected):
    assert convert(text, typing_of(spec)) == expected


@pytest.mark.parametrize("text,value", [
    ("['a', 'b']", ["a", "b"]),
    ("{'k': [1, -2.5, 1e3, True, False, None], \"q\": 'it\\'s\\n\\x41\\u00e9'}",
     {"k": [1, -2.5, 1000.0, True, False, None], "q": "it's\nAé"}),
    ("(1, 2,)", [1, 2]),
    ("[]", []),
    ("{'a': {'b': []}}", {"a": {"b": []}}),
    ("[1_000, 0.5]", [1000, 0.5]),
    ("['\\ud800']", ["\ud800"]),
])
def test_python_literals(text, value):
    assert read_python_literal(text) == (True, value)


@pytest.mark.parametrize("text", [
    "[1if 1 else 1]", "{1, 2}", "{1: 'a'}", "[float('nan')]", "[1, 2", "[1 2]", "[,]", "['a' 'b']", "007",
    "[1e999]", "[x]", "[1]]", "[1] 2", "b'x'", "[" * 300 + "]" * 300, "", "(1,):", "[1,,2]",
])
def test_not_python_literals(text):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no SyntaxWarning or any other
        assert read_python_literal(text) == (False, None)


def test_nesting_up_to_the_limit_reads():
    depth = MAX_LITERAL_DEPTH
    assert read_python_literal("[" * depth + "]" * depth)[0]
    assert not read_python_literal("[" * (depth + 1) + "]" * (depth + 1))[0]


# ----------------------------------------------------------------- through the formats
ARRAY_TOOLS = tools_with({"items": {"type": "array"}, "n": {"type": "integer"}})


def test_a_long_python_style_list_is_read_linearly_without_warnings(capfd):
    items = [f"item {i}" for i in range(26_000)]
    value = repr(items)
    assert len(value) > 262_000
    text = f"<tool_call>\n<function=f>\n<parameter=items>\n{value}\n</parameter>\n<parameter=n>\n60.0\n</parameter>\n" \
           "</function>\n</tool_call>"
    tracemalloc.start()
    try:
        got = stream_outcome("qwen3_coder", [text[i:i + 4096] for i in range(0, len(text), 4096)], ARRAY_TOOLS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.complete_calls() == [("f", {"items": items, "n": 60})]
    # the literal_eval reader held 66-128 MB here; the value itself is about 2.5 MB
    assert peak < 16 * 2**20, peak
    text = text.replace(value, "[1if 1 else 1]")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = whole_outcome("qwen3_coder", text, ARRAY_TOOLS)
    assert got.complete_calls() == [("f", {"items": "[1if 1 else 1]", "n": 60})]
    assert capfd.readouterr().err == ""


# Each format: the text a model writes for parameter k with value text v.
def _coder(values):
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in values)
    return f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call>"


def _glm(values):
    return "<tool_call>f" + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in values) + \
        "</tool_call>"


def _minimax(values):
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in values)
    return f'<minimax:tool_call>\n<invoke name="f">\n{body}</invoke>\n</minimax:tool_call>'


def _gemma(values):  # every value written as a <|"|> string: typed where the schema rules a string out
    return "<|tool_call>call:f{" + ",".join(f'{k}:<|"|>{v}<|"|>' for k, v in values) + "}<tool_call|>"


FORMATS = {"qwen3_coder": _coder, "glm47": _glm, "glm45": _glm, "minimax_m2": _minimax, "gemma4": _gemma}

_SCALAR_TYPES = ["string", "integer", "number", "boolean", "object", "array"]
_plain = st.text(alphabet="abc xyz019._-é", max_size=8)
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                       st.floats(allow_nan=False, allow_infinity=False, width=32), _plain)
_json = st.recursive(_json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_plain, inner, max_size=3)), max_leaves=6)
_VALUES = {
    "string": _plain, "integer": st.integers(-10**9, 10**9), "boolean": st.booleans(),
    "number": st.floats(allow_nan=False, allow_infinity=False), "object": st.dictionaries(_plain, _json, max_size=3),
    "array": st.lists(_json, max_size=3),
}


@st.composite
def _schema_and_text(draw):
    """A parameter schema (type, type list, anyOf, enum, nullable, $ref) and a value text a model writes for it."""
    kind = draw(st.sampled_from(_SCALAR_TYPES))
    other = draw(st.sampled_from(_SCALAR_TYPES))
    value = draw(st.one_of(_VALUES[kind], st.none()) if draw(st.booleans()) else _VALUES[kind])
    shape = draw(st.sampled_from(["type", "list", "anyOf", "enum", "ref"]))
    nullable = value is None or draw(st.booleans())
    if shape == "type":
        spec = {"type": kind} if not nullable else {"type": [kind, "null"]}
    elif shape == "list":
        spec = {"type": [kind, other] + (["null"] if nullable else [])}
    elif shape == "anyOf":
        spec = {"anyOf": [{"type": kind}, {"type": other}] + ([{"type": "null"}] if nullable else [])}
    elif shape == "enum":
        spec = {"enum": [value, draw(_VALUES[other])]}
    else:
        spec = {"$ref": "#/$defs/P"}
    root = {"$defs": {"P": {"type": kind if not nullable else [kind, "null"]}}}
    style = draw(st.sampled_from(["json", "python"]))
    if isinstance(value, str):
        text = value
    elif style == "python" and value is not None and not isinstance(value, (int, float)):
        text = repr(value)  # True, {'a': None}: the first Qwen3-Coder template
    elif value is None:
        text = draw(st.sampled_from(["null", "None"]))
    else:
        text = json.dumps(value)
    return spec, root, value, text


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=st.lists(_schema_and_text(), min_size=1, max_size=4))
def test_every_format_types_values_by_the_one_rule(fmt, params):
    props, defs, values, expected = {}, {}, [], {}
    for i, (spec, root, value, text) in enumerate(params):
        key = f"p{i}"
        defs[f"P{i}"] = root["$defs"]["P"]
        if "$ref" in spec:
            spec = {"$ref": f"#/$defs/P{i}"}
        props[key] = spec
        values.append((key, text))
    tools = tools_with(props, **{"$defs": defs})
    for i, (spec, root, value, text) in enumerate(params):
        key = f"p{i}"
        typing = parameter_typing(tools, "f", key)
        if fmt == "gemma4" and (not typing.declared or "string" in typing.types):
            want = text  # a <|"|> string where the schema allows one stays one
        else:
            ok, converted = convert(text, typing)
            want = converted if ok else text
        if not isinstance(value, str) and (fmt != "gemma4" or "string" not in typing.types):
            # a value of a type the schema allows comes back as itself (integers written as floats too)
            assert want == value or (isinstance(value, float) and want == value), (text, typing, want, value)
        expected[key] = want
    assert_parses(fmt, FORMATS[fmt](values), "", [("f", expected)], tools=tools,
                  chunkings=["whole", "char", "random:3:8"])


# ----------------------------------------------------------------- a string-or-null value streams
NULLABLE_TOOLS = tools_with({"content": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "n": {"type": "integer"}})
_NULLABLE_CALLS = {
    "qwen3_coder": lambda v: _coder([("content", v), ("n", "1")]),
    "glm47": lambda v: _glm([("content", v), ("n", "1")]),
    "glm45": lambda v: _glm([("content", v), ("n", "1")]),
    "minimax_m2": lambda v: _minimax([("content", v), ("n", "1")]),
}


@pytest.mark.parametrize("fmt", sorted(_NULLABLE_CALLS))
@pytest.mark.parametrize("value,expected", [
    ("null", None), (" None\n", None), ("nul", "nul"), ("nullable", "nullable"), ("null x", "null x"),
    ("  text  ", "  text  "), ("", ""), ("Nonesuch", "Nonesuch"), ("n", "n"),
])
def test_a_string_or_null_value(fmt, value, expected):
    assert_parses(fmt, _NULLABLE_CALLS[fmt](value), "", [("f", {"content": expected, "n": 1})], tools=NULLABLE_TOOLS,
                  chunkings=["whole", "char", "random:2:5"])


@pytest.mark.parametrize("fmt", sorted(_NULLABLE_CALLS))
def test_a_long_string_or_null_value_streams_as_it_arrives(fmt):
    value = "line of text\n" * 400
    text = _NULLABLE_CALLS[fmt](value)
    half = text[: text.index(value) + len(value) // 2]
    got = stream_outcome(fmt, [half[i:i + 4] for i in range(0, len(half), 4)], NULLABLE_TOOLS)
    assert len(got.calls[0].arguments_text) >= len(json.dumps(value[: len(value) // 2])) - 40


@pytest.mark.parametrize("typing,pieces,expected", [
    (Typing(("string",)), ["a", "\"b", ""], '"a\\"b"'),
    (Typing(("string",), True), [" ", "nu", "ll "], "null"),
    (Typing(("string",), True), [" ", "nu", "lx"], '" nulx"'),
    (Typing(("integer",)), [" ", "\n", "4", "2 "], "42"),
    (Typing(("array",)), [" ", "\n", " [1,", " 'x'", "]"], '[1, "x"]'),
    (Typing(("array",)), [" \n"] * 70 + ["[", "2]"], "[2]"),  # more than 64 pieces before the value
    (Typing(("array",)), ["[1"] + [", 1"] * 70 + ["]"], "[" + ", ".join(["1"] * 71) + "]"),
    (Typing(("array",)), ["  ", "x"], '"  x"'),  # no list: the verbatim string
])
def test_the_typed_value_writer_streams_what_the_whole_value_reads_to(typing, pieces, expected):
    """``feed`` (the mode's own function) and ``end`` give :func:`typed_json` of the whole text; ``opening`` is ``head()``."""
    tv = TypedValue(typing)
    assert tv.opening == tv.head() == ('"' if tv.mode == "string" else "")
    streamed = tv.head() + "".join(tv.feed(p) for p in pieces) + tv.end()
    assert streamed == typed_json("".join(pieces), typing) == expected


# ----------------------------------------------------------------- the undeclared modes of the typed value writer
@pytest.mark.parametrize("undeclared,pieces,expected,mode", [
    ("auto", [" ", "\n", "[1,", ' "a"]'], '[1, "a"]', "container"),  # GLM: a JSON array is itself
    ("auto", ['{"k"', ": 2}"], '{"k": 2}', "container"),
    ("auto", [" [1,", " 2"], '" [1, 2"', "container"),  # not JSON: the verbatim string
    ("auto", [" ", "42"], '" 42"', "string"),  # a scalar streams as a string (its whitespace too)
    ("auto", ["a\"", "b"], '"a\\"b"', "string"),
    ("auto", [" ", "\t"], '" \\t"', "auto"),  # only whitespace: the string
    ("auto", [], '""', "auto"),
    ("json", [" 4", "2 "], "42", "json"),  # DSML string="false": JSON as written (stripped)
    ("json", ['{"a": ', "[1]}"], '{"a": [1]}', "json"),
    ("json", ["Na", "N"], '"NaN"', "json"),  # not JSON: the raw text as a string
    ("json", ["True"], '"True"', "json"),  # (no Python literal here: JSON only)
])
def test_the_typed_value_writer_undeclared_modes(undeclared, pieces, expected, mode):
    tv = TypedValue(UNTYPED, undeclared)
    streamed = tv.opening + "".join(tv.feed(p) for p in pieces)
    assert tv.mode == mode  # (what the first non-whitespace character decided)
    streamed += tv.end()
    assert streamed == expected
    whole = "".join(pieces)
    rule = json_as_written if undeclared == "json" else json_container_or_string
    assert json.loads(streamed) == json.loads(rule(whole))


def test_a_declared_typing_is_never_the_undeclared_rule():
    # the one decision: a typing that says something is typed by it, whatever the format's undeclared rule
    assert TypedValue(Typing(("string",)), "auto").mode == "string"
    assert TypedValue(Typing(("string",), True), "json").mode == "nullable"
    assert TypedValue(Typing(("integer",)), "auto").mode == "held"
    assert TypedValue(UNTYPED).mode == "string"
    with pytest.raises(ValueError):
        TypedValue(UNTYPED, "held")


@given(st.text(alphabet=' \n[]{}"1a,:\\', max_size=16), st.lists(st.integers(0, 16), max_size=4),
       st.sampled_from(["auto", "json"]))
@settings(max_examples=400, deadline=None)
def test_the_undeclared_modes_stream_their_whole_rule_at_any_split(text, cuts, undeclared):
    cuts = sorted({c for c in cuts if c <= len(text)} | {0, len(text)})
    tv = TypedValue(UNTYPED, undeclared)
    streamed = tv.opening + "".join(tv.feed(text[a:b]) for a, b in zip(cuts, cuts[1:])) + tv.end()
    rule = json_as_written if undeclared == "json" else json_container_or_string
    assert streamed == rule(text)


def test_typed_value_shares_the_one_string_writer_and_makes_the_others():
    from callscale.parsers.schema import UNTYPED, TypedValue, Typing, typed_value

    string = typed_value(Typing(("string",)))
    assert string is typed_value(UNTYPED) is typed_value(Typing(("string",)), "auto")
    assert string.mode == "string" and string.head() == '"'
    assert string.feed('a "b"\n') == 'a \\"b\\"\\n' and string.end() == '"'
    assert string.feed("c") == "c"  # it kept nothing: the next value starts clean
    for typing, undeclared in ((Typing(("integer",)), "string"), (UNTYPED, "auto"), (UNTYPED, "json"),
                               (Typing(("string", "null")), "string")):
        made = typed_value(typing, undeclared)
        assert made is not typed_value(typing, undeclared) and made.mode == TypedValue(typing, undeclared).mode
    held = typed_value(Typing(("integer",)))
    assert held.feed(" 4") == "" and held.feed("2") == "" and held.end() == "42"
