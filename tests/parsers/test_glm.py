"""GLM-4.5 / GLM-4.7 parsers (``glm45``, ``glm47``) and their renderers."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.base import MAX_HEAD
from callscale.parsers.glm import (
    ARG_KEY,
    ARG_KEY_END,
    ARG_VALUE,
    ARG_VALUE_END,
    TOOL_CALL,
    TOOL_CALL_END,
)
from support import assert_parses, load_cases, split_at, stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.render import Call

GLM = ["glm45", "glm47"]
LAYOUT = {"glm45": "\n", "glm47": ""}


def tool(name, **types):
    """A tool in OpenAI form whose parameters have the given JSON-schema types."""
    props = {k: {"type": t} for k, t in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def call_text(fmt, name, pairs):
    """One call in ``fmt``'s layout; ``pairs`` are (key, raw value text)."""
    sep = LAYOUT[fmt]
    body = "".join(f"{ARG_KEY}{k}{ARG_KEY_END}{sep}{ARG_VALUE}{v}{ARG_VALUE_END}{sep}" for k, v in pairs)
    return f"{sep}{TOOL_CALL}{name}{sep}{body}{TOOL_CALL_END}"


# ----------------------------------------------------------------- the shared fault cases

CASES = load_cases("glm45") + load_cases("glm47")


def test_the_fault_cases_are_there():
    assert {c["id"] for c in CASES} >= {
        "glm45-array-value-duplicated-bracket", "glm47-inline-zero-arg-call", "glm47-mtp-bundled-closing-tags"}


# ----------------------------------------------------------------- layouts, content, several calls

@pytest.mark.parametrize("parser", GLM)
@pytest.mark.parametrize("layout", GLM)
def test_both_layouts_text_before_and_after(parser, layout):
    text = ("Let me check both." + call_text(layout, "get_weather", [("city", "Paris")])
            + call_text(layout, "get_weather", [("city", "São Paulo"), ("unit", "celsius")]) + "\n\nDone.")
    # only the layout the parser's own encoder writes ("\n" before <tool_call> for 4.5) is dropped
    before = "\n" if layout == "glm45" and not parsers.get(parser).layout_before_call else ""
    assert_parses(parser, text, "Let me check both." + before + "\n\nDone.",
                  [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "São Paulo", "unit": "celsius"})])


@pytest.mark.parametrize("parser", GLM)
def test_layout_whitespace_is_dropped_and_other_whitespace_kept(parser):
    # one newline before <tool_call> is layout for GLM-4.5 (its encoder writes it), content for 4.7;
    # a second one is content; whitespace between blocks and at the end is layout
    text = "A\n" + call_text("glm45", "f", []) + " \n\t" + call_text("glm47", "g", []) + "\n \n"
    assert_parses(parser, text, "A\n" if parser == "glm45" else "A\n\n", [("f", {}), ("g", {})])


@pytest.mark.parametrize("parser", GLM)
def test_zero_argument_calls_in_both_layouts(parser):
    text = "<tool_call>get_current_time</tool_call>\n<tool_call>get_date\n</tool_call><tool_call> now </tool_call>"
    assert_parses(parser, text, "", [("get_current_time", {}), ("get_date", {}), ("now", {})])


@pytest.mark.parametrize("parser", GLM)
def test_string_values_are_verbatim(parser):
    value = '  line "one"\n\tline \\two\n\n'
    text = call_text("glm47", "write", [("path", " a.txt"), ("content", value), ("empty", "")])
    assert_parses(parser, text, "", [("write", {"path": " a.txt", "content": value, "empty": ""})])


@pytest.mark.parametrize("parser", GLM)
def test_keys_are_stripped(parser):
    text = f"{TOOL_CALL}f{ARG_KEY} city\n{ARG_KEY_END}  {ARG_VALUE}Oslo{ARG_VALUE_END}{TOOL_CALL_END}"
    assert_parses(parser, text, "", [("f", {"city": "Oslo"})])


# ----------------------------------------------------------------- value types

TYPED = [tool("set_timer", minutes="number", count="integer", repeat="boolean", note="null",
              tags="array", opts="object", label="string", code=["string", "null"])]


@pytest.mark.parametrize("parser", GLM)
def test_schema_typed_values_are_json(parser):
    pairs = [("minutes", "1.5"), ("count", "15"), ("repeat", "false"), ("note", "null"),
             ("tags", '["a", "b"]'), ("opts", '{"x": [1, {"y": null}]}'), ("label", "0042"), ("code", "007")]
    text = "Setting it." + call_text(parser, "set_timer", pairs)
    expected = {"minutes": 1.5, "count": 15, "repeat": False, "note": None, "tags": ["a", "b"],
                "opts": {"x": [1, {"y": None}]}, "label": "0042", "code": "007"}
    assert_parses(parser, text, "Setting it.", [("set_timer", expected)], tools=TYPED)


@pytest.mark.parametrize("parser", GLM)
def test_typed_values_that_are_not_json(parser):
    # Python literals for typed parameters; anything else stays the verbatim string
    pairs = [("repeat", "True"), ("note", " None "), ("count", "0042"), ("minutes", "NaN"), ("tags", "[1, 2")]
    text = call_text(parser, "set_timer", pairs)
    expected = {"repeat": True, "note": None, "count": "0042", "minutes": "NaN", "tags": "[1, 2"}
    assert_parses(parser, text, "", [("set_timer", expected)], tools=TYPED)


@pytest.mark.parametrize("parser", GLM)
def test_an_escaped_lone_surrogate_in_a_json_value_stays_escaped(parser):
    # Found probing unicode: the value was decoded and written back with
    # ensure_ascii=False, so "\ud800" became a raw lone surrogate: arguments
    # text a server cannot encode as UTF-8.
    pairs = [("tags", '["\\ud800", "é\\ud83d\\ude00"]'), ("opts", '{"k\\udc00": 1}')]
    text = call_text(parser, "set_timer", pairs) + call_text(parser, "f", [("auto", '["\\udfff"]')])
    expected = [("set_timer", {"tags": ["\ud800", "é\U0001F600"], "opts": {"k\udc00": 1}}), ("f", {"auto": ["\udfff"]})]
    assert_parses(parser, text, "", expected, tools=TYPED, chunkings=["whole", "char", "fixed:5", "random:3:9"])
    got = whole_outcome(parser, text, TYPED)
    assert got.calls[0].arguments_text == '{"tags": ["\\ud800", "é😀"], "opts": {"k\\udc00": 1}}'
    for call in got.calls:
        call.arguments_text.encode("utf-8")  # no lone surrogate in the text


@pytest.mark.parametrize("parser", GLM)
def test_a_string_parameter_holding_json_stays_a_string(parser):
    text = call_text(parser, "set_timer", [("label", '["a", "b"]'), ("code", "{}")])
    assert_parses(parser, text, "", [("set_timer", {"label": '["a", "b"]', "code": "{}"})], tools=TYPED)


@pytest.mark.parametrize("parser", GLM)
@pytest.mark.parametrize("tools", [[], [tool("other", x="integer")], [tool("f")]], ids=["no-tools", "other-tool", "no-param"])
def test_undeclared_parameters_scalars_stay_strings_containers_are_json(parser, tools):
    pairs = [("n", "15"), ("b", "false"), ("z", "null"), ("s", "0042"), ("arr", ' ["Acme","Beta"]'),
             ("obj", '{"k": 1}'), ("broken", "[1, 2"), ("brace", "{not json}"), ("ws", "  ")]
    text = call_text(parser, "f", pairs)
    expected = {"n": "15", "b": "false", "z": "null", "s": "0042", "arr": ["Acme", "Beta"], "obj": {"k": 1},
                "broken": "[1, 2", "brace": "{not json}", "ws": "  "}
    assert_parses(parser, text, "", [("f", expected)], tools=tools)


def test_tools_as_objects():
    class Obj:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    tools = [Obj(type="function", function=Obj(name="f", parameters={"properties": {"n": {"type": "integer"}}}))]
    text = call_text("glm47", "f", [("n", "7"), ("m", "7")])
    assert_parses("glm47", text, "", [("f", {"n": 7, "m": "7"})], tools=tools)


# ----------------------------------------------------------------- literal tags inside values

@pytest.mark.parametrize("parser", GLM)
def test_literal_closing_tags_in_a_string_value(parser):
    value = (f"if text.endswith('{ARG_VALUE_END}'):\n    end = '{TOOL_CALL_END}'\n"
             f"x = '{TOOL_CALL}f{ARG_KEY}'  # {ARG_VALUE_END} {ARG_KEY_END}\n{ARG_VALUE_END}")
    text = "Editing." + call_text(parser, "edit", [("new", value), ("path", "p.py")]) + call_text(parser, "g", [])
    assert_parses(parser, text, "Editing.", [("edit", {"new": value, "path": "p.py"}), ("g", {})])


@pytest.mark.parametrize("parser", GLM)
def test_literal_closing_tag_in_a_typed_value(parser):
    text = call_text(parser, "f", [("tags", f'["{ARG_VALUE_END}", "x"]')])
    assert_parses(parser, text, "", [("f", {"tags": [ARG_VALUE_END, "x"]})], tools=[tool("f", tags="array")])


# ----------------------------------------------------------------- not calls, malformed calls

@pytest.mark.parametrize("parser", GLM)
def test_an_opener_in_prose_stays_content(parser):
    text = "Wrap it in <tool_call> tags, like <tool_call>this one</tool_call> or <tool_call>{\"name\": 1}</tool_call>."
    assert_parses(parser, text, text, [])


@pytest.mark.parametrize("parser", GLM)
def test_a_name_longer_than_the_limit_is_content(parser):
    name = "n" * (MAX_HEAD + 1)
    text = f"{TOOL_CALL}{name}{TOOL_CALL_END}" + call_text(parser, "ok", [])
    assert_parses(parser, text, f"{TOOL_CALL}{name}{TOOL_CALL_END}", [("ok", {})])
    name = "n" * MAX_HEAD
    assert_parses(parser, f"{TOOL_CALL}{name}{TOOL_CALL_END}", "", [(name, {})])


@pytest.mark.parametrize("parser", GLM)
def test_the_name_bound_counts_the_layout_newline_before_arg_key(parser):
    # the name step takes "\n<arg_key>" after a name at once; the bound (MAX_HEAD) still counts that newline
    name = "n" * (MAX_HEAD - 1)
    body = f"{ARG_KEY}a{ARG_KEY_END}{ARG_VALUE}b{ARG_VALUE_END}{TOOL_CALL_END}"
    assert_parses(parser, f"{TOOL_CALL}{name}\n{body}", "", [(name, {"a": "b"})])
    text = f"{TOOL_CALL}{name}n\n{ARG_KEY}a{ARG_KEY_END}"  # MAX_HEAD + 1 characters before <arg_key>: no name
    assert_parses(parser, text, text, [])
    assert_parses(parser, f"{TOOL_CALL}{name}n{body}", "", [(name + "n", {"a": "b"})])  # MAX_HEAD, no newline


@pytest.mark.parametrize("parser", GLM)
def test_a_name_cut_by_the_end_of_the_output_at_a_delta_boundary(parser):
    for tail in ("get_wea", "get_weather\n", "get_weather \n", "get_weather\n<arg_"):
        for deltas in (["Hi.", TOOL_CALL, tail], ["Hi.", TOOL_CALL + tail], ["Hi." + TOOL_CALL, tail[:3], tail[3:]]):
            got = stream_outcome(parser, deltas)
            assert (got.content, got.calls) == ("Hi.", []), deltas


@pytest.mark.parametrize("parser", GLM)
def test_repeated_and_empty_openers_give_nothing(parser):
    assert_parses(parser, "Thinking." + TOOL_CALL * 50, "Thinking.", [])
    # the newline before an opener is layout only where the encoder writes one (4.5)
    assert_parses(parser, ("\n" + TOOL_CALL) * 20 + call_text(parser, "f", [("a", "b")]),
                  "" if parser == "glm45" else "\n" * 20, [("f", {"a": "b"})])
    assert_parses(parser, f"x{TOOL_CALL} \n{TOOL_CALL_END}y", "xy", [])


@pytest.mark.parametrize("parser", GLM)
def test_an_unclosed_call_is_abandoned_and_earlier_calls_kept(parser):
    good = call_text(parser, "f", [("a", "1")])
    for tail in (f"{TOOL_CALL}g{ARG_KEY}k{ARG_KEY_END}{ARG_VALUE}long value",
                 f"{TOOL_CALL}g{ARG_KEY}k{ARG_KEY_END}{ARG_VALUE}v{ARG_VALUE_END}",
                 f"{TOOL_CALL}g{ARG_KEY}k"):
        text = "Hi." + good + tail
        got = stream_outcome(parser, [text[i:i + 5] for i in range(0, len(text), 5)])
        assert got.content == "Hi."
        assert got.complete_calls() == [("f", {"a": "1"})]
        assert [c.name for c in got.calls] == ["f", "g"]  # g was started, then abandoned
        whole = whole_outcome(parser, text)
        assert (whole.content, whole.complete_calls()) == ("Hi.", [("f", {"a": "1"})])
        assert [c.name for c in whole.calls] == ["f"]


@pytest.mark.parametrize("parser", GLM)
def test_a_truncated_name_is_a_cut_call_and_no_content(parser):
    # DESIGN.md "Content and markup": the markup of a call cut by the end of the output is dropped
    assert_parses(parser, "Hi." + TOOL_CALL + "get_wea", "Hi.", [])


@pytest.mark.parametrize("parser", GLM)
def test_a_value_without_arg_value_ended_by_the_output_is_content(parser):
    # <arg_value> missing and no </arg_value> before the end: no value, the call is malformed, the text is content
    text = "Hi." + TOOL_CALL + "f" + ARG_KEY + "a" + ARG_KEY_END + "Then I stopped."
    for got in [whole_outcome(parser, text)] + [stream_outcome(parser, split_at(text, [k])) for k in range(len(text) + 1)]:
        assert got.content == "Hi.Then I stopped." and got.complete_calls() == []


@pytest.mark.parametrize("parser", GLM)
def test_a_broken_call_is_abandoned_and_the_rest_read_as_content(parser):
    after = call_text(parser, "h", [("q", "x")])
    for broken, rest in ((f"{TOOL_CALL}f{ARG_KEY}a{ARG_KEY_END} oops", "oops"),
                         (f"{TOOL_CALL}f{ARG_KEY}a{TOOL_CALL_END}", "")):  # no markup as content
        text = "A" + broken + "B" + after
        got = stream_outcome(parser, list(text))
        assert got.content == "A" + rest + "B"
        assert got.complete_calls() == [("h", {"q": "x"})]
        assert [c.name for c in got.calls] == ["f", "h"]
        whole = whole_outcome(parser, text)
        assert (whole.content, whole.complete_calls()) == ("A" + rest + "B", [("h", {"q": "x"})])
    # a new opener inside a key starts a new call
    text = f"{TOOL_CALL}f{ARG_KEY}a" + after.lstrip("\n")
    got = stream_outcome(parser, list(text))
    assert (got.content, got.complete_calls()) == ("", [("h", {"q": "x"})])


SAMPLE = "Let me look.\n" + call_text("glm45", "read_file", [("path", "a b.txt"), ("limit", "20")]) + \
    call_text("glm47", "search", [("q", "x</arg_value>y"), ("tags", '["t"]')])
SAMPLE_CALLS = [("read_file", {"path": "a b.txt", "limit": 20}), ("search", {"q": "x</arg_value>y", "tags": ["t"]})]
SAMPLE_TOOLS = [tool("read_file", path="string", limit="integer"), tool("search", q="string", tags="array")]


@pytest.mark.parametrize("parser", GLM)
def test_truncated_output_never_raises_nor_invents_a_call(parser):
    assert_parses(parser, SAMPLE, "Let me look.\n" + ("" if parser == "glm45" else "\n"), SAMPLE_CALLS, tools=SAMPLE_TOOLS)
    for cut in range(len(SAMPLE) + 1):
        text = SAMPLE[:cut]
        for got in (stream_outcome(parser, [text[i:i + 3] for i in range(0, len(text), 3)], SAMPLE_TOOLS),
                    whole_outcome(parser, text, SAMPLE_TOOLS)):
            assert got.content.startswith("Let me look."[:cut]), (cut, got.content)
            done = got.complete_calls()
            assert done == SAMPLE_CALLS[:len(done)], (cut, done)


@pytest.mark.parametrize("parser", GLM)
def test_odd_output_never_raises(parser):
    odd = ["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "\n", " ", "f",
           "[", "{", '"', "1", "<", "tool_call>"]
    import random

    rng = random.Random(5)
    for _ in range(300):
        text = "".join(rng.choice(odd) for _ in range(rng.randint(1, 30)))
        stream_outcome(parser, list(text), TYPED)
        stream_outcome(parser, [text], [])
        whole_outcome(parser, text, TYPED)


@pytest.mark.parametrize("parser", GLM)
def test_long_content_without_calls(parser):
    text = "plain <b>text</b> <tool_ and more\n" * 300
    assert_parses(parser, text, text, [], chunkings=["whole", "fixed:7", "random:3:8"])


# ----------------------------------------------------------------- streaming

@pytest.mark.parametrize("parser", GLM)
def test_a_long_string_value_streams_as_it_arrives(parser):
    value = "x = 'é\"\\\n' " * 200
    text = "Writing." + call_text(parser, "write_file", [("path", "a.py"), ("content", value)])
    tools = [tool("write_file", path="string", content="string")]
    p = parsers.get(parser)()
    pieces = []
    sent = None
    for i in range(0, len(text), 4):
        pieces += [item.parameters for item in p.parse_streaming_increment(text[i:i + 4], tools).calls]
        if sent is None and i >= len(text) * 3 // 4:
            sent = len("".join(pieces))
    # three quarters of the text in, most of the escaped value has been sent
    assert sent >= len(json.dumps(value, ensure_ascii=False)) * 0.5
    pieces += [c.parameters for c in p.finish(tools).calls]
    assert json.loads("".join(pieces)) == {"path": "a.py", "content": value}


@pytest.mark.parametrize("parser", GLM)
def test_layout_after_a_closed_value_is_not_text_of_a_later_value(parser):
    # whitespace held after one </arg_value> (confirmed by <arg_key>) is layout: it never joins the text of a
    # later literal </arg_value>, whatever the split (special tokens whole, or split inside)
    text = (f"{TOOL_CALL}f\n{ARG_KEY}a{ARG_KEY_END}\n{ARG_VALUE}1{ARG_VALUE_END}\n \n{ARG_KEY}b{ARG_KEY_END}"
            f"{ARG_VALUE}x{ARG_VALUE_END}y{ARG_VALUE_END}\n{TOOL_CALL_END}")
    tokens = re.split(r"(<[^<>]*>|\n)", text)
    assert_parses(parser, text, "", [("f", {"a": "1", "b": f"x{ARG_VALUE_END}y"})], deltas=[t for t in tokens if t])


@pytest.mark.parametrize("parser", GLM)
def test_several_tags_in_one_delta(parser):
    text = "ok" + call_text(parser, "f", [("a", "1"), ("b", "2")]) + call_text(parser, "g", [])
    deltas = [text[:6], text[6:-5], text[-5:]]
    assert_parses(parser, text, "ok", [("f", {"a": "1", "b": "2"}), ("g", {})], deltas=deltas,
                  chunkings=["whole"])


def test_finish_twice_and_after_finish():
    p = parsers.get("glm47")()
    assert p.parse_streaming_increment("<tool_call>f</tool_call>x <tool_", []).normal_text == "x "
    assert p.finish().normal_text == "<tool_"
    assert p.finish().normal_text == ""
    assert p.parse_streaming_increment("more", []).normal_text == ""


def test_registered_and_rendered():
    assert {"glm45", "glm47"} <= set(parsers.names())
    calls = [Call("f", {"a": "x", "n": 3}), Call("g")]
    assert render.get("glm45").render(calls, "Hi") == (
        "Hi\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\n<arg_key>n</arg_key>\n"
        "<arg_value>3</arg_value>\n</tool_call>\n<tool_call>g\n</tool_call>")
    assert render.get("glm47").render(calls, "Hi") == (
        "Hi<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value><arg_key>n</arg_key>"
        "<arg_value>3</arg_value></tool_call><tool_call>g</tool_call>")
    assert render.get("glm45").render([], "Hi") == "Hi"
    assert render.get("glm47").opener == TOOL_CALL


# ----------------------------------------------------------------- property: render, split anywhere, parse

_TAGS = [TOOL_CALL, TOOL_CALL_END, ARG_KEY, ARG_KEY_END, ARG_VALUE, ARG_VALUE_END]
#: Value text that reads as markup: a closing tag followed by a continuation, and the
#: recoveries of a missing </arg_value> (<arg_key>K</arg_key>; </tool_call> before a new call or the end).
_AMBIGUOUS = re.compile(re.escape(ARG_VALUE_END) + r"\s*(" + re.escape(ARG_KEY) + "|" + re.escape(TOOL_CALL_END) + ")"
                        + "|" + re.escape(ARG_KEY) + "[^<\n]*" + re.escape(ARG_KEY_END)
                        + "|" + re.escape(TOOL_CALL_END) + r"\s*(" + re.escape(TOOL_CALL) + r"|\Z)")

_text = st.text(alphabet=st.sampled_from(list("ab zé東\n\t\"'\\{}[]<>/_:,0-") + ["😀"]), max_size=12)
_string_value = st.lists(st.one_of(_text, st.sampled_from(_TAGS)), max_size=5).map("".join).filter(
    lambda s: not _AMBIGUOUS.search(s))
_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                  st.floats(allow_nan=False, allow_infinity=False, width=32), _string_value)
_json = st.recursive(_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(_text, inner, max_size=3)), max_leaves=6)
_TYPES = {
    "string": _string_value,
    "integer": st.integers(-10**9, 10**9),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "array": st.lists(_json, max_size=3),
    "object": st.dictionaries(_text, _json, max_size=3),
}
_name = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@st.composite
def _glm_calls(draw):
    """Calls with a tool schema each: parameter types drawn, then values of those types."""
    calls, tools = [], {}
    for _ in range(draw(st.integers(0, 3))):
        name = draw(_name)
        types = tools.setdefault(name, {})
        args = {}
        for key in draw(st.lists(_key, max_size=4, unique=True)):
            kind = types.setdefault(key, draw(st.sampled_from(sorted(_TYPES))))
            args[key] = draw(_TYPES[kind])
        calls.append(Call(name, args))
    tool_list = [tool(n, **t) for n, t in tools.items()]
    return calls, tool_list


_content = st.lists(st.sampled_from(list("ab \n<>/_é\"") + ["</tool_call>", "<arg_key>", "<tool_"]),
                   max_size=20).map("".join).filter(lambda s: TOOL_CALL not in s)


@pytest.mark.parametrize("fmt", GLM)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rendered_calls_parse_back_under_any_split(fmt, data):
    calls, tools = data.draw(_glm_calls())
    for call in calls:  # a typed value's JSON text must not hold an ambiguous closing tag either
        for value in call.arguments.values():
            if not isinstance(value, str):
                text_value = json.dumps(value, ensure_ascii=False)
                if _AMBIGUOUS.search(text_value):
                    return
    content = data.draw(_content)
    tail = data.draw(_content) if calls else ""
    text = render.get(fmt).render(calls, content) + tail
    deltas = split_at(text, data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    for parser in GLM:  # each parser reads both layouts
        # a newline right before <tool_call> is layout only for the parser whose encoder writes it (4.5)
        layout = parsers.get(parser).layout_before_call
        expected_content = content
        if calls and not render.get(fmt).render(calls).startswith(layout) and content.endswith(layout):
            expected_content = content[:len(content) - len(layout)]
        elif calls and render.get(fmt).render(calls).startswith("\n") and not layout:
            expected_content = content + "\n"
        if tail.strip():
            expected_content += tail
        expected = check.outcome_of(expected_content, [(c.name, dict(c.arguments)) for c in calls])
        streamed = stream_outcome(parser, deltas, tools)
        whole = whole_outcome(parser, text, tools)
        assert not check.compare(streamed, expected), (parser, check.compare(streamed, expected))
        assert not check.compare(whole, expected), (parser, check.compare(whole, expected))
        assert len(streamed.calls) == len(calls)


# ----------------------------------------------------------------- recoveries
RECOVER_TOOLS = [tool("f", city="string", days="integer")]


@pytest.mark.parametrize("parser", GLM)
@pytest.mark.parametrize("pairs,expected", [
    # </arg_value> missing before the next <arg_key>, before </tool_call>
    ([("city", "Paris", ""), ("days", "3", "</arg_value>")], {"city": "Paris", "days": 3}),
    ([("city", "Paris", "</arg_value>"), ("days", "3", "")], {"city": "Paris", "days": 3}),
    ([("city", "Paris", ""), ("days", "3", "")], {"city": "Paris", "days": 3}),
])
def test_a_value_without_its_closing_tag(parser, pairs, expected):
    sep = LAYOUT[parser]
    body = "".join(f"{ARG_KEY}{k}{ARG_KEY_END}{sep}{ARG_VALUE}{v}{close}{sep}" for k, v, close in pairs)
    text = f"Checking.{sep}{TOOL_CALL}f{sep}{body}{TOOL_CALL_END}"
    assert_parses(parser, text, "Checking.", [("f", expected)], tools=RECOVER_TOOLS)
    # followed by another call: </tool_call> then <tool_call> confirm the end
    text += call_text(parser, "f", [("city", "Rome")])
    assert_parses(parser, text, "Checking.", [("f", expected), ("f", {"city": "Rome"})], tools=RECOVER_TOOLS)


@pytest.mark.parametrize("parser", GLM)
def test_a_value_without_its_opening_tag(parser):
    sep = LAYOUT[parser]
    text = (f"{TOOL_CALL}f{sep}{ARG_KEY}city{ARG_KEY_END}{sep}Paris{ARG_VALUE_END}{sep}"
            f"{ARG_KEY}days{ARG_KEY_END}{sep}3{ARG_VALUE_END}{sep}{TOOL_CALL_END}")
    assert_parses(parser, text, "", [("f", {"city": "Paris", "days": 3})], tools=RECOVER_TOOLS)
    # any other tag before </arg_value>: no value, the call is broken; its text up to its </tool_call>
    # is the broken call's (dropped), before another call or the end it is content
    text = f"A{TOOL_CALL}f{ARG_KEY}city{ARG_KEY_END}Paris and more{TOOL_CALL_END}B"
    got = whole_outcome(parser, text, RECOVER_TOOLS)
    assert (got.content, got.complete_calls()) == ("AB", [])
    text = f"A{TOOL_CALL}f{ARG_KEY}city{ARG_KEY_END}Paris and more{ARG_KEY}B"
    got = whole_outcome(parser, text, RECOVER_TOOLS)
    assert (got.content, got.complete_calls()) == ("AParis and more" + ARG_KEY + "B", [])


@pytest.mark.parametrize("parser", GLM)
@pytest.mark.parametrize("value", [
    f"used key {ARG_KEY}city{ARG_KEY_END} again",
    f"unknown key {ARG_KEY}zone{ARG_KEY_END} here",
    f"a key tag {ARG_KEY}days with no end",
    f"ends a call {TOOL_CALL_END} in prose",
    f"{TOOL_CALL_END}{TOOL_CALL_END}",
])
def test_recovery_tags_that_are_value_text(parser, value):
    text = call_text(parser, "f", [("city", value), ("days", "3")])
    assert_parses(parser, text, "", [("f", {"city": value, "days": 3})], tools=RECOVER_TOOLS)


@pytest.mark.parametrize("parser", GLM)
def test_degenerate_recovery_tags_in_a_value_are_read_once(parser):
    value = f"x {ARG_KEY}city{ARG_KEY_END} y {TOOL_CALL_END} z {ARG_KEY}" * 1000
    text = call_text(parser, "f", [("city", value)])
    assert_parses(parser, text, "", [("f", {"city": value})], tools=RECOVER_TOOLS, chunkings=["whole", "fixed:4"])
