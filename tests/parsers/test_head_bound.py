"""The bound on call heads (``callscale.parsers.base.MAX_HEAD``) in every parser, and the scanner's ``limit``.

A stray opener followed by long prose must not hold the prose back until the
end of the output: a head (name, id, tag attributes, key) that runs past
``MAX_HEAD`` characters without its end is not a call head, and the text
reaches the client as content while it streams. A head of exactly
``MAX_HEAD`` characters is still read as one, under every chunking.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale import check
from callscale.parsers import gemma, glm, minimax, qwen
from callscale.parsers.base import MAX_HEAD
from callscale.parsers.scanner import OVER, MarkerScanner, lazy_markers, markers
from formats import FORMATS
from support import assert_parses, stream_outcome, whole_outcome
from callscale.workloads.chunking import chunk

#: (parser, text, expected content): a stray opener, then text that never ends the head (``Format.stray``
#: of tests/helpers/formats.py: each module's rule for a head that is no call).
STRAY = [(name, text, content) for name, row in FORMATS.items() for text, content in row.stray]

#: What a parser may hold back beyond MAX_HEAD: the opener and fixed text
#: before the head, one delta, a partial marker.
_SLACK = 100


def test_every_parser_has_a_stray_opener_case():
    assert {name for name, _, _ in STRAY} == set(parsers.names())


@pytest.mark.parametrize("name,text,content", STRAY, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(STRAY)])
def test_prose_after_a_stray_opener_streams_as_content(name, text, content):
    parser = parsers.get(name)()
    fed = sent = held = 0
    pieces = []
    for i in range(0, len(text), 4):  # 4 characters per delta
        delta = text[i:i + 4]
        result = parser.parse_streaming_increment(delta, ())
        assert result.calls == []
        fed += len(delta)
        sent += len(result.normal_text)
        pieces.append(result.normal_text)
        held = max(held, fed - sent)
    before_finish = "".join(pieces)
    last = parser.finish(())
    assert last.calls == []
    streamed = before_finish + last.normal_text
    # the prose reached the client while it streamed, never more than a head late
    assert held <= MAX_HEAD + _SLACK or not content, held
    assert len(before_finish) >= len(content) - _SLACK
    assert streamed == content
    whole = parsers.get(name)().detect_and_parse(text, ())
    assert (whole.normal_text, whole.calls) == (content, [])


@pytest.mark.parametrize("name,text,content", STRAY, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(STRAY)])
def test_prose_after_a_stray_opener_under_any_chunking(name, text, content):
    assert_parses(name, text, content, [], chunkings=["whole", "char", "fixed:3", "fixed:7", "random:1:8",
                                                      "random:2:40"])


# --------------------------------------------------------------------------- the exact bound
#: (parser, n -> (name, text of one call whose head is n characters, its arguments)): ``Format.heads``.
HEADS = [(name, make) for name, row in FORMATS.items() for make in row.heads]
_CHUNKS = ["whole", "char", "fixed:4", "fixed:7", "random:3:8", "random:4:50"]


@pytest.mark.parametrize("name,make", HEADS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(HEADS)])
def test_a_head_of_max_head_characters_is_a_call_one_more_is_not(name, make):
    fn, text, args = make(MAX_HEAD)
    assert_parses(name, text, "", [(fn, args)], chunkings=_CHUNKS)
    _, text, _ = make(MAX_HEAD + 1)
    whole = whole_outcome(name, text)
    # not a call: its text is content (except inside a Kimi section, where no text is)
    assert whole.calls == [] and (whole.content or name == "kimi_k2")
    for spec in _CHUNKS:
        got = stream_outcome(name, chunk(text, spec))
        assert got.calls == [] and not check.compare(got, whole), spec


# --------------------------------------------------------------------------- parameter keys
def _long_key_cases():
    key = "k" * (MAX_HEAD + 1)
    ok = "k" * MAX_HEAD
    return [
        ("qwen3_coder",
         lambda k: (f"{qwen.TOOL_CALL_OPEN}\n{qwen.FUNCTION_OPEN}f>\n{qwen.PARAMETER_OPEN}{k}>\nv\n"
                    f"{qwen.PARAMETER_CLOSE}\n{qwen.FUNCTION_CLOSE}\n{qwen.TOOL_CALL_CLOSE}")),
        ("minimax_m2",
         lambda k: (f"{minimax.BLOCK_OPEN}\n{minimax.INVOKE_OPEN}f{minimax.TAG_END}\n{minimax.PARAM_OPEN}{k}"
                    f"{minimax.TAG_END}v{minimax.PARAM_CLOSE}\n{minimax.INVOKE_CLOSE}\n{minimax.BLOCK_CLOSE}")),
        ("glm47", lambda k: f"{glm.TOOL_CALL}f{glm.ARG_KEY}{k}{glm.ARG_KEY_END}{glm.ARG_VALUE}v{glm.ARG_VALUE_END}"
                            f"{glm.TOOL_CALL_END}"),
        ("gemma4", lambda k: f"{gemma.CALL_OPEN}{gemma.CALL_PREFIX}f{{{k}:{gemma.STRING_DELIM}v{gemma.STRING_DELIM}}}"
                             f"{gemma.CALL_CLOSE}"),
    ], key, ok


@pytest.mark.parametrize("case", range(4))
def test_a_parameter_key_longer_than_max_head_makes_the_call_malformed(case):
    cases, key, ok = _long_key_cases()
    name, make = cases[case]
    assert_parses(name, make(ok), "", [("f", {ok: "v"})], chunkings=["whole", "char", "random:1:8"])
    text = make(key)
    whole = whole_outcome(name, text)
    assert whole.complete_calls() == []
    for spec in ("char", "fixed:4", "random:2:8"):
        got = stream_outcome(name, chunk(text, spec))
        assert got.complete_calls() == [] and got.content == whole.content, spec


# --------------------------------------------------------------------------- the scanner
def _scan(deltas, m, limit):
    """Read one bounded head through a scanner fed ``deltas``, as a parser does: (text, marker)."""
    sc = MarkerScanner()
    got = ""
    for i, delta in enumerate(deltas):
        sc.feed(delta)
        text, marker = sc.find(m, i == len(deltas) - 1, limit - len(got))
        got += text
        if marker is not None or len(got) == limit:
            return got, marker
    return got, None


@pytest.mark.parametrize("text,limit,expected", [
    ("abcXYd", 4, ("abc", "XY")),    # a marker starting at offset 3 < 4 counts (a head of 3)
    ("abcdXY", 4, ("abcd", None)),   # offset 4 is past it: exactly limit characters come back
    ("abXcXYd", 5, ("abXc", "XY")),  # a marker prefix that is no marker is text
    ("abcX", 10, ("abcX", None)),    # the end of the output: everything, fewer than limit
    ("abQ", 3, ("ab", "Q")),
    ("", 3, ("", None)),
])
def test_find_with_a_limit_decides_the_same_for_every_split(text, limit, expected):
    m = markers("XY", "Q")
    for size in range(1, len(text) + 2):
        deltas = [text[i:i + size] for i in range(0, len(text), size)] or [""]
        assert _scan(deltas, m, limit) == expected, size


def test_find_with_a_limit_holds_back_a_partial_marker_inside_the_window():
    sc = MarkerScanner()
    sc.feed("abX")
    assert sc.find(markers("XY"), False, 10) == ("ab", None)  # "X" may start XY
    sc.feed("Y")
    assert sc.find(markers("XY"), False, 8) == ("", "XY")
    sc.feed("a" * 20)
    assert sc.find(markers("XY"), False, 5) == ("aaaaa", None)  # decided: no marker within 5
    assert sc.find(markers("XY"), False, 0) == ("", None)


def test_skip_whitespace_with_a_limit():
    sc = MarkerScanner()
    sc.feed("     x")
    assert sc.skip_whitespace(3) == "   "
    assert sc.skip_whitespace() == "  "
    assert sc.peek() == "x"


_HEAD_MARKER_SETS = (("</p>",), ("aa",), ("aba",), ("<|end|>",), ("ab", "b", "c", "abcd"),
                     ("<tool_call>", "</tool_call>"), ("<a", "<ab>", "b"), ("</p>", "<", ">"), ("aa", "aab", "a"))


@st.composite
def _head_case(draw):
    items = draw(st.sampled_from(_HEAD_MARKER_SETS))
    pieces = list("<>/|abxyl_ c") + [m[:k] for m in items for k in range(1, len(m) + 1)]
    return items, "".join(draw(st.lists(st.sampled_from(pieces), max_size=16)))


def _within(text: str, items: tuple[str, ...], final: bool, limit: int) -> tuple[str, str | None]:
    """The rule of a bounded read, by brute force: the leftmost marker (the longest there) starting within
    ``limit`` characters, else the text up to the bound, a proper prefix of a marker ending it held back."""
    for i in range(min(limit, len(text))):
        here = [m for m in items if text.startswith(m, i)]
        if here:
            return text[:i], max(here, key=len)
    end = len(text)
    if not final:
        end = next((i for i in range(len(text)) if any(m.startswith(text[i:]) and m != text[i:] for m in items)),
                   len(text))
    return text[:min(end, limit)], None


@given(_head_case(), st.booleans(), st.integers(0, 3),
       st.sampled_from([0, MAX_HEAD - 20, MAX_HEAD - 5, MAX_HEAD - 2, MAX_HEAD, MAX_HEAD + 3]), st.booleans())
@settings(max_examples=600, deadline=None)
def test_the_bounded_head_reads_as_the_scanners_find_within(case, lazy, skip, head_len, final):
    # MarkerScanner.head_find (the per-delta path of every head, one call; find_within is its read for any
    # bound) against the rule written plainly (_within): the same text, position and marker for any marker
    # set, text (markers and their prefixes in it), bound and end, and OVER in place of no marker once the
    # head holds more than MAX_HEAD characters
    items, text = case
    m = lazy_markers(*items) if lazy else markers(*items)
    sc, plain = MarkerScanner(), MarkerScanner()
    sc.feed(text)
    plain.feed(text)
    skip = min(skip, len(text))
    sc.take(skip)
    plain.take(skip)
    limit = max(MAX_HEAD + 1 - head_len, 0)
    want, marker = _within(text[skip:], items, final, limit)
    assert plain.find_within(m, final, limit) == (want, marker)
    sc.head_begin("<", counted=head_len)
    got, answer = sc.head_find(m, final)
    assert got == want
    over = head_len + len(want) > MAX_HEAD
    assert (answer is OVER) == (marker is None and over)
    assert answer is OVER or answer == marker
    assert sc.rest() == plain.rest() == text[skip + len(want) + len(marker or ""):]
    assert sc.head_size() == head_len + len(want) and sc.head_over() == over
    assert sc.head_text() == "<" + want
