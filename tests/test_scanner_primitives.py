"""The scanner's coarse primitives (issue 28): each against real text, a partial literal at the end, final."""

from hypothesis import given, settings
from hypothesis import strategies as st

from callscale.parsers.scanner import MarkerScanner, lazy_markers, markers
from callscale.parsers.schema import UNTYPED, Typing, TypedValue


def _scanner(*deltas: str) -> MarkerScanner:
    sc = MarkerScanner()
    for d in deltas:
        sc.feed(d)
    return sc


_VALUE_ENDS = markers("</arg_value>", "\n<arg_key>", "<arg_key>")


def test_find_value_sends_a_streamed_strings_escaped_pieces_and_holds_a_partial_marker():
    sc = _scanner('a "b"\n</arg_')
    tv = TypedValue(UNTYPED)
    assert sc.find_value(_VALUE_ENDS, tv) == ('a \\"b\\"\\n', None)  # a partial closing tag at the end: held
    assert sc.rest() == "</arg_"
    sc.feed("value>\n<arg_key>")
    assert sc.find_value(_VALUE_ENDS, tv) == ("", "</arg_value>")
    assert sc.find_value(_VALUE_ENDS, tv) == ("", "\n<arg_key>") and sc.at_end()
    sc.feed("<arg_key>")
    assert sc.find_value(_VALUE_ENDS, tv) == ("", "<arg_key>") and sc.at_end()
    sc.feed("x</arg_val")
    assert sc.find_value(_VALUE_ENDS, tv, final=True) == ("x</arg_val", None) and sc.at_end()  # final: text
    # a held value (an integer) sends nothing until it ends; its text is what end() types
    tv = TypedValue(Typing(("integer",)))
    sc = _scanner(" 4")
    assert sc.find_value(_VALUE_ENDS, tv) == ("", None) and sc.at_end()
    sc.feed("2 </arg_value>")
    assert sc.find_value(_VALUE_ENDS, tv) == ("", "</arg_value>")
    assert tv.end() == "42"
    # a lazy (uncompiled) set reads as find does
    sc = _scanner("ab</x", ">c")
    assert sc.find_value(lazy_markers("</x>"), TypedValue(UNTYPED)) == ("ab", "</x>")
    assert sc.rest() == "c"


_TYPINGS = [UNTYPED, Typing(("string",)), Typing(("string",), True), Typing(("integer",)), Typing(("array",))]


@given(st.lists(st.text(alphabet='ab "\n<>/_ke[1]y', max_size=12), max_size=6), st.booleans(),
       st.sampled_from(range(len(_TYPINGS))), st.sampled_from(["auto", "json", "string"]))
@settings(max_examples=300, deadline=None)
def test_find_value_agrees_with_find_then_feed(deltas, final, typing_at, undeclared):
    # the plain path: find's text and marker, the text fed to an equal TypedValue; the same answers and position
    typing = _TYPINGS[typing_at]
    m = markers("</arg_value>", "\n<arg_key>", "<arg_key>", "</tool_call>")
    fast, plain = MarkerScanner(), MarkerScanner()
    tv_fast, tv_plain = TypedValue(typing, undeclared), TypedValue(typing, undeclared)
    for i, d in enumerate(deltas):
        fast.feed(d)
        plain.feed(d)
        last = final and i == len(deltas) - 1
        while True:
            got = fast.find_value(m, tv_fast, last)
            text, marker = plain.find(m, last)
            assert got == (tv_plain.feed(text) if text else "", marker)
            assert fast.rest() == plain.rest()
            if marker is None:
                break
    assert tv_fast.end() == tv_plain.end()
