"""DeepSeek DSML parsers (deepseek_v32, deepseek_v4, deepseek_v41) and their renderers.

Texts are written in the V3.2 spelling and converted with ``spell`` for the
other two, so every case runs in all three spellings.
"""

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.deepseek import EOS
from callscale.parsers.dsml import DSML_TOKEN, MAX_HEAD, SPELLINGS, V32
from support import assert_parses, split_at, stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.render import Call
from callscale.workloads.chunking import chunk

NAMES = ["deepseek_v32", "deepseek_v4", "deepseek_v41"]
B, I, P = V32.block, V32.invoke, V32.parameter


def spell(name, text):
    """``text`` (V3.2 spelling) in the spelling of parser ``name``."""
    sp = SPELLINGS[name]
    return text.replace(B, sp.block).replace(I, sp.invoke).replace(P, sp.parameter)


def param(key, value, string="true"):
    return f'<{P} name="{key}" string="{string}">{value}</{P}>'


def invoke(name, *params):
    return "\n".join([f'<{I} name="{name}">', *params, f"</{I}>"])


def block(*invokes):
    return "\n".join([f"<{B}>", *invokes, f"</{B}>"])


WEATHER = invoke("get_weather", param("city", "杭州"), param("count", "42", "false"))
WEATHER_CALL = ("get_weather", {"city": "杭州", "count": 42})


# ----------------------------------------------------------------------------- cases named in the task
@pytest.mark.parametrize("name", NAMES)
def test_blank_line_before_block_is_layout(name):
    """Case 5: content, a blank line, a block with two invokes: content is exactly ``Checking.``."""
    text = spell(name, "Checking.\n\n" + block(WEATHER, invoke("get_date")))
    assert_parses(name, text, "Checking.", [WEATHER_CALL, ("get_date", {})], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_spaces_before_the_opener_are_content(name):
    # the newline after the block is layout (DESIGN.md: whitespace after calls)
    text = spell(name, "Checking. \n\n" + block(WEATHER) + "\n")
    assert_parses(name, text, "Checking. ", [WEATHER_CALL], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_empty_block_keeps_text_on_both_sides(name):
    """Case 6: ``Hi<B></B> Done.`` keeps ``Hi`` and `` Done.``."""
    text = spell(name, f"Hi<{B}></{B}> Done.")
    assert_parses(name, text, "Hi Done.", [], strip_content=False)


LITERAL_VALUES = [
    # the two-level case: both closing tags, then text that cannot follow an invoke
    f"x</{P}>\n</{I}>\nmore",
    # an agent editing parser code
    f'if tag == "</{P}>":\n    end = "</{I}>"\n    return end\n',
    f"a</{P}>\n</{I}>\n</{P}>\nb",
    f"ends with a closing tag </{P}>",
    f"ends with both </{P}>\n</{I}>",
    f"</{P}></{P}>  \n</{I}> <{B} ",
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", LITERAL_VALUES)
def test_literal_closing_tags_in_a_string_value(name, value):
    """Case 7: a value holding ``</parameter>`` and ``</invoke>`` as text comes back whole."""
    text = spell(name, "Editing.\n\n" + block(invoke("write_file", param("content", value), param("path", "p.py")),
                                              invoke("done")))
    expected = [("write_file", {"content": spell(name, value), "path": "p.py"}), ("done", {})]
    assert_parses(name, text, "Editing.", expected, strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_literal_closing_tag_in_a_json_value(name):
    value = {"code": f"</{P}>", "n": [1, f"</{I}>\n<{I}"]}
    dumped = json.dumps(value, ensure_ascii=False)
    text = spell(name, block(invoke("f", param("obj", dumped, "false"))))
    assert_parses(name, text, "", [("f", {"obj": json.loads(spell(name, dumped))})])


@pytest.mark.parametrize("name", NAMES)
def test_stream_ending_inside_an_unfinished_block(name):
    """Case 8: the stream ends inside a block: content before it is kept, no call is invented."""
    before = "Let me check."
    just_opened = spell(name, f"{before}\n\n<{B}>\n")
    assert_parses(name, just_opened, before, [], strip_content=False)
    # an invoke that closed, followed by the end of the output, is a call
    one_closed = spell(name, f"{before}\n\n<{B}>\n{WEATHER}\n")
    assert_parses(name, one_closed, before, [WEATHER_CALL], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("cut", [
    f'<{I} name="lookup">\n<{P} name="word" string="true">seren',
    f'<{I} name="lookup">\n<{P} name="word" string="true">serendipity</{P}>',
    f'<{I} name="lookup">\n<{P} name="word" string="true">serendipity</{P}>\n',
    f'<{I} name="lookup">\n<{P} name="n" string="false">4',
    f'<{I} name="lookup">\n',
])
def test_an_invoke_that_never_closes_is_abandoned(name, cut):
    text = spell(name, f"Before.\n\n<{B}>\n{invoke('first')}\n{cut}")
    for spec in ["whole", "char", "fixed:3", "random:5:8"]:
        got = stream_outcome(name, chunk(text, spec))
        assert got.content == "Before."
        assert got.complete_calls() == [("first", {})]
        # a streamed name may be sent (lookup); its arguments never form an object
        assert [c.name for c in got.calls] in (["first"], ["first", "lookup"])
    whole = whole_outcome(name, text)
    assert whole.content == "Before." and whole.complete_calls() == [("first", {})]
    assert len(whole.calls) == 1


# ----------------------------------------------------------------------------- values and shapes
@pytest.mark.parametrize("name", NAMES)
def test_typed_values(name):
    values = {"int": 42, "neg": -3.5e-2, "yes": True, "no": False, "nothing": None,
              "obj": {"a": [1, {"b": None}], "s": "x\"y\\z"}, "arr": [], "big": 10 ** 30}
    params = [param(k, json.dumps(v), "false") for k, v in values.items()]
    text = spell(name, block(invoke("typed", *params)))
    assert_parses(name, text, "", [("typed", values)])


@pytest.mark.parametrize("name", NAMES)
def test_string_values_are_verbatim(name):
    values = {"path": "a<b>.py", "city": "杭州", "trail": "line\n\n", "lead": "  x", "q": 'say "hi" \\ bye',
              "empty": "", "lt": "<", "nl": "\n"}
    text = spell(name, block(invoke("s", *[param(k, v) for k, v in values.items()])))
    assert_parses(name, text, "", [("s", values)])


@pytest.mark.parametrize("name", NAMES)
def test_invalid_json_in_a_false_value_stays_the_raw_string(name):
    text = spell(name, block(invoke("f", param("a", "not json", "false"), param("b", "NaN", "false"),
                                    param("c", " 7 ", "false"), param("d", "{\"x\": 1", "false"))))
    assert_parses(name, text, "", [("f", {"a": "not json", "b": "NaN", "c": 7, "d": "{\"x\": 1"})])


@pytest.mark.parametrize("name", NAMES)
def test_no_string_attribute_follows_the_schema(name):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "s": {"type": "string"}, "o": {"type": ["object", "null"]}}}}}]
    body = f'<{I} name="f">\n<{P} name="n">5</{P}>\n<{P} name="s">5</{P}>\n<{P} name="o">{{"k": 1}}</{P}>\n' \
           f'<{P} name="u">true</{P}>\n</{I}>'
    text = spell(name, f"<{B}>\n{body}\n</{B}>")
    assert_parses(name, text, "", [("f", {"n": 5, "s": "5", "o": {"k": 1}, "u": "true"})], tools=tools)
    # the schema's typing is the one rule (schema.TypedValue): 60.0 for an integer is 60, null for a string-or-null
    typed = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "s": {"type": ["string", "null"]}}}}}]
    two = spell(name, block(f'<{I} name="f">\n<{P} name="n">60.0</{P}>\n<{P} name="s">null</{P}>\n</{I}>'))
    assert_parses(name, two, "", [("f", {"n": 60, "s": None})], tools=typed)
    # without tools every value without the attribute is a string
    assert_parses(name, text, "", [("f", {"n": "5", "s": "5", "o": '{"k": 1}', "u": "true"})],
                  chunkings=["whole", "char", "random:3:8"])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tag", ['<{I} name="submit"/>', '<{I} name="submit" />', '<{I} name="submit"\n/>'])
def test_self_closing_invoke(name, tag):
    tag = tag.format(I=I)
    text = spell(name, f"Done.\n\n<{B}>\n{tag}\n{WEATHER}\n</{B}>")
    assert_parses(name, text, "Done.", [("submit", {}), WEATHER_CALL], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_empty_invoke(name):
    text = spell(name, block(invoke("get_date"), f'<{I} name="now"></{I}>'))
    assert_parses(name, text, "", [("get_date", {}), ("now", {})])


@pytest.mark.parametrize("name", NAMES)
def test_two_blocks_and_text_after_each(name):
    text = spell(name, "First.\n\n" + block(WEATHER) + " Then.\n\n" + block(invoke("b", param("k", "v")))
                 + "\nAll done.")
    assert_parses(name, text, "First. Then.\nAll done.", [WEATHER_CALL, ("b", {"k": "v"})], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_end_of_sentence_is_dropped_everywhere(name):
    text = spell(name, f"A{EOS}B\n\n{EOS}<{B}>\n{EOS}{WEATHER}{EOS}\n"
                       f'<{I} name="e">{EOS}\n<{P} name="v" string="true">x{EOS}y</{P}>\n</{I}>\n</{B}>C{EOS}')
    # the blank line before the block is layout only right before it (the encoder's "\n\n")
    assert_parses(name, text, "AB\n\nC", [WEATHER_CALL, ("e", {"v": "xy"})], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_end_of_sentence_inside_tags_and_after_a_closing_tag_is_dropped(name):
    # Found by fuzzing EOS positions: inside a tag's attributes the EOS (whose
    # last character is ">") ended the tag, so the tag and the EOS went to the
    # content and the call was lost; right after </P> it made the closing tag
    # value text, so the invoke never closed and the call was lost.
    text = spell(name, f'<{B}>\n<{I}{EOS} name="f{EOS}"{EOS}>\n'
                       f'<{P} name="a"{EOS} string="true">x</{P}>{EOS}\n'
                       f'<{P} name="b" string="false"{EOS}>[1]</{P}> {EOS} {EOS}\n</{I}>\n'
                       f'<{I} name="g">\n<{P} name="c" string="true">y</{P}>{EOS} z</{P}>\n</{I}>\n</{B}>')
    assert_parses(name, text, "", [("f", {"a": "x", "b": [1]}), ("g", {"c": f"y</{SPELLINGS[name].parameter}> z"})],
                  strip_content=False, chunkings=["whole", "char", "fixed:3", "fixed:7", "random:4:8", "random:9:30"])


@pytest.mark.parametrize("name", NAMES)
def test_end_of_sentence_cut_by_the_head_limit_is_text(name):
    # an EOS that straddles MAX_HEAD is not read: the head is too long, so text
    pad = " " * (MAX_HEAD - len(' name="f"') - 3)
    text = spell(name, f'<{B}>\n<{I} name="f"{pad}{EOS}>\n</{I}>\n</{B}>')
    whole = whole_outcome(name, text)
    assert whole.calls == []
    assert whole.content.startswith(spell(name, f"<{I} name=\"f\"{pad}{EOS[:3]}"))
    for spec in ("char", "fixed:5", "random:2:50"):
        got = stream_outcome(name, chunk(text, spec))
        assert not check.compare(got, whole), spec


@pytest.mark.parametrize("name", NAMES)
def test_text_inside_a_block_outside_any_element_is_content(name):
    text = spell(name, f"Intro\n\n<{B}>\n  stray words here \n{WEATHER}\n{invoke('e')}\noops <b>\n"
                       f'<{I} name="x">\n  in invoke  \n<{P} name="k" string="true">v</{P}>\n</{I}>\n</{B}>')
    assert_parses(name, text, "Introstray words hereoops <b>in invoke",
                  [WEATHER_CALL, ("e", {}), ("x", {"k": "v"})], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_text_right_after_an_invoke_that_closed_a_value_belongs_to_the_value(name):
    """``</P></I>`` then text that cannot follow an invoke: the closing tags were value text (formats.md rule)."""
    text = spell(name, f"<{B}>\n{invoke('f', param('k', 'v'))}\noops\n{invoke('g')}\n</{B}>")
    # the invoke of f never really closes: the opener of g comes inside its parameter value
    got = whole_outcome(name, text)
    assert got.complete_calls() == []
    assert got.content == ""


@pytest.mark.parametrize("name", NAMES)
def test_malformed_tags_are_text(name):
    long_head = " " + "x" * (MAX_HEAD + 5)
    text = spell(name, f"<{B}>\n<{I}>\n<{I} nam=\"q\">\n<{I}{long_head}>\n{WEATHER}\n</{B}>")
    # a complete invoke tag without a name is markup (dropped); an unfinished head is text
    content = spell(name, f"<{I}{long_head}>")
    assert_parses(name, text, content, [WEATHER_CALL], strip_content=False,
                  chunkings=["whole", "char", "fixed:7", "random:2:8"])


@pytest.mark.parametrize("name", NAMES)
def test_tags_with_long_whitespace_runs(name):
    # a self-closing invoke with whitespace around its "/", a complete head made of whitespace and
    # junk (no name: markup, dropped), a parameter tag without a name (the call "b" is broken, its
    # text dropped up to its </I>), then a real call
    ws = " \n\t" * 150  # two runs and the attributes stay within MAX_HEAD
    text = spell(name, f'<{B}>\n<{I} name="a"{ws}/{ws}>\n<{I}{ws}x>\n<{I} name="b">\n<{P}{ws}y>\n</{I}>\n{WEATHER}\n</{B}>')
    got = whole_outcome(name, text)
    assert (got.content, got.complete_calls()) == ("", [("a", {}), WEATHER_CALL])
    for spec in ("char", "random:5:40"):
        got = stream_outcome(name, chunk(text, spec), ())
        assert (got.content, got.complete_calls()) == ("", [("a", {}), WEATHER_CALL]), spec


def test_a_malformed_head_is_text():
    # The attribute pattern once ended in \s*(/?)\s*, which tried every split
    # of a whitespace run when a head did not match (quadratic; its cost is
    # benchmarked in tests/meters/test_bench_misc.py). What it must decide:
    from callscale.parsers.dsml import _HEAD

    assert _HEAD.fullmatch(" " * MAX_HEAD + "x") is None
    assert _HEAD.fullmatch(' name="a"' + " " * 100 + "/" + " " * 100) is not None


@pytest.mark.parametrize("name", NAMES)
def test_repeated_opener_gives_no_calls(name):
    opener = render.get(name).opener
    text = "Thinking." + "\n\n" + (opener + "\n") * 3000
    assert_parses(name, text, "Thinking.", [], strip_content=False, chunkings=["whole", "fixed:4", "random:7:8"])


@pytest.mark.parametrize("name", NAMES)
def test_string_value_streams_before_it_closes(name):
    parser = parsers.get(name)()
    head = spell(name, f'<{B}>\n<{I} name="w">\n<{P} name="c" string="true">')
    out = [parser.parse_streaming_increment(head)]
    for _ in range(200):
        out.append(parser.parse_streaming_increment("abc<｜"))  # '<' may start a closing tag: held only briefly
    got = check.assemble(out)
    assert got.calls[0].name == "w"
    assert got.calls[0].arguments_text.startswith('{"c": "')
    streamed = got.calls[0].arguments_text[len('{"c": "'):]
    assert streamed == "abc<｜" * 199 + "abc"


# ----------------------------------------------------------------------------- renderer
def test_renderer_lays_out_as_formats_md():
    text = render.get("deepseek_v32").render(
        [Call("get_weather", {"city": "杭州", "count": 42}), Call("get_date", {})], content="Checking.")
    assert text == (
        "Checking.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
        "<｜DSML｜parameter name=\"city\" string=\"true\">杭州</｜DSML｜parameter>\n"
        "<｜DSML｜parameter name=\"count\" string=\"false\">42</｜DSML｜parameter>\n"
        "</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_date\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    assert render.get("deepseek_v4").render([Call("submit", {})]) == (
        "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"submit\"/>\n</｜DSML｜tool_calls>")
    assert render.get("deepseek_v41").opener == "<｜DSML｜ calls>"
    assert render.get("deepseek_v41").render([], content="plain") == "plain"
    assert set(render.get("deepseek_v4").special_tokens) == {EOS, DSML_TOKEN}


# ----------------------------------------------------------------------------- malformed: truncation
GOOD = ("Before text.\n\n" + block(WEATHER, invoke("w", param("c", f"x</{P}>\n</{I}>\nmore")), invoke("e"))
        + " After.")
GOOD_CALLS = [WEATHER_CALL, ("w", {"c": f"x</{P}>\n</{I}>\nmore"}), ("e", {})]


@pytest.mark.parametrize("name", NAMES)
def test_truncated_at_every_position(name):
    from callscale.workloads.chunking import chunk

    text = spell(name, GOOD)
    calls = [(n, {k: spell(name, v) if isinstance(v, str) else v for k, v in a.items()}) for n, a in GOOD_CALLS]
    before = "Before text."
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        whole = whole_outcome(name, prefix)
        for spec in ["fixed:1", f"random:{cut}:6"]:
            got = stream_outcome(name, chunk(prefix, spec))
            assert got.content == whole.content, (cut, spec)
            assert got.complete_calls() == whole.complete_calls(), (cut, spec)
        assert whole.content.startswith(before) or before.startswith(whole.content), cut
        # no call is invented: the complete calls are the expected ones, in order; the last may be a
        # truncated one (a value cut right after a literal ``</P></I>`` ends, by the rule, at the cut)
        complete = whole.complete_calls()
        assert [n for n, _ in complete] == [n for n, _ in calls[: len(complete)]], cut
        assert complete[:-1] == calls[: max(len(complete) - 1, 0)], cut
    assert whole.complete_calls() == calls and whole.content == "Before text. After."


# ----------------------------------------------------------------------------- property test
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
_KEY = st.one_of(_NAME, st.sampled_from(["城市", "naïve", "key with space"]))
_FRAGMENTS = [f"</{P}>", f"</{I}>", f"</{B}>", f"<{P}", f"<{I}", f"<{B}>", "\n", " ", "<", ">", '"', "\\",
              "杭州", "a<b>.py", DSML_TOKEN, "<｜end▁of", "\r\n", "\t",
              # closing tags followed by what cannot continue them: these values are text
              f"</{P}>\n</{I}>\n", f"</{P}></{I}>", f"</{P}>\n"]


def _ambiguity(name):
    """A closing tag followed by a valid continuation: such a value cannot be told from the markup."""
    sp = SPELLINGS[name]
    p_close, i_close = re.escape(f"</{sp.parameter}>"), re.escape(f"</{sp.invoke}>")
    after_invoke = "|".join(re.escape(m) for m in (f"<{sp.invoke}", f"</{sp.block}>", f"<{sp.block}>", EOS))
    return re.compile(rf"{p_close}\s*(?:{re.escape('<' + sp.parameter)}|{i_close}\s*(?:{after_invoke}))")


AMBIGUOUS = {name: _ambiguity(name) for name in NAMES}


def _raw_text():
    return st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=6)), max_size=8).map("".join)


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 12, 10 ** 12),
                    st.floats(allow_nan=False, allow_infinity=False), _raw_text())
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                     max_leaves=6)
_ARGS = st.dictionaries(_KEY, st.one_of(_raw_text(), _JSON), max_size=4)
_CALLS = st.lists(st.builds(Call, _NAME, _ARGS), max_size=3)
_CONTENT = st.text(max_size=20).filter(lambda t: DSML_TOKEN not in t and EOS not in t)


def _unambiguous(name, calls):
    for call in calls:
        for value in call.arguments.values():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if EOS in text or AMBIGUOUS[name].search(text):
                return False
    return True


def _property(name, data):
    calls = data.draw(_CALLS, label="calls")
    # values are drawn in the V3.2 spelling; convert them to this one
    calls = [Call(c.name, {k: json.loads(spell(name, json.dumps(v, ensure_ascii=False)))
                           for k, v in c.arguments.items()}) for c in calls]
    assume(_unambiguous(name, calls))
    content = data.draw(_CONTENT, label="content")
    text = render.get(name).render(calls, content=content)
    deltas = split_at(text, data.draw(st.lists(st.integers(0, len(text)), max_size=12), label="splits"))
    expected_content = content  # only the encoder's blank line before the block is layout
    expected = check.outcome_of(expected_content, [(c.name, dict(c.arguments)) for c in calls])
    got = stream_outcome(name, deltas)
    assert not check.compare(got, expected), check.compare(got, expected)
    assert len(got.calls) == len(calls)
    assert not check.compare(whole_outcome(name, text), expected)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_random_calls_under_random_chunkings(name, data):
    _property(name, data)


# ----------------------------------------------------------------- the block opener missing
@pytest.mark.parametrize("name", NAMES)
def test_invokes_then_the_block_closer_without_the_opener_are_calls(name):
    text = spell(name, "Checking.\n\n" + WEATHER + "\n" + invoke("submit") + f"\n</{B}>\nDone.")
    assert_parses(name, text, "Checking.\nDone.", [WEATHER_CALL, ("submit", {})], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("prose", [
    # an invoke mentioned in prose, no closer: text
    f'Write <{I} name="f"> to call f, then close it.',
    # a complete invoke, no block closer: text
    WEATHER + "\nThat is how a call looks.",
    # a complete invoke, then prose, then a closer: text
    WEATHER + f"\nsee? </{B}>",
    # an invoke that is cut off: text (no block opener: nothing says it is a call)
    f'<{I} name="f">\n<{P} name="a" string="true">x',
])
def test_an_invoke_outside_a_block_without_its_closer_is_content(name, prose):
    text = spell(name, "Hi. " + prose)
    assert_parses(name, text, text.replace(EOS, ""), [], strip_content=False)


@pytest.mark.parametrize("name", NAMES)
def test_a_block_after_an_invoke_in_prose_is_still_read(name):
    mention = f'<{I} name="x"> is the tag. '
    text = spell(name, mention + block(WEATHER))
    assert_parses(name, text, spell(name, mention), [WEATHER_CALL])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", [
    f'<{I} name="a">y\n\n<{B}>',
    f'Hi.<{I} name="a">y\n\n<{B}>\n<{I} name="a">\n</{I}>\n</{B}>',
    f'Hi.<{I} name="a">y\n\n\n<{B}>\n<{I} name="a">\n</{I}>\n</{B}>',
    f'Hi.<{I} name="a">y  \n\n<{I} name="b">\n</{I}>\nBye  ',
])
def test_an_invoke_outside_a_block_then_the_layout_before_an_opener_reads_alike_at_every_split(name, text):
    # a differential fuzz: the whitespace that ended such an invoke's text was sent as it was read in
    # one delta, but decided by the content state's layout rule when the next delta brought the opener
    text = spell(name, text)
    whole = whole_outcome(name, text)
    for cut in range(len(text) + 1):
        assert not check.compare(stream_outcome(name, [text[:cut], text[cut:]]), whole), cut
    assert not check.compare(stream_outcome(name, list(text)), whole)
