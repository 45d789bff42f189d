"""The scanner's coarse primitives (issue 28): each against real text, a partial literal at the end, final."""

from callscale.parsers.scanner import PARTIAL, MarkerScanner


def _scanner(*deltas: str) -> MarkerScanner:
    sc = MarkerScanner()
    for d in deltas:
        sc.feed(d)
    return sc


def test_match_literal_consumes_a_whole_literal_and_holds_a_partial_one():
    sc = _scanner('; {"name"')
    assert sc.match_literal("; {") is True
    assert sc.rest() == '"name"'
    assert sc.match_literal("; {") is False and sc.rest() == '"name"'  # nothing consumed
    sc = _scanner("x; ", )
    sc.take(1)
    assert sc.match_literal("; {") is PARTIAL and sc.rest() == "; "  # the buffer ends inside it: wait
    assert sc.match_literal("; {", final=True) is False and sc.rest() == "; "
    sc.feed("{")
    assert sc.match_literal("; {") is True and sc.at_end()
    assert sc.match_literal(",") is PARTIAL  # nothing unread, more may come
    assert sc.match_literal(",", final=True) is False
