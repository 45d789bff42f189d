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


def test_skip_repeats_consumes_whole_copies_in_a_row_and_leaves_a_partial_one():
    sc = _scanner("<tool_call><tool_call><tool_call><tool_")
    assert sc.skip_repeats("<tool_call>") == 3
    assert sc.rest() == "<tool_"  # a partial copy at the end: not consumed
    assert sc.skip_repeats("<tool_call>") == 0 and sc.rest() == "<tool_"
    sc.feed("call>x")
    assert sc.skip_repeats("<tool_call>") == 1 and sc.rest() == "x"
    assert sc.skip_repeats("<tool_call>") == 0 and sc.rest() == "x"  # nothing consumed


def test_match_after_space_skips_whitespace_then_reads_one_marker_of_the_set():
    from callscale.parsers.scanner import markers

    body = markers("<parameter=", "</function>")
    sc = _scanner("\n <parameter=a>")
    assert sc.match_after_space(body) == "<parameter=" and sc.rest() == "a>"
    sc = _scanner(" \n</func")
    assert sc.match_after_space(body) is PARTIAL and sc.rest() == "</func"  # the whitespace read, the tag waits
    assert sc.match_after_space(body, final=True) is None and sc.rest() == "</func"
    sc.feed("tion>")
    assert sc.match_after_space(body) == "</function>" and sc.at_end()
    assert sc.match_after_space(body) is PARTIAL  # nothing unread, more may come
    assert sc.match_after_space(body, final=True) is None
    sc = _scanner("  text")
    assert sc.match_after_space(body) is None and sc.rest() == "text"  # something else: only the whitespace read
    one = markers(">")
    sc = _scanner(">>")
    assert sc.match_after_space(one) == ">" and sc.rest() == ">"


def test_read_to_literal_reads_up_to_the_literal_and_holds_a_partial_one_at_the_end():
    sc = _scanner("abc</parameter>def</para")
    assert sc.read_to_literal("</parameter>") == ("abc", True)
    assert sc.read_to_literal("</parameter>") == ("def", False) and sc.rest() == "</para"  # held back
    sc.feed("x")
    assert sc.read_to_literal("</parameter>") == ("</parax", False) and sc.at_end()
    sc = _scanner("y</p")
    assert sc.read_to_literal("</parameter>", final=True) == ("y</p", False) and sc.at_end()
