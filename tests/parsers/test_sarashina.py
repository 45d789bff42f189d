"""The Sarashina parser (``sarashina``): rendered calls read back under every split, the bare list at the start of
the output, Python literals, elements that make no call, broken and cut lists (docs/formats.md, "Sarashina")."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.pyliteral import PyLiteralReader
from callscale.parsers.sarashina import TOOL_CALLS
from callscale.workloads import render
from callscale.workloads.render import Call
from support import CHUNKINGS, assert_odd_output_agrees, assert_parses, assert_round_trip, calls_strategy

P = "sarashina"
R = render.get(P)
SPECIALS = R.special_tokens


def check_all(text, content, calls, broken=False):
    assert_parses(P, text, content, calls, chunkings=CHUNKINGS, special_tokens=SPECIALS, broken=broken)


def test_registered_with_a_renderer():
    assert P in parsers.names() and P in render.names()
    assert parsers.get(P).name == P and R.opener == TOOL_CALLS


def test_the_renderer_writes_smgs_layout():
    text = R.render([Call("get_weather", {"city": "Tokyo", "ok": True, "n": None})], content="Let me check.")
    assert text == "Let me check.<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo', 'ok': True, 'n': None}}]"


def test_smgs_cases():
    # crates/tool_parser/src/parsers/sarashina.rs, its tests
    check_all(TOOL_CALLS + "[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]", "",
              [("get_weather", {"city": "Tokyo"})])
    check_all("[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]", "", [("get_weather", {"city": "Tokyo"})])
    check_all("Let me check." + TOOL_CALLS + "[{'name': 'ping', 'arguments': {}}]", "Let me check.", [("ping", {})])
    check_all("[{'name': 'search', 'arguments': {'q': 'rust'}}, {'name': 'get_weather', 'arguments': {'city': 'Paris'}}]",
              "", [("search", {"q": "rust"}), ("get_weather", {"city": "Paris"})])
    check_all("[{'name': 'flags', 'arguments': {'a': True, 'b': False, 'c': None}}]", "",
              [("flags", {"a": True, "b": False, "c": None})])
    check_all("[{'name': 'say', 'arguments': {'text': 'it\\'s [done]'}}]", "", [("say", {"text": "it's [done]"})])
    check_all("The weather in Tokyo is sunny.", "The weather in Tokyo is sunny.", [])
    check_all("[1, 2, 3]", "[1, 2, 3]", [])


def test_a_bare_list_only_at_the_start_of_the_output():
    text = "See [{'name': 'f', 'arguments': {}}]"
    check_all(text, text, [])
    check_all("  \n[ {'name': 'f', 'arguments': {}} ]", "", [("f", {})])


def test_an_element_that_is_no_call_is_content_and_the_list_goes_on():
    check_all(TOOL_CALLS + "[{'x': 1}, {'name': 'f', 'arguments': {}}]", "{'x': 1}", [("f", {})])
    check_all(TOOL_CALLS + "[{'name': 'f', 'arguments': [1]}]", "{'name': 'f', 'arguments': [1]}", [])


def test_prose_after_a_broken_call_is_content():
    text = TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': oops and then prose."
    check_all(text, "oops and then prose.", [], broken=True)
    check_all(text + TOOL_CALLS + "[{'name': 'g', 'arguments': {}}]", "oops and then prose.", [("g", {})], broken=True)


def test_a_list_cut_by_the_end_of_the_output_is_dropped():
    full = "Hi." + TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': 'b'}}]"
    for k in range(len("Hi." + TOOL_CALLS), len(full) - 1):
        got = parsers.get(P)().detect_and_parse(full[:k], [])
        assert got.normal_text == "Hi." and got.calls == [], k


def test_the_literal_reader_stops_at_the_close_and_answers_where_it_broke():
    r = PyLiteralReader()
    assert r.feed("{'a': [1, '}]'], 'b': None}, {", True) == len("{'a': [1, '}]'], 'b': None}") and r.closed
    r = PyLiteralReader()
    assert r.feed("{'a': Tr", True) == 8 and not r.failed  # (a word that may go on: held)
    assert r.feed("ouble", True) == -2 and r.failed  # the word began two characters before this piece


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=calls_strategy(SPECIALS), content=st.sampled_from(["", "Hi.", "a [b] {c}"]),
       cuts=st.lists(st.integers(0, 2000), max_size=6))
def test_round_trip_under_any_split(calls, content, cuts):
    calls = [Call(c.name, {k: v for k, v in c.arguments.items() if TOOL_CALLS not in repr(v) + k})
             for c in calls]  # (the calls token never inside a value)
    assert_round_trip(P, calls, content, "", cuts)


def test_odd_output_agrees_streamed_and_whole():
    pieces = [TOOL_CALLS, "[", "]", "{", "}", "'name'", "'arguments'", ": ", ", ", "'f'", "True", "x", " ", "\\", "'"]
    assert_odd_output_agrees(P, pieces, seed=11)


def test_an_element_that_closes_right_after_an_escape_under_every_split():
    # the reader holds up to ten characters after a backslash (an escape may go on): the element's close, and
    # the text after it, may arrive in pieces before the reader sees it
    check_all(TOOL_CALLS + "[{'':'','':{'':'\\n'}}'name", "{'':'','':{'':'\\n'}}'name", [])
    check_all(TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': '\\n'}}, {'name': 'g', 'arguments': {}}]tail", "tail",
              [("f", {"a": "\n"}), ("g", {})])


def test_an_element_whose_last_escape_is_near_the_end_of_the_output_is_a_call():
    # docs/formats.md, Sarashina: an element that closes is a call; only an element the end of the output cuts is
    # dropped. The reader held the ten characters after a backslash (an escape may go on) even when the escape was
    # already whole, so an output ending a few characters after one (`'C:\\'}}]`, `'line\n'}}]`) lost the call.
    for value, read in [("'x\\\\'", "x\\"), ("'a\\n'", "a\n"), ("'x\\\ny'", "xy"), ("'\\x41'", "A"), ("'\\101'", "A"),
                        ("'\\q'", "\\q")]:
        check_all(TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': " + value + "}}]", "", [("f", {"a": read})])
        check_all(TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': " + value + "}}] ok", " ok", [("f", {"a": read})])


def test_the_token_that_breaks_a_call_starts_the_content():
    # docs/formats.md, Sarashina: where an element's text stops being a Python literal, its text up to there is
    # dropped and what follows is content; PyLiteralReader.feed: "the token that broke it starts there". The
    # breaking token (a second comma, a closer after a colon, a quote or number where a comma belongs) was dropped
    # with the call: `[1,,2]` left `2]}}] ok`.
    head = TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': "
    for bad, content in [("[1,,2]}}] ok", ",2]}}] ok"), ("{'b':}}}] ok", "}}}] ok"), ("'x' 'y'}}] ok", "'y'}}] ok"),
                         ("1 2}}] ok", "2}}] ok"), ("{'b': 1 'c'}}}] ok", "'c'}}}] ok")]:
        check_all(head + bad, content, [], broken=True)


def test_a_number_python_does_not_read_breaks_at_its_start_under_every_split():
    # a decimal integer past Python's 4300 digits is no literal: streamed one character a delta the reader gave up
    # at the number's start (the number content), the whole text after it (the number dropped)
    for digits in (4400, 5200):
        text = TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': 1" + "0" * digits + "}}] ok"
        check_all(text, "1" + "0" * digits + "}}] ok", [], broken=True)


def test_a_parenthesized_value_is_the_value_a_tuple_is_a_list():
    # Python reads `(1)` as 1 and `(1,)` as a one-item tuple (ast.literal_eval); `(1)` came out as [1]
    head = TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': "
    for value, read in [("(1)", 1), ("((('s')))", "s"), ("({'b': (2)})", {"b": 2}), ("(1,)", [1]), ("()", []),
                        ("(1, 2)", [1, 2]), ("[(3)]", [3])]:
        check_all(head + value + "}}]", "", [("f", {"a": read})])


def _stream(text, size):
    p = parsers.get(P)()
    results = [p.parse_streaming_increment(text[i:i + size], []) for i in range(0, len(text), size)]
    return results + [p.finish([])]


def test_a_call_whose_name_comes_first_streams_its_arguments_as_they_arrive():
    # docs/formats.md, Sarashina: the call starts at the arguments' "{", its JSON text streams; the final "}"
    # comes with the element's close
    head = TOOL_CALLS + "[{'name': 'write_file', 'arguments': {'path': 'a.txt', 'content': '"
    body = "line \\u00e9 \\'q\\' \"dq\" 😀\\n" * 40
    text = head + body + "'}}]"
    results = _stream(text, 7)
    first = next(i for i, r in enumerate(results) if r.calls)
    assert results[first].calls[0].name == "write_file"
    assert first <= len(head) // 7 + 1  # (the name with the piece that opened the arguments)
    pieces = [c.parameters for r in results for c in r.calls]
    streamed = "".join(pieces)
    assert json.loads(streamed) == {"path": "a.txt", "content": "line é 'q' \"dq\" 😀\n" * 40}
    assert not streamed[:-1].endswith("}") and streamed.endswith("}")
    # the content arrives over the increments that bring it, not at the element's close
    while_open = "".join(c.parameters for r in results[:len(text) // 7 - 2] for c in r.calls)
    assert len(while_open) > len(body) * 0.8
    assert results[-1].calls == [] or all(c.parameters in ("}", "'}") or len(c.parameters) < 16 for c in results[-1].calls)


def test_a_head_in_any_spelling_starts_the_call_the_common_head_does():
    # the common head, read whole (pyliteral.member_head_pattern), in its spellings, and heads the pattern leaves
    # to the reader token by token (an escape in the name, a member between, a name no call has): one answer
    for head in ("{'name': 'f', 'arguments': {", '{"name": "f", "arguments": {', "{ 'name' :'f',\n\t'arguments':{",
                 "{'name': '\\x66', 'arguments': {", "{'name': 'f', 'id': 'c1', 'arguments': {",
                 "{\"name\": 'f' , 'arguments' : {"):
        check_all(TOOL_CALLS + "[" + head + "'a': 'x', 'b': [1, 22]}}]", "", [("f", {"a": "x", "b": [1, 22]})])
    check_all(TOOL_CALLS + "[{'name': ' ', 'arguments': {'a': 1}}]", "{'name': ' ', 'arguments': {'a': 1}}", [])
    check_all(TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': 1}, 'x': 2}]", "", [("f", {"a": 1})])


def test_an_element_whose_arguments_come_first_is_decided_when_it_closes():
    text = TOOL_CALLS + "[{'arguments': {'a': 'x' }, 'name': 'f'}]"
    results = _stream(text, 1)
    sent = [i for i, r in enumerate(results) if r.calls]
    assert len(sent) == 1 and results[sent[0]].calls[0].name == "f"
    assert sent[0] >= len(text) - 2  # (the element's "}" decided it)
    check_all(text, "", [("f", {"a": "x"})])


def test_streamed_arguments_keep_the_literal_rules():
    head = TOOL_CALLS + "[{'name': 'f', 'arguments': "
    for args, read in [("{'a': (1), 'b': (1,), 'c': ((('s'))), 'd': ()}", {"a": 1, "b": [1], "c": "s", "d": []}),
                       ("{'a': True, 'b': None, 'c': -1.5e3, 'd': 0, 'e': [1, {'f': 'g'},], }",
                        {"a": True, "b": None, "c": -1500.0, "d": 0, "e": [1, {"f": "g"}]}),
                       ("{'a': '\\ud800', 'b': '\\x41\\101\\q', 'c': 'x\\\ny'}", {"a": "\ud800", "b": "AA\\q", "c": "xy"}),
                       ("{'a': 1, 'a': 2}", {"a": 2}),  # (a repeated key: written as read, a decoder keeps the last)
                       ("{}", {})]:
        check_all(head + args + "}]", "", [("f", read)])
    # a later 'name' or 'arguments' of an element that streams: its first ones are the call
    check_all(head + "{'a': 1}, 'name': 'g', 'arguments': [1]}]", "", [("f", {"a": 1})])


def test_a_streamed_call_that_breaks_after_its_arguments_is_no_whole_call():
    # the arguments' final "}" waits for the element's close: what a client got of a broken call is no object
    text = TOOL_CALLS + "[{'name': 'f', 'arguments': {'a': 1} oops and prose."
    for size in (1, 3, len(text)):
        streamed = "".join(c.parameters for r in _stream(text, size) for c in r.calls)
        assert streamed == '{"a": 1'
    check_all(text, "oops and prose.", [], broken=True)
