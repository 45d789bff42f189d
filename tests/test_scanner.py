import random

import pytest

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
