"""DeepSeek V3 and V3.1 tool-call parsers (``deepseek_v3``, ``deepseek_v31``).

Well-formed texts go through tests/helpers/support.py ``assert_parses`` (whole text
and every chunking in ``support.CHUNKINGS``). Malformed texts go through
``assert_agrees``: streamed under every chunking, the calls the parser did not
abandon must equal the expected calls, and so must ``detect_and_parse``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.deepseek import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    EOS,
    SEP,
    SPECIAL_TOKENS,
    V3_FENCE_CLOSE,
)
from support import CHUNKINGS, assert_parses, split_at, stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.chunking import chunk

V3, V31 = "deepseek_v3", "deepseek_v31"


def v3_call(name, args_text):
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{args_text}\n```{CALL_END}"


def v31_call(name, args_text):
    return f"{CALL_BEGIN}{name}{SEP}{args_text}{CALL_END}"


def block(*calls, between=""):
    return CALLS_BEGIN + between.join(calls) + CALLS_END


def stream_kept(parser_name, deltas, tools=()):
    """Stream through a fresh parser (finish twice); the outcome without the calls it abandoned."""
    parser = parsers.get(parser_name)()
    results = [parser.parse_streaming_increment(d, list(tools)) for d in deltas]
    results.append(parser.finish(list(tools)))
    again = parser.finish(list(tools))
    assert not again.normal_text and not again.calls, "a second finish() returned something"
    out = check.assemble(results, strict=True)
    kept = [c for i, c in enumerate(out.calls) if i not in parser._abandoned]
    return check.Outcome(out.content, kept), out


def as_pairs(calls):
    return [(c.name, c.arguments()) for c in calls]


def assert_agrees(parser_name, text, content, calls, chunkings=CHUNKINGS, deltas=None):
    """Malformed text: both paths give ``content`` and exactly ``calls`` (abandoned calls left out)."""
    got = whole_outcome(parser_name, text)
    assert got.content == content, f"whole: content {got.content!r} != {content!r}"
    assert as_pairs(got.calls) == calls, f"whole: calls {as_pairs(got.calls)!r}"
    splits = {spec: chunk(text, spec) for spec in chunkings}
    if deltas is not None:
        splits["own deltas"] = list(deltas)
    for label, split in splits.items():
        kept, _ = stream_kept(parser_name, split)
        assert kept.content == content, f"{label}: content {kept.content!r} != {content!r}"
        assert as_pairs(kept.calls) == calls, f"{label}: calls {as_pairs(kept.calls)!r} != {calls!r}"


# ---------------------------------------------------------------- cases from the issue


def test_v3_closing_fence_and_both_end_tokens_in_the_last_delta():
    text = "Checking." + block(v3_call("get_weather", '{"city": "Paris"}'))
    deltas = ["Checking.", CALLS_BEGIN, CALL_BEGIN, "function", SEP, "get_weather", "\n```json\n",
              '{"city": ', '"Paris"}', "\n```" + CALL_END + CALLS_END]
    assert "".join(deltas) == text
    assert_parses(V3, text, "Checking.", [("get_weather", {"city": "Paris"})], deltas=deltas)
    out = stream_outcome(V3, deltas)
    assert out.calls[0].arguments_text == '{"city": "Paris"}'


@pytest.mark.parametrize("args_text", ["{}", ""])
def test_v31_call_without_arguments_ending_in_one_last_delta(args_text):
    text = block(v31_call("get_date", args_text))
    deltas = [CALLS_BEGIN, CALL_BEGIN, "get_date", SEP + args_text + CALL_END + CALLS_END]
    assert_parses(V31, text, "", [("get_date", {})], deltas=deltas)
    assert stream_outcome(V31, deltas).calls[0].arguments_text == "{}"


def test_v3_empty_fenced_arguments_give_an_empty_object():
    text = block(v3_call("ping", ""))
    assert_parses(V3, text, "", [("ping", {})])
    assert whole_outcome(V3, text).calls[0].arguments_text == "{}"


def test_two_v3_calls_in_one_delta():
    calls = [("get_weather", {"city": "Tokyo", "unit": "celsius"}), ("search", {"query": "x"})]
    text = "Let me check." + block(v3_call(calls[0][0], json.dumps(calls[0][1])),
                                   v3_call(calls[1][0], json.dumps(calls[1][1])), between="\n")
    deltas = ["Let me check.", text[len("Let me check."):]]
    # strict assembly in assert_parses rejects a name sent twice or an index skipped
    assert_parses(V3, text, "Let me check.", calls, deltas=deltas)
    out = stream_outcome(V3, deltas)
    assert [c.name for c in out.calls] == ["get_weather", "search"]


def test_two_v31_calls_in_one_delta():
    calls = [("get_weather", {"city": "Zürich"}), ("get_date", {})]
    text = "normal text" + block(v31_call("get_weather", '{"city": "Zürich"}'), v31_call("get_date", "{}"))
    deltas = ["normal text", text[len("normal text"):]]
    assert_parses(V31, text, "normal text", calls, deltas=deltas)
    out = stream_outcome(V31, deltas)
    assert [c.name for c in out.calls] == ["get_weather", "get_date"]


def test_v31_half_an_end_token_leaks_nowhere():
    half = len(CALL_END) // 2
    text = "Since 3 < 5: " + block(v31_call("fetch_page", '{"page": 5}'))
    deltas = ["Since 3 < 5: ", CALLS_BEGIN + CALL_BEGIN + "fetch_page" + SEP,
              '{"page": 5}' + CALL_END[:half], CALL_END[half:] + CALLS_END]
    assert "".join(deltas) == text
    assert_parses(V31, text, "Since 3 < 5: ", [("fetch_page", {"page": 5})], deltas=deltas)
    # after the delta that ends with half the token: the JSON but its closing
    # brace (sent when the end token confirms the call), none of the token
    parser = parsers.get(V31)()
    results = [parser.parse_streaming_increment(d, []) for d in deltas[:3]]
    early = check.assemble(results)
    assert early.content == "Since 3 < 5: "
    assert early.calls[0].arguments_text == '{"page": 5'
    last = parser.parse_streaming_increment(deltas[3], [])
    assert [(c.tool_index, c.name, c.parameters) for c in last.calls] == [(0, None, "}")]
    assert last.normal_text == ""


def test_v3_text_before_the_block_and_end_of_sentence_after_it():
    text = "I'll look it up.\n\n" + block(v3_call("lookup", '{"word": "serendipity"}')) + EOS
    assert_parses(V3, text, "I'll look it up.\n\n", [("lookup", {"word": "serendipity"})],
                  special_tokens=SPECIAL_TOKENS)


def test_end_of_sentence_is_dropped_everywhere():
    text = ("Hel" + EOS + "lo" + CALLS_BEGIN + EOS + CALL_BEGIN + "get_" + EOS + "date" + SEP
            + '{"a":' + EOS + ' 1}' + CALL_END + EOS + CALLS_END + "bye" + EOS)
    assert_parses(V31, text, "Hellobye", [("get_date", {"a": 1})])


def test_text_after_the_block_is_content_and_a_second_block_is_read():
    text = ("A" + block(v31_call("f", '{"x": 1}')) + " B " + block(v31_call("g", '{"y": [2]}')) + "C")
    assert_parses(V31, text, "A B C", [("f", {"x": 1}), ("g", {"y": [2]})])


def test_v3_value_may_hold_fences_and_tokens_as_text():
    value = "```python\nx = 1\n```\n" + CALL_END + CALLS_END + SEP + CALL_BEGIN + "\\ \" done"
    args = json.dumps({"content": value, "n": 3}, ensure_ascii=False)
    text = block(v3_call("write_file", args))
    assert_parses(V3, text, "", [("write_file", {"content": value, "n": 3})])


def test_whitespace_between_calls_is_layout_and_other_text_in_the_block_is_content():
    text = (CALLS_BEGIN + " \n" + v31_call("f", "{}") + "\n\n" + "note: x\n"
            + v31_call("g", "{}") + "  " + CALLS_END + "end")
    # a stretch holding text is passed on whole, its whitespace included
    assert_parses(V31, text, "\n\nnote: x\nend", [("f", {}), ("g", {})])
    text3 = CALLS_BEGIN + v3_call("f", "{}") + "\n\t" + v3_call("g", '{"k": null}') + "\n" + CALLS_END
    assert_parses(V3, text3, "", [("f", {}), ("g", {"k": None})])


# ---------------------------------------------------------------- malformed output


@pytest.mark.parametrize("bad_args", ['{"a": 1', "[1,2]", '"text"', "nul", '{"a": 1}}'])
@pytest.mark.parametrize("fmt", [V3, V31])
def test_arguments_not_a_json_object_make_no_call_and_the_next_call_is_kept(fmt, bad_args):
    make = v3_call if fmt == V3 else v31_call
    good = {"path": "a.txt", "lines": [1, 2]}
    text = "Before." + block(make("broken", bad_args), make("read_file", json.dumps(good)),
                             between="\n" if fmt == V3 else "") + "After."
    assert_agrees(fmt, text, "Before.After.", [("read_file", good)])
    # streaming did send the broken call's name (it cannot be taken back), then gave it up
    kept, full = stream_kept(fmt, chunk(text, "char"))
    assert [c.name for c in full.calls] == ["broken", "read_file"]


@pytest.mark.parametrize("fmt, tail", [
    (V3, '{"city": "Paris"}'), (V3, '{"city": "Paris"}\n``'), (V3, '{"city": "Paris"}\n```'),
    (V3, ""), (V31, '{"city": "Paris"}'), (V31, '{"city": "Paris"}' + CALL_END[:5]),
])
def test_a_call_that_never_closes_is_abandoned(fmt, tail):
    head = (CALL_BEGIN + "function" + SEP + "get_weather\n```json\n") if fmt == V3 else (CALL_BEGIN + "get_weather" + SEP)
    text = "Content first." + CALLS_BEGIN + head + tail
    assert_agrees(fmt, text, "Content first.", [])


@pytest.mark.parametrize("fmt, tail", [
    (V3, '{"city": "Paris"}'), (V3, '{"city": "Paris"}\n``'), (V3, '{"city": "Paris"} \n```'),
    (V3, '{"city": "Paris"}\n``` junk' + CALL_END), (V3, '{"city": "Paris"}}\n```' + CALL_END),
    (V31, '{"city": "Paris"}'), (V31, '{"city": "Paris"}  ' + CALL_END[:5]),
    (V31, '{"city": "Paris"}}' + CALL_END), (V31, '{"city": "Paris"} x' + CALL_END),
])
def test_streamed_arguments_of_an_abandoned_call_never_form_an_object(fmt, tail):
    # Found by fuzzing: the arguments stream raw, so a call cut off (or broken)
    # after its closing brace had streamed '{"city": "Paris"}': a complete call
    # to a client, while detect_and_parse made none. The bracket that closes
    # the top-level value, and all after it, now wait for the call's end.
    head = (CALL_BEGIN + "function" + SEP + "get_weather\n```json\n") if fmt == V3 else (CALL_BEGIN + "get_weather" + SEP)
    text = "Content first." + CALLS_BEGIN + head + tail
    whole = whole_outcome(fmt, text)
    assert whole.content == "Content first." and whole.calls == []
    for spec in CHUNKINGS:
        got = stream_outcome(fmt, chunk(text, spec))
        assert got.content == "Content first.", spec
        assert [c.name for c in got.calls] == ["get_weather"], spec
        assert got.calls[0].arguments_text == '{"city": "Paris"', spec
        assert got.complete_calls() == [], spec


@pytest.mark.parametrize("fmt", [V3, V31])
def test_a_held_back_closing_brace_is_sent_at_the_end_and_the_whitespace_after_it_dropped(fmt):
    # the whitespace after the object is not part of the arguments: not held (memory stays flat)
    make = v3_call if fmt == V3 else v31_call
    args_text = '{"a": {"b": {}}, "c": "}\\"}"}  '
    text = block(make("f", args_text), make("g", "{} ")) + "tail"
    for spec in CHUNKINGS:
        got = stream_outcome(fmt, chunk(text, spec))
        assert [(c.name, c.arguments_text) for c in got.calls] == [("f", args_text.rstrip()), ("g", "{}")], spec
        assert got.content == "tail", spec


@pytest.mark.parametrize("fmt", [V3, V31])
def test_a_calls_block_with_no_calls(fmt):
    assert_agrees(fmt, "Hi" + CALLS_BEGIN + CALLS_END + " there", "Hi there", [])
    assert_agrees(fmt, "Hi" + CALLS_BEGIN + "\n" + CALLS_END, "Hi", [])
    assert_agrees(fmt, "Hi" + CALLS_BEGIN, "Hi", [])
    assert_agrees(fmt, "Hi" + CALLS_BEGIN + "no tools after all" + CALLS_END, "Hino tools after all", [])


@pytest.mark.parametrize("fmt", [V3, V31])
def test_repeated_opener_gives_no_call_and_no_content(fmt):
    text = "Thinking." + (CALLS_BEGIN + "\n") * 2000
    assert_agrees(fmt, text, "Thinking.", [], chunkings=["whole", "fixed:7", "random:1:8"])


def test_v3_head_that_never_becomes_a_call_is_content():
    # wrong kind: no name sent, the raw text stays content up to the next block token
    text = CALLS_BEGIN + CALL_BEGIN + "tool" + SEP + "f\n```json\n{}\n```" + CALL_END + CALLS_END + "!"
    assert_agrees(V3, text, CALL_BEGIN + "tool" + SEP + "f\n```json\n{}\n```" + CALL_END + "!", [])
    # a head interrupted by the next call: the next call is read; the head held nothing but the kind: markup
    text = CALLS_BEGIN + CALL_BEGIN + "function" + CALL_BEGIN + "function" + SEP + "g\n```json\n{}\n```" + CALL_END + CALLS_END
    assert_agrees(V3, text, "", [("g", {})])
    text = CALLS_BEGIN + CALL_BEGIN + "functio" + CALL_BEGIN + "function" + SEP + "g\n```json\n{}\n```" + CALL_END + CALLS_END
    assert_agrees(V3, text, CALL_BEGIN + "functio", [("g", {})])


def test_v31_head_that_never_becomes_a_call_is_content():
    text = CALLS_BEGIN + CALL_BEGIN + "oops" + CALLS_END + "after"
    assert_agrees(V31, text, CALL_BEGIN + "oopsafter", [])
    # a call with no name holds nothing a call needs: markup, up to its end token
    text = CALLS_BEGIN + CALL_BEGIN + " " + SEP + "{}" + CALL_END + v31_call("ok", '{"v": true}') + CALLS_END
    assert_agrees(V31, text, "", [("ok", {"v": True})])


def test_v3_wrong_fence_abandons_the_call_and_the_next_is_kept():
    text = (CALLS_BEGIN + CALL_BEGIN + "function" + SEP + "a\n{\"x\": 1}\n```" + CALL_END + "\n"
            + v3_call("b", '{"y": 2}') + CALLS_END)
    assert_agrees(V3, text, "", [("b", {"y": 2})])
    text = (CALLS_BEGIN + CALL_BEGIN + "function" + SEP + "a\n```json\n{\"x\": 1}\n``` junk" + CALL_END + "\n"
            + v3_call("b", '{"y": 2}') + CALLS_END)
    assert_agrees(V3, text, "", [("b", {"y": 2})])


def test_deeply_nested_arguments_do_not_raise():
    text = block(v31_call("f", "[" * 50000 + "]" * 50000)) + "tail"
    assert_agrees(V31, text, "tail", [], chunkings=["whole", "fixed:4096"])


GOOD_TEXT = {
    V3: "Sure, 3 < 5.\n" + block(v3_call("get_weather", '{"city": "Tokyo", "unit": "c"}'),
                               v3_call("search", '{"query": "x ``` y"}'), between="\n") + EOS,
    V31: "Sure, 3 < 5." + block(v31_call("get_weather", '{"city": "Zürich"}'),
                                v31_call("get_date", "{}")) + EOS,
}


@pytest.mark.parametrize("fmt", [V3, V31])
def test_truncated_at_every_position_never_raises_and_invents_no_call(fmt):
    text = GOOD_TEXT[fmt]
    before = text[: text.index(CALLS_BEGIN)]
    full = as_pairs(whole_outcome(fmt, text).calls)
    assert len(full) == 2
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        whole = whole_outcome(fmt, prefix)
        calls = as_pairs(whole.calls)
        assert calls == full[: len(calls)], f"cut {cut}: invented {calls!r}"
        if cut >= len(before):
            assert whole.content.startswith(before), f"cut {cut}: content {whole.content!r}"
        for spec in ("char", "fixed:3"):
            kept, _ = stream_kept(fmt, chunk(prefix, spec))
            assert kept.content == whole.content, f"cut {cut} {spec}"
            assert as_pairs(kept.calls) == calls, f"cut {cut} {spec}"


@pytest.mark.parametrize("fmt", [V3, V31])
def test_long_string_argument_streams_before_the_call_closes(fmt):
    value = "line of source code;\n" * 200
    text = render.get(fmt).render([render.Call("write_file", {"path": "a.c", "content": value})])
    parser = parsers.get(fmt)()
    deltas = chunk(text, "tokens:4", SPECIAL_TOKENS)
    cut = int(len(deltas) * 0.75)
    early = check.assemble([parser.parse_streaming_increment(d, []) for d in deltas[:cut]])
    sent = early.calls[0].arguments_text
    assert len(sent) >= len("".join(deltas[:cut])) - 200  # all but the head and a bounded hold-back
    rest = check.assemble([parser.parse_streaming_increment(d, []) for d in deltas[cut:]] + [parser.finish([])],
                          strict=False)  # the name went out with the first part
    assert json.loads(sent + rest.calls[0].arguments_text) == {"path": "a.c", "content": value}


# ---------------------------------------------------------------- property test

_TEXT_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))
_DECOYS = ["<", "｜", "<｜tool", "<｜tool▁call", "```", "\n```", "function", "json", "\\", '"', "\n", "}", "{", " "]


def _pieces(extra):
    return st.lists(st.one_of(st.text(_TEXT_CHARS, max_size=8), st.sampled_from(_DECOYS + extra)), max_size=6).map("".join)


def _values(strings):
    scalars = st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False, allow_infinity=False) | strings
    return st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
                        max_leaves=8)


_NAMES = st.text(st.characters(categories=("L", "N")) | st.sampled_from("_-."), min_size=1, max_size=12)
#: Tokens a value may hold as text: V3 arguments end only at a raw "\n```", V3.1 ones at <｜tool▁call▁end｜>.
_IN_VALUES = {V3: [CALL_END, CALLS_END, CALL_BEGIN, CALLS_BEGIN, SEP], V31: [CALLS_END, CALL_BEGIN, CALLS_BEGIN, SEP]}
_FORBIDDEN_IN_VALUES = {V3: (EOS,), V31: (EOS, CALL_END)}


def _no(tokens):
    return lambda s: not any(t in s for t in tokens)


def _calls(fmt):
    strings = _pieces(_IN_VALUES[fmt]).filter(_no(_FORBIDDEN_IN_VALUES[fmt]))
    keys = st.text(max_size=6).filter(_no(_FORBIDDEN_IN_VALUES[fmt]))
    args = st.dictionaries(keys, _values(strings), max_size=4)
    return st.lists(st.builds(render.Call, _NAMES, args), min_size=0, max_size=3)


_CONTENT = _pieces([]).filter(_no(SPECIAL_TOKENS))


def _property(fmt, data):
    calls = data.draw(_calls(fmt), label="calls")
    before = data.draw(_CONTENT, label="before")
    after = data.draw(_CONTENT, label="after") if calls else ""
    eos = data.draw(st.booleans(), label="eos")
    text = render.get(fmt).render(calls, content=before) + after + (EOS if eos else "")
    deltas = split_at(text, data.draw(st.lists(st.integers(0, len(text)), max_size=25), label="cuts"))
    expected = [(c.name, dict(c.arguments)) for c in calls]
    for label, got in (("whole", whole_outcome(fmt, text)), ("split", stream_outcome(fmt, deltas)),
                       ("tokens:3", stream_outcome(fmt, chunk(text, "tokens:3", SPECIAL_TOKENS)))):
        # whitespace after the calls is layout (DESIGN.md)
        assert got.content == before + ("" if after.isspace() else after), label
        assert as_pairs(got.calls) == expected, label


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_property_v3_random_calls_any_split(data):
    _property(V3, data)


@_SETTINGS
@given(st.data())
def test_property_v31_random_calls_any_split(data):
    _property(V31, data)


# ----------------------------------------------------------------- what models really write
@pytest.mark.parametrize("fmt", [V3, V31])
def test_a_call_end_that_cuts_a_head_short_is_content(fmt):
    text = "Hi." + CALLS_BEGIN + CALL_BEGIN + "x" + CALL_END + CALLS_END + " Bye."
    assert_agrees(fmt, text, "Hi." + CALL_BEGIN + "x" + CALL_END + " Bye.", [])


@pytest.mark.parametrize("fmt", [V3, V31])
def test_a_head_the_output_ends_in_is_not_content(fmt):
    head = CALL_BEGIN + "function" + SEP + "get_wea" if fmt == V3 else CALL_BEGIN + "get_wea"
    assert_agrees(fmt, "Hi." + CALLS_BEGIN + head, "Hi.", [])


@pytest.mark.parametrize("fmt", [V3, V31])
def test_a_broken_call_is_dropped_up_to_its_end_token_and_prose_after_one_is_content(fmt):
    make = v3_call if fmt == V3 else v31_call
    # broken, then its own end token: the broken text is markup of a call not made
    text = "Hi." + block(make("a", '{"x": NaN, "y": 2}'), make("b", '{"y": 2}'))
    assert_agrees(fmt, text, "Hi.", [("b", {"y": 2})])
    # broken, then prose to the end of the output: the prose is content
    cut = make("a", '{"x": 1}').split(CALL_END)[0]
    if fmt == V3:
        cut = cut[:-len(V3_FENCE_CLOSE)]
    assert_agrees(fmt, "Hi." + CALLS_BEGIN + cut + "\nI will wait.", "Hi.I will wait.", [])


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31", "kimi_k2"])
def test_peak_memory_of_a_call_does_not_grow_with_its_length(name):
    # the arguments are validated incrementally, no text kept
    from callscale.measure import _peak_bytes
    from callscale.workloads import catalog

    peaks = []
    for length in (4096, 65536):
        case = catalog.make("write_file", name, length)
        peaks.append(_peak_bytes(parsers.get(name), chunk(case.text, "tokens:4", render.get(name).special_tokens),
                                 list(case.tools)))
    assert peaks[1] < 2 * peaks[0] + 4096, peaks


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31"])
def test_the_argument_end_markers_are_found_by_one_search(name):
    """_s_args writes the scanner's one-search find out: its marker set must have that search."""
    m = parsers.get(name)()._m_args
    assert m._scan is not None and m.item_set == set(m.items)


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v31"])
@pytest.mark.parametrize("text", [
    CALLS_BEGIN + CALL_BEGIN + "function" + SEP + SEP + CALL_BEGIN,
    CALLS_BEGIN + CALL_BEGIN + SEP + SEP + CALL_END + "Hi",
    CALLS_BEGIN + CALL_BEGIN + "function" + SEP + "  " + SEP + "\n" + CALL_END + "ok",
])
def test_a_separator_inside_a_head_reads_alike_at_every_split(name, text):
    # a differential fuzz: a separator token in the name, split over two deltas, came as two name pieces, so the
    # head no longer held "nothing but its tokens" (docs/formats.md) and its markup became content
    whole = whole_outcome(name, text)
    for cut in range(len(text) + 1):
        assert not check.compare(stream_outcome(name, [text[:cut], text[cut:]]), whole), cut
