"""Qwen3 (Hermes JSON) and Qwen3-Coder (XML) parsers and their renderers.

The shared fault cases of both parsers run in tests/parsers/test_fault_cases.py;
this file covers the other cases of the format, malformed output and a
property test per parser.
"""

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.base import MAX_HEAD
from callscale.parsers.schema import is_framed_name
from callscale import check
from callscale.parsers.qwen import (
    FUNCTION_CLOSE,
    PARAMETER_CLOSE,
    TOOL_CALL_CLOSE,
    TOOL_CALL_OPEN,
    JsonCallLexer,
)
from support import assert_parses, split_at, stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call

FEW = ["whole", "char", "fixed:3", "random:1:8", "random:2:8"]


def hermes(name, arguments, raw=None):
    """One qwen3 block as the Qwen3 template writes it."""
    args = raw if raw is not None else json.dumps(arguments, ensure_ascii=False)
    return f'{TOOL_CALL_OPEN}\n{{"name": "{name}", "arguments": {args}}}\n{TOOL_CALL_CLOSE}'


def coder(name, *params):
    """One qwen3_coder block; ``params`` are ``(key, value text)``."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"{TOOL_CALL_OPEN}\n<function={name}>\n{body}</function>\n{TOOL_CALL_CLOSE}"


def tool(name, **types):
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in types.items()}}}}


def assert_agrees(name, text, content, calls, tools=(), chunkings=FEW):
    """Malformed output: whole text and every chunking give ``content`` and the complete ``calls``.

    Streaming may have sent part of an abandoned call (it cannot be taken
    back); those calls are left out of the comparison, as in ``check.compare``.
    """
    expected = check.outcome_of(content, calls)
    whole = whole_outcome(name, text, tools)
    assert len(whole.calls) == len(calls), whole.calls
    assert check.compare(whole, expected) == []
    for spec in chunkings:
        got = stream_outcome(name, chunk(text, spec), tools)
        assert check.compare(got, expected) == [], spec


# ============================================================================= qwen3
WEATHER = ("get_weather", {"city": "Paris", "unit": "c"})


def test_qwen3_text_before_between_and_after_calls():
    text = ("Let me check.\n" + hermes(*WEATHER) + "\nNow the date.\n" + hermes("get_date", {})
            + "\nDone.")
    # one newline before <tool_call> and one after </tool_call> are layout
    assert_parses("qwen3", text, "Let me check.Now the date.Done.", [WEATHER, ("get_date", {})])


def test_qwen3_content_newlines_other_than_layout_are_kept():
    text = "A\n\n" + hermes(*WEATHER) + "\n\n\nB\n"
    assert_parses("qwen3", text, "A\n\n\nB\n", [WEATHER])


def test_qwen3_two_calls_in_one_delta_without_newlines():
    text = "Go." + "".join(
        f'<tool_call>{{"name": "f{i}", "arguments": {{"i": {i}}}}}</tool_call>' for i in range(3))
    assert_parses("qwen3", text, "Go.", [(f"f{i}", {"i": i}) for i in range(3)], deltas=[text])


def test_qwen3_nested_arguments_and_escapes_stream_verbatim():
    args = {"q": 'café "best" \\ </tool_call> <tool_call>', "n": [1, -2.5e-3, True, None, {"a": []}],
            "emoji": "😀", "esc": "\u0001\t"}
    raw = json.dumps(args, ensure_ascii=True)  # \\u escapes as well
    text = hermes("search", None, raw=raw)
    assert_parses("qwen3", text, "", [("search", args)])
    # the arguments are the model's own JSON text, not a re-serialization
    assert whole_outcome("qwen3", text).calls[0].arguments_text == raw


def test_qwen3_arguments_before_name():
    text = '<tool_call>\n{"arguments": {"path": "a.txt"}, "id": 7, "name": "read"}\n</tool_call>'
    assert_parses("qwen3", text, "", [("read", {"path": "a.txt"})])


def test_qwen3_other_keys_are_ignored():
    text = '<tool_call>{"name": "f", "extra": {"name": "g", "arguments": 5}, "arguments": {"x": [1]}}</tool_call>'
    assert_parses("qwen3", text, "", [("f", {"x": [1]})])


def test_qwen3_raw_newline_in_a_string_is_sent_escaped():
    text = '<tool_call>\n{"name": "write", "arguments": {"text": "line 1\nline 2\t."}}\n</tool_call>'
    assert_parses("qwen3", text, "", [("write", {"text": "line 1\nline 2\t."})])


@pytest.mark.parametrize("head", [
    "<tool_call> is the tag I use.",
    '<tool_call>\n{"name": 5, "arguments": {}}\n</tool_call>',
    '<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',
    '<tool_call>\n{"name": "f", "arguments": "{}"}\n</tool_call>',
    '<tool_call>\n{"name": "f", "arguments": [1]}\n</tool_call>',
    '<tool_call>\n{"arguments": {}}\n</tool_call>',
    '<tool_call>\n{"name": "f" "arguments": {}}\n</tool_call>',
    '<tool_call>\n{"name": "f", "name": "g", "arguments": {}}\n</tool_call>',
    '<tool_call>\n["f", {}]\n</tool_call>',
])
def test_qwen3_not_a_call_is_content_verbatim(head):
    text = "Before " + head + " after"
    assert_parses("qwen3", text, text, [])
    assert_parses("qwen3", "Before " + head, "Before " + head, [])


@pytest.mark.parametrize("cut", ['<tool_call>\n{"arguments": {"a": 1}, "na', "<tool_call>", "<tool_call>\n{"])
def test_qwen3_a_call_cut_by_the_end_of_the_output_is_dropped(cut):
    # DESIGN.md "Content and markup": the cut call's markup is no content (it was content before)
    assert_parses("qwen3", "Before " + cut, "Before ", [])


@pytest.mark.parametrize("name_json", ['"get\\ud800"', '"\\udc00x"', '"\\ud83d"'])
def test_qwen3_a_name_with_a_lone_surrogate_escape_is_no_call(name_json):
    # Found probing unicode: json.loads accepts "\ud800", so the name went out
    # as a str a server cannot encode as UTF-8 (UnicodeEncodeError downstream).
    for head in (f'<tool_call>\n{{"name": {name_json}, "arguments": {{"a": 1}}}}\n</tool_call>',
                 f'<tool_call>\n{{"arguments": {{"a": 1}}, "name": {name_json}}}\n</tool_call>'):
        text = "Before " + head + " after" + CALL_OK
        assert_parses("qwen3", text, "Before " + head + " after", [("ok", {})], chunkings=FEW)


def test_qwen3_an_escaped_astral_name_is_a_name():
    text = '<tool_call>\n{"name": "get_\\ud83d\\ude00", "arguments": {}}\n</tool_call>'
    assert_parses("qwen3", text, "", [("get_\U0001F600", {})], chunkings=FEW)


CALL_OK = '\n<tool_call>\n{"name": "ok", "arguments": {}}\n</tool_call>'


def test_qwen3_started_call_left_open_is_abandoned():
    text = 'Before \n<tool_call>\n{"name": "f", "arguments": {"a": 1}'
    assert_agrees("qwen3", text, "Before ", [])


def test_qwen3_a_call_without_arguments_key_is_a_call_with_empty_arguments():
    text = 'Hi.\n<tool_call>\n{"name": "list_tasks"}\n</tool_call>\n<tool_call>{"id": 3, "name": "g"}</tool_call>'
    assert_parses("qwen3", text, "Hi.", [("list_tasks", {}), ("g", {})])
    # the object must end well and </tool_call> follow, as for any call
    assert_agrees("qwen3", 'A\n<tool_call>\n{"name": "f"} x</tool_call>B', "AB", [])
    assert_agrees("qwen3", 'A\n<tool_call>\n{"name": "f"', "A", [])  # cut: its markup is no content


@pytest.mark.parametrize("bad", [
    '{"name": "f", "arguments": {"a": 1,}}',
    '{"name": "f", "arguments": {"a": tru}}',
    '{"name": "f", "arguments": {"a": 01}}',
    '{"name": "f", "arguments": {"a": "\\x"}}',
    '{"name": "f", "arguments": {"a": 1}, "arguments": {}}',
    '{"name": "f", "arguments": {"a": 1}} trailing',
    '{"name": "f", "arguments": {"a": [1}}',
])
def test_qwen3_malformed_started_call_is_abandoned_and_the_rest_survives(bad):
    text = "A\n" + hermes(*WEATHER) + "\n<tool_call>\n" + bad + "\n</tool_call>\nB\n" + hermes("g", {"k": 1})
    assert_agrees("qwen3", text, "AB", [WEATHER, ("g", {"k": 1})])


def test_qwen3_object_without_close_tag_is_abandoned():
    text = "A\n" + hermes(*WEATHER) + '\n<tool_call>\n{"name": "f", "arguments": {}}\n'
    assert_agrees("qwen3", text, "A", [WEATHER])


def test_qwen3_arguments_stream_before_the_call_closes():
    value = "x" * 4000
    text = hermes("write", {"content": value})
    parser = parsers.get("qwen3")()
    results = [parser.parse_streaming_increment(d, []) for d in chunk(text[: len(text) // 2], "fixed:4")]
    early = check.assemble(results)
    assert early.calls[0].name == "write"
    # everything but a possible partial token is out already
    assert len(early.calls[0].arguments_text) >= len(text) // 2 - 60


def test_qwen3_repeated_opener_gives_no_call_and_the_text_as_content():
    text = "Thinking." + (TOOL_CALL_OPEN + "\n") * 3000
    # the last opener's call is cut by the end of the output: its markup is no content
    content = "Thinking." + (TOOL_CALL_OPEN + "\n") * 2999
    assert_parses("qwen3", text, content, [], chunkings=["whole", "fixed:4", "random:7:8"])


# ============================================================================= qwen3_coder
CODER_TOOLS = [tool("configure", count="integer", ratio="number", on="boolean", opts="object", tags="array",
                    nothing="null", label="string", maybe=["null", "integer"])]


def test_coder_schema_typed_values():
    text = coder("configure", ("count", "5"), ("ratio", "0.25"), ("on", "True"), ("opts", '{"a": [1, null]}'),
                 ("tags", '["x", "y"]'), ("nothing", "None"), ("label", "007"), ("maybe", "12"))
    assert_parses("qwen3_coder", text, "", [("configure", {
        "count": 5, "ratio": 0.25, "on": True, "opts": {"a": [1, None]}, "tags": ["x", "y"], "nothing": None,
        "label": "007", "maybe": 12})], tools=CODER_TOOLS)


def test_coder_an_escaped_lone_surrogate_in_a_typed_value_stays_escaped():
    # Found probing unicode: "\ud800" in a JSON (or Python repr) value was written
    # back as a raw lone surrogate: arguments text a server cannot encode as UTF-8.
    text = coder("configure", ("tags", '["\\ud800", "\\ud83d\\ude00"]'), ("opts", "{'a': '\\udc00'}"))
    expected = {"tags": ["\ud800", "\U0001F600"], "opts": {"a": "\udc00"}}
    assert_parses("qwen3_coder", text, "", [("configure", expected)], tools=CODER_TOOLS, chunkings=FEW)
    got = whole_outcome("qwen3_coder", text, CODER_TOOLS)
    assert got.calls[0].arguments_text == '{"tags": ["\\ud800", "😀"], "opts": {"a": "\\udc00"}}'
    got.calls[0].arguments_text.encode("utf-8")


def test_coder_values_are_strings_without_a_schema():
    text = coder("configure", ("count", "5"), ("on", "true"))
    assert_parses("qwen3_coder", text, "", [("configure", {"count": "5", "on": "true"})])


def test_coder_python_repr_of_an_object_from_the_first_template():
    text = coder("configure", ("opts", "{'a': True, 'b': None, 'c': (1, 2)}"), ("tags", "['x', 2]"))
    assert_parses("qwen3_coder", text, "", [("configure", {"opts": {"a": True, "b": None, "c": [1, 2]},
                                                           "tags": ["x", 2]})], tools=CODER_TOOLS)


@pytest.mark.parametrize("key,value", [
    ("count", "five"), ("count", "5.5"), ("ratio", "NaN"), ("ratio", "1e999"), ("on", "yes"),
    ("opts", "[1]"), ("opts", "{'a': {1, 2}}"), ("tags", "not a list"), ("nothing", "0"),
])
def test_coder_failed_conversion_keeps_the_string(key, value):
    text = coder("configure", (key, value))
    assert_parses("qwen3_coder", text, "", [("configure", {key: value})], tools=CODER_TOOLS)


def test_coder_layout_and_verbatim_values():
    text = coder("edit", ("filename", "foo.c"), ("newString", "#include\n"), ("empty", ""),
                 ("spaces", "  a  \n\n b "), ("blank", "\n"))
    assert_parses("qwen3_coder", text, "", [("edit", {"filename": "foo.c", "newString": "#include\n", "empty": "",
                                                       "spaces": "  a  \n\n b ", "blank": "\n"})])


def test_coder_text_before_between_and_after_calls():
    a = coder("read_file", ("path", "a.py"))
    b = coder("list_dir")
    text = "I'll look.\n\n" + a + "\nThen:\n\n" + b + "\n" + b + "\nDone.\n"
    assert_parses("qwen3_coder", text, "I'll look.Then:Done.\n",
                  [("read_file", {"path": "a.py"}), ("list_dir", {}), ("list_dir", {})])


def test_coder_two_calls_in_one_delta_without_newlines():
    one = "<tool_call><function=f><parameter=a>1</parameter></function></tool_call>"
    text = one + one.replace("=f>", "=g>")
    assert_parses("qwen3_coder", text, "", [("f", {"a": "1"}), ("g", {"a": "1"})], deltas=[text])


LITERAL_VALUES = [
    "x</parameter>\n</function>\nmore",
    'if tag == "</parameter>":\n    end = "</function>"\n    return "</tool_call>"\n',
    "a</parameter>\n</function>\n</parameter>\nb",
    "ends with a closing tag </parameter>",
    "ends with both </parameter>\n</function>",
    "ends with all three </parameter>\n</function>\n",
    "</parameter></parameter>  \n</function> <tool_call> ",
    "</parameter>\n",
    "\n</parameter>\n\n",
    "<parameter=x>\n",
]


@pytest.mark.parametrize("value", LITERAL_VALUES)
def test_coder_literal_closing_tags_in_a_value(value):
    text = coder("write_file", ("content", value), ("path", "p.py"))
    assert_parses("qwen3_coder", text, "", [("write_file", {"content": value, "path": "p.py"})])
    text = coder("write_file", ("path", "p.py"), ("content", value))
    assert_parses("qwen3_coder", text, "", [("write_file", {"path": "p.py", "content": value})])


def test_coder_literal_close_tag_value_streams_while_held_back_text_is_bounded():
    value = ("line </parameter> x\n" * 400)
    text = coder("write_file", ("content", value))
    parser = parsers.get("qwen3_coder")()
    results = [parser.parse_streaming_increment(d, []) for d in chunk(text[: len(text) // 2], "fixed:4")]
    sent = check.assemble(results).calls[0].arguments_text
    assert len(sent) >= len(text) // 2 - 80


@pytest.mark.parametrize("text,content", [
    ("a <tool_call>\n<function=bad name>\n</function></tool_call>", None),
    ("a <tool_call>\n<function=>\n</function></tool_call>", None),
    ("a <tool_call>\n<func=f>\n</function></tool_call>", None),
    ("a <tool_call>\n<function=f", "a "),  # cut by the end of the output: no content
    ("a <tool_call>\n", "a "),
])
def test_coder_not_a_call_is_content_verbatim(text, content):
    assert_parses("qwen3_coder", text, text if content is None else content, [])


@pytest.mark.parametrize("bad", [
    "<function=f>\njunk\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
    "<function=f>\n<parameter=>\n1\n</parameter>\n</function>\n</tool_call>",
    "<function=f>\n<parameter=a\nb>\n1\n</parameter>\n</function>\n</tool_call>",
    "<function=f>\n</function>\nmore\n</tool_call>",
])
def test_coder_malformed_started_call_is_abandoned_and_the_rest_survives(bad):
    good = coder("read_file", ("path", "x.py"))
    text = "A\n\n" + good + "\n<tool_call>\n" + bad + "\nB\n" + good
    assert_agrees("qwen3_coder", text, "AB", [("read_file", {"path": "x.py"})] * 2)


def test_coder_function_end_without_call_end_then_a_new_call():
    good = coder("read_file", ("path", "x.py"))
    text = "A\n\n<tool_call>\n<function=f>\n</function>\n" + good
    assert_agrees("qwen3_coder", text, "A", [("read_file", {"path": "x.py"})])


@pytest.mark.parametrize("after", [
    "</parameter>\n</function>\nmore\n</tool_call>",  # </function> not followed by </tool_call>
    "</parameter>\njunk\n</function>\n</tool_call>",  # </parameter> followed by neither
    "",  # the value never closes
])
def test_coder_rejected_close_means_the_value_goes_on(after):
    """A ``</parameter>`` without a valid continuation is value text, up to the next confirmed end.

    That end is the line ``<parameter=path>`` (a key not used yet in the call):
    the recovery of a missing ``</parameter>``.
    """
    good = coder("read_file", ("path", "x.py"))
    text = "A\n\n<tool_call>\n<function=f>\n<parameter=a>\n1\n" + after + "\nB\n" + good
    if "junk" in after:  # </function> </tool_call> end a value whose </parameter> is missing
        assert_parses("qwen3_coder", text, "AB", [("f", {"a": "1\n</parameter>\njunk"}), ("read_file", {"path": "x.py"})])
        return
    value = "1\n" + after + "\nB\n" + good[: good.index("\n<parameter=path>")]
    assert_parses("qwen3_coder", text, "A", [("f", {"a": value, "path": "x.py"})])
    # with tools whose schema has no such key, the line is value text
    tools = [tool("f", a="string")]
    value = "1\n" + after + "\nB\n" + good[: good.index("x.py") + 4]
    assert_parses("qwen3_coder", text, "A", [("f", {"a": value})], tools=tools)


def test_coder_unclosed_call_is_abandoned():
    text = "Writing.\n\n" + coder("write_file", ("path", "a"), ("content", "x" * 50))[:-len("</tool_call>") - 3]
    assert_agrees("qwen3_coder", text, "Writing.", [])


def test_coder_repeated_opener_gives_no_call_and_the_text_as_content():
    text = "Thinking." + (TOOL_CALL_OPEN + "\n") * 3000
    # the last opener's call is cut by the end of the output: its markup is no content
    content = "Thinking." + (TOOL_CALL_OPEN + "\n") * 2999
    assert_parses("qwen3_coder", text, content, [], chunkings=["whole", "fixed:4", "random:7:8"])


_GOOD = coder("f", ("a", "1"))


@pytest.mark.parametrize("text,content,calls", [
    (TOOL_CALL_OPEN * 5, TOOL_CALL_OPEN * 4, 0),  # the last one is cut by the end: no content
    ("A" + TOOL_CALL_OPEN * 5 + "B", "A" + TOOL_CALL_OPEN * 5 + "B", 0),
    (TOOL_CALL_OPEN + "\n" + TOOL_CALL_OPEN * 2 + " x", TOOL_CALL_OPEN + "\n" + TOOL_CALL_OPEN * 2 + " x", 0),
    (_GOOD + "\n" + TOOL_CALL_OPEN * 3 + "\n\n" + _GOOD, TOOL_CALL_OPEN * 3 + "\n\n", 2),  # after a call
    (_GOOD + TOOL_CALL_OPEN * 3, TOOL_CALL_OPEN * 2, 1),
    (TOOL_CALL_OPEN * 3 + "\n" + _GOOD, TOOL_CALL_OPEN * 3 + "\n", 1),
    (TOOL_CALL_OPEN * 2 + "<function=f>\n</function>\n</tool_call>", TOOL_CALL_OPEN, 1),
    (TOOL_CALL_OPEN * 2 + "<tool_c", TOOL_CALL_OPEN * 2 + "<tool_c", 0),
    (TOOL_CALL_OPEN * 2 + "<function", TOOL_CALL_OPEN, 0),
    # an empty envelope (<tool_call></tool_call>) is markup (base._s_envelope)
    (TOOL_CALL_OPEN + "\n \n" + TOOL_CALL_OPEN + "\t" + TOOL_CALL_OPEN + TOOL_CALL_CLOSE + TOOL_CALL_OPEN,
     TOOL_CALL_OPEN + "\n \n" + TOOL_CALL_OPEN + "\t", 0),
])
def test_coder_openers_back_to_back(text, content, calls):
    """An opener right after an opener: the first one's head is content and the second opens the next head."""
    expected = [("f", {"a": "1"} if "parameter" in text else {})] * calls
    assert_parses("qwen3_coder", text, content, expected,
                  chunkings=FEW + ["fixed:11", "tokens:4", "random:3:20"], special_tokens=(TOOL_CALL_OPEN, TOOL_CALL_CLOSE))


@pytest.mark.parametrize("value", [
    "x </parameter y", "1\n</parameterx\n2", "a <b> c\n<", "</param", "tail </function", "\n</tool_callx",
])
def test_coder_value_text_that_starts_a_closing_tag(value):
    """Value text that begins a closing tag and then is none (held back, then read on), split at every point."""
    tools = [tool("f", a="string", b="array")]
    text = "A\n\n" + coder("f", ("a", value), ("b", "[1, 'x']")) + "\nB"
    assert_parses("qwen3_coder", text, "AB", [("f", {"a": value, "b": [1, "x"]})], tools=tools,
                  chunkings=FEW + ["fixed:2", "fixed:4", "fixed:5", "tokens:4"])


@pytest.mark.parametrize("text,content,calls", [
    # a newline or "<" in a name: no call (read by the scanner, not the name's run)
    (TOOL_CALL_OPEN + "\n<function=a\nb>\n</function>\n</tool_call>", None, []),
    (TOOL_CALL_OPEN + "\n<function=a<b>\n</function>\n</tool_call>", None, []),
    # an opener inside a name: that head is content, the opener's call is read
    ("<tool_call>\n<function=ab" + _GOOD, "<tool_call>\n<function=ab", [("f", {"a": "1"})]),
])
def test_coder_names_that_end_otherwise(text, content, calls):
    if content is None:
        content = text  # no call: the text is content
    assert_parses("qwen3_coder", text, content, calls, chunkings=FEW + ["fixed:2", "fixed:4", "tokens:4"],
                  special_tokens=(TOOL_CALL_OPEN, TOOL_CALL_CLOSE))


@pytest.mark.parametrize("key", ["a\nb", "a<b", "x" * (MAX_HEAD + 1)])
def test_coder_a_key_that_is_none_drops_the_call(key):
    """A key with a newline or "<", or longer than MAX_HEAD: the call is dropped up to its </tool_call>."""
    text = f"{TOOL_CALL_OPEN}\n<function=f>\n<parameter={key}>\n1\n</parameter>\n</function>\n{TOOL_CALL_CLOSE}\nok"
    assert_agrees("qwen3_coder", text, "ok", [], chunkings=FEW + ["fixed:2", "fixed:4"])


def test_coder_long_content_without_calls():
    text = "Nothing to call here; <tool_ and </parameter> are words.\n" * 500
    assert_parses("qwen3_coder", text, text, [], chunkings=["whole", "fixed:4"])
    assert_parses("qwen3", text, text, [], chunkings=["whole", "fixed:4"])


# ============================================================================= lexer
@pytest.mark.parametrize("text,ok", [
    ('{"name": "f", "arguments": {"a": [1, 2.5, -0, 1e5, true, false, null, "\\u00e9\\n"]}}', True),
    ('{"name": "f", "arguments": {}}', True),
    ('{"name": "f", "arguments": {"a": 1.}}', False),
    ('{"name": "f", "arguments": {"a": .5}}', False),
    ('{"name": "f", "arguments": {"a": "\\u12G4"}}', False),
    ('{"name": "f", "arguments": {"a": nul}}', False),
    ('{"name": "f", "arguments": {"a" 1}}', False),
    ('{"name": "f", "arguments": {"a": 1]}', False),
])
def test_json_lexer_validates_strict_json(text, ok):
    for size in (1, 3, len(text)):
        lexer = JsonCallLexer()
        status = "need-more"
        for i in range(0, len(text), size):
            used, status = lexer.feed(text[i:i + size])
            if status != "need-more":
                break
        assert (status == "done") == ok, (size, status)
        if ok:
            assert lexer.name == "f" and json.loads(lexer.take_arguments()) == json.loads(text)["arguments"]


# ============================================================================= truncation
def _truncation_texts():
    q_blocks = [hermes(*WEATHER), hermes("s", {"q": 'a "b" </tool_call>'})]
    c_blocks = [coder("read_file", ("path", "a.py")), coder("write_file", ("path", "b"), ("content", "x</parameter>\ny"))]
    c_calls = [("read_file", {"path": "a.py"}), ("write_file", {"path": "b", "content": "x</parameter>\ny"})]
    return [
        ("qwen3", "Intro.\n", q_blocks, "\n", [WEATHER, ("s", {"q": 'a "b" </tool_call>'})],
         q_blocks[0].index('"arguments": {') + len('"arguments": {')),
        ("qwen3_coder", "Intro.\n\n", c_blocks, "\n", c_calls, c_blocks[0].index(">\n<parameter") + 1),
    ]


@pytest.mark.parametrize("name,head,blocks,sep,calls,started", _truncation_texts(), ids=["qwen3", "qwen3_coder"])
def test_truncated_output_never_raises_keeps_content_and_invents_no_call(name, head, blocks, sep, calls, started):
    """Cut a good output at every position: no exception, the content before the call kept, no invented call.

    ``started``: offset in the first block where the call starts (its name is sent).
    """
    text = head + sep.join(blocks)
    ends, pos = [], len(head)
    for block in blocks:
        pos += len(block)
        ends.append(pos)
        pos += len(sep)
    intro = head.rstrip("\n")
    for cut in range(len(text) + 1):
        part = text[:cut]
        whole = whole_outcome(name, part)
        done = sum(1 for e in ends if e <= cut)
        assert whole.complete_calls() == [(n, a) for n, a in calls[:done]], cut
        if cut < len(head) + len(TOOL_CALL_OPEN):  # no call opened: the text is content, verbatim
            assert whole.content == part, cut
        elif cut < ends[0] + len(sep):  # inside the first call: only the intro is content
            assert whole.content == intro, cut
        else:
            assert whole.content.startswith(intro), cut
        for spec in ("fixed:3", "random:5:8"):
            got = stream_outcome(name, chunk(part, spec))
            assert check.compare(got, whole) == [], (cut, spec)


# ============================================================================= property tests
PIECES = ["</tool_call>", "<tool_call", "</parameter>", "</function>", "<parameter=", "<function=", "\n", " ",
          "\\", '"', "{", "}", "é", "名", "😀", "\t", "'"]
pieces_text = st.lists(st.one_of(st.text(max_size=4), st.sampled_from(PIECES)), max_size=8).map("".join)
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                      st.floats(allow_nan=False, allow_infinity=False), pieces_text)
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(pieces_text, inner, max_size=3)), max_leaves=8)
content_text = pieces_text.filter(lambda s: TOOL_CALL_OPEN not in s)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _splits(data, text):
    return split_at(text, data.draw(st.lists(st.integers(0, len(text)), max_size=12), label="cuts"))


@SETTINGS
@given(calls=st.lists(st.tuples(st.text(min_size=1, max_size=8).filter(is_framed_name),  # names: schema.FRAMED_NAME
                                st.dictionaries(pieces_text, json_value, max_size=4)),
                      max_size=3),
       content=content_text, trailing=content_text, data=st.data())
def test_qwen3_property_rendered_calls_round_trip_under_any_split(calls, content, trailing, data):
    calls = [Call(n, a) for n, a in calls]
    text = render.get("qwen3").render(calls, content)
    if calls:
        text += "\n" + trailing  # text after the calls: one layout newline, then content
    expected_content = content + (trailing if calls and not trailing.isspace() else "")  # layout: DESIGN.md
    assert_parses("qwen3", text, expected_content, [(c.name, c.arguments) for c in calls],
                  chunkings=["fixed:5"], deltas=_splits(data, text), special_tokens=render.get("qwen3").special_tokens)


SAFE = "abcxyzXYZ019_.-éü名"
coder_name = st.text(alphabet=SAFE, min_size=1, max_size=8)
typed_value = st.one_of(
    st.tuples(st.just("string"), pieces_text),
    st.tuples(st.just("integer"), st.integers(-10**20, 10**20)),
    st.tuples(st.just("number"), st.floats(allow_nan=False, allow_infinity=False)),
    st.tuples(st.just("boolean"), st.booleans()),
    st.tuples(st.just("null"), st.none()),
    st.tuples(st.just("object"), st.dictionaries(pieces_text, json_value, max_size=3)),
    st.tuples(st.just("array"), st.lists(json_value, max_size=3)),
)
_CONFIRMED = re.compile(r"</parameter>(?=\s*(?:<parameter=|</function>\s*</tool_call>))")
#: Value text that ends a value whose </parameter> is missing (the recoveries): ambiguous too.
_RECOVERED = re.compile(r"</function>\s*</tool_call>|</tool_call>\s*<tool_call>|\n<parameter=[^<>\n]*>")


@SETTINGS
@given(calls=st.lists(st.tuples(coder_name, st.dictionaries(coder_name, typed_value, max_size=4)),
                      max_size=3, unique_by=lambda c: c[0]),
       content=content_text, trailing=content_text, data=st.data())
def test_qwen3_coder_property_rendered_calls_round_trip_under_any_split(calls, content, trailing, data):
    tools = [tool(name, **{k: kind for k, (kind, _) in params.items()}) for name, params in calls]
    expected = [(name, {k: v for k, (_, v) in params.items()}) for name, params in calls]
    text = render.get("qwen3_coder").render([Call(n, a) for n, a in expected], content)
    if calls:
        text += "\n" + trailing
    # A value holding </parameter> followed by a valid continuation is ambiguous: leave it out.
    assume(len(_CONFIRMED.findall(text)) == sum(len(p) for _, p in calls))
    assume(not any(_RECOVERED.search(v if kind == "string" else json.dumps(v))
                   for _, params in calls for kind, v in params.values()))
    expected_content = content + (trailing if calls and not trailing.isspace() else "")  # layout: DESIGN.md
    assert_parses("qwen3_coder", text, expected_content, expected, tools=tools,
                  chunkings=["fixed:5"], deltas=_splits(data, text),
                  special_tokens=render.get("qwen3_coder").special_tokens)


# ============================================================================= renderers
def test_renderers_lay_calls_out_as_the_templates_do():
    q = render.get("qwen3")
    assert q.render([Call("f", {"a": 1}), Call("g", {})], "Hi") == (
        'Hi\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n'
        '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>')
    assert q.render([], "Hi") == "Hi"
    c = render.get("qwen3_coder")
    assert c.render([Call("f", {"a": "x\n", "n": 5, "b": True, "o": {"k": None}})], "Hi") == (
        "Hi\n\n<tool_call>\n<function=f>\n<parameter=a>\nx\n\n</parameter>\n<parameter=n>\n5\n</parameter>\n"
        '<parameter=b>\nTrue\n</parameter>\n<parameter=o>\n{"k": null}\n</parameter>\n</function>\n</tool_call>')
    assert c.render([Call("g")]) == "<tool_call>\n<function=g>\n</function>\n</tool_call>"
    assert q.opener == c.opener == TOOL_CALL_OPEN and TOOL_CALL_CLOSE in q.special_tokens
    assert c.schema_typed and not q.schema_typed
    assert PARAMETER_CLOSE in c.closing_tags and FUNCTION_CLOSE in c.closing_tags


# ============================================================================= recoveries
EDIT_TOOLS = [tool("edit", path="string", n="integer")]


@pytest.mark.parametrize("tail,after", [
    ("\n</tool_call>", ""), ("", ""), ("\n</tool_call>\nDone.", "Done."), ("\nDone.", "Done."),
])
@pytest.mark.parametrize("before,content", [("", ""), ("I will edit it.\n", "I will edit it."),
                                            ("I will edit it.\n\n", "I will edit it.")])
def test_coder_a_call_without_its_tool_call_opener(before, content, tail, after):
    call = "<function=edit>\n<parameter=path>\na.py\n</parameter>\n<parameter=n>\n3\n</parameter>\n</function>"
    text = before + call + tail
    assert_parses("qwen3_coder", text, content + after, [("edit", {"path": "a.py", "n": 3})], tools=EDIT_TOOLS)
    # and a well-formed call after it
    text = before + call + tail + "\n\n" + coder("edit", ("path", "b.py"))
    assert_parses("qwen3_coder", text, content + after, [("edit", {"path": "a.py", "n": 3}), ("edit", {"path": "b.py"})],
                  tools=EDIT_TOOLS)


@pytest.mark.parametrize("text,tools", [
    ("Use <function=edit> to edit a file.", []),
    ("Use <function=edit>\nwith care.</function>", []),
    ("Call <function=nope>\n<parameter=path>\na\n</parameter>\n</function> if you can.", EDIT_TOOLS),
    ("<function=a b>\n</function>", []),
    ("<function=edit", []),
    ("<function=" + "x" * (MAX_HEAD + 5) + ">\n</function>", []),
])
def test_coder_prose_mentioning_a_function_tag_stays_content(text, tools):
    assert_parses("qwen3_coder", text, text, [], tools=tools)


@pytest.mark.parametrize("body,expected", [
    # </parameter> missing before the next parameter, </function>, </tool_call>
    ("<parameter=path>\na.py\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>", {"path": "a.py", "n": 3}),
    ("<parameter=path>\na.py\n</function>\n</tool_call>", {"path": "a.py"}),
    ("<parameter=path>\na.py\n</tool_call>", {"path": "a.py"}),
    ("<parameter=n>\n3\n</function>\n</tool_call>", {"n": 3}),
    # a line <parameter=KEY> with a key already used, or not in the schema, is value text
    ("<parameter=path>\na.py\n<parameter=path>\n</parameter>\n</function>\n</tool_call>",
     {"path": "a.py\n<parameter=path>"}),
    ("<parameter=path>\na.py\n<parameter=other>\n</parameter>\n</function>\n</tool_call>",
     {"path": "a.py\n<parameter=other>"}),
    # </function> or </tool_call> not followed by a continuation is value text
    ("<parameter=path>\na </function> b\n</parameter>\n</function>\n</tool_call>", {"path": "a </function> b"}),
    ("<parameter=path>\na </tool_call> b\n</parameter>\n</function>\n</tool_call>", {"path": "a </tool_call> b"}),
])
def test_coder_a_value_without_its_closing_tag(body, expected):
    text = "<tool_call>\n<function=edit>\n" + body
    assert_parses("qwen3_coder", text, "", [("edit", expected)], tools=EDIT_TOOLS)


def test_coder_a_value_ended_by_tool_call_then_the_next_call():
    text = "<tool_call>\n<function=edit>\n<parameter=path>\na.py\n</tool_call>\n" + coder("edit", ("path", "b.py"))
    assert_parses("qwen3_coder", text, "", [("edit", {"path": "a.py"}), ("edit", {"path": "b.py"})])


def test_coder_degenerate_recovery_tags_are_read_once():
    # content repeating an opener-less head, and a value repeating candidate tags that are rejected
    text = "Look: " + "<function=edit>\nno body\n" * 2000
    assert_parses("qwen3_coder", text, text, [], chunkings=["whole", "fixed:4", "random:7:8"])
    value = "x\n<parameter=path>\n</function> y </tool_call> z\n" * 1000
    text = coder("edit", ("path", value))
    assert_parses("qwen3_coder", text, "", [("edit", {"path": value})], chunkings=["whole", "fixed:4"])


@pytest.mark.parametrize("split", range(1, 16))
def test_qwen3_the_text_after_a_call_object_under_any_split(split):
    # "}" "\n</tool_call>\n" "<tool_call>": read in one step when whole in a delta, by the states when split
    text = hermes("f", {"a": 1}) + "\n" + hermes("g", {}) + "\nbye"
    deltas = [text[i:i + split] for i in range(0, len(text), split)]
    got = stream_outcome("qwen3", deltas)
    assert (got.content, got.complete_calls()) == ("bye", [("f", {"a": 1}), ("g", {})])
    # a newline then no closing tag: the started call is dropped, as a closing tag that never comes
    bad = stream_outcome("qwen3", ['<tool_call>\n{"name": "f", "arguments": {}}', "\n", "x</tool_call>after"])
    assert (bad.content, bad.complete_calls()) == ("after", [])




@pytest.mark.parametrize("name,call", [
    ("qwen3", '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'),
    ("qwen3_coder", "<tool_call>\n<function=f>\n</function>\n</tool_call>"),
])
def test_repeated_openers_are_content_and_the_last_one_opens_the_call(name, call):
    # a degenerate model repeats <tool_call>: each head but the last is content (with its layout newline,
    # and whitespace read after it), whatever the split; the last opener's call is read
    content = "Hi\n<tool_call><tool_call> <tool_call><tool_call>"
    text = content + call
    whole = whole_outcome(name, text)
    assert (whole.content, whole.complete_calls()) == (content, [("f", {})])
    for i in range(len(text) + 1):
        got = stream_outcome(name, split_at(text, [i]))
        assert (got.content, got.complete_calls()) == (content, [("f", {})]), i
    per_char = stream_outcome(name, list(text))
    assert (per_char.content, per_char.complete_calls()) == (content, [("f", {})])
