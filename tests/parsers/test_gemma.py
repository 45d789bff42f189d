"""The Gemma 4 parser (``gemma4``): fault cases, the value syntax, malformed and truncated
output, and a property test over rendered calls."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers.gemma import CALL_CLOSE, CALL_OPEN, STRING_DELIM as Q
from support import CHUNKINGS, assert_parses, split_by_sizes, stream_outcome, whole_outcome
from callscale.workloads import render
from callscale.workloads.chunking import chunk
from callscale.workloads.render import Call

P = "gemma4"
R = render.get(P)


def call(name, args_text):
    return CALL_OPEN + "call:" + name + args_text + CALL_CLOSE



def test_formats_md_example():
    text = (f"{CALL_OPEN}call:get_weather{{city:{Q}Zürich{Q},unit:{Q}c{Q}}}{CALL_CLOSE}"
            f"{CALL_OPEN}call:search{{filters:{{max:3,tags:[{Q}a{Q},{Q}b{Q}]}},query:{Q}café \"best\"{Q}}}{CALL_CLOSE}")
    assert_parses(P, text, "", [("get_weather", {"city": "Zürich", "unit": "c"}),
                                ("search", {"filters": {"max": 3, "tags": ["a", "b"]}, "query": 'café "best"'})])


# ---------------------------------------------------------------- the value syntax

def test_scalars_nesting_and_empty_containers():
    args = (f"{{n:3,neg:-0.5,exp:1e-05,big:12345678901234567890,t:true,f:false,z:null,none:None,"
            f"e:{{}},a:[],deep:{{x:[[1,{{y:{Q}{Q}}}],[]]}}}}")
    expected = {"n": 3, "neg": -0.5, "exp": 1e-05, "big": 12345678901234567890, "t": True, "f": False,
                "z": None, "none": None, "e": {}, "a": [], "deep": {"x": [[1, {"y": ""}], []]}}
    assert_parses(P, call("f", args), "", [("f", expected)])


def test_keys_may_contain_spaces_and_whitespace_is_skipped():
    args = f"{{ first name : {Q}Ada{Q} , list : [ 1 , 2 ] , {Q}quoted:key{Q} : true }}"
    assert_parses(P, call("f", args), "", [("f", {"first name": "Ada", "list": [1, 2], "quoted:key": True})])


def test_strings_are_verbatim_between_the_delimiters():
    value = 'a "quoted" }]{[, \\n \\ back\nslash <tool_call|> <|tool_call>call:x{ 中文 😀'
    assert_parses(P, call("f", f"{{v:{Q}{value}{Q}}}"), "", [("f", {"v": value})])


def test_empty_arguments():
    assert_parses(P, call("ping", "{}"), "", [("ping", {})])


def test_text_before_between_and_after_calls_is_content():
    # the newline between the calls is layout (DESIGN.md: whitespace between calls)
    text = "Let me look. " + call("a", "{x:1}") + "\n" + call("b", "{}") + " Done."
    assert_parses(P, text, "Let me look.  Done.", [("a", {"x": 1}), ("b", {})])


def test_renderer_matches_the_template_layout():
    text = R.render([Call("search", {"query": 'café "best"', "filters": {"tags": ["a", "b"], "Max": 3, "x": None}}),
                     Call("ping", {})], content="Hi.")
    assert text == (f"Hi.{CALL_OPEN}call:search{{filters:{{Max:3,tags:[{Q}a{Q},{Q}b{Q}],x:None}},"
                    f"query:{Q}café \"best\"{Q}}}{CALL_CLOSE}{CALL_OPEN}call:ping{{}}{CALL_CLOSE}")
    assert R.render([], content="no calls") == "no calls"


def test_string_values_stream_before_the_call_closes():
    value = "0123456789" * 50
    text = call("write_file", f"{{content:{Q}{value}{Q}}}")
    parser = parsers.get(P)()
    results = [parser.parse_streaming_increment(d, []) for d in chunk(text[:len(text) // 2], "fixed:5")]
    args = check.assemble(results).calls[0].arguments_text
    assert args.startswith('{"content": "0123')
    assert len(args) >= len(text) // 2 - 40


def test_the_final_brace_waits_for_the_end_token():
    parser = parsers.get(P)()
    first = parser.parse_streaming_increment(CALL_OPEN + "call:f{a:1}", [])
    assert first.calls[0].parameters == '{"a": 1'
    assert parser.parse_streaming_increment(CALL_CLOSE, []).calls[0].parameters == "}"


# ---------------------------------------------------------------- malformed output

def test_repeated_opener_gives_no_call_and_stays_content():
    text = "Calling.\n" + CALL_OPEN * 4000
    content = text[:-len(CALL_OPEN)]  # the last opener's call is cut by the end of the output: no content
    for deltas in ([text], chunk(text, "tokens:4", R.special_tokens), chunk(text, "fixed:5")):
        out = stream_outcome(P, deltas)
        assert out.calls == [] and out.content == content
    assert whole_outcome(P, text).content == content


def test_openers_in_a_row_are_content_and_the_last_one_opens_the_call():
    # one opener a delta (a model's tokens) and several in one delta read alike (a step reads a run of them)
    first = call("f", f"{{x:{Q}v{Q}}}")
    text = "A" + CALL_OPEN * 3 + first + CALL_OPEN * 2 + call("g", "{}")
    tokens = chunk(text, "tokens:4", R.special_tokens)
    assert CALL_OPEN in tokens
    assert_parses(P, text, "A" + CALL_OPEN * 5, [("f", {"x": "v"}), ("g", {})], deltas=tokens)


@pytest.mark.parametrize("head", ["<|tool_call>hello", "<|tool_call>call:two words{a:1}",
                                  "<|tool_call>call:{a:1}", "<|tool_call>call:f<tool_call|>"])
def test_an_opener_not_followed_by_a_call_is_content(head):
    text = "A " + head + " B" + call("ok", "{}")
    assert_parses(P, text, "A " + head + " B", [("ok", {})])


@pytest.mark.parametrize("args", [
    "{a:1,}", "{a:1 2}", "{a:tru}", "{a:007}", "{a:nan}", "{:1}", "{a}", "{a:1]", "{a:[1}",
    "{a:[1,]}", "{a:1}}", "{a:{b:1}", "{a:\"x}", "{a:'x}", "{a:x y}", "{a:1}extra", "{a:<|\"|>x<|\"|>b}", "{a b:{c:1}",
])
def test_malformed_arguments_abandon_the_call_only(args):
    text = "Before " + call("bad", args) + " after " + call("good", "{k:" + Q + "v" + Q + "}")
    whole = whole_outcome(P, text)
    assert whole.content == "Before  after "
    assert whole.complete_calls() == [("good", {"k": "v"})]
    for spec in CHUNKINGS:
        got = stream_outcome(P, chunk(text, spec))
        assert not check.compare(got, whole), (args, spec)
        assert got.calls[0].arguments() is None  # the abandoned call never forms an object


def test_a_call_cut_by_a_new_opener_is_abandoned_and_the_next_read():
    text = CALL_OPEN + "call:a{x:1" + call("b", "{y:2}") + "tail"
    whole = whole_outcome(P, text)
    assert whole.content == "tail" and whole.complete_calls() == [("b", {"y": 2})]
    for spec in CHUNKINGS:
        assert not check.compare(stream_outcome(P, chunk(text, spec)), whole), spec


GOOD = R.render([Call("get_weather", {"city": "Zürich", "days": 3}),
                 Call("search", {"filters": {"max": 3, "tags": ["a", "b"]}, "query": 'café "best" <tool_call|>',
                                 "ok": None, "x": -1.5})],
                content="Sure, checking.")
GOOD_CALLS = [("get_weather", {"city": "Zürich", "days": 3}),
              ("search", {"filters": {"max": 3, "tags": ["a", "b"]}, "query": 'café "best" <tool_call|>',
                          "ok": None, "x": -1.5})]


def test_truncated_output_never_raises_nor_invents_calls():
    for i in range(len(GOOD) + 1):
        prefix = GOOD[:i]
        whole = whole_outcome(P, prefix)
        calls = whole.complete_calls()
        assert calls == GOOD_CALLS[:len(calls)], i
        assert whole.content.startswith(prefix[:len("Sure, checking.")]), i
        for spec in ["char", "fixed:3"]:
            got = stream_outcome(P, chunk(prefix, spec))
            assert not check.compare(got, whole), (i, spec)


# ---------------------------------------------------------------- property test

_FRAGMENTS = st.sampled_from([CALL_CLOSE, CALL_OPEN, "call:", "{", "}", "[", "]", ",", ":", '"', "\\", "\n",
                              " ", "<|", "|>", "é", "中文", "😀", "None", "1"])
_TEXT = st.lists(st.one_of(st.text(max_size=6), _FRAGMENTS), max_size=8).map("".join)
_STRING = _TEXT.filter(lambda s: Q not in s)
_KEY = st.text(st.characters(codec="utf-8", exclude_characters=':{}[],<>|"', exclude_categories=("Cs", "Z", "Cc")),
               min_size=1, max_size=6) | st.sampled_from(["first name", "a b c", "x y"])
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**15, 10**15),
                    st.floats(allow_nan=False, allow_infinity=False), _STRING)
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEY, inner, max_size=3)), max_leaves=8)
#: argument values: mostly strings (the streamed case), else any value
_ARG = st.one_of(_STRING, _STRING, _VALUE)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
_CONTENT = _TEXT.filter(lambda s: CALL_OPEN not in s)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.builds(Call, _NAME, st.dictionaries(_KEY, _ARG, max_size=4)), max_size=3),
       content=_CONTENT, sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12))
def test_rendered_calls_parse_back_under_any_split(calls, content, sizes):
    text = R.render(calls, content=content)
    expected = [(c.name, json.loads(json.dumps(dict(c.arguments)))) for c in calls]
    assert_parses(P, text, content, expected, chunkings=[], deltas=split_by_sizes(text, sizes))
