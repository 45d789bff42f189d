"""Llama 3 JSON (``llama3_json``) and Llama 4 pythonic (``llama4_pythonic``) parsers and their renderers."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.base import MAX_HEAD
from callscale.parsers.llama import PYTHON_END, PYTHON_START, PYTHON_TAG
from support import (CHUNKINGS, assert_arguments_stream, assert_parses, assert_round_trip, json_values, stream_outcome,
                     whole_outcome)
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call
from callscale.workloads.render.llama import python_literal

L3, L4 = "llama3_json", "llama4_pythonic"
CHUNKS = CHUNKINGS + ["tokens:1", "tokens:3"]


def parses(fmt, text, content, calls, **kw):
    kw.setdefault("chunkings", CHUNKS)
    assert_parses(fmt, text, content, calls, special_tokens=render.get(fmt).special_tokens, **kw)


def abandoned(fmt, text, content, complete, names):
    """Malformed output: every split gives ``content`` and the ``complete`` calls; streaming started ``names``."""
    for deltas in ([text], list(text), [text[i:i + 3] for i in range(0, len(text), 3)]):
        got = stream_outcome(fmt, deltas)
        assert (got.content, got.complete_calls()) == (content, complete), deltas
        assert [c.name for c in got.calls] == names, deltas
    whole = whole_outcome(fmt, text)
    assert (whole.content, whole.complete_calls()) == (content, complete)


# ----------------------------------------------------------------- llama3_json: the template's text

def test_llama31_template_call():
    # Llama 3.1 chat template: '{"name": "' + name + '", "parameters": ' + arguments | tojson + '}'
    parses(L3, '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}', "",
           [("get_weather", {"city": "Paris", "days": 3})])


def test_reference_encoder_call_with_type_key_and_ascii_escapes():
    # llama-models tool_utils.encode_tool_call, ToolPromptFormat.json: json.dumps({"type", "name", "parameters"})
    args = {"city": "Zürich", "note": 'say "hi"\n'}
    text = json.dumps({"type": "function", "name": "get_weather", "parameters": args})
    parses(L3, text, "", [("get_weather", args)])


def test_python_tag_prefix_arguments_key_and_text_before():
    parses(L3, PYTHON_TAG + '{"name": "f", "arguments": {"a": [1, {"b": null}]}}', "", [("f", {"a": [1, {"b": None}]})])
    parses(L3, 'Let me check.\n{"name": "f", "parameters": {}}', "Let me check.\n", [("f", {})])


def test_several_calls_semicolon_or_whitespace_separated():
    text = '{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {}} {"name": "c", "parameters": {"y": "z"}}'
    parses(L3, text, "", [("a", {"x": 1}), ("b", {}), ("c", {"y": "z"})])
    # after the last call, the separator text is content
    parses(L3, '{"name": "a", "parameters": {}}; done', "; done", [("a", {})])


def test_parameters_before_the_name_start_the_call_at_the_end():
    parses(L3, 'x{"parameters": {"q": "v"}, "name": "s"}y', "xy", [("s", {"q": "v"})])


@pytest.mark.parametrize("text", [
    'I like {"name": "Ada", "age": 36} a lot.',        # a JSON object that is not a call
    "Use {braces}, {{double}} and {} here.",
    'A {"parameters": {"a": 1}} object without a name.',
    '{"name": "f", "parameters": "not an object"}',
    '{"name": "", "parameters": {}}',
    '{"outer": {"name": "f", "parameters": {}}}',      # a call nested in another object is part of it
    'set = {1, 2} and [1, 2]',
])
def test_objects_that_are_no_call_stay_content(text):
    parses(L3, text, text, [])


def test_a_head_longer_than_max_head_is_content():
    text = '{"' + "k" * (MAX_HEAD + 10) + '": 1, "name": "f", "parameters": {}}'
    parses(L3, text, text, [], chunkings=["whole", "char", "fixed:7"])


def test_a_started_call_with_bad_json_is_abandoned():
    # a broken call's text up to its object's end is dropped (DESIGN.md; it was content before)
    abandoned(L3, '{"name": "f", "parameters": {"a": 1x}} rest', " rest", [], ["f"])
    abandoned(L3, '{"name": "f", "parameters": {"a": NaN}} rest', " rest", [], ["f"])
    abandoned(L3, '{"name": "f", "parameters": {"a": 1x, "b": "}"', 'x, "b": "}"', [], ["f"])
    # the call object not closed before the separator: content from the ';', the next call stands
    abandoned(L3, '{"name": "f", "parameters": {"a": 1}; {"name": "g", "parameters": {}}', "; ", [("g", {})], ["f", "g"])


def test_tags_and_separators_inside_strings_are_text():
    args = {"q": '"}}; {"name": "g", "parameters": {}}' + PYTHON_TAG, "r": "\\\"}"}
    text = json.dumps({"name": "f", "parameters": args}, ensure_ascii=False)
    parses(L3, text, "", [("f", args)])


# ----------------------------------------------------------------- llama4_pythonic: the prompt format's text

def test_llama4_prompt_format_examples():
    # llama-models models/llama4/prompt_format.md, model responses
    parses(L4, '[get_weather(city="San Francisco"), get_weather(city="Seattle")]', "",
           [("get_weather", {"city": "San Francisco"}), ("get_weather", {"city": "Seattle"})])
    parses(L4, "[get_user_info(user_id=7890, special='black')]", "",
           [("get_user_info", {"user_id": 7890, "special": "black"})])


def test_python_start_and_end_tokens_are_dropped():
    parses(L4, PYTHON_START + "[f(a=1)]" + PYTHON_END + " ok", " ok", [("f", {"a": 1})])
    parses(L4, "Sure. " + PYTHON_START + "[f()]", "Sure. ", [("f", {})])


def test_python_literals():
    text = ("[f(a=True, b=False, c=None, d=-1.5e3, e=1_000, g=0x1f, h=(1, 'x'), i=[], j={}, "
            "k={'k': None, 1: [2], None: 'n', True: 0}, l={key=\"v\", n=2}, m='''tri'ple\n''', o=\"\", p=.5,)]")
    parses(L4, text, "", [("f", {
        "a": True, "b": False, "c": None, "d": -1500.0, "e": 1000, "g": 31, "h": [1, "x"], "i": [], "j": {},
        "k": {"k": None, "1": [2], "null": "n", "true": 0}, "l": {"key": "v", "n": 2}, "m": "tri'ple\n", "o": "",
        "p": 0.5})])


@pytest.mark.parametrize("literal, value", [
    (r"'a\nb\tc\\d'", "a\nb\tc\\d"),
    (r"'it\'s'", "it's"),
    (r'"say \"hi\""', 'say "hi"'),
    (r"'\x41\u00e9\U0001F600'", "Aé😀"),
    (r"'\101\0'", "A\0"),
    (r"'\d\q'", "\\d\\q"),                      # unknown escapes keep the backslash, as in Python
    ("'line\\\ncontinued'", "linecontinued"),
    ("'raw\nnewline'", "raw\nnewline"),
    ('"""a "quoted" b"""', 'a "quoted" b'),
    ("'\\ud800'", "\ud800"),
])
def test_string_escapes(literal, value):
    text = f"[f(s={literal})]"
    got = whole_outcome(L4, text)
    assert [(c.name, json.loads(c.arguments_text)) for c in got.calls] == [("f", {"s": value})]
    for spec in CHUNKS:
        streamed = stream_outcome(L4, chunk(text, spec, ()))
        assert not check.compare(streamed, got), spec


@pytest.mark.parametrize("text", [
    "See [1], [see above], [f(x)], [a b], [f (1)] and [x](link).",
    "Lists [1, 2] and {'k': 1} and (a, b).",
    "[" + "f" * (MAX_HEAD + 5) + "(a=1)]",
])
def test_brackets_that_start_no_call_stay_content(text):
    parses(L4, text, text, [])


def test_a_started_call_with_a_bad_value_is_abandoned():
    abandoned(L4, "[f(a=1, b=foo)] after", "foo)] after", [], ["f"])  # the bad word is content too
    abandoned(L4, "[f(a=1), g(b=2, 3)] x", "3)] x", [("f", {"a": 1})], ["f", "g"])
    abandoned(L4, "[f(a='unclosed)]", "", [], ["f"])


def test_a_bad_head_after_a_call_ends_the_list_as_content():
    parses(L4, "[f(a=1), see above]", ", see above]", [("f", {"a": 1})])
    # the space between the two lists is layout (DESIGN.md, whitespace between call blocks)
    parses(L4, "[f(a=1),] [g(b=2)] tail", " tail", [("f", {"a": 1}), ("g", {"b": 2})])


def test_closing_text_inside_strings_is_text():
    args = {"q": '"), g(x=1)] ' + PYTHON_END, "r": "')]", "s": "\\"}
    text = "[f(" + ", ".join(f"{k}={python_literal(v)}" for k, v in args.items()) + ")]"
    parses(L4, text, "", [("f", args)])
    parses(L4, "[f(q=')]\\'), g(')]", "", [("f", {"q": ")]'), g("})])


# ----------------------------------------------------------------- both: fault kinds

SAMPLES = {
    L3: ("Let me look.", [("read_file", {"path": "a.txt", "range": [1, 20]}), ("search", {"q": 'x"}}y', "n": 3})]),
    L4: ("Let me look.", [("read_file", {"path": "a.txt", "range": [1, 20]}), ("search", {"q": "x')]y", "n": 3.5})]),
}


def _sample(fmt):
    content, calls = SAMPLES[fmt]
    return content, calls, render.get(fmt).render([Call(n, a) for n, a in calls], content)


@pytest.mark.parametrize("fmt", [L3, L4])
def test_the_end_of_a_call_in_the_last_delta(fmt):
    content, calls, text = _sample(fmt)
    for tail in (1, 2, 5, 12):
        parses(fmt, text, content, calls, chunkings=["whole"], deltas=[text[:-tail], text[-tail:]])


@pytest.mark.parametrize("fmt", [L3, L4])
def test_a_special_token_split_across_deltas(fmt):
    token = render.get(fmt).opener
    content, calls, text = _sample(fmt)
    text = content + token + text[len(content):]
    at = len(content) + 3
    parses(fmt, text, content, calls, deltas=[text[:at], text[at:at + 4], text[at + 4:]])


@pytest.mark.parametrize("fmt", [L3, L4])
def test_truncation_at_every_position_never_raises_nor_invents_a_call(fmt):
    content, calls, text = _sample(fmt)
    parses(fmt, text, content, calls)
    for cut in range(len(text) + 1):
        part = text[:cut]
        for got in (stream_outcome(fmt, [part[i:i + 3] for i in range(0, len(part), 3)]), whole_outcome(fmt, part)):
            done = got.complete_calls()
            assert done == calls[:len(done)], (cut, done)
            assert got.content.startswith(content[:cut]) or content.startswith(got.content), (cut, got.content)


@pytest.mark.parametrize("fmt", [L3, L4])
def test_odd_output_never_raises(fmt):
    odd = list(render.get(fmt).special_tokens) + ['{"name": "f", "parameters": ', "[f(", "a=", "{", "}", "[", "]", "(",
                                                   ")", '"', "'", "\\", " ", "x", ":", ",", ";", "=", "1", "True"]
    rng = random.Random(8)
    for _ in range(400):
        text = "".join(rng.choice(odd) for _ in range(rng.randint(1, 30)))
        stream_outcome(fmt, list(text))
        whole = whole_outcome(fmt, text)
        assert not check.compare(stream_outcome(fmt, [text]), whole)


@pytest.mark.parametrize("fmt", [L3, L4])
def test_repeated_opener_gives_nothing(fmt):
    opener = render.get(fmt).opener
    parses(fmt, "Thinking." + opener * 40, "Thinking.", [])


@pytest.mark.parametrize("fmt", [L3, L4])
def test_arguments_stream_as_they_arrive(fmt):
    assert_arguments_stream(fmt)


@pytest.mark.parametrize("fmt", [L3, L4])
def test_finish_drains_once(fmt):
    p = parsers.get(fmt)()
    assert p.parse_streaming_increment("a<|pyth", []).normal_text == "a"
    assert p.finish().normal_text == "<|pyth"
    assert p.finish().normal_text == ""


def test_renderers():
    calls = [Call("a", {"x": "é", "n": [1, 2.5, None, True], "o": {"k": False}}), Call("b")]
    assert render.get(L3).render(calls, "Hi") == (
        'Hi{"name": "a", "parameters": {"x": "é", "n": [1, 2.5, null, true], "o": {"k": false}}}; '
        '{"name": "b", "parameters": {}}')
    assert render.get(L4).render(calls, "Hi") == 'Hi[a(x="é", n=[1, 2.5, None, True], o={"k": False}), b()]'
    assert render.get(L4).render([], "Hi") == render.get(L3).render([], "Hi") == "Hi"
    assert {L3, L4} <= set(parsers.names()) & set(render.names())


# ----------------------------------------------------------------- property: render, split anywhere, parse

_text = st.lists(st.sampled_from(list("ab zé東\n\t\"'\\{}[]()<>|:;,.=0") + ["😀", "\x00", PYTHON_TAG, PYTHON_END]),
                max_size=12).map("".join)
_json = json_values(_text)
_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
_calls = st.lists(st.builds(Call, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True),
                            st.dictionaries(_key, _json, max_size=4)), max_size=3)
_content = st.lists(st.sampled_from(list("ab \n<>|_é\"'()=:,") + ["<|", "<|python"]), max_size=20).map("".join)
_tail = st.from_regex(r"([a-z.!][a-z .!]{0,10})?", fullmatch=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from([L3, L4]), calls=_calls, content=_content, tail=_tail, data=st.data())
def test_rendered_calls_parse_back_under_any_split(fmt, calls, content, tail, data):
    size = len(render.get(fmt).render(calls, content) + (tail if calls else ""))
    assert_round_trip(fmt, calls, content, tail, data.draw(st.lists(st.integers(1, max(1, size - 1)), max_size=12)))


# ----------------------------------------------------------------- the per-delta steps (pieces and splits)

def _argument_pieces(fmt, deltas):
    p = parsers.get(fmt)()
    pieces = []
    for d in deltas:
        pieces += [c.parameters for c in p.parse_streaming_increment(d, []).calls if c.parameters]
    pieces += [c.parameters for c in p.finish([]).calls if c.parameters]
    return pieces


def test_llama4_a_key_goes_out_with_its_value():
    # the comma, key and ": " before a value are held and sent with its first piece (one emit fewer each)
    # (one character a delta: a word or number is sent once the character after it arrives; a string streams)
    text = '[f(n=12, s="ab", d={"k": 1.5, "x": True})]'
    assert _argument_pieces(L4, list(text)) == [
        '{"n": 12', ', "s": "a', "b", '"', ', "d": {', '"k', '": 1.5', ', "x', '": true}', "}"]
    assert _argument_pieces(L4, ['[f(s="ab', 'cd")]']) == ['{"s": "ab', 'cd"}']


@pytest.mark.parametrize("cut", range(1, 84))
def test_llama4_a_token_cut_at_any_point_reads_the_same(cut):
    # a word, number or lone quote the delta cuts is left unread and read whole with the next delta; a string
    # the delta cuts goes on in the next (its end found with or without an escape in that delta)
    text = '[f(count=12345, flag=False, name="x y", e=\'a\\tb\', f=2.5e3, d={"key": None, 1: "v"})] after'
    whole = stream_outcome(L4, [text])
    got = stream_outcome(L4, [text[:cut], text[cut:]])
    assert (got.content, got.complete_calls()) == (whole.content, whole.complete_calls())
    assert whole.complete_calls() == [("f", {"count": 12345, "flag": False, "name": "x y", "e": "a\tb", "f": 2500.0,
                                             "d": {"key": None, "1": "v"}})]


def test_llama4_a_float_is_sent_as_json_dumps_writes_it():
    for literal in ("0.1", "1e300", "2.5e-08", "-0.0", "1_000.5"):
        pieces = _argument_pieces(L4, [f"[f(x={literal})]"])
        assert "".join(pieces) == '{"x": ' + json.dumps(float(literal.replace("_", ""))) + "}"


@pytest.mark.parametrize("split", [1, 2, 3, 4])
def test_llama3_the_separator_read_whole_or_waiting(split):
    # "; {" between two objects, whole in one delta or split anywhere: two calls and no content
    text = '{"name": "f", "parameters": {}}; {"name": "g", "parameters": {"a": 1}}'
    deltas = [text[i:i + split] for i in range(0, len(text), split)]
    got = stream_outcome(L3, deltas)
    assert (got.content, got.complete_calls()) == ("", [("f", {}), ("g", {"a": 1})])
    # a ";" followed by no object: the held separator is content with what follows
    got = stream_outcome(L3, ['{"name": "f", "parameters": {}}', ";", " ok"])
    assert (got.content, got.complete_calls()) == ("; ok", [("f", {})])


def test_llama4_the_light_head_prefix_pattern_agrees_with_the_head_pattern():
    # without ")" or "=", the whole text is a prefix of a head exactly when _HEAD_RE reads it all
    import itertools

    from callscale.parsers.llama import _HEAD_PREFIX, _HEAD_RE
    for n in range(5):
        for chars in itertools.product("a_1.- (é\t", repeat=n):
            text = "".join(chars)
            assert (_HEAD_PREFIX.fullmatch(text) is not None) == (_HEAD_RE.match(text).end() == len(text)), text


# ----------------------------------------------------------------- the whole-head fast path
class _StepwiseLlama4(parsers.get(L4)):
    """Llama 4 with its one fast path off: every head read a step at a time (the plain path)."""

    def _open_head(self, raw: str, first: bool) -> None:
        from callscale.parsers import llama

        super()._open_head(raw, first)
        self.scanner.head_begin(raw)
        self._word = ""
        self._step = llama._H_NAME0


_HEAD_PIECES = ["[", "]", "(", ")", "=", ",", " ", "\n", "f", "get_weather", "city", "x1", "_", "é", "1", ".", "-",
                '"a"', "'b'", "2", "True", "None", "[1, 2]", "{", "}", ":", "<|python_start|>"]


@given(st.lists(st.sampled_from(_HEAD_PIECES), max_size=14), st.lists(st.integers(1, 6), min_size=1, max_size=8))
@example(["[", "get_weather", "(", "city", "=", '"a"', ",", " ", "x1", "=", "2", ")", "]"], [3])
@example(["[", "f", " ", "(", ")", ",", "f", "(", "_", "=", "None", ")", "]"], [1])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_llama4_the_whole_head_path_agrees_with_the_steps(pieces, sizes):
    # the head matched whole (_HEAD_RE, waiting up to _HEAD_WAIT characters) gives what the steps give: the same
    # content, calls and argument text, whole and at every split
    text = "".join(pieces) + " after"
    deltas, i, k = [], 0, 0
    while i < len(text):
        deltas.append(text[i:i + sizes[k % len(sizes)]])
        i += sizes[k % len(sizes)]
        k += 1
    for split in ([text], deltas):
        fast = check.stream(parsers.get(L4)(), split, ())
        plain = check.stream(_StepwiseLlama4(), split, ())
        assert not check.compare(fast, plain), (split, fast, plain)
        assert (fast.content, fast.complete_calls()) == (plain.content, plain.complete_calls())


def test_llama4_the_stepwise_reader_reads_calls():
    # the plain path of the agreement test above is a working reader (so the test compares two readers of calls)
    got = check.stream(_StepwiseLlama4(), list('[get_weather(city="a", x1=2), f()] after'), ())
    assert got.complete_calls() == [("get_weather", {"city": "a", "x1": 2}), ("f", {})]
    assert got.content == " after"
