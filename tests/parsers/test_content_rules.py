"""DESIGN.md "Content and markup": one rule for every registered parser (section 3).

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
import re

import pytest

from callscale import parsers
from callscale import check
from callscale.parsers import dsml
from formats import FORMATS
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
#: Formats that do not hold the rule yet: strict xfails, so a fix must remove the name.
CUT_NOT_YET = set()
BROKEN_NOT_YET = set()


def _params(names, not_yet):
    return [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason="not yet held by this format")]
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
    opener = r.opener if r.opener in text else FORMATS[name].call_start
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
#: The broken call of each format: tests/helpers/formats.py (``Format.broken``).


@pytest.mark.parametrize("name", _params(NAMES, BROKEN_NOT_YET))
def test_prose_after_a_broken_call_is_content(name):
    text = FORMATS[name].broken + "\n" + PROSE
    for label, got in _outcomes(name, text).items():
        assert "".join(got.content.split()) == "".join(("Hi." + PROSE).split()), (label, got.content)
        assert got.complete_calls() == [], label


# --------------------------------------------------------------------------- abandoned calls
def _malformed(name):
    """Texts whose calls a parser must abandon: cut at every token boundary, broken, NaN arguments."""
    r = render.get(name)
    text = r.render([CALL], content="Hi.")
    texts = [text[:k] for k in _token_boundaries(text, r.special_tokens)]
    texts.append(FORMATS[name].broken + "\n" + PROSE)
    if _json_spelling(text) is not None:
        for bad in ("NaN", "-Infinity", '"3"}x'):
            texts.append(_with_value(text, "days", 3, bad))
    return texts


#: The two spellings of JSON arguments the renderers write: json.dumps' default and compact (Inkling's engines).
_SEPARATORS = ((", ", ": "), (",", ":"))


def _json_spelling(text):
    """The separators ``ARGS`` is spelled with in ``text`` (JSON arguments), or None (not JSON text)."""
    for seps in _SEPARATORS:
        if json.dumps(ARGS, separators=seps) in text:
            return seps
    return None


def _with_value(text, key, value, bad):
    """``text`` with the JSON member ``"key": value`` (in either spelling) written as ``"key": bad``."""
    for _, colon in _SEPARATORS:
        text = text.replace(f'"{key}"{colon}{json.dumps(value)}', f'"{key}"{colon}{bad}')
    return text


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
JSON_ARGUMENTS = [n for n in NAMES if _json_spelling(render.get(n).render([CALL])) is not None]


def test_the_json_argument_formats_are_those_their_rows_name():
    assert set(JSON_ARGUMENTS) == {n for n in NAMES if FORMATS[n].json_arguments}
    assert {"deepseek_v3", "kimi_k2", "qwen3", "gpt_oss"} <= set(JSON_ARGUMENTS) and "glm47" not in JSON_ARGUMENTS


@pytest.mark.parametrize("name", JSON_ARGUMENTS)
@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_make_a_call_malformed(name, bad):
    r = render.get(name)
    text = _with_value(r.render([Call("f", {"a": 1}), CALL], content="Hi."), "a", 1, bad)
    for label, got in _outcomes(name, text).items():
        assert got.complete_calls() == [("get_weather", ARGS)], (label, got.calls)
        assert got.content.strip() == "Hi.", (label, got.content)


def test_the_checker_reads_arguments_strictly():
    assert check.StreamedCall("f", '{"a": NaN}').arguments() is None
    assert check.StreamedCall("f", '{"a": 1}').arguments() == {"a": 1}


# --------------------------------------------------------------------------- faults of the copies
#: The markup formats; the kinds below apply to each.
MARKUP = ["glm45", "glm47", "deepseek_v32", "deepseek_v4", "deepseek_v41", "qwen3_coder", "minimax_m2", "gemma4"]
DSML = ["deepseek_v32", "deepseek_v4", "deepseek_v41"]


@pytest.mark.parametrize("name", MARKUP)
def test_only_the_encoders_layout_before_a_block_is_dropped(name):
    # "Hi.\n\n\n\n<block>Bye." gave "Hi.Bye." (glm47, DSML)
    layout = parsers.get(name).layout_before_call
    assert layout == "\n" * len(layout)
    block = render.get(name).render([CALL]).lstrip()
    text = "Hi.\n\n\n\n" + block + "Bye."
    for label, got in _outcomes(name, text).items():
        assert got.content == "Hi." + "\n" * (4 - len(layout)) + "Bye.", (label, got.content)
        assert got.complete_calls() == [("get_weather", ARGS)], label


@pytest.mark.parametrize("name", ["glm45", "glm47", "qwen3_coder"])
def test_a_broken_calls_markup_never_reaches_content(name):
    # a key cut short by the call's end tag; glm gave "Hi.</tool_call> Done."
    if name == "qwen3_coder":
        text = "Hi.<tool_call>\n<function=get_weather>\n<parameter=ci</tool_call> Done."
    else:
        text = "Hi.<tool_call>get_weather<arg_key>ci</tool_call> Done."
    for label, got in _outcomes(name, text).items():
        assert "<" not in got.content and got.content.startswith("Hi.") and got.content.endswith("Done."), (
            label, got.content)
        assert got.complete_calls() == [], label


@pytest.mark.parametrize("name", ["glm45", "glm47"] + DSML)
def test_output_cut_at_every_character_of_a_call_leaves_no_markup(name):
    # an output cut inside a tag put head markup in content (glm: "<arg_val")
    text = render.get(name).render([CALL], content="Hi.")
    opener = "<tool_call>" if name.startswith("glm") else "<" + dsml.SPELLINGS[name].block + ">"
    for k in range(text.index(opener) + len(opener), len(text)):  # once the block opener is complete
        for got in (whole_outcome(name, text[:k], TOOLS), stream_outcome(name, chunk(text[:k], "fixed:3"), TOOLS)):
            assert got.content.rstrip() == "Hi.", (k, text[:k][-20:], got.content)


def _dsml(name, s):
    sp = dsml.SPELLINGS[name]
    return s.replace("<B>", f"<{sp.block}>").replace("</B>", f"</{sp.block}>").replace(
        "<I", f"<{sp.invoke}").replace("</I>", f"</{sp.invoke}>").replace("<P", f"<{sp.parameter}").replace(
        "</P>", f"</{sp.parameter}>")


@pytest.mark.parametrize("name", DSML)
def test_a_parameter_tag_with_a_typo_breaks_the_call(name):
    # both tags went to content and the call completed as {}
    text = _dsml(name, 'Hi.\n\n<B>\n<I name="get_weather">\n<P nme="city" string="true">Paris</P>\n</I>\n</B>')
    for label, got in _outcomes(name, text).items():
        assert (got.content, got.complete_calls()) == ("Hi.", []), label


@pytest.mark.parametrize("name", DSML)
def test_prose_mentioning_an_invoke_before_a_real_block(name):
    # the block opener leaked into content, the block was held whole (no streaming)
    # and, cut, became content
    mention = _dsml(name, "Use <I in the docs.")
    block = render.get(name).render([Call("write_file", {"content": "x" * 400})])
    text = mention + block + "Bye."
    for label, got in _outcomes(name, text).items():
        assert got.content == mention + "Bye.", (label, got.content[:80])
        assert got.complete_calls() == [("write_file", {"content": "x" * 400})], label
    # the arguments stream before the block closes
    parser = parsers.get(name)()
    cut = text.index("x" * 400) + 300
    early = check.assemble([parser.parse_streaming_increment(piece, ()) for piece in chunk(text[:cut], "fixed:7")])
    assert early.calls and len(early.calls[0].arguments_text) > 100
    # cut inside the block: the mention is content, the block is not
    got = whole_outcome(name, text[:cut])
    assert (got.content, got.complete_calls()) == (mention, [])


@pytest.mark.parametrize("name", DSML)
def test_an_invoke_opener_glued_to_prose_in_a_block_is_text(name):
    # "<｜DSML｜invokeOk" lost its text at the end of the output or leaked the block closer
    glued = _dsml(name, "<IOk, done")
    block = render.get(name).render([CALL])
    closer = "</" + dsml.SPELLINGS[name].block + ">"
    inner = block[:block.rindex(closer)]
    for text, want in ((inner + glued + closer + "Bye.", glued + "Bye."), (inner + glued, glued)):
        for label, got in _outcomes(name, text).items():
            assert (got.content, got.complete_calls()) == (want, [("get_weather", ARGS)]), label


#: An envelope, or a call, that holds nothing a call needs: tests/parsers/test_formats.py, under
#: this file's chunkings, with each row's ``empty_envelope``.


# whitespace held after a call, at any length: tests/parsers/test_layout_memory.py


MARK = "VALUEMARK"


def _after_value_tag(name: str) -> str | None:
    """The rendering of a one-parameter call cut right after the tag that closes its value, or None for a
    format whose value is not closed by a tag (a JSON string)."""
    text = render.get(name).render([Call("get_weather", {"city": MARK})], content="Hi.")
    at = text.find(MARK) + len(MARK)
    tag = _VALUE_CLOSER.match(text, at)
    return text[:tag.end()] if tag else None


#: A tag that closes a value: XML-ish ``</...>`` (after MiniMax M3's namespace too), Kimi K3's
#: ``<|close|>argument<|sep|>``, Gemma 4's string delimiter.
_VALUE_CLOSER = re.compile(r'\n?(?:(?:\]<\]minimax\[>\[)?</[^>]*>|<\|close\|>argument<\|sep\|>|<\|"\|>)')


def _peak_after_value_tag(prefix: str, name: str, n_ws: int) -> int:
    import tracemalloc
    parser = parsers.get(name)()
    parser.parse_streaming_increment(prefix, TOOLS)
    tracemalloc.start()
    try:
        for _ in range(n_ws // 2):
            parser.parse_streaming_increment("".join([" ", "\n"]), TOOLS)  # a new string each delta
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


TAG_CLOSED = [n for n in NAMES if _after_value_tag(n) is not None]


@pytest.mark.parametrize("name", TAG_CLOSED)
def test_whitespace_after_a_value_closing_tag_is_held_bounded(name):
    # the tag that may close a value waits for what follows (scanner.match with base._confirm_ws); whitespace meanwhile is held as
    # run lengths in every format (qwen3_coder kept a list entry a delta: 100,000 characters in 50,001 entries)
    prefix = _after_value_tag(name)
    small, large = _peak_after_value_tag(prefix, name, 4_000), _peak_after_value_tag(prefix, name, 64_000)
    assert large < 2 * small + 4096, (small, large)


def test_the_formats_that_close_a_value_with_a_tag_are_those_their_rows_name():
    assert set(TAG_CLOSED) == {n for n in NAMES if FORMATS[n].value_tag}, TAG_CLOSED
    assert {"glm47", "qwen3_coder", "gemma4", "kimi_k3", "deepseek_v32"} <= set(TAG_CLOSED)
    assert not set(TAG_CLOSED) & set(JSON_ARGUMENTS)
