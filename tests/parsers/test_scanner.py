import random

import pytest

from callscale.parsers.base import ToolParser
from callscale.parsers.scanner import PARTIAL, MarkerScanner, markers

BEGIN = "<｜tool▁calls▁begin｜>"
M = markers(BEGIN, "<｜tool▁call▁end｜>", "\n```")


def scan_all(deltas, m=M):
    s = MarkerScanner()
    pieces = []
    for d in deltas:
        s.feed(d)
        while True:
            text, marker = s.find(m)
            if text:
                pieces.append(("text", text))
            if marker is None:
                break
            pieces.append(("marker", marker))
    text, marker = s.find(m, final=True)
    assert marker is None
    if text:
        pieces.append(("text", text))
    # merge adjacent text pieces: the split of plain text is not meaningful
    merged = []
    for kind, value in pieces:
        if merged and kind == "text" and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    return merged, s


TEXT = "Since 3 < 5 " + BEGIN + "x<｜tool▁call▁end｜>\n`` \n```" + "<｜tool"


@pytest.mark.parametrize("seed", range(30))
def test_find_is_chunking_invariant(seed):
    rng = random.Random(seed)
    deltas, i = [], 0
    while i < len(TEXT):
        k = rng.randint(1, 6)
        deltas.append(TEXT[i:i + k])
        i += k
    got, _ = scan_all(deltas)
    assert got == scan_all([TEXT])[0]
    assert got == [
        ("text", "Since 3 < 5 "),
        ("marker", BEGIN),
        ("text", "x"),
        ("marker", "<｜tool▁call▁end｜>"),
        ("text", "\n`` "),
        ("marker", "\n```"),
        ("text", "<｜tool"),
    ]


def test_holds_back_only_a_possible_partial_marker():
    s = MarkerScanner()
    s.feed("abc <｜tool▁ca")
    assert s.find(M) == ("abc ", None)
    assert s.pending() == len("<｜tool▁ca")
    s.feed("X")  # rules the marker out: everything is text now
    assert s.find(M) == ("<｜tool▁caX", None)
    assert s.pending() == 0


def test_buffer_keeps_only_undecided_text():
    s = MarkerScanner()
    for _ in range(1000):
        s.feed("plain text ")
        s.find(M)
    assert len(s._buf) < 20


def test_match_and_partial():
    s = MarkerScanner()
    s.feed("  <｜tool")
    assert s.skip_whitespace() == "  "
    assert s.match(M) is PARTIAL
    assert s.match(M, final=True) is None
    s.feed("▁calls▁begin｜>rest")
    assert s.match(M) == BEGIN
    assert s.match(M) is None
    assert s.take_all() == "rest"
    assert s.at_end()


def test_rest_is_the_unconsumed_text_and_consumes_nothing():
    s = MarkerScanner()
    s.feed("abc")
    assert s.take(1) == "a"
    s.feed("def")  # the consumed "a" is dropped from the buffer here
    assert s.rest() == "bcdef" == s.peek(s.pending())
    assert s.rest() == "bcdef"  # nothing consumed
    s.take_all()
    assert s.rest() == ""


def test_take_run():
    import re

    run = re.compile(r"[^<>\n]*")
    s = MarkerScanner()
    s.feed("key")
    assert s.take_run(run, 10) == ("key", False)  # the buffer ended inside the run
    s.feed("s>rest")
    assert s.take_run(run, 10) == ("s", True)  # decided by ">", which stays unread
    assert s.take(1) == ">"
    assert s.take_run(run, 3) == ("res", True)  # the limit decides too
    assert s.take_all() == "t"


def _reference_find(buf, pos, items, final, limit):
    """find() by its definition: the leftmost marker (the longest at a position), else all text but a
    partial marker ending the buffer (unless final); a marker counts only if it starts within limit."""
    stop = len(buf) if limit is None else pos + limit
    for i in range(pos, min(stop, len(buf))):
        hits = [m for m in items if buf.startswith(m, i)]
        if hits:
            m = max(hits, key=len)
            return buf[pos:i], m, i + len(m)
    end = len(buf)
    if not final:
        end = next((j for j in range(pos, len(buf)) if any(m.startswith(buf[j:]) and m != buf[j:] for m in items)),
                   len(buf))
    end = min(end, stop)
    return buf[pos:end], None, end


def _reference_match(buf, pos, items, final):
    hits = [m for m in items if buf.startswith(m, pos)]
    if hits:
        m = max(hits, key=len)
        return m, pos + len(m)
    rest = buf[pos:]
    if not final and any(m.startswith(rest) and m != rest for m in items):
        return PARTIAL, pos
    return None, pos


@pytest.mark.parametrize("items", [
    ("<tool_call>", "</tool_call>"),
    ("<|open|>tools<|sep|>", "<|open|>call", "<|close|>tools<|sep|>", "<|end_of_msg|>"),
    ("<a", "<ab>", "b"),  # a marker that is a prefix of another; one inside another's prefix (no single pattern)
    ("ab", "b", "c", "abcd"),
    ("aba",),
])
@pytest.mark.parametrize("lazy", [False, True])
def test_find_and_match_follow_their_definition(items, lazy):
    from callscale.parsers.scanner import lazy_markers

    m = lazy_markers(*items) if lazy else markers(*items)
    rng = random.Random(hash(items) & 0xFFFF)
    alphabet = "<>/|abcx " + "".join(items)
    for _ in range(3000):
        buf = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        pos = rng.randint(0, len(buf))
        final = rng.random() < 0.3
        s = MarkerScanner()
        s.feed(buf)
        s.take(pos)
        if rng.random() < 0.5:
            limit = rng.choice([None, 0, 1, 3, 8, 100])
            text, marker, end = _reference_find(buf, pos, items, final, limit)
            assert s.find(m, final, limit) == (text, marker), (buf, pos, final, limit)
        else:
            marker, end = _reference_match(buf, pos, items, final)
            answer = s.match(m, final)
            assert answer is marker if marker is PARTIAL else answer == marker, (buf, pos, final)
        assert s.pending() == len(buf) - end


@pytest.mark.parametrize("marker", ["</parameter>", '<|"|>', "x", "aab"])
@pytest.mark.parametrize("text", ["plain text", "a</parameter>b", "ends in </para", "a<|\"|>", "<|\"", "aab", "aaab aa",
                                  "</parameter</parameter>", ""])
def test_until_reads_as_find_of_its_one_marker(marker, text):
    # MarkerScanner.until (the per-delta step of a value's text in gemma4 and minimax_m2) gives find's answer
    # for a one-marker set, at every split of the text and at the end of the output
    m = markers(marker)
    search = m.scan().search
    for cut in range(len(text) + 1):
        for final in (False, True):
            a, b = MarkerScanner(), MarkerScanner()
            a.feed(text[:cut])
            b.feed(text[:cut])
            got_text, found = a.until(search, len(marker), final)
            want_text, want_marker = b.find(m, final)
            assert (got_text, found) == (want_text, want_marker is not None), (cut, final)
            assert a._pos == b._pos


class _Words(ToolParser):
    """A two-state machine over the scanner: words up to "|" in state "a", then one "|" in state "b"."""

    def __init__(self):
        super().__init__()
        self._state = "a"
        self.log = []

    def _s_a(self, final):
        text, marker = self.scanner.find(markers("|"), final)
        self.log.append(("a", text, marker))
        if marker is None:
            return False
        self._state = "b"
        return True

    def _s_b(self, final):
        self.log.append(("b", self.scanner.take(1)))
        self._state = "a"
        return True


def test_the_increment_runs_the_machine_while_a_state_goes_on_and_text_is_unread():
    # the per-delta path (scanner.streaming_increment, which is ToolParser.parse_streaming_increment)
    w = _Words()
    w.parse_streaming_increment("ab|cd|")
    # "b" read the character after the second "|" (none): the loop stopped there, no state ran on nothing
    assert w.log == [("a", "ab", "|"), ("b", "c"), ("a", "d", "|")]
    assert w.scanner.at_end() and w._state == "b"
    w.parse_streaming_increment("ef")  # the consumed text is dropped, the new text read from "b"
    assert w.log[3:] == [("b", "e"), ("a", "f", None)]
    assert w.scanner.rest() == ""
    w.parse_streaming_increment("gh|")  # (text left unread before the delta: "f" was read, nothing held)
    assert w.log[5:] == [("a", "gh", "|")]


def test_the_increment_keeps_marked_text_and_matches_feed_then_the_loop():
    a, b = _Words(), _Words()
    for piece in ("x|", "y", "|z|w"):
        a.parse_streaming_increment(piece)
        b.scanner.feed(piece)
        while b._states[b._state](b, False) and not b.scanner.at_end():
            pass
        if piece == "x|":
            a.scanner.mark()
    assert a.log == b.log
    assert a.scanner.kept() == "y|z|w"  # what was read after the mark, across the feeds
