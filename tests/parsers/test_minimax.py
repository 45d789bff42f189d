"""The MiniMax M2 parser (``minimax_m2``): fault cases, typed values, literal closing tags,
malformed and truncated output, and a property test over rendered calls."""

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.minimax import BLOCK_CLOSE, BLOCK_OPEN, PARAM_CLOSE
from support import CHUNKINGS, assert_parses, split_by_sizes, stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.render import Call
from callscale.workloads.render.minimax import value_text
from callscale.workloads.chunking import chunk

P = "minimax_m2"
R = render.get(P)


def tool(name, /, **types):
    """A tool in OpenAI form whose parameters have the given JSON-schema types."""
    props = {k: {"type": t} for k, t in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def block(*invokes):
    return "\n" + BLOCK_OPEN + "\n" + "".join(invokes) + BLOCK_CLOSE


def invoke(name, *params):
    return f'<invoke name="{name}">\n' + "".join(params) + "</invoke>\n"


def param(key, value):
    return f'<parameter name="{key}">{value}</parameter>\n'



def test_text_after_the_block_is_content():
    text = block(invoke("get_time", param("timezone", "UTC"))) + "\nAll set."
    assert_parses(P, "Checking." + text, "Checking.\nAll set.", [("get_time", {"timezone": "UTC"})])


# ---------------------------------------------------------------- layout and calls

def test_layout_newline_before_the_block_is_not_content():
    # the template writes '\n' before the block; one more newline is the model's content
    assert_parses(P, "Checking.\n" + block(invoke("f", param("a", "1"))), "Checking.\n", [("f", {"a": "1"})])
    assert_parses(P, block(invoke("f")), "", [("f", {})])


def test_several_invokes_in_one_block():
    text = "Two." + block(invoke("a", param("x", "1")), invoke("b"), invoke("c", param("y", "z"), param("w", "")))
    assert_parses(P, text, "Two.", [("a", {"x": "1"}), ("b", {}), ("c", {"y": "z", "w": ""})])


def test_one_block_per_call():
    text = "Go." + block(invoke("a", param("x", "1"))) + block(invoke("b", param("y", "2"))) + "\nDone."
    assert_parses(P, text, "Go.\nDone.", [("a", {"x": "1"}), ("b", {"y": "2"})])


def test_string_values_are_verbatim():
    value = '  two\n\nlines with "quotes", \\backslashes\\, a<b>.py, 中文 and </invoke></minimax:tool_call>\n'
    text = block(invoke("write_file", param("path", "a<b>.py"), param("content", value)))
    assert_parses(P, text, "", [("write_file", {"path": "a<b>.py", "content": value})])


def test_renderer_matches_the_template_layout():
    text = R.render([Call("get_weather", {"city": "Paris", "days": 3})], content="Hi.")
    assert text == ('Hi.\n<minimax:tool_call>\n<invoke name="get_weather">\n'
                    '<parameter name="city">Paris</parameter>\n<parameter name="days">3</parameter>\n'
                    '</invoke>\n</minimax:tool_call>')
    assert R.render([], content="no calls") == "no calls"


# ---------------------------------------------------------------- typed values

TYPED_TOOLS = [tool("set", n="integer", f="number", ok="boolean", obj="object", arr="array",
                    maybe=["null", "integer"], s="string", code="string")]


def test_values_are_read_as_json_when_the_schema_gives_a_type():
    text = block(invoke("set", param("n", "15"), param("f", "-2.5e3"), param("ok", "false"),
                        param("obj", '{"a": [1, "</parameter>"]}'), param("arr", '["a", "b"]'),
                        param("maybe", "null"), param("s", "0042"), param("code", "true")))
    args = {"n": 15, "f": -2500.0, "ok": False, "obj": {"a": [1, "</parameter>"]}, "arr": ["a", "b"],
            "maybe": None, "s": "0042", "code": "true"}
    assert_parses(P, text, "", [("set", args)], tools=TYPED_TOOLS)


def test_without_a_schema_every_value_is_a_string():
    text = block(invoke("set", param("n", "15"), param("ok", "false")))
    assert_parses(P, text, "", [("set", {"n": "15", "ok": "false"})], tools=[])


def test_a_typed_value_that_is_not_json_keeps_the_string():
    # (True for a boolean is true: the one schema rule, parsers.schema)
    text = block(invoke("set", param("n", "fifteen"), param("f", "NaN"), param("ok", "True"), param("arr", "[1,")))
    assert_parses(P, text, "", [("set", {"n": "fifteen", "f": "NaN", "ok": True, "arr": "[1,"})],
                  tools=TYPED_TOOLS)


def test_a_typed_value_nested_too_deep_for_the_decoder_keeps_the_string(caplog):
    # Found by fuzzing: json.loads raised RecursionError on a deeply nested
    # typed value; the base class caught it as a parser bug (logged) and
    # dropped the call. Too deep for Python's decoder is "not JSON": the
    # string is kept and the call made.
    deep = "[" * 5000 + "]" * 5000
    text = "Hi" + block(invoke("set", param("arr", deep), param("n", "7")), invoke("go"))
    with caplog.at_level("WARNING", logger="parsers"):
        assert_parses(P, text, "Hi", [("set", {"arr": deep, "n": 7}), ("go", {})], tools=TYPED_TOOLS,
                      chunkings=["whole", "char", "fixed:7", "random:3:40"])
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


def test_an_escaped_lone_surrogate_in_a_typed_value_stays_escaped():
    # Found probing unicode: "\ud800" in a JSON value was written back as a raw
    # lone surrogate: arguments text a server cannot encode as UTF-8.
    text = block(invoke("set", param("arr", '["\\ud800", "\\ud83d\\ude00"]'), param("obj", '{"\\udc00": 1}')))
    expected = {"arr": ["\ud800", "\U0001F600"], "obj": {"\udc00": 1}}
    assert_parses(P, text, "", [("set", expected)], tools=TYPED_TOOLS, chunkings=["whole", "char", "fixed:5", "random:3:9"])
    got = whole_outcome(P, text, TYPED_TOOLS)
    assert got.calls[0].arguments_text == '{"arr": ["\\ud800", "😀"], "obj": {"\\udc00": 1}}'
    got.calls[0].arguments_text.encode("utf-8")


def test_tools_as_objects_and_unknown_tools():
    # a call to a tool that is not in the list is still reported, values as strings
    text = block(invoke("other", param("n", "15")))
    assert_parses(P, text, "", [("other", {"n": "15"})], tools=TYPED_TOOLS)


# ---------------------------------------------------------------- literal closing tags in values

@pytest.mark.parametrize("value", [
    "a</parameter>b",
    "</parameter>",
    "x</parameter>\n",
    "x</parameter>\n</invoke>\nnot a continuation",
    "x</parameter> </invoke> </parameter>",
    '</parameter>\n<parameter name=no quote',
    "ends with a partial tag </param",
    "</parameter></parameter></parameter>",
    "</invoke>\n<invoke name=\"q\">",  # no </parameter> before it: plain text
])
def test_a_literal_closing_tag_in_a_value_is_text(value):
    text = block(invoke("edit", param("old", value), param("new", "y"))) + "after"
    assert_parses(P, text, "after", [("edit", {"old": value, "new": "y"})])


def test_a_literal_closing_tag_in_the_last_value():
    value = "if s.endswith('</parameter>'):\n    </invoke> stays"
    text = block(invoke("edit", param("code", value)), invoke("next"))
    assert_parses(P, text, "", [("edit", {"code": value}), ("next", {})])


def test_closing_tag_followed_by_the_end_of_the_output_ends_the_call():
    text = "\n" + BLOCK_OPEN + '\n<invoke name="f">\n<parameter name="a">v</parameter>\n</invoke>\n'
    assert_parses(P, text, "", [("f", {"a": "v"})])


def test_string_values_stream_before_the_call_closes():
    value = "0123456789" * 50
    text = block(invoke("write_file", param("content", value + PARAM_CLOSE + " held back")))
    parser = parsers.get(P)()
    results = [parser.parse_streaming_increment(d, []) for d in chunk(text[:len(text) // 2], "fixed:5")]
    args = check.assemble(results).calls[0].arguments_text
    assert args.startswith('{"content": "0123')
    assert len(args) >= len(text) // 2 - 80  # hold-back is at most a partial marker


def test_a_held_back_closing_tag_is_released_when_rejected():
    parser = parsers.get(P)()
    head = "\n" + BLOCK_OPEN + '\n<invoke name="f">\n<parameter name="a">x'
    got = [parser.parse_streaming_increment(head, [])]
    got.append(parser.parse_streaming_increment("</parameter>\n\n", []))
    assert check.assemble(got).calls[0].arguments_text == '{"a": "x'  # undecided: held back
    got.append(parser.parse_streaming_increment("y", []))
    assert check.assemble(got).calls[0].arguments_text == '{"a": "x</parameter>\\n\\ny'


# ---------------------------------------------------------------- malformed output

def test_repeated_opener_gives_no_call_and_stays_content():
    text = "Let me call.\n" + (BLOCK_OPEN + "\n") * 3000
    content = text[:-len(BLOCK_OPEN + "\n")]  # the last block is cut by the end of the output: no content
    for deltas in ([text], chunk(text, "tokens:4", R.special_tokens), chunk(text, "fixed:7")):
        out = stream_outcome(P, deltas)
        assert out.calls == [] and out.content == content
    assert whole_outcome(P, text).content == content


def test_openers_in_a_row_are_content_and_the_last_one_opens_the_block():
    # without whitespace between them (a step reads the run); after a call a new opener opens a new block
    text = ("A" + BLOCK_OPEN * 3 + "\n" + invoke("f", param("x", "v")) + BLOCK_OPEN * 2 + invoke("g")
            + BLOCK_CLOSE)
    deltas = [piece for part in text.split(BLOCK_OPEN) for piece in (BLOCK_OPEN, part)][1:]
    assert_parses(P, text, "A" + BLOCK_OPEN * 3, [("f", {"x": "v"}), ("g", {})], deltas=deltas)


def test_empty_block_and_garbage_block_are_content():
    for text in ["A\n" + BLOCK_OPEN + "\n" + BLOCK_CLOSE + " B",
                 "A\n" + BLOCK_OPEN + "\nnot an invoke\n" + BLOCK_CLOSE,
                 "A\n" + BLOCK_OPEN + '\n<invoke name="two words">\n</invoke>\n' + BLOCK_CLOSE]:
        assert_parses(P, text, text, [])


def test_garbage_after_a_call_ends_the_block_as_content():
    # a parameterless invoke: its </invoke> is not inside a value, so it closes the call
    text = block(invoke("f"))[:-len(BLOCK_CLOSE)] + "oops, prose"
    assert_parses(P, text, "\noops, prose", [("f", {})])


def test_prose_after_parameter_and_invoke_tags_keeps_them_in_the_value():
    # </parameter></invoke> followed by prose is no valid continuation (formats.md, DSML
    # rule): the tags are value text, and the call never closes
    text = "\n" + BLOCK_OPEN + '\n<invoke name="f">\n<parameter name="a">1</parameter>\n</invoke>\noops'
    whole = whole_outcome(P, text)
    assert whole.content == "" and whole.calls == []
    streamed = stream_outcome(P, chunk(text, "char"))
    assert streamed.calls[0].arguments_text == '{"a": "1</parameter>\\n</invoke>\\noops'


def test_a_malformed_invoke_is_abandoned_and_the_next_one_read():
    bad = '<invoke name="bad">\nstray text\n<parameter name="a">1</parameter>\n</invoke>\n'
    text = "Before." + block(bad, invoke("good", param("b", "2"))) + "After."
    whole = whole_outcome(P, text)
    assert whole.content == "Before.After."
    assert whole.complete_calls() == [("good", {"b": "2"})]
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec))
        assert not check.compare(got, whole), spec
        assert [c.name for c in got.calls] == ["bad", "good"]  # the abandoned name was already sent
        assert got.calls[0].arguments() is None


def test_unclosed_calls_are_abandoned_and_content_kept():
    for tail in ['<invoke name="f">\n<parameter name="a">never closed',
                 '<invoke name="f">\n<parameter name="a">v</parameter>\n',
                 '<invoke name="f">\n<parameter name="a',
                 '<invoke name="f">\n']:
        text = "Content.\n" + BLOCK_OPEN + "\n" + invoke("ok", param("x", "1")) + tail
        whole = whole_outcome(P, text)
        assert whole.content == "Content." and whole.complete_calls() == [("ok", {"x": "1"})]
        for spec in ["char", "fixed:3", "random:1:8"]:
            assert not check.compare(stream_outcome(P, chunk(text, spec)), whole), (tail, spec)


GOOD = R.render([Call("get_weather", {"city": "Zürich", "unit": "c"}),
                 Call("write", {"path": "x.py", "content": "a</parameter>\nb</invoke>", "n": 2})],
                content="Sure, checking.")
GOOD_TOOLS = [tool("write", n="integer")]
GOOD_CALLS = [("get_weather", {"city": "Zürich", "unit": "c"}),
              ("write", {"path": "x.py", "content": "a</parameter>\nb</invoke>", "n": 2})]


def test_truncated_output_never_raises_nor_invents_calls():
    for i in range(len(GOOD) + 1):
        prefix = GOOD[:i]
        whole = whole_outcome(P, prefix, GOOD_TOOLS)
        calls = whole.complete_calls()
        assert calls == GOOD_CALLS[:len(calls)], i
        if i <= len("Sure, checking."):
            assert whole.content == prefix
        else:
            assert whole.content.startswith("Sure, checking.")
        for spec in ["char", "fixed:3"]:
            got = stream_outcome(P, chunk(prefix, spec), GOOD_TOOLS)
            assert not check.compare(got, whole), (i, spec)


# ---------------------------------------------------------------- property test

_AMBIGUOUS = re.compile(r'</parameter>\s*(?:<parameter name="|</invoke>\s*(?:<invoke name="|</?minimax:tool_call>))')

_FRAGMENTS = st.sampled_from([
    "</parameter>", "</invoke>", "</minimax:tool_call>", "<minimax:tool_call>", "<parameter name=\"k\">",
    "</parameter>\n</invoke>\n", "</parameter> ", "</invoke>\n", "</para",
    "\n", " ", "  ", '"', "\\", "\\n", "<", ">", "é", "中文", "😀", "{", "}",
])
# fragments twice as likely as free text
_TEXT = st.lists(st.one_of(st.text(max_size=6), _FRAGMENTS, _FRAGMENTS), max_size=8).map("".join)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False), _TEXT)
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=6)
#: argument values: mostly strings (the streamed case), else any JSON value
_ARG = st.one_of(_TEXT, _TEXT, _TEXT, _JSON)
_KEY = st.text(st.characters(codec="utf-8", exclude_characters='<>"\n', exclude_categories=("Cs",)),
               min_size=1, max_size=8)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
_CONTENT = _TEXT.filter(lambda s: BLOCK_OPEN not in s)


def _schema_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return {str: "string", list: "array", dict: "object"}[type(value)]


@st.composite
def _calls(draw):
    names = draw(st.lists(_NAME, min_size=1, max_size=3, unique=True))
    calls = []
    for name in names:
        args = draw(st.dictionaries(_KEY, _ARG, max_size=4))
        args = {k: v for k, v in args.items() if not _AMBIGUOUS.search(value_text(v))}
        calls.append(Call(name, args))
    return calls


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls(), content=_CONTENT, sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12),
       typed=st.booleans())
def test_rendered_calls_parse_back_under_any_split(calls, content, sizes, typed):
    tools = [tool(c.name, **{k: _schema_type(v) for k, v in c.arguments.items()}) for c in calls] if typed else []
    if not typed:  # without a schema every value is a string
        calls = [Call(c.name, {k: v for k, v in c.arguments.items() if isinstance(v, str)}) for c in calls]
    text = R.render(calls, content=content)
    expected = [(c.name, json.loads(json.dumps(dict(c.arguments)))) for c in calls]
    assert_parses(P, text, content, expected, tools=tools, chunkings=[], deltas=split_by_sizes(text, sizes))


def test_whitespace_after_a_closing_tag_is_held_bounded_as_in_every_format():
    """``</parameter>`` is confirmed by the scanner's ``match`` into base.py's ``_confirm_ws`` (whitespace held as run lengths): a run of
    whitespace of any length costs one run; past ``MAX_LAYOUT_RUNS`` runs the tag is value text."""
    from callscale.parsers.base import MAX_LAYOUT_RUNS

    long_ws = block(invoke("f", '<parameter name="a">x</parameter>' + "\n" * 100_000))
    assert_parses(P, long_ws, "", [("f", {"a": "x"})], chunkings=["whole", "fixed:7"])
    parser = parsers.get(P)()
    parser.parse_streaming_increment('\n<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">x</parameter>')
    for _ in range(50_000):
        parser.parse_streaming_increment(" \n")
    held = sum(map(len, parser._pending)) + sum(len(str(run)) for run in parser._confirm_ws.runs)
    assert held < 100  # 100,000 characters of whitespace held as two runs, not as text
    many_runs = block(invoke("f", '<parameter name="a">x</parameter>' + " \n" * MAX_LAYOUT_RUNS + "y</parameter>\n"))
    assert_parses(P, many_runs, "", [("f", {"a": "x</parameter>" + " \n" * MAX_LAYOUT_RUNS + "y"})],
                  chunkings=["whole", "fixed:3"])


def test_a_call_whose_invoke_closed_survives_an_output_cut_in_the_next_tag():
    """``</invoke>`` then a cut ``<inv``: the call is complete, the cut tag is a cut call's markup (dropped)."""
    text = '\n<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">x</parameter>\n</invoke>\n<inv'
    assert_parses(P, text, "", [("f", {"a": "x"})], chunkings=["whole", "char", "fixed:3"])
