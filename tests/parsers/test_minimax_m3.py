"""The MiniMax M3 parser (``minimax_m3``): the rendering, reasoning, element-tree values read
incrementally, schema typing, literal closing tags, broken and truncated output, and a property
test over rendered calls."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import check, parsers
from callscale.parsers.schema import Typing, convert
from callscale.parsers.minimax_m3 import (
    BLOCK_CLOSE, BLOCK_OPEN, INVOKE_CLOSE, INVOKE_OPEN, NS, THINK_CLOSE, THINK_OPEN, close_tag, open_tag,
)
from callscale.workloads import catalog, render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_parses, split_at, stream_outcome, whole_outcome

P = "minimax_m3"
R = render.get(P)
SPECIALS = R.special_tokens


def el(name, body):
    return open_tag(name) + body + close_tag(name)


def invoke(name, *params):
    return INVOKE_OPEN + name + '">\n' + "".join(p + "\n" for p in params) + INVOKE_CLOSE + "\n"


def block(*invokes):
    return "\n" + BLOCK_OPEN + "\n" + "".join(invokes) + BLOCK_CLOSE


def tool(name, **props):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def assert_complete(text, content, calls, tools=()):
    """detect_and_parse and streams under CHUNKINGS: ``content`` and the complete ``calls`` (broken ones abandoned)."""
    whole = whole_outcome(P, text, tools)
    assert (whole.content, whole.complete_calls()) == (content, calls)
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec, SPECIALS), tools)
        assert (got.content, got.complete_calls()) == (content, calls), spec


def test_registered_and_rendered():
    assert P in parsers.names() and P in render.names()
    assert R.opener == BLOCK_OPEN and NS in SPECIALS


def test_the_rendering_is_the_templates():
    # the layout of vLLM's and TensorRT-LLM's docstrings: every tag namespaced, a parameter per line,
    # a list as <item> children, an object as its keys' children
    calls = [Call("create_order", {"user_id": 42, "items": [{"sku": "book-001"}], "note": "a b"})]
    text = R.render(calls, content="Ordering.")
    assert text == (
        "Ordering.\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"create_order\">\n"
        "]<]minimax[>[<user_id>42]<]minimax[>[</user_id>\n"
        "]<]minimax[>[<items>]<]minimax[>[<item>]<]minimax[>[<sku>book-001]<]minimax[>[</sku>]<]minimax[>[</item>"
        "]<]minimax[>[</items>\n"
        "]<]minimax[>[<note>a b]<]minimax[>[</note>\n"
        "]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>")
    assert_parses(P, text, "Ordering.", [(c.name, dict(c.arguments)) for c in calls], tools=catalog.tools_for(calls),
                  special_tokens=SPECIALS)
    assert R.render([], content="Just text.") == "Just text."


def test_reasoning():
    text = THINK_OPEN + "Think <b>.\n" + THINK_CLOSE + "Sure." + block(invoke("ping"))
    assert_parses(P, text, "Sure.", [("ping", {})], reasoning="Think <b>.\n", special_tokens=SPECIALS)
    assert_parses(P, THINK_OPEN + "cut", "", [], reasoning="cut")
    assert_parses(P, "reasoning from a prefilled opener" + THINK_CLOSE + "Answer.",
                  "reasoning from a prefilled openerAnswer.", [])


def test_nested_values_follow_the_schema():
    tools = [tool("f", o={"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}},
                                                           "s": {"type": "string"}}},
                  l={"type": "array", "items": {"type": "object"}}, e={"type": "array"}, d={"type": "object"},
                  n={"type": ["number", "null"]})]
    text = block(invoke("f", el("o", el("a", el("item", "1") + "\n" + el("item", " 2 ")) + el("s", " x ")),
                        el("l", el("item", el("k", "v"))), el("e", ""), el("d", " "), el("n", "null")))
    assert_parses(P, text, "", [("f", {"o": {"a": [1, 2], "s": " x "}, "l": [{"k": "v"}], "e": [], "d": {},
                                       "n": None})], tools=tools, special_tokens=SPECIALS)


def test_without_a_schema_text_is_a_string_and_children_an_object_or_a_list_of_items():
    text = block(invoke("f", el("a", "3"), el("o", el("x", "1") + el("y", "")), el("l", el("item", "1") + el("item", "b"))))
    assert_parses(P, text, "", [("f", {"a": "3", "o": {"x": "1", "y": ""}, "l": ["1", "b"]})])


def test_a_typed_value_that_does_not_read_keeps_the_string():
    tools = [tool("f", n={"type": "integer"})]
    assert_parses(P, block(invoke("f", el("n", "sixty"))), "", [("f", {"n": "sixty"})], tools=tools)


def test_nested_values_stream_as_the_elements_arrive():
    text = block(invoke("f", el("o", el("a", "x" * 400) + el("b", "y" * 400))))
    p = parsers.get(P)()
    pieces = []
    for i in range(0, len(text) - 60, 4):
        pieces += [c.parameters for c in p.parse_streaming_increment(text[i:i + 4], []).calls]
    assert "".join(pieces).startswith('{"o": {"a": "' + "x" * 400 + '", "b": "' + "y" * 300)


@pytest.mark.parametrize("value", [
    close_tag("content") + "x", "a" + close_tag("content") + " b",
    "if s.endswith('" + close_tag("content") + "'):", INVOKE_CLOSE + BLOCK_CLOSE, open_tag("k") + "v",
])
def test_a_literal_closing_tag_in_a_string_value_is_text(value):
    tools = [tool("w", content={"type": "string"})]
    text = "Editing." + block(invoke("w", el("content", value), el("path", "p.py")))
    assert_parses(P, text, "Editing.", [("w", {"content": value, "path": "p.py"})], tools=tools)


def test_the_end_of_the_call_in_the_last_delta():
    text = "Hi." + block(invoke("w", el("a", "long value " * 20)))
    cut = text.index(INVOKE_CLOSE)
    for deltas in ([text[:cut], text[cut:]], [text[:cut - 3], text[cut - 3:]], [text]):
        assert_parses(P, text, "Hi.", [("w", {"a": "long value " * 20})], chunkings=[], deltas=deltas)


def test_the_namespace_split_across_deltas():
    text = "Hi." + block(invoke("w", el("a", "b]<]c")))
    for k in range(1, len(text)):
        assert_parses(P, text, "Hi.", [("w", {"a": "b]<]c"})], chunkings=[], deltas=[text[:k], text[k:]])


def test_other_closing_tags_and_a_prefix_of_its_own_in_a_value_are_text():
    # the value's end is its own closing tag: another element's, or its own cut short, is text (any split)
    value = "x" + close_tag("a") + "y" + close_tag("conten") + close_tag("contentx")[:-1] + "z]<]"
    text = "Hi." + block(invoke("w", el("content", value)))
    tools = [tool("w", content={"type": "string"})]
    for k in range(1, len(text), 3):
        assert_parses(P, text, "Hi.", [("w", {"content": value})], tools=tools, chunkings=[],
                      deltas=[text[:k], text[k:]])


def test_repeated_opener_gives_no_call_and_stays_content():
    assert_parses(P, BLOCK_OPEN * 30, BLOCK_OPEN * 29, [])


def test_empty_and_garbage_blocks_are_content():
    for text in (BLOCK_OPEN + BLOCK_CLOSE, BLOCK_OPEN + "\nhello there"):
        assert_parses(P, text, text, [])


@pytest.mark.parametrize("broken", [
    invoke("f", el("o", el("x", "1")) + "text beside" + el("b", "2")),  # text beside elements
    invoke("f", el("o", el("p", el("x", "1")) + "mixed")),  # text beside a child
    invoke("f", el("a", "1"), el("a", "2")),  # a repeated key
    invoke("f", el("o", el("x", "1") + close_tag("p"))),  # a closing tag of no open element
])
def test_a_broken_call_is_dropped_and_the_next_one_read(broken):
    text = "Hi." + block(broken, invoke("g", el("x", "1")))
    assert_complete(text, "Hi.", [("g", {"x": "1"})])


def test_prose_after_a_broken_call_is_content():
    text = "Hi." + "\n" + BLOCK_OPEN + "\n" + INVOKE_OPEN + 'f">\nnever mind, no call.'
    assert_complete(text, "Hi.never mind, no call.", [])


def test_an_unclosed_call_is_abandoned_and_content_kept():
    for tail in [INVOKE_OPEN + 'f">\n' + open_tag("a") + "never closed", INVOKE_OPEN + 'f">\n' + el("a", "v"),
                 INVOKE_OPEN + 'f">\n' + open_tag("o") + el("x", "1"), INVOKE_OPEN + 'f">\n]<]mini']:
        text = "Content.\n" + BLOCK_OPEN + "\n" + invoke("ok", el("x", "1")) + tail
        whole = whole_outcome(P, text)
        assert whole.content == "Content." and whole.complete_calls() == [("ok", {"x": "1"})], tail
        for spec in ["char", "fixed:3", "random:1:8"]:
            assert not check.compare(stream_outcome(P, chunk(text, spec)), whole), (tail, spec)


GOOD_CALLS = [Call("get_weather", {"city": "Zürich", "days": 2}),
              Call("write", {"path": "x.py", "content": "a" + close_tag("content") + "b", "o": {"k": [1, None]}})]
GOOD = R.render(GOOD_CALLS, content="Sure, checking.")
GOOD_TOOLS = catalog.tools_for(GOOD_CALLS)


def test_truncated_output_never_raises_nor_invents_calls():
    expected = [(c.name, dict(c.arguments)) for c in GOOD_CALLS]
    for i in range(len(GOOD) + 1):
        prefix = GOOD[:i]
        whole = whole_outcome(P, prefix, GOOD_TOOLS)
        calls = whole.complete_calls()
        assert calls == expected[:len(calls)], i
        opened = GOOD.index(BLOCK_OPEN) + len(BLOCK_OPEN)
        assert whole.content == (prefix if i < opened else "Sure, checking."), i
        for spec in ["char", "fixed:3"]:
            assert not check.compare(stream_outcome(P, chunk(prefix, spec), GOOD_TOOLS), whole), (i, spec)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(list("ab <>/\n\"") + [NS, "<tool_call>", "<invoke name=\"f\">", "</invoke>",
                                                     "<k>", "</k>", "<item>", THINK_OPEN]),
                max_size=40).map("".join))
def test_odd_output_never_raises(text):
    whole = whole_outcome(P, text)
    streamed = stream_outcome(P, list(text))
    assert not check.compare(streamed, whole), (text, check.compare(streamed, whole))


# ---------------------------------------------------------------- property test
_FRAGMENTS = st.sampled_from([close_tag("k"), INVOKE_CLOSE, BLOCK_CLOSE, BLOCK_OPEN, "]<]", "[>[", "\n", " ", '"',
                              "\\", "<", ">", "é", "中文", "😀", "{", "}"])
_TEXT = st.lists(st.one_of(st.text(max_size=6), _FRAGMENTS, _FRAGMENTS), max_size=8).map("".join)
_TAG = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(lambda k: k != "item")
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False), _TEXT)
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_TAG, inner, max_size=3)), max_leaves=6)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)


def _schema(value):
    """A schema that types ``value`` exactly (a list of mixed members: ``anyOf`` their schemas)."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, (int, float)) or value is None:
        return {"type": "null" if value is None else "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _schema(v) for k, v in value.items()}}
    by_kind = {}
    for v in value:
        sub = _schema(v)
        by_kind[sub["type"]] = _merge(by_kind[sub["type"]], sub) if sub["type"] in by_kind else sub
    members = list(by_kind.values())
    return {"type": "array", "items": members[0] if len(members) == 1 else {"anyOf": members}} if members else {
        "type": "array"}


def _merge(a, b):
    """One schema for two values of one JSON type (objects: their properties; arrays: their members)."""
    if a["type"] == "object":
        props = dict(a["properties"])
        for k, sub in b["properties"].items():
            props[k] = _merge(props[k], sub) if k in props and props[k].get("type") == sub.get("type") else (
                sub if k not in props else {"anyOf": [props[k], sub]})
        return {"type": "object", "properties": props}
    if a["type"] == "array" and "items" in b:
        if "items" not in a:
            return b
        if a["items"].get("type") == b["items"].get("type") and "anyOf" not in a["items"]:
            return {"type": "array", "items": _merge(a["items"], b["items"])}
        return {"type": "array", "items": {"anyOf": [a["items"], b["items"]]}}
    return a


def _holds(value, pred):
    """Whether ``value`` or any value nested in it satisfies ``pred``."""
    if pred(value):
        return True
    members = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds(v, pred) for v in members)


def _reads_as_scalar(value):
    """A string whose text schema typing reads as a number, a boolean or null when the schema allows one."""
    return isinstance(value, str) and convert(value, Typing(("boolean", "number", "string"), True))[0]


def _ok(value):
    """A value the format can write unambiguously: no text ending in the namespace's closing tags."""
    if isinstance(value, str):
        return NS not in value
    if isinstance(value, list):  # an empty list and an empty object are one empty element
        # and so is an empty string: where members are strings and containers, an empty
        # container reads as "" (formats.md: an empty element is text unless its schema excludes a string)
        # and a string that reads as a number, boolean or null where a member of its list is one: the list's
        # items schema then allows both (anyOf), and schema typing reads the element text as the other type
        # first (formats.md "Schema typing" 3: `0` for ["0", 0] is 0; the format writes both as the text 0)
        return all(_ok(v) for v in value) and not ({type(v) for v in value} >= {list, dict}) and not (
            any(_holds(v, lambda x: isinstance(x, str)) for v in value)
            and any(_holds(v, lambda x: isinstance(x, (list, dict)) and not x) for v in value)) and not (
            any(_holds(v, _reads_as_scalar) for v in value)
            and any(_holds(v, lambda x: x is None or isinstance(x, (bool, int, float))) for v in value)) and not (
            # an empty list and an empty object at any depth of one list: their schemas merge into one union
            any(_holds(v, lambda x: isinstance(x, list) and not x) for v in value)
            and any(_holds(v, lambda x: isinstance(x, dict) and not x) for v in value))
    if isinstance(value, dict):
        return all(_ok(v) for v in value.values())
    return True


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.builds(Call, _NAME, st.dictionaries(_TAG, st.one_of(_TEXT, _JSON), max_size=4)),
                      max_size=3, unique_by=lambda c: c.name),
       content=_TEXT.filter(lambda s: NS not in s and "<mm:" not in s), cuts=st.lists(st.integers(0, 3000), max_size=12))
def test_rendered_calls_parse_back_under_any_split(calls, content, cuts):
    calls = [Call(c.name, {k: v for k, v in c.arguments.items() if _ok(v)}) for c in calls]
    text = R.render(calls, content=content)
    expected = [(c.name, json.loads(json.dumps(dict(c.arguments)))) for c in calls]
    tools = [tool(c.name, **{k: _schema(v) for k, v in c.arguments.items()}) for c in calls]
    assert_parses(P, text, content, expected, tools=tools, chunkings=[],
                  deltas=split_at(text, cuts))


@pytest.mark.parametrize("name", ["minimax_m2", "minimax_m3"])
def test_text_after_a_call_inside_a_block_keeps_its_whitespace(name):
    """Garbage after a call ends the block and is content with the whitespace before it (DESIGN.md "Layout":
    held whitespace is sent before the next other text). One block reader (``minimax.MiniMaxBlocks``) for both;
    M3's copy dropped the whitespace."""
    from callscale.parsers import minimax as m2

    if name == "minimax_m2":
        text = "Hi.\n" + m2.BLOCK_OPEN + '\n<invoke name="f">\n' + m2.INVOKE_CLOSE + "\n  garbage"
    else:
        text = "Hi.\n" + BLOCK_OPEN + "\n" + INVOKE_OPEN + 'f">\n' + INVOKE_CLOSE + "\n  garbage"
    assert_parses(name, text, "Hi.\n  garbage", [("f", {})])


def test_a_long_typed_text_value_is_read_as_it_arrives():
    # a text value the schema types (here a Python-literal list in an array element) goes
    # through the one typed value writer (schema.TypedValue): read piece by piece, not whole at its end
    tools = [{"type": "function", "function": {"name": "tag", "parameters": {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string"}}}}}}]
    items = [f"item {i} it's" for i in range(2000)]
    text = render.get("minimax_m3").render([Call("tag", {"items": "PLACEHOLDER"})], content="Hi.")
    text = text.replace("PLACEHOLDER", repr(items))
    parser = parsers.get("minimax_m3")()
    cut = text.index("item 1000")
    first = parser.parse_streaming_increment(text[:cut], tools)
    value = parser._frames[-1].value
    assert value is not None and value.mode == "held" and value._reader is not None
    rest = parser.parse_streaming_increment(text[cut:], tools)
    last = parser.finish(tools)
    assert json.loads("".join(c.parameters for c in first.calls + rest.calls + last.calls)) == {"items": items}
