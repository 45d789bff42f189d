"""parsers.jsonscan: the one incremental JSON tracker (DeepSeek, Kimi K2, and Qwen3's lexer on top of it)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from callscale import parsers
from callscale.parsers.jsonscan import (BAD_ESCAPE, CONTROL, NEED_MORE, STRING_END, STRING_OPEN, JsonTracker, JsonValidator,
                                       RawArguments)
from callscale.parsers.qwen import JsonCallLexer


def _reference(text: str):
    """Character-by-character model of the non-strict tracker: (close index or -1, inside, escape, depth)."""
    inside = escape = False
    depth, at = 0, -1
    for i, c in enumerate(text):
        if inside:
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == '"':
                inside = False
        elif c == '"':
            inside = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth <= 0 and at < 0:
                at = i
    return at, inside, escape, depth


def _feed_split(text: str, cuts: list[int]):
    tracker = JsonTracker()
    at, offset = -1, 0
    for a, b in zip([0] + cuts, cuts + [len(text)]):
        got = tracker.feed(text[a:b])
        if got >= 0:
            assert at < 0, "the top-level close is reported once"
            at = offset + got
        offset = b
    return at, tracker.inside, tracker.escape, tracker.depth


_JSONISH = st.text(alphabet='{}[]"\\:, ab\n\u00e9', max_size=60)


@settings(max_examples=400, deadline=None)
@given(_JSONISH, st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_feed_matches_a_character_model_under_any_split(text, cuts):
    cuts = sorted({c for c in cuts if 0 < c < len(text)})
    assert _feed_split(text, cuts) == _reference(text)


@pytest.mark.parametrize("text,close", [
    ('{"a": "}"}', 9),                 # a closer inside a string is text
    ('{"a": "\\"}"} tail', 11),         # so is one after an escaped quote
    ('{"a": "\\\\"}', 10),             # an escaped backslash does not escape the quote
    ("[1, [2]]", 7),
    ('{"a": 1', -1),
    ("}", 0),                          # a stray closer closes (depth below 0)
])
def test_the_top_level_close(text, close):
    assert JsonTracker().feed(text) == close
    assert _feed_split(text, list(range(1, len(text))))[0] == close  # one character per piece


def test_an_escape_split_after_its_backslash():
    tracker = JsonTracker()
    assert tracker.feed('{"a": "x\\') == -1
    assert tracker.inside and tracker.escape
    assert tracker.feed('"') == -1 and tracker.inside  # the escaped quote is text
    assert tracker.feed('"}') == 1 and tracker.closed and not tracker.inside


# ----------------------------------------------------------------- strict string runs (the lexer's base)
def _runs(pieces):
    """Follow one string's contents piece by piece in a strict tracker; the events met."""
    tracker = JsonTracker(strict=True)
    tracker.inside = True
    events = []
    for piece in pieces:
        i = 0
        while i < len(piece):
            j, event = tracker.string_run(piece, i)
            events.append(event)
            if event in (STRING_END, BAD_ESCAPE):
                return events, j
            i = j + 1 if event == CONTROL else j
    return events, None


def test_strict_escapes_are_checked_across_pieces():
    assert _runs(['ab\\u00', 'e9 "'])[0][-1] == STRING_END
    assert _runs(['ab\\u0', '0G9"']) == ([STRING_OPEN, BAD_ESCAPE], 1)  # the G
    assert _runs(['ab\\', 'q"']) == ([STRING_OPEN, BAD_ESCAPE], 0)
    assert _runs(['a\\n\\/\\"b"']) == ([STRING_END], 9)


def test_strict_reports_control_characters_non_strict_reads_them():
    assert _runs(['a\nb"']) == ([CONTROL, STRING_END], 4)
    tracker = JsonTracker()
    tracker.inside = True
    assert tracker.string_run('a\nb\\q"', 0) == (6, STRING_END)


# ----------------------------------------------------------------- one piece of code
def test_the_parsers_share_the_tracker():
    assert issubclass(JsonCallLexer, JsonTracker) and JsonCallLexer().strict
    assert issubclass(JsonValidator, JsonTracker) and JsonValidator().strict
    for name in ("deepseek_v3", "deepseek_v31", "kimi_k2", "mistral", "gpt_oss"):  # one raw-arguments streamer
        args = parsers.get(name)()._args
        assert type(args) is RawArguments and isinstance(args, JsonValidator)
    assert "jsonscan" not in parsers.names()


# ----------------------------------------------------------------- the strict validator
def _strict_reference(text: str, objects_only: bool) -> bool:
    """What the validator must say: json.loads accepts it (no NaN/Infinity), an object if ``objects_only``."""
    def reject(name):
        raise ValueError(name)
    try:
        value = json.loads(text, parse_constant=reject)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) or not objects_only


def _validate_split(text: str, cuts: list[int], objects_only: bool) -> bool:
    validator = JsonValidator(objects_only)
    points = [0, *cuts, len(text)]
    for a, b in zip(points, points[1:]):
        validator.feed(text[a:b])
    return validator.complete()


_JSON_PIECES = st.sampled_from(['{', '}', '[', ']', '"', '\\', ':', ',', ' ', '\n', 'a', '1', '-', '.', 'e', '0',
                                'true', 'null', 'NaN', 'Infinity', '"k"', '\\u00e9', '\\n'])
_VALID = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                      | st.text(max_size=5),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                      max_leaves=8)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.lists(_JSON_PIECES, max_size=14).map("".join),
                 _VALID.map(json.dumps),
                 st.tuples(_VALID.map(json.dumps), st.integers(0, 30)).map(lambda t: t[0][:t[1]])),
       st.lists(st.integers(min_value=1, max_value=60), max_size=6), st.booleans())
def test_validator_agrees_with_json_loads_under_any_split(text, cuts, objects_only):
    cuts = sorted({c for c in cuts if 0 < c < len(text)})
    assert _validate_split(text, cuts, objects_only) == _strict_reference(text, objects_only), (text, cuts)


@pytest.mark.parametrize("text, error_at", [('{"a": NaN}', 6), ('{"a": Infinity}', 6), ('{"a": 1,}', 8),
                                            ('{"a": 1} x', 9), ('{"a": "x\ny"}', 8), ("[1]", 0), ("{'a': 1}", 1)])
def test_validator_errors_where_the_json_breaks(text, error_at):
    validator = JsonValidator()
    validator.feed(text)
    assert validator.failed and validator.error_at == error_at and not validator.complete()


def test_validator_reports_the_top_level_close_and_keeps_no_text():
    validator = JsonValidator()
    assert validator.feed('{"a": "}') == -1 and validator.feed('", "b": [1, {}]}  ') == 15
    assert validator.complete() and validator.closed and validator.first == "{"
    big = '"' + "x" * 100000 + '"'
    validator = JsonValidator()
    validator.feed('{"c": ')
    for i in range(0, len(big), 1000):
        validator.feed(big[i:i + 1000])
    validator.feed("}")
    assert validator.complete()
    assert sum(len(x) for x in validator._number) == 0 and validator._stack == []


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_the_lexer_on_the_tracker_reads_a_call(size):
    args = {"path": "a.py", "content": 'x = "\\u00e9"\n\tdone\\\\', "n": [1, -2.5e3, True, None, {}]}
    text = json.dumps({"name": "write", "arguments": args}) + "\n</tool_call>"
    lexer = JsonCallLexer()
    pieces, status, used = [], "need-more", 0
    for i in range(0, len(text), size):
        used, status = lexer.feed(text[i:i + size])
        pieces.append(lexer.take_arguments())
        if status != "need-more":
            used += i
            break
    assert (status, lexer.name) == ("done", "write")
    assert text[used:] == "\n</tool_call>"
    assert json.loads("".join(pieces)) == args


_ARGUMENT_TEXTS = st.one_of(
    _VALID.map(json.dumps),  # the encoders' spelling (": ", ", "): the one the validator reads in one step
    _VALID.map(lambda v: json.dumps(v, separators=(",", ":"))),
    st.tuples(_VALID.map(json.dumps), st.integers(0, 40), st.sampled_from(['"', "01", "-", "1.", ",,", "} x", ": :", "\x01"]))
    .map(lambda t: t[0][:t[1]] + t[2] + t[0][t[1]:]),  # a fault somewhere
    st.lists(_JSON_PIECES, max_size=14).map("".join))


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    return [text[a:b] for a, b in zip(points, points[1:])]


@settings(max_examples=400, deadline=None)
@example('null"', [1], False, False).via("a top-level literal, then a character after it")
@example("5  x", [1, 2], False, False).via("a top-level number ended by the next piece")
@example('{"a": 1}  x', [8, 9], True, False).via("text after the closed object, in later pieces")
@given(_ARGUMENT_TEXTS, st.lists(st.integers(min_value=1, max_value=60), max_size=6), st.booleans(), st.booleans())
def test_raw_arguments_scan_then_scanned_is_feed_and_stops_where_the_text_breaks(text, cuts, objects_only, stop_at_close):
    """The formats' per-piece path (scan, then scanned for an event) gives feed's results; the place where the
    text stops being the arguments, and what was sent, do not depend on the split."""
    stop_at_close = stop_at_close and objects_only  # (the formats' combinations: Kimi K2 reads any value, to its end)
    whole, by_feed, by_scan = RawArguments(objects_only), RawArguments(objects_only), RawArguments(objects_only)
    sent_whole, used_whole = whole.feed(text, stop_at_close)
    sent, offset, stopped = [], 0, None
    for piece in _pieces(text, cuts):
        result = by_feed.feed(piece, stop_at_close)
        j, event = by_scan.scan(piece, 0)
        assert (by_scan.scanned(piece, j, event, stop_at_close) if event else (piece, len(piece))) == result
        sent.append(result[0])
        if result[1] < len(piece):
            stopped = offset + result[1]
            break
        offset += len(piece)
    assert stopped == (used_whole if used_whole < len(text) else None), (text, cuts)
    assert "".join(sent) == sent_whole and by_feed.close() == by_scan.close() == whole.close()


_SPELLINGS = ['{"a": 1, "b": [1, 2], "c": {"d": "e"}}', '{"a":"b","c":[1,2,{"d":null}]}', '{ "a" : [ ] , "b" : { } }',
              '{"a": 1, }', '{"a": 1, x}', '{"a" "b"}', '{"a": "b", }', '{"a": "b" , "c": 2}', '{"a": [1, 2}',
              '{"a": {"b": 1]}', '{"a": 01}', '{"a": -}', '{"a": 1.}', '{"a": 1e5, "b": -0.5E-3}', '{"a": -0, "b": 10}',
              '{"": ""}', '{"a": tru}', '{"a": [true, false, null]}', '{"a":\n "b"}', '{"a":  "b"}', '{"a": "b",\t"c": 1}',
              '{"a\\"b": "\\u00e9"}', '{"a": 1}  x', '{"a": {"b": "c"}, "d": ["e", "f"]}', '{"a": [{"b": 1}, {"c": 2}]}']


@pytest.mark.parametrize("text", _SPELLINGS)
def test_the_validator_reads_the_encoders_spellings_alike_under_every_two_cuts(text):
    """The steps that read a separator with the next quote, or a whole number, agree with json.loads and stop
    at the same character whatever the split (every split into up to three pieces)."""
    def run(cuts):
        validator, offset = JsonValidator(), 0
        for piece in _pieces(text, cuts):
            validator.feed(piece)
            if validator.failed:
                return validator.complete(), offset + validator.error_at
            offset += len(piece)
        return validator.complete(), None
    whole = run([])
    assert whole[0] == _strict_reference(text, True)
    for a in range(1, len(text)):
        for b in range(a, len(text)):
            assert run([a, b]) == whole, (text, a, b)


@given(st.lists(st.sampled_from(['{"name": "f", ', '"arguments": ', '{"a": [1, {"b": "}"}], ', '"c": {}}', '}',
                                 '"x": {"arguments": 1}, ', '"arguments": {"k": "v"}', ', "name": "g"', " ", "\n"]),
                max_size=8),
       st.integers(1, 7))
@settings(max_examples=300, deadline=None)
def test_in_arguments_is_true_exactly_while_the_capture_is_the_arguments_value(pieces, size):
    # the field the reader reads a delta agrees with the lexer's capture after every feed, however it is split
    text = "".join(pieces)
    for pause in (False, True):
        lexer = JsonCallLexer()
        i = 0
        while i < len(text):
            used, status = lexer.feed(text[i:i + size], pause=pause)
            assert lexer.in_arguments == (lexer._capture == "arguments")
            if status != NEED_MORE:
                break
            i += max(used, 1) if pause else size


def _head_waits_plainly(text, head_keys, keys):
    """The wait rule written plainly: ``text`` is a proper prefix of ``{"K1": "V1", ..., "KEY": {`` in
    json.dumps' or the compact spelling (mixed), each value at least one character with no quote, backslash,
    control character or surrogate."""
    parts = []
    for n, key in enumerate(head_keys):
        lead = ("{", "{") if n == 0 else ('", ', '",')
        parts += [(lead[0] + '"%s": "' % key, lead[1] + '"%s":"' % key), None]
    parts.append(tuple('", "%s": {' % k for k in keys) + tuple('","%s":{' % k for k in keys))

    def value_char(c):
        return c not in '"\\' and ord(c) >= 0x20 and not 0xD800 <= ord(c) <= 0xDFFF

    def rest(i, k):
        if i == len(text):
            return k < len(parts)
        if k == len(parts):
            return False
        if parts[k] is None:
            j = i
            while j < len(text) and value_char(text[j]):
                j += 1
            return j == len(text) or (j > i and rest(j, k + 1))
        return any(text.startswith(lit, i) and rest(i + len(lit), k + 1)
                   or len(text) - i < len(lit) and lit.startswith(text[i:]) for lit in parts[k])

    return rest(0, 0)


_HEAD_SPECS = [(("name",), ("arguments",)), (("name",), ("parameters", "arguments")),
               (("tool_call_id", "tool_name"), ("parameters", "arguments"))]


def _head_reader(head_keys, keys):
    from callscale.parsers.base import ToolParser
    from callscale.parsers.jsonscan import JsonCallReader

    return type("HeadReader", (JsonCallReader, ToolParser), {
        "head_keys": head_keys, "argument_keys": keys, "name_keys": (head_keys[-1],), "max_head": 512})


_HEAD_READERS = [_head_reader(*spec) for spec in _HEAD_SPECS]


@given(st.lists(st.sampled_from(['{', '"', '": "', '":"', '", "', '","', ': {', ':{', 'name', 'tool_name',
                                 'tool_call_id', 'arguments', 'parameters', 'a', '0', ' ', '\\', '\x01', '{"']),
                max_size=14),
       st.sampled_from(range(len(_HEAD_SPECS))))
@settings(max_examples=1500, deadline=None)
@example(['{"', 'name', '": "', 'a', '", "', 'arguments', '": {'], 0)
@example(['{"', 'tool_call_id', '": "', '0', '", "', 'tool_name', '":"', 'a', '","', 'parameters'], 2)
def test_the_common_heads_wait_agrees_with_its_rule_written_plainly(pieces, spec_at):
    # JsonCallReader._s_json_head waits (answers False, reads nothing) exactly when the rule says so
    head_keys, keys = _HEAD_SPECS[spec_at]
    text = "".join(pieces)
    reader = _HEAD_READERS[spec_at]()
    reader._open_object("")
    reader._state = "json_head"
    reader.scanner.feed(text)
    waited = reader._s_json_head(False) is False
    assert waited == _head_waits_plainly(text, head_keys, keys), text
    if waited:
        assert reader._state == "json_head" and reader.scanner.rest() == text


def test_strict_loads_reads_nesting_to_its_bound_on_every_python():
    from callscale.parsers.jsonscan import MAX_JSON_DEPTH, strict_loads

    depth = MAX_JSON_DEPTH
    value = strict_loads("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        assert type(value) is list and len(value) == 1
        value = value[0]
    assert value == []
    with pytest.raises(RecursionError):  # json itself reads about 10,000 levels on 3.13, under 1,000 on 3.11
        strict_loads('{"a": ' + "[" * (depth + 1) + "]" * (depth + 1) + "}")
    quoted = '["' + "[{" * depth + '\\"[", {"k": []}]'  # brackets inside strings are text
    assert strict_loads(quoted) == ["[{" * depth + '"[', {"k": []}]
