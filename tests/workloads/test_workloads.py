"""The workload catalog and its text sources: sizes, determinism, chunking, and parsers' answers on every case.

Runs for whichever renderers are registered (``render.names()``) and, for the
parser comparison, whichever of those formats also has a parser
(``callscale.parsers.names()``); a format without one is skipped with the reason. The
catalog's own logic is also checked against a small tag format defined here
(``test_tags``), so it is tested before any real renderer exists.
"""

from __future__ import annotations

import bisect
import json

import pytest

from callscale import parsers
from callscale import workloads
from callscale import check
from callscale.workloads import catalog, render, source
from callscale.workloads.render import Call, Renderer

FORMATS = render.names()
PARSED = [f for f in FORMATS if f in parsers.names()]
WORKLOADS = catalog.names()
#: Workloads whose text is well formed: streaming must give no abandoned call.
WELL_FORMED = {"write_file", "many_short_calls", "long_content", "literal_closing_tags", "parallel_calls",
               "many_tiny_calls", "many_keys", "deep_value", "long_array", "text_between", "many_tools", "structure"}
#: One spec of every chunking kind.
CHUNKINGS = ["whole", "char", "fixed:1", "fixed:7", "random:3:9", "random:11:64", "tokens:1", "tokens:4", "tokens:16"]


def _formats(names):
    return names or [pytest.param(None, marks=pytest.mark.skip(reason="no renderer registered yet"))]


def _parsed(names):
    return names or [pytest.param(None, marks=pytest.mark.skip(reason="no format has both a renderer and a parser yet"))]


def _slack(length: int) -> int:
    """How far ``len(text)`` may be from ``length``: 10% plus a few hundred characters of markup."""
    return length // 10 + 400


# ----------------------------------------------------------------- a format for the catalog's own logic

class _TagRenderer(Renderer):
    """``<calls><call name="N"><arg name="K">VALUE</arg></call></calls>``, string values verbatim."""

    name = "test_tags"
    special_tokens = ("<calls>", "</calls>")
    opener = "<calls>"
    schema_typed = True
    closing_tags = ("</arg>", "</call>")

    def render(self, calls, content=""):
        if not calls:
            return content
        parts = [content, "\n<calls>"]
        for call in calls:
            parts.append(f'<call name="{call.name}">')
            for key, value in call.arguments.items():
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                parts.append(f'<arg name="{key}">{text}</arg>')
            parts.append("</call>")
        parts.append("</calls>")
        return "".join(parts)


@pytest.fixture
def tags_format(monkeypatch):
    render.names()  # load the real renderers first
    monkeypatch.setitem(render._RENDERERS, "test_tags", _TagRenderer())
    return "test_tags"


# ----------------------------------------------------------------- source text

@pytest.mark.parametrize("n", [0, 1, 17, 1000, 4000, 65536])
def test_source_code_is_exactly_n_characters_and_deterministic(n):
    text = source.source_code(n, seed=5)
    assert len(text) == n
    assert text == source.source_code(n, seed=5)
    if n >= 100:
        assert text != source.source_code(n, seed=6)
        assert text in source.source_corpus()


def test_source_code_longer_than_the_corpus_wraps_around():
    corpus = source.source_corpus()
    text = source.source_code(len(corpus) + 12345, seed=1)
    assert len(text) == len(corpus) + 12345
    assert text in corpus + corpus


@pytest.mark.parametrize("n", [4000, 16384, 65536])
def test_source_code_has_quotes_backslashes_indentation_and_non_ascii(n):
    for seed in range(10):
        text = source.source_code(n, seed)
        assert '"' in text and "'" in text, seed
        assert "\\" in text, seed
        assert "\n    " in text, seed
        assert not text.isascii(), seed


def test_source_corpus_is_stdlib_files_without_markers():
    assert list(source.SOURCE_FILES) == sorted(source.SOURCE_FILES)
    corpus = source.source_corpus()
    assert len(corpus) > 200_000
    for bad in source.SOURCE_FORBIDDEN:
        assert bad not in corpus, bad
    # the start of each readable module is in the corpus, in list order
    positions = []
    for relpath in source.SOURCE_FILES:
        text = source._read(relpath)
        if text:
            positions.append(corpus.index(text.strip("\n")[:200]))
    assert len(positions) >= len(source.SOURCE_FILES) - 3
    assert positions == sorted(positions)


def test_source_and_prose_reject_negative_sizes():
    with pytest.raises(ValueError):
        source.source_code(-1)
    with pytest.raises(ValueError):
        source.prose(-1)


@pytest.mark.parametrize("n", [0, 1, 59, 1000, 65536])
def test_prose_is_exactly_n_characters_and_deterministic(n):
    text = source.prose(n, seed=2)
    assert len(text) == n
    assert text == source.prose(n, seed=2)
    if n:
        assert text == text.strip()
    if n >= 1000:
        assert text != source.prose(n, seed=3)
        words = text.split()
        assert sum(w.isalpha() for w in words) > 0.7 * len(words)


def test_prose_never_has_markup_characters():
    for seed in range(20):
        text = source.prose(65536, seed)
        assert not source.PROSE_FORBIDDEN_CHARS.intersection(text)
    for para in source.prose_corpus():
        assert "\n" not in para and para.endswith(".")


@pytest.mark.parametrize("fmt", _formats(FORMATS))
def test_prose_and_source_hold_none_of_a_formats_markers(fmt):
    r = render.get(fmt)
    markers = set(r.special_tokens) | {r.opener} | set(r.closing_tags)
    markers.discard("")
    text = source.prose(65536, 0)
    code = source.source_corpus()
    for marker in markers:
        assert marker not in text, marker
        assert marker not in code, marker


# ----------------------------------------------------------------- catalog basics

def test_names_and_headline():
    assert WORKLOADS == ["write_file", "many_short_calls", "repeated_opener", "long_content",
                         "unclosed_call", "literal_closing_tags", "parallel_calls", "many_tiny_calls", "many_keys",
                         "deep_value", "long_array", "text_between", "many_tools", "structure"]
    assert workloads.names() == WORKLOADS
    assert set(catalog.HEADLINE) <= set(WORKLOADS)
    assert workloads.HEADLINE == catalog.HEADLINE == ("write_file", "many_short_calls", "repeated_opener")
    assert catalog.get("write_file") is catalog.write_file


def test_unknown_names_raise_key_error_listing_the_known_ones(tags_format):
    with pytest.raises(KeyError, match="write_file.*parallel_calls"):
        catalog.get("write_files")
    with pytest.raises(KeyError, match="unknown workload 'nope'"):
        catalog.make("nope", tags_format, 100)
    with pytest.raises(KeyError, match="unknown format 'no_such_format'.*test_tags"):
        catalog.make("write_file", "no_such_format", 100)


def test_bad_lengths_raise(tags_format):
    for length in (0, -5):
        with pytest.raises(ValueError, match="at least 1"):
            catalog.make("write_file", tags_format, length)
    for length in (1.5, "4k", True):
        with pytest.raises(TypeError):
            catalog.make("write_file", tags_format, length)


def test_tools_for_types_match_the_values():
    calls = [
        Call("f", {"s": "x", "i": 3, "n": 1.5, "b": False, "a": [1, 2], "o": {"k": "v", "m": [True]}, "z": None}),
        Call("g", {"p": "a"}),
        Call("f", {"s": "y", "i": 4.25, "a": []}),
    ]
    tools = workloads.tools_for(calls)
    assert [t["function"]["name"] for t in tools] == ["f", "g"]
    assert all(t["type"] == "function" for t in tools)
    params = tools[0]["function"]["parameters"]
    assert params["type"] == "object"
    props = params["properties"]
    assert props["s"] == {"type": "string"}
    assert props["i"] == {"type": "number"}  # 3 and 4.25
    assert props["n"] == {"type": "number"}
    assert props["b"] == {"type": "boolean"}
    assert props["a"] == {"type": "array", "items": {"type": "integer"}}
    assert props["o"] == {"type": "object", "properties": {"k": {"type": "string"},
                                                           "m": {"type": "array", "items": {"type": "boolean"}}}}
    assert props["z"] == {"type": "null"}
    assert params["required"] == ["s", "i", "a"]
    assert tools[1]["function"]["parameters"]["properties"] == {"p": {"type": "string"}}
    assert parsers.base.parameter_type(tools, "f", "b") == "boolean"
    assert parsers.base.parameter_type(tools, "f", "o") == "object"
    with pytest.raises(TypeError):
        workloads.tools_for([Call("h", {"x": object()})])


def test_tools_for_merges_three_or_more_types_of_one_parameter():
    # Once two types were merged into a list, a third one used to raise
    # TypeError (a list put in a set).
    def types(*values):
        tools = workloads.tools_for([Call("f", {"n": v}) for v in values])
        return tools[0]["function"]["parameters"]["properties"]["n"]["type"]

    assert types(1, "a", True) == ["integer", "string", "boolean"]
    assert types(1, "a", 2.5) == ["string", "number"]  # integer folds into number
    assert types(1, 2.5, "a", None) == ["number", "string", "null"]
    assert types(1, 2) == "integer"


# ----------------------------------------------------------------- the catalog's logic on the tag format

def test_catalog_logic_on_a_tag_format(tags_format):
    r = render.get(tags_format)
    for length in (1000, 4096):
        plain = catalog.make("write_file", tags_format, length, seed=3)
        value = plain.calls[0].arguments["content"]
        assert plain.text == r.render(plain.calls, catalog.WRITE_INTRO)

        cut = catalog.make("unclosed_call", tags_format, length, seed=3)
        assert plain.text.startswith(cut.text) and cut.text.endswith(value)  # cut right after the value
        assert cut.content == catalog.WRITE_INTRO and cut.calls == ()
        assert [t["function"]["name"] for t in cut.tools] == ["write_file"]

        lit = catalog.make("literal_closing_tags", tags_format, length, seed=3)
        content = lit.calls[0].arguments["content"]
        assert len(content) == length
        assert content.count("</arg>") >= length // 1000 and content.count("</call>") >= length // 1000
        assert not any(content.rstrip().endswith(t) for t in r.closing_tags)
        assert "</arg>" not in content[-60:]

        for name in ("many_short_calls", "parallel_calls"):
            case = catalog.make(name, tags_format, length, seed=3)
            biggest = max(len(r.render([c])) for c in case.calls)
            assert length <= len(case.text) < length + biggest
            assert case.text == r.render(case.calls, case.content)
    many = catalog.make("many_short_calls", tags_format, 8000)
    assert {c.name for c in many.calls} == {"get_weather", "read_file", "search", "set_timer", "tag_items"}
    paths = [c.arguments["path"] for c in catalog.make("parallel_calls", tags_format, 8000).calls]
    assert len(paths) == len(set(paths)) > 50


# ----------------------------------------------------------------- every registered format x workload

@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("fmt", _formats(FORMATS))
def test_case_shape_size_and_determinism(fmt, workload):
    r = render.get(fmt)
    for length in (1, 1000, 4096, 65536):
        case = workloads.make(workload, fmt, length, seed=1)
        assert (case.format, case.workload, case.length) == (fmt, workload, length)
        if workload != "structure" or length >= 2048:  # (its smallest has a call of each part: 1-2k characters)
            assert abs(len(case.text) - length) <= _slack(length), (length, len(case.text))
        assert case.special_tokens == tuple(r.special_tokens)
        assert case == workloads.make(workload, fmt, length, seed=1)
        # every call's tool is offered, with a schema that types each argument
        offered = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in case.tools}
        for call in case.calls:
            for key, value in call.arguments.items():
                assert offered[call.name][key] == workloads.tools_for([Call(call.name, {key: value})])[0][
                    "function"]["parameters"]["properties"][key]
        if workload not in ("repeated_opener", "many_tiny_calls") and length >= 1000:  # (their text is fixed)
            assert case.text != workloads.make(workload, fmt, length, seed=2).text


@pytest.mark.parametrize("fmt", _formats(FORMATS))
def test_value_workloads_carry_exactly_length_characters(fmt):
    r = render.get(fmt)
    for length in (1, 1000, 4096, 65536):
        for workload in ("write_file", "literal_closing_tags"):
            case = workloads.make(workload, fmt, length, seed=4)
            assert case.content == catalog.intro(r, catalog.WRITE_INTRO)
            (call,) = case.calls
            assert call.name == "write_file"
            value = call.arguments["content"]
            assert len(value) == length
            if length >= 4000:
                assert '"' in value and "'" in value and "\\" in value and "\n    " in value
            if workload == "literal_closing_tags" and r.closing_tags and length >= 1000:
                assert sum(value.count(t) for t in r.closing_tags) >= 3 * length // 1000
            if workload == "literal_closing_tags" and not r.closing_tags:
                assert case.text == workloads.make("write_file", fmt, length, seed=4).text
        whole = workloads.make("write_file", fmt, length, seed=4)
        cut = workloads.make("unclosed_call", fmt, length, seed=4)
        assert whole.text.startswith(cut.text) and length <= len(cut.text) < len(whole.text)
        assert cut.content == catalog.intro(r, catalog.WRITE_INTRO) and cut.calls == ()
        opener = workloads.make("repeated_opener", fmt, length)
        assert opener.text == r.opener * (len(opener.text) // len(r.opener))
        # the last opener's call is cut by the end of the output: its markup is no content
        assert opener.content == (opener.text[:-len(r.opener)] if r.stray_openers_are_content else "")
        prose = workloads.make("long_content", fmt, length, seed=4)
        assert prose.text == prose.content == source.prose(length, 4) and prose.calls == ()


def _occurrences(text: str, token: str):
    start = text.find(token)
    while start != -1:
        yield start, start + len(token)
        start = text.find(token, start + 1)


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("fmt", _formats(FORMATS))
def test_chunkings_round_trip_and_keep_special_tokens_whole(fmt, workload):
    for length in (1000, 4096):
        case = workloads.make(workload, fmt, length)
        for spec in CHUNKINGS:
            deltas = case.deltas(spec)
            assert "".join(deltas) == case.text, spec
            if spec.startswith("tokens:"):
                k = int(spec.split(":")[1])
                assert all(len(d) <= k or d in case.special_tokens for d in deltas), spec
                cuts, pos = [], 0
                for delta in deltas[:-1]:
                    pos += len(delta)
                    cuts.append(pos)
                for token in case.special_tokens:
                    for start, end in _occurrences(case.text, token):
                        i = bisect.bisect_right(cuts, start)
                        assert i == len(cuts) or cuts[i] >= end, (spec, token, start)
        assert case.deltas() == case.deltas("tokens:4")


# ----------------------------------------------------------------- what the parsers make of the cases

@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("fmt", _parsed(PARSED))
def test_streamed_case_gives_the_expected_outcome(fmt, workload):
    for length in (1000, 4096):
        case = workloads.make(workload, fmt, length)
        expected = check.outcome_of(case.content, [(c.name, dict(c.arguments)) for c in case.calls])
        got = check.stream(parsers.get(fmt)(), case.deltas("tokens:4"), case.tools)
        problems = check.compare(got, expected, strip_content=True)
        assert not problems, f"{fmt} {workload} {length}: " + "; ".join(problems)
        if workload in WELL_FORMED:
            assert len(got.calls) == len(case.calls), f"abandoned calls: {got.calls!r}"
