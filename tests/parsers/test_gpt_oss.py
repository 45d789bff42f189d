"""gpt-oss harmony parser (``gpt_oss``) and its renderer."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.harmony import CALL, CHANNEL, CONSTRAIN, END, MESSAGE, RETURN, SPECIAL_TOKENS, START, read_header
from support import (CHUNKINGS, assert_arguments_stream, assert_odd_output_agrees, assert_parses, calls_strategy,
                     split_at, stream_outcome, whole_outcome)
from callscale.workloads import render
from callscale.workloads.render import Call

G = "gpt_oss"
CHUNKS = CHUNKINGS + ["tokens:1", "tokens:3"]


def parses(text, content, calls, reasoning="", **kw):
    kw.setdefault("chunkings", CHUNKS)
    assert_parses(G, text, content, calls, special_tokens=SPECIAL_TOKENS, reasoning=reasoning, **kw)


def msg(header, body, end=END, start=True):
    """One message; ``start=False``: the first of the output, whose ``<|start|>assistant`` the prompt wrote."""
    return (START + header if start else header.removeprefix("assistant")) + MESSAGE + body + end


# ----------------------------------------------------------------- the harmony guide's own examples

def test_the_guides_tool_call_example():
    # openai/harmony docs/format.md, "Receiving tool calls": the output after <|start|>assistant
    text = ('<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant'
            '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>')
    parses(text, "", [("get_weather", {"location": "San Francisco"})], reasoning="Need to use function get_weather.")


def test_the_guides_final_answer_example():
    text = ('<|channel|>analysis<|message|>User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.<|end|>\n'
            '<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>')
    parses(text, "\n2 + 2 = 4.", [], reasoning='User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.')


def test_the_guides_preamble_is_content():
    text = ('<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>commentary<|message|>**Action plan**:\n'
            '1. Generate an HTML file<|end|><|start|>assistant<|channel|>commentary to=functions.generate_file'
            '<|constrain|>json<|message|>{"template": "basic_html", "path": "index.html"}<|call|>')
    parses(text, "**Action plan**:\n1. Generate an HTML file",
           [("generate_file", {"template": "basic_html", "path": "index.html"})], reasoning="plan")


def test_the_chat_templates_form_recipient_in_the_role_bare_json():
    # gpt-oss chat_template.jinja: "<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>ARGS<|call|>"
    text = ('<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Tokyo"}<|call|>'
            '<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|end|>')
    parses(text, "", [("get_weather", {"city": "Tokyo"}), ("get_time", {})])


def test_the_output_may_start_with_the_recipient():
    # the model continuing the prompt's "<|start|>assistant" with " to=..."
    parses(' to=functions.f<|channel|>commentary json<|message|>{"a": 1}<|call|>', "", [("f", {"a": 1})])
    parses('to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>', "", [("f", {"a": 1})])


@pytest.mark.parametrize("header, recipient, channel", [
    ("assistant<|channel|>commentary to=functions.f <|constrain|>json", "functions.f", "commentary"),
    ("assistant<|channel|>commentary to=functions.f<|constrain|>json", "functions.f", "commentary"),
    ("assistant to=functions.f<|channel|>commentary json", "functions.f", "commentary"),
    ("assistant<|channel|>analysis", "", "analysis"),
    ("assistant to=python<|channel|>analysis", "python", "analysis"),
    ("<|channel|>final", "", "final"),
    ("assistant", "", ""),
])
def test_read_header(header, recipient, channel):
    assert read_header(header) == (recipient, channel)


# ----------------------------------------------------------------- calls, ends, sequences

@pytest.mark.parametrize("end", [CALL, END, RETURN, ""])
def test_a_call_ends_at_call_end_return_or_the_end_of_output(end):
    text = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>" + '{"x": [1, {"y": null}]}' + end
    parses(text, "", [("f", {"x": [1, {"y": None}]})])


def test_several_calls_in_sequence_and_the_final_answer():
    calls = [("read_file", {"path": "a.py"}), ("search", {"q": 'café "x"\n\\', "n": 2}), ("ping", {})]
    text = "".join(msg(f"assistant<|channel|>commentary to=functions.{n} <|constrain|>json", json.dumps(a), CALL,
                       start=i > 0) for i, (n, a) in enumerate(calls))
    text += msg("assistant<|channel|>final", "All done.", RETURN)
    parses(text, "All done.", calls)


def test_builtin_recipients_are_calls_with_that_name():
    text = (msg("assistant<|channel|>analysis to=python", "import math\nprint(math.pi)\n", CALL, start=False)
            + msg("assistant<|channel|>analysis to=browser.search", '{"query": "harmony", "topn": 3}', CALL))
    parses(text, "", [("python", {"code": "import math\nprint(math.pi)\n"}),
                      ("browser.search", {"query": "harmony", "topn": 3})])


def test_a_code_body_cut_off_makes_no_call():
    got = stream_outcome(G, list("<|channel|>analysis to=python<|message|>print(1)"))
    assert got.complete_calls() == [] and [c.name for c in got.calls] == ["python"]


def test_empty_arguments_give_an_empty_object():
    parses(msg("assistant<|channel|>commentary to=functions.now json", " ", CALL, start=False), "", [("now", {})])


@pytest.mark.parametrize("bad", ['{"x": 1,}', "not json", '["a"]', '{"x": 1} extra', '{"x": NaN}', "{"])
def test_bodies_that_are_not_one_json_object_abandon_the_call(bad):
    text = ("Hi" + msg("assistant<|channel|>commentary to=functions.a json", bad, CALL)
            + msg("assistant<|channel|>commentary to=functions.b json", '{"y": 2}', CALL) + "!")
    for deltas in ([text], list(text), [text[i:i + 5] for i in range(0, len(text), 5)]):
        got = stream_outcome(G, deltas)
        assert (got.content, got.complete_calls()) == ("Hi!", [("b", {"y": 2})])
        assert [c.name for c in got.calls] == ["a", "b"]
    whole = whole_outcome(G, text)
    assert (whole.content, [c.name for c in whole.calls]) == ("Hi!", ["b"])


# ----------------------------------------------------------------- markup and stray tokens

def test_stray_tokens_are_dropped_and_text_around_them_is_content():
    parses("a" + END + "b" + CALL + RETURN + "c" + MESSAGE + CONSTRAIN + "d", "abcd", [])


def test_a_header_cut_short_is_markup():
    parses("x" + START + "assistant" + START + "assistant<|channel|>final" + END + "y"
           + msg("assistant<|channel|>final", "z"), "xyz", [])


def test_repeated_opener_gives_nothing():
    parses((START + "assistant") * 50, "", [])


def test_a_header_past_max_head_is_content():
    from callscale.parsers.base import MAX_HEAD
    junk = "w" * (MAX_HEAD + 10)
    parses(START + junk + MESSAGE + "tail", junk + "tail", [], chunkings=["whole", "fixed:7", "random:3:8"])


def test_long_content_without_calls():
    text = "plain <|text|> <|cha and to= more\n" * 300
    parses(text, text, [], chunkings=["whole", "fixed:7", "random:3:8"])


def test_analysis_only_is_reasoning():
    parses("<|channel|>analysis<|message|>thinking <|call|>", "", [], reasoning="thinking ")


# ----------------------------------------------------------------- tokens inside JSON strings

def test_end_tokens_inside_a_json_string_are_text():
    value = f"if s.endswith('{CALL}'):\n    x = \"{END}\" + '{START}{RETURN}' {CALL} \\\\{END}\\\"{CALL}\n"
    args = {"path": "harmony.py", "content": value}
    text = "Editing." + render.get(G).render([Call("write_file", args), Call("ping", {})])
    parses(text, "Editing.", [("write_file", args), ("ping", {})])


def test_an_end_token_in_a_string_before_the_next_message_ends_the_call():
    text = (msg("assistant<|channel|>commentary to=functions.a json", '{"x": "oops}', CALL, start=False)
            + msg("assistant<|channel|>commentary to=functions.b json", '{"y": 2}', CALL) + "tail")
    got = stream_outcome(G, list(text))
    assert (got.content, got.complete_calls()) == ("tail", [("b", {"y": 2})])
    assert [c.name for c in got.calls] == ["a", "b"]


# ----------------------------------------------------------------- faults: last delta, truncation, odd output

SAMPLE_CALLS = [("read_file", {"path": "a.txt", "range": [1, 20]}), ("search", {"q": f"x{CALL}y", "n": 3})]
SAMPLE = render.get(G).render([Call(n, a) for n, a in SAMPLE_CALLS], "Let me look.")


def test_the_end_of_a_call_in_the_last_delta():
    cut = SAMPLE.rindex('"n"')
    parses(SAMPLE, "Let me look.", SAMPLE_CALLS, deltas=[SAMPLE[:cut], SAMPLE[cut:]])


def test_truncated_output_never_raises_nor_invents_a_call():
    for cut in range(len(SAMPLE) + 1):
        text = SAMPLE[:cut]
        for got in (stream_outcome(G, [text[i:i + 3] for i in range(0, len(text), 3)]), whole_outcome(G, text)):
            # a special token cut off at the end of the output is text
            content = re.sub(r"<\|?[a-z]*\|?$", "", got.content) if cut < len(SAMPLE) else got.content
            assert "Let me look.".startswith(content), (cut, got.content)
            done = got.complete_calls()
            assert done == SAMPLE_CALLS[:len(done)], (cut, done)
            assert not any(t in got.content for t in SPECIAL_TOKENS)


def test_odd_output_never_raises():
    odd = list(SPECIAL_TOKENS) + ["assistant", " to=functions.f", "to=python", "commentary", "analysis", "json",
                                  "{", "}", '"', "\\", " ", "x"]
    assert_odd_output_agrees(G, odd, seed=8)


def test_arguments_stream_as_they_arrive():
    args = {"path": "a.py", "content": "x = 'é\"\\\n' " * 200}
    text = render.get(G).render([Call("write_file", args)], "Writing.")
    assert_arguments_stream(G, text, args)


def test_registered_and_rendered():
    assert G in parsers.names()
    r = render.get(G)
    assert r.render([Call("a", {"x": "é"}), Call("b")], "Hi") == (
        '<|channel|>commentary<|message|>Hi<|end|><|start|>assistant<|channel|>commentary to=functions.a '
        '<|constrain|>json<|message|>{"x": "é"}<|call|><|start|>assistant<|channel|>commentary to=functions.b '
        '<|constrain|>json<|message|>{}<|call|>')
    assert r.render([], "Hi") == "Hi"


# ----------------------------------------------------------------- property: render, split anywhere, parse

_calls = calls_strategy(SPECIAL_TOKENS)
_content = st.text(alphabet=st.sampled_from(list("ab \n<>|_é\"to=")), max_size=20)
_AMBIGUOUS = re.compile("(" + "|".join(re.escape(t) for t in (CALL, END, RETURN)) + r")\s*" + re.escape(START))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls, content=_content, data=st.data())
def test_rendered_calls_parse_back_under_any_split(calls, content, data):
    for call in calls:  # an end token before <|start|> is a real end, even in a string
        assume(not _AMBIGUOUS.search(json.dumps(dict(call.arguments), ensure_ascii=False)))
    assume(calls or not content.lstrip().startswith("to="))
    text = render.get(G).render(calls, content)
    deltas = split_at(text, data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    expected = check.outcome_of(content, [(c.name, dict(c.arguments)) for c in calls])
    streamed = stream_outcome(G, deltas)
    whole = whole_outcome(G, text)
    assert not check.compare(streamed, expected), check.compare(streamed, expected)
    assert not check.compare(whole, expected), check.compare(whole, expected)
    assert len(streamed.calls) == len(calls)
