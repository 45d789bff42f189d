"""The strict JSON layer (callscale/parsers/jsonscan.py) and the faults its copies grew.

Each fault test runs over every parser where its kind applies.
"""

import json
import tracemalloc

import pytest
from support import stream_outcome, whole_outcome

from callscale.parsers import deepseek as ds
from callscale.parsers import get
from callscale.parsers import kimi as km
from callscale.parsers import jsonscan
from callscale.workloads.chunking import chunk

SPLITS = ("whole", "char", "tokens:4", "fixed:3")


def outcomes(name, text):
    """(content, complete calls) of the whole-text parse and of each split: they must all agree."""
    got = [whole_outcome(name, text)] + [stream_outcome(name, chunk(text, spec)) for spec in SPLITS]
    return [(o.content, o.complete_calls()) for o in got]


def assert_all(name, text, content, calls):
    for i, got in enumerate(outcomes(name, text)):
        assert got == (content, calls), (name, (("whole-text",) + SPLITS)[i], got)


# ----------------------------------------------------------------- strict_loads and the streamer
def test_strict_loads_rejects_what_json_loads_accepts_beyond_rfc_8259():
    assert jsonscan.strict_loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    for text in ("NaN", '{"a": Infinity}', "[-Infinity]"):
        with pytest.raises(ValueError):
            jsonscan.strict_loads(text)
    assert jsonscan.strict_loads("1e999") == float("inf")  # a number: finite only on request
    with pytest.raises(ValueError):
        jsonscan.strict_loads("[1e999]", finite=True)


def test_the_streamer_sends_all_but_the_closing_bracket_and_confirms_it_at_close():
    args = jsonscan.RawArguments()
    text = '{"a": {"b": "}"}, "c": [1, 2]}'
    sent = [args.feed(text[i:i + 3]) for i in range(0, len(text), 3)]
    assert "".join(s for s, _ in sent) == text[:-1]
    assert all(used == len(text[i * 3:i * 3 + 3]) for i, (_, used) in enumerate(sent))
    assert args.close() == "}"
    assert jsonscan.RawArguments().close() == "{}" and jsonscan.RawArguments().close(cut=True) is None


def test_the_streamer_stops_where_the_text_stops_being_the_arguments():
    args = jsonscan.RawArguments()
    assert args.feed('{"a": x, "b"') == ('{"a": ', 6) and args.broken()
    assert args.close() is None
    args = jsonscan.RawArguments()  # prose after a complete object: not the arguments'
    assert args.feed('{"a": 1}  Done') == ('{"a": 1', 10) and not args.broken()
    assert args.close() is None
    args = jsonscan.RawArguments()  # a format whose call ends at the bracket reads no further
    assert args.feed('{"a": 1}[TOOL_CALLS]', stop_at_close=True) == ('{"a": 1', 8)
    assert args.close() == "}"


def test_the_streamer_keeps_no_argument_text():
    assert not hasattr(jsonscan.RawArguments(), "__dict__")
    tracemalloc.start()
    try:
        peaks = []
        for n in (4096, 65536):
            args = jsonscan.RawArguments()
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            args.feed('{"content": "')
            piece = "abcd efgh\\n" * 2
            for _ in range(n // len(piece)):
                args.feed(piece)
            args.feed('"}')
            peaks.append(tracemalloc.get_traced_memory()[1] - base)
            assert args.close() == "}"
    finally:
        tracemalloc.stop()
    assert peaks[1] < 2 * peaks[0] + 1024, peaks


# ----------------------------------------------------------------- fault 1: a broken character and a token in one delta
B, C, S, E, BE = ds.CALLS_BEGIN, ds.CALL_BEGIN, ds.SEP, ds.CALL_END, ds.CALLS_END
BROKEN_THEN_CALL = {
    "deepseek_v31": (f'{B}{C}f{S}{{"a": x{C}g{S}{{"a": 1}}{E}{BE}Done.', "xDone."),
    "deepseek_v3": (f'{B}{C}function{S}f\n```json\n{{"a": x{C}function{S}g\n```json\n{{"a": 1}}\n```{E}{BE}Done.',
                    "xDone."),
    "kimi_k2": (f'{km.SECTION_BEGIN}{km.CALL_BEGIN}functions.f:0{km.ARGUMENT_BEGIN}{{"a": x{km.CALL_BEGIN}'
                f'functions.g:1{km.ARGUMENT_BEGIN}{{"a": 1}}{km.CALL_END}{km.SECTION_END}Done.', "xDone."),
    "gpt_oss": ('<|channel|>commentary to=functions.f<|message|>{"a": x<|start|>assistant<|channel|>commentary '
                'to=functions.g<|message|>{"a": 1}<|call|>', "x"),
    "mistral": ('[TOOL_CALLS]f[ARGS]{"a": x[TOOL_CALLS]g[ARGS]{"a": 1}', "x"),
    "qwen3": ('<tool_call>{"name": "f", "arguments": {"a": x<tool_call>{"name": "g", "arguments": {"a": 1}}</tool_call>',
              "x"),
    "llama3_json": ('{"name": "f", "parameters": {"a": x; {"name": "g", "parameters": {"a": 1}}', "x; "),
}


@pytest.mark.parametrize("name", sorted(BROKEN_THEN_CALL))
def test_a_broken_argument_character_and_a_token_in_the_same_delta(name):
    # the token after the broken character is read as a token, whatever the split
    text, content = BROKEN_THEN_CALL[name]
    assert_all(name, text, content, [("g", {"a": 1})])


def test_the_issue_text_of_fault_1():
    text = f'{B}{C}f{S}x{C}g{S}{{"a": 1}}{E}{BE}Done.'
    assert_all("deepseek_v31", text, "xDone.", [("g", {"a": 1})])


# ----------------------------------------------------------------- fault 3: llama3_json prose with "{"
@pytest.mark.parametrize("text", ["Use {", 'See {"x": "abc and more prose', "A set {1, 2", 'Maybe {"name": "f", "para'])
def test_llama3_json_prose_with_a_brace_cut_by_the_end_is_content(text):
    assert_all("llama3_json", text, text, [])


@pytest.mark.parametrize("text, content", [
    ('Say {"a b c {"name": "f", "parameters": {"a": 1}}', 'Say {"a b c '),
    ('Text {"oops {"name": "f", "parameters": {"a": 1}} done', 'Text {"oops  done'),
])
def test_llama3_json_a_brace_in_prose_does_not_hide_a_later_call(text, content):
    assert_all("llama3_json", text, content, [("f", {"a": 1})])


def test_llama3_json_a_separator_after_the_last_call_is_layout():
    call = '{"name": "f", "parameters": {"a": 1}}'
    assert_all("llama3_json", call + "; ", "", [("f", {"a": 1})])
    assert_all("llama3_json", call + " ;\n", "", [("f", {"a": 1})])
    assert_all("llama3_json", call + "; Done.", "; Done.", [("f", {"a": 1})])


# ----------------------------------------------------------------- fault 4: prose after a complete JSON body
PROSE_AFTER_BODY = {
    "gpt_oss": '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1} Done, thanks.',
    "deepseek_v31": f'{B}{C}f{S}{{"a": 1}} Done, thanks.',
    "kimi_k2": f'{km.SECTION_BEGIN}{km.CALL_BEGIN}functions.f:0{km.ARGUMENT_BEGIN}{{"a": 1}} Done, thanks.',
}


@pytest.mark.parametrize("name", sorted(PROSE_AFTER_BODY))
def test_prose_after_a_complete_body_without_its_end_token_is_content(name):
    # the call's text stops being a call at the prose: a broken call whose prose is content (DESIGN.md)
    for content, calls in outcomes(name, PROSE_AFTER_BODY[name]):
        assert content == "Done, thanks." and calls == [], name


# ----------------------------------------------------------------- fault 7: flat memory for the argument text
def _peak(name, text, piece=16):
    parser = get(name)()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        for i in range(0, len(text), piece):
            parser.parse_streaming_increment(text[i:i + piece])
        parser.finish()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


LONG_CALL = {
    "gpt_oss": ('<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"content": "', '"}<|call|>'),
    "mistral": ('[TOOL_CALLS]f[ARGS]{"content": "', '"}'),
    "deepseek_v31": (f'{B}{C}f{S}{{"content": "', f'"}}{E}{BE}'),
    "kimi_k2": (f'{km.SECTION_BEGIN}{km.CALL_BEGIN}functions.f:0{km.ARGUMENT_BEGIN}{{"content": "',
                f'"}}{km.CALL_END}{km.SECTION_END}'),
}


@pytest.mark.parametrize("name", sorted(LONG_CALL))
def test_a_long_argument_is_streamed_with_flat_memory(name):
    head, tail = LONG_CALL[name]
    small, large = (_peak(name, head + "ab cd\\n" * (n // 7) + tail) for n in (4096, 65536))
    assert large < 2 * small, (name, small, large)


# ----------------------------------------------------------------- fault 8: a harmony header without <|message|>
HEADERLESS = [
    ("<|channel|>final The answer is 42.", "The answer is 42.", [], ""),
    ("<|start|>assistant<|channel|>final The answer is 42.<|return|>", "The answer is 42.", [], ""),
    ("<|channel|>analysis Let me think.<|end|><|start|>assistant<|channel|>final Paris.<|return|>", "Paris.", [],
     "Let me think."),
    ('<|channel|>commentary to=functions.f <|constrain|>json{"a": 1}<|call|>', "", [("f", {"a": 1})], ""),
    ('<|start|>assistant to=functions.f<|channel|>commentary json {"a": 1}<|call|>', "", [("f", {"a": 1})], ""),
]


@pytest.mark.parametrize("text, content, calls, reasoning", HEADERLESS)
def test_a_harmony_header_without_its_message_token_keeps_its_body(text, content, calls, reasoning):
    assert_all("gpt_oss", text, content, calls)
    assert whole_outcome("gpt_oss", text).reasoning == reasoning


@pytest.mark.parametrize("text", [
    "<|channel|>commentary to=functions.f<|call|>",          # a call with nothing a call needs
    "<|start|>assistant<|channel|>final<|return|>",          # an envelope holding nothing
    "<|channel|>commentary to=functions.f <|constrain|>js",  # a header the end of the output cuts
])
def test_an_envelope_holding_nothing_is_markup(text):
    assert_all("gpt_oss", text, "", [])


def test_issue_fault_texts_are_valid_json_where_calls_are_made():
    # the arguments a client assembles are strict JSON objects
    for name, (text, _) in BROKEN_THEN_CALL.items():
        for call in whole_outcome(name, text).calls:
            assert isinstance(json.loads(call.arguments_text), dict)


# ----------------------------------------------------------------- the call head matched whole
HEAD_SPELLINGS = (  # the encoders' spelling (matched whole), and others (read token by token)
    '{"name": "%s", "%s": {"a": 1}}', '{ "name":"%s" , "%s" :{"a": 1}}', '{"name": "%s", "x": 0, "%s": {"a": 1}}')


@pytest.mark.parametrize("spelling", HEAD_SPELLINGS)
@pytest.mark.parametrize("name, key, wrap", [
    ("llama3_json", "parameters", "%s"), ("llama3_json", "arguments", "%s"), ("qwen3", "arguments", "<tool_call>\n%s\n</tool_call>")])
def test_a_call_head_reads_the_same_in_every_spelling(spelling, name, key, wrap):
    assert_all(name, wrap % (spelling % ("get_weather", key)), "", [("get_weather", {"a": 1})])


@pytest.mark.parametrize("name, wrap", [("llama3_json", "%s"), ("qwen3", "<tool_call>%s</tool_call>")])
def test_a_head_past_the_bound_is_no_call_in_the_matched_spelling(name, wrap):
    # {"name": "", "arguments": : 26 characters besides the name (the arguments' "{" is not the head's)
    from callscale.parsers.base import MAX_HEAD
    fits = wrap % ('{"name": "%s", "arguments": {"a": 1}}' % ("f" * (MAX_HEAD - 26)))
    over = wrap % ('{"name": "%s", "arguments": {"a": 1}}' % ("f" * (MAX_HEAD - 25)))
    for got in outcomes(name, fits):
        assert got[1] == [("f" * (MAX_HEAD - 26), {"a": 1})]
    for got in outcomes(name, over):
        assert got[1] == [], got


@pytest.mark.parametrize("blanks", [960, 990, 1000, 1030])
def test_blanks_and_a_matched_head_share_the_bound(blanks):
    # qwen3's blanks after <tool_call> count in the head: the matched head and the token-by-token one agree
    matched = "<tool_call>" + " " * blanks + '{"name": "f", "arguments": {"a": 1}}</tool_call>'
    other = "<tool_call>" + " " * blanks + '{"name":"f", "arguments": {"a": 1}}</tool_call>'
    got, ref = outcomes("qwen3", matched), outcomes("qwen3", other)
    assert all(g == got[0] for g in got), got
    assert all(r == ref[0] for r in ref), ref
    assert [calls for _, calls in got] == [calls for _, calls in ref]
    assert (got[0][1] == []) == (blanks + 25 > 1024)
