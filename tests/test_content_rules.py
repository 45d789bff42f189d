"""DESIGN.md "Content and markup": one rule for every registered parser (issue 9, section 3).

Each test runs over ``callscale.parsers.names()``, with the text written by the
format's renderer (``callscale.workloads.render``):

- whitespace-only text between or after call blocks is layout, never content;
- output cut inside a call (max tokens): no partial markup in content, and
  ``detect_and_parse`` leaves the cut call out;
- prose a model writes after a call it left broken comes back as content;
- the streamed arguments of an abandoned call never form complete JSON;
- arguments are strict JSON: ``NaN`` and ``Infinity`` make a call malformed.
"""

from __future__ import annotations

import json

import pytest

from callscale import parsers
from callscale import check
from callscale.parsers import dsml, gemma, glm, kimi_k3, minimax, minimax_m3, qwen
from support import stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call

NAMES = parsers.names()
ARGS = {"city": "Paris", "days": 3}
CALL = Call("get_weather", ARGS)
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
CHUNKINGS = ["whole", "char", "fixed:3", "tokens:1", "random:5:8"]
PROSE = "I will wait for the result."
WHOLE = "whole-text detect_and_parse"
#: Formats of another branch (issue 9's i9a, which owns these parser modules) that do not
#: hold the rule yet: strict xfails, so a fix must remove the name.
CUT_NOT_YET = set()
BROKEN_NOT_YET = set()


def _params(names, not_yet):
    return [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason="issue 9: i9a's format")]
                         if n in not_yet else []) for n in names]


def _outcomes(name, text):
    """``detect_and_parse`` of ``text`` and its streams under CHUNKINGS (label -> Outcome)."""
    specials = render.get(name).special_tokens
    out = {WHOLE: whole_outcome(name, text, TOOLS)}
    for spec in CHUNKINGS:
        out[spec] = stream_outcome(name, chunk(text, spec, specials), TOOLS)
    return out


# --------------------------------------------------------------------------- layout
@pytest.mark.parametrize("name", NAMES)
def test_whitespace_between_and_after_call_blocks_is_layout(name):
    r = render.get(name)
    text = r.render([CALL], content="Hi.") + "\n \n" + r.render([Call("ping", {})]) + "\n\t \n"
    for label, got in _outcomes(name, text).items():
        assert got.content == "Hi." or got.content.rstrip() == "Hi.", (label, got.content)
        assert not got.content.endswith(("\n", " ", "\t")), f"{name} under {label}: layout as content {got.content!r}"
        assert got.complete_calls() == [("get_weather", ARGS), ("ping", {})], label


@pytest.mark.parametrize("name", NAMES)
def test_text_after_call_blocks_keeps_its_whitespace(name):
    r = render.get(name)
    text = r.render([CALL], content="Hi.") + "\n\n" + r.render([Call("ping", {})]) + "\n Done."
    for label, got in _outcomes(name, text).items():
        assert got.content.endswith(" Done."), (label, got.content)


# --------------------------------------------------------------------------- output cut inside a call
#: Formats without an opener token: the text after which the call has started (its name was
#: read); before it, a cut candidate is text that may be prose (docs/formats.md, Llama).
CALL_STARTS = {"llama3_json": '"parameters": {', "llama4_pythonic": "(city="}


def _token_boundaries(text, specials):
    """Positions in ``text`` that do not fall inside a special token."""
    inside = set()
    for token in specials:
        start = text.find(token)
        while start >= 0:
            inside.update(range(start + 1, start + len(token)))
            start = text.find(token, start + 1)
    return [k for k in range(len(text) + 1) if k not in inside]


@pytest.mark.parametrize("name", _params(NAMES, CUT_NOT_YET))
def test_output_cut_inside_a_call_leaves_no_markup_and_no_call(name):
    r = render.get(name)
    text = r.render([CALL], content="Hi.")
    opener = r.opener if r.opener in text else CALL_STARTS[name]
    opened = text.index(opener) + len(opener)
    failures = []
    for k in _token_boundaries(text, r.special_tokens):
        if k < opened or k == len(text):
            continue
        for label, got in _outcomes(name, text[:k]).items():
            if got.content.strip() != "Hi.":
                failures.append(f"cut at {k} ({text[opened:k][-30:]!r}) under {label}: content {got.content!r}")
            elif got.complete_calls() not in ([], [("get_weather", ARGS)]):
                failures.append(f"cut at {k} under {label}: calls {got.complete_calls()!r}")
            elif label == WHOLE and len(got.calls) != len(got.complete_calls()):
                failures.append(f"cut at {k}: detect_and_parse kept a malformed call {got.calls!r}")
    assert not failures, f"{name}: {len(failures)} failures, first: " + "; ".join(failures[:3])


# --------------------------------------------------------------------------- prose after a broken call
def _json_args_cut(name):
    """The rendered call up to the end of its arguments object, the rest of its markup missing."""
    text = render.get(name).render([CALL], content="Hi.")
    return text[:text.index(json.dumps(ARGS)) + len(json.dumps(ARGS))]


#: parser -> a call the model left broken (its markup stops being a call), with no end.
BROKEN = {
    "deepseek_v3": lambda: _json_args_cut("deepseek_v3"),
    "deepseek_v31": lambda: _json_args_cut("deepseek_v31"),
    "kimi_k2": lambda: _json_args_cut("kimi_k2"),
    # the issue's example: the call object's own "}" missing
    "qwen3": lambda: _json_args_cut("qwen3"),
    "glm45": lambda: f"Hi.\n{glm.TOOL_CALL}get_weather\n{glm.ARG_KEY}city{glm.ARG_KEY_END}\n",
    "glm47": lambda: f"Hi.{glm.TOOL_CALL}get_weather{glm.ARG_KEY}city{glm.ARG_KEY_END}",
    "gemma4": lambda: f"Hi.{gemma.CALL_OPEN}{gemma.CALL_PREFIX}get_weather{{city:{gemma.STRING_DELIM}Paris"
                      f"{gemma.STRING_DELIM},days:3}}",
    "qwen3_coder": lambda: f"Hi.\n{qwen.TOOL_CALL_OPEN}\n{qwen.FUNCTION_OPEN}get_weather>\n",
    "minimax_m2": lambda: f"Hi.\n{minimax.BLOCK_OPEN}\n{minimax.INVOKE_OPEN}get_weather{minimax.TAG_END}\n",
    "minimax_m3": lambda: f"Hi.\n{minimax_m3.BLOCK_OPEN}\n{minimax_m3.INVOKE_OPEN}get_weather{minimax_m3.TAG_END}\n",
    "kimi_k3": lambda: (f"Hi.{kimi_k3.RESPONSE_CLOSE}{kimi_k3.TOOLS_OPEN}"
                        + kimi_k3.open_tag("call", tool="get_weather", index="1")),
    **{n: (lambda sp=sp: f"Hi.\n\n<{sp.block}>\n<{sp.invoke} name=\"get_weather\">\n")
       for n, sp in dsml.SPELLINGS.items()},
    # the arguments stop being JSON where the prose starts
    **{n: (lambda n=n: _json_args_cut(n)[:-len("3}")]) for n in ("mistral", "gpt_oss", "llama3_json")},
    "llama4_pythonic": lambda: 'Hi.[get_weather(city="Paris", days=',
}

def test_every_parser_has_a_broken_call():
    assert set(BROKEN) == set(NAMES)


@pytest.mark.parametrize("name", _params(NAMES, BROKEN_NOT_YET))
def test_prose_after_a_broken_call_is_content(name):
    text = BROKEN[name]() + "\n" + PROSE
    for label, got in _outcomes(name, text).items():
        assert "".join(got.content.split()) == "".join(("Hi." + PROSE).split()), (label, got.content)
        assert got.complete_calls() == [], label


# --------------------------------------------------------------------------- abandoned calls
def _malformed(name):
    """Texts whose calls a parser must abandon: cut at every token boundary, broken, NaN arguments."""
    r = render.get(name)
    text = r.render([CALL], content="Hi.")
    texts = [text[:k] for k in _token_boundaries(text, r.special_tokens)]
    texts.append(BROKEN[name]() + "\n" + PROSE)
    if json.dumps(ARGS) in text:
        for bad in ("NaN", "-Infinity", '"3"}x'):
            texts.append(text.replace('"days": 3', f'"days": {bad}'))
    return texts


@pytest.mark.parametrize("name", NAMES)
def test_an_abandoned_calls_streamed_arguments_never_form_complete_json(name):
    for text in _malformed(name):
        whole = whole_outcome(name, text, TOOLS)
        for spec in ("char", "fixed:4", "tokens:1"):
            got = stream_outcome(name, chunk(text, spec, render.get(name).special_tokens), TOOLS)
            made = len(whole.calls)
            for call in got.calls[made:] if len(got.calls) > made else []:
                try:
                    json.loads(call.arguments_text)
                except ValueError:
                    continue
                pytest.fail(f"{name} under {spec}: abandoned call streamed complete JSON "
                            f"{call.arguments_text!r} for {text!r}")


#: Formats whose arguments are JSON text the model writes (not values typed by a schema).
JSON_ARGUMENTS = [n for n in NAMES if json.dumps(ARGS) in render.get(n).render([CALL])]


def test_the_json_argument_formats():
    assert set(JSON_ARGUMENTS) == {"deepseek_v3", "deepseek_v31", "kimi_k2", "qwen3", "llama3_json", "mistral", "gpt_oss"}


@pytest.mark.parametrize("name", JSON_ARGUMENTS)
@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_make_a_call_malformed(name, bad):
    r = render.get(name)
    text = r.render([Call("f", {"a": 1}), CALL], content="Hi.").replace('"a": 1', f'"a": {bad}')
    for label, got in _outcomes(name, text).items():
        assert got.complete_calls() == [("get_weather", ARGS)], (label, got.calls)
        assert got.content.strip() == "Hi.", (label, got.content)


def test_the_checker_reads_arguments_strictly():
    assert check.StreamedCall("f", '{"a": NaN}').arguments() is None
    assert check.StreamedCall("f", '{"a": 1}').arguments() == {"a": 1}
