"""The scanner's coarse primitives: each against real text, a partial literal at the end, final."""

from hypothesis import given, settings
from hypothesis import strategies as st

from callscale.parsers.scanner import PARTIAL, MarkerScanner, lazy_markers, markers, value_state
from callscale.parsers.schema import UNTYPED, Typing, TypedValue


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


def test_skip_repeats_consumes_openers_in_a_row_not_a_partial_one():
    opener = "<|tool_call>"
    sc = _scanner(opener * 3 + "call:f{" + opener)
    assert sc.skip_repeats(opener) == 3
    assert sc.rest() == "call:f{" + opener
    assert sc.skip_repeats(opener) == 0 and sc.rest() == "call:f{" + opener  # not here: nothing consumed
    sc = _scanner(opener + opener + "<|tool_")  # a partial copy at the end stays unread
    assert sc.skip_repeats(opener) == 2 and sc.rest() == "<|tool_"
    sc.feed("call>")
    assert sc.skip_repeats(opener) == 1 and sc.at_end()
    assert sc.skip_repeats(opener) == 0  # nothing unread


def test_skip_repeats_at_a_head_start_only_where_no_head_text_was_read():
    opener = "<tool_call>"
    sc = _scanner(opener * 2 + "x")
    sc.head_begin(opener)
    sc.head_keep("get")  # head text read: the opener here is no repeat of the head's own
    assert sc.skip_repeats(opener, head_start=True) == 0 and sc.rest() == opener * 2 + "x"
    assert sc.skip_repeats(opener) == 2  # (without head_start: wherever it stands)
    sc = _scanner(opener * 2 + "x")
    sc.head_begin(opener)
    assert sc.skip_repeats(opener, head_start=True) == 2 and sc.rest() == "x"


_MARKS = markers(",", "}", "]", '<|"|>')


def test_match_after_space_skips_whitespace_then_reads_a_mark():
    sc = _scanner(' \n ,<|"|>x}')
    assert sc.match_after_space(_MARKS) == ","
    assert sc.match_after_space(_MARKS) == '<|"|>'
    assert sc.match_after_space(_MARKS) is None and sc.rest() == "x}"  # no mark here: nothing consumed
    sc.take(1)
    assert sc.match_after_space(_MARKS) == "}" and sc.at_end()
    assert sc.match_after_space(_MARKS) is PARTIAL  # nothing unread, more may come
    assert sc.match_after_space(_MARKS, final=True) is None
    sc = _scanner("  <|")  # a partial mark at the end: the whitespace is read, the mark waits
    assert sc.match_after_space(_MARKS) is PARTIAL and sc.rest() == "<|"
    assert sc.match_after_space(_MARKS, final=True) is None and sc.rest() == "<|"
    sc.feed('"|>')
    assert sc.match_after_space(_MARKS) == '<|"|>' and sc.at_end()
    # a one-character marker that starts a longer one: the longest is read
    sc = _scanner("<<a")
    assert sc.match_after_space(markers("<", "<<")) == "<<" and sc.rest() == "a"


@given(st.lists(st.text(alphabet=' ,}]<|">x\n', max_size=6), max_size=6), st.booleans())
@settings(max_examples=300, deadline=None)
def test_match_after_space_agrees_with_skip_whitespace_then_match(deltas, final):
    fast, plain = MarkerScanner(), MarkerScanner()
    for i, d in enumerate(deltas):
        fast.feed(d)
        plain.feed(d)
        last = final and i == len(deltas) - 1
        while True:
            got = fast.match_after_space(_MARKS, last)
            plain.skip_whitespace()
            want = plain.match(_MARKS, last)
            assert got is want or got == want
            assert fast.rest() == plain.rest()
            if not isinstance(want, str):
                break


_NS_CLOSE = markers("]<]minimax[>[</").scan().search  # every closing tag's start


def test_until_value_reads_to_an_elements_own_closing_tag():
    closer = "]<]minimax[>[</path>"
    sc = _scanner('src/a "b".py]<]minimax[>[</item>x]<]minimax[>[</pa')
    # another element's closing tag is text; a partial own one at the end is held
    assert sc.until_value(_NS_CLOSE, closer, TypedValue(UNTYPED)) == ('src/a \\"b\\".py]<]minimax[>[</item>x', False)
    assert sc.rest() == "]<]minimax[>[</pa"
    sc.feed("th>\n")
    assert sc.until_value(_NS_CLOSE, closer, TypedValue(UNTYPED)) == ("", True) and sc.rest() == "\n"
    sc = _scanner("x]<]mini")
    assert sc.until_value(_NS_CLOSE, closer, TypedValue(UNTYPED), final=True) == ("x]<]mini", False)  # final: text
    assert sc.at_end()
    # a held value (an integer) sends nothing until it ends; its text is what end() types
    tv = TypedValue(Typing(("integer",)))
    sc = _scanner(" 4", "2]<]minimax[>[</path>")
    assert sc.until_value(_NS_CLOSE, closer, tv) == ("", True)
    assert tv.end() == "42"


_TYPINGS = [UNTYPED, Typing(("string",)), Typing(("integer",)), Typing(("array",))]


_PIECES = ["]<]minimax[>[</path>", "]<]minimax[>[</item>", "]<]minimax[>[</pa", "]<]", "[", " 4", "x", '"', "\n"]


@given(st.lists(st.sampled_from(_PIECES), max_size=8), st.lists(st.integers(0, 80), max_size=6), st.booleans(),
       st.sampled_from(range(len(_TYPINGS))))
@settings(max_examples=300, deadline=None)
def test_until_value_agrees_with_find_then_feed(pieces, cuts, final, typing_at):
    # the plain path: find of the one literal (a lazy set), its text fed to an equal TypedValue
    closer = "]<]minimax[>[</path>"
    text = "".join(pieces)
    bounds = [0, *sorted(c for c in cuts if c < len(text)), len(text)]
    deltas = [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    plain_set = lazy_markers(closer)
    fast, plain = MarkerScanner(), MarkerScanner()
    tv_fast, tv_plain = TypedValue(_TYPINGS[typing_at]), TypedValue(_TYPINGS[typing_at])
    for i, d in enumerate(deltas):
        fast.feed(d)
        plain.feed(d)
        last = final and i == len(deltas) - 1
        while True:
            got = fast.until_value(_NS_CLOSE, closer, tv_fast, last)
            text, marker = plain.find(plain_set, last)
            assert got == (tv_plain.feed(text) if text else "", marker is not None)
            assert fast.rest() == plain.rest()
            if marker is None:
                break
    assert tv_fast.end() == tv_plain.end()


_VALUE_ENDS = markers("</arg_value>", "\n<arg_key>", "<arg_key>")


class _ValueMachine:
    """What ``scanner.value_state`` reads of a parser: its scanner, ``_value_ends``, ``_tv``, the two hooks."""

    def __init__(self, sc, ends, tv):
        self.scanner, self._value_ends, self._tv = sc, ends, tv
        self.sent: list[str] = []
        self.markers: list[tuple[str | None, bool]] = []

    def _emit_arguments(self, text):
        self.sent.append(text)

    def _value_marker(self, marker, final):
        self.markers.append((marker, final))
        return marker is not None


def _value_step(machine, final=False):
    """One run of the value state: ``(sent, marker)`` as find_value answered them (the JSON text, the marker)."""
    machine.sent, machine.markers = [], []
    value_state(machine, final)
    return "".join(machine.sent), machine.markers[0][0] if machine.markers else None


def test_value_state_sends_a_streamed_strings_escaped_pieces_and_holds_a_partial_marker():
    sc = _scanner('a "b"\n</arg_')
    vm = _ValueMachine(sc, _VALUE_ENDS, TypedValue(UNTYPED))
    assert _value_step(vm) == ('a \\"b\\"\\n', None)  # a partial closing tag at the end: held
    assert sc.rest() == "</arg_" and vm.markers == []  # (no marker, not final: the state waits)
    sc.feed("value>\n<arg_key>")
    assert _value_step(vm) == ("", "</arg_value>")
    assert _value_step(vm) == ("", "\n<arg_key>") and sc.at_end()
    sc.feed("<arg_key>")
    assert _value_step(vm) == ("", "<arg_key>") and sc.at_end()
    sc.feed("x</arg_val")
    assert _value_step(vm, final=True) == ("x</arg_val", None) and sc.at_end()  # final: text
    assert vm.markers == [(None, True)]  # (the end of the output inside the value: the format's step decides)
    # a held value (an integer) sends nothing until it ends; its text is what end() types
    tv = TypedValue(Typing(("integer",)))
    sc = _scanner(" 4")
    vm = _ValueMachine(sc, _VALUE_ENDS, tv)
    assert _value_step(vm) == ("", None) and sc.at_end()
    sc.feed("2 </arg_value>")
    assert _value_step(vm) == ("", "</arg_value>")
    assert tv.end() == "42"
    # a lazy (uncompiled) set reads as find does
    sc = _scanner("ab</x", ">c")
    assert _value_step(_ValueMachine(sc, lazy_markers("</x>"), TypedValue(UNTYPED))) == ("ab", "</x>")
    assert sc.rest() == "c"


@given(st.lists(st.text(alphabet='ab "\n<>/_ke[1]y', max_size=12), max_size=6), st.booleans(),
       st.sampled_from(range(len(_TYPINGS))), st.sampled_from(["auto", "json", "string"]))
@settings(max_examples=300, deadline=None)
def test_value_state_agrees_with_find_then_feed(deltas, final, typing_at, undeclared):
    # the plain path: find's text and marker, the text fed to an equal TypedValue; the same answers and position
    typing = _TYPINGS[typing_at]
    m = markers("</arg_value>", "\n<arg_key>", "<arg_key>", "</tool_call>")
    fast, plain = MarkerScanner(), MarkerScanner()
    tv_fast, tv_plain = TypedValue(typing, undeclared), TypedValue(typing, undeclared)
    vm = _ValueMachine(fast, m, tv_fast)
    for i, d in enumerate(deltas):
        fast.feed(d)
        plain.feed(d)
        last = final and i == len(deltas) - 1
        while True:
            got = _value_step(vm, last)
            text, marker = plain.find(m, last)
            assert got == (tv_plain.feed(text) if text else "", marker)
            assert fast.rest() == plain.rest()
            if marker is None:
                break
    assert tv_fast.end() == tv_plain.end()


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


_FOLLOW = markers("</parameter>", "<parameter=", "</function>", "<", "x")


@given(st.lists(st.sampled_from([" ", "\t", "\n", "</parameter>", "<param", "eter=", "</function>", "</fun", "<", "x",
                                 "y"]), max_size=10),
       st.lists(st.integers(1, 5), min_size=1, max_size=5), st.booleans(), st.integers(1, 3), st.booleans())
@settings(max_examples=400, deadline=None)
def test_match_after_whitespace_held_agrees_with_skip_whitespace_add_then_match(pieces, sizes, final, runs, lazy):
    # a closing tag's confirmation, the plain path: skip the whitespace, hold it (its bound may refuse it: then no marker is read),
    # then match; match with a layout does it in one call
    from callscale.parsers import base

    follow = lazy_markers(*_FOLLOW.items) if lazy else _FOLLOW
    text = "".join(pieces)
    deltas, i, k = [], 0, 0
    while i < len(text):
        deltas.append(text[i:i + sizes[k % len(sizes)]])
        i += sizes[k % len(sizes)]
        k += 1
    fast, plain = MarkerScanner(), MarkerScanner()
    held_fast, held_plain = base.Layout(), base.Layout()
    old = base.MAX_LAYOUT_RUNS
    base.MAX_LAYOUT_RUNS = runs  # (a small bound: whitespace of a few runs passes it)
    try:
        for n, d in enumerate(deltas):
            fast.feed(d)
            plain.feed(d)
            last = final and n == len(deltas) - 1
            while True:
                got = fast.match(follow, last, held_fast)
                ws = plain.skip_whitespace()
                want = None if ws and not held_plain.add(ws) else plain.match(follow, last)
                assert got is want or got == want
                assert fast.rest() == plain.rest() and held_fast.text() == held_plain.text()
                if not isinstance(want, str):
                    break
                held_fast.clear()
                held_plain.clear()
    finally:
        base.MAX_LAYOUT_RUNS = old


def test_head_again_ends_a_head_at_its_opener_repeated_and_begins_the_next():
    import re

    opener = "<tool_call>"
    sc = _scanner(opener + " \n" + opener + "<tool_")
    sc.take(len(opener))
    sc.head_begin(opener)
    assert sc.head_again(opener) is None  # whitespace first: nothing consumed
    assert sc.head_run(re.compile(r"\s*"))[0] == " \n"
    assert sc.head_size() == 2
    assert sc.head_again(opener) == opener + " \n"  # the head so far (no call), the opener read
    assert sc.head_size() == 0 and sc.head_peek() == opener  # the next head: that opener, nothing counted
    assert sc.head_again(opener) is None and sc.rest() == "<tool_"  # a partial opener: not consumed here
    sc.feed("call>x")
    assert sc.head_again(opener) == opener and sc.rest() == "x" and sc.head_text() == opener


def test_cut_start_finds_the_longest_proper_prefix_of_a_marker_that_ends_the_text():
    from callscale.parsers.scanner import markers

    m = markers("<|end|>", "<|end_message|>", "<x>")
    assert m.cut_start("name<|end_mess") == 4
    assert m.cut_start("name<|en") == 4 and m.cut_start("name<") == 4
    assert m.cut_start("name<|end|>") == 11  # a whole marker is no cut one
    assert m.cut_start("name") == 4 and m.cut_start("") == 0
    assert m.cut_start("a<x") == 1
