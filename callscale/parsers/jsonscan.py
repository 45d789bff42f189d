"""Incremental JSON tracking, shared by the parsers that read JSON arguments as raw text.

Not a format module. :class:`JsonTracker` follows JSON text piece by piece,
each character once (linear in the text whatever the split): whether the
text so far ends inside a string literal (and inside an escape there), the
bracket depth outside strings, and where the top-level value closes.

Two uses:

- as it is, with :meth:`JsonTracker.feed`: nothing is validated; only ``"`` and ``\\`` inside strings and
  ``"{}[]`` outside them are looked at, so any text at all can be fed;
- as the base of a validating lexer (``strict=True``): :class:`JsonValidator`
  (one JSON value, strict RFC 8259; the DeepSeek V3/V3.1 and Kimi K2
  arguments) and Qwen3's :class:`callscale.parsers.qwen.JsonCallLexer` read the grammar
  between strings themselves and hand string contents to
  :meth:`JsonTracker.string_run`, which then also checks escapes (``\\u``
  and four hex digits, or one of ``"\\/bfnrt``) and reports raw control
  characters; brackets go through :meth:`JsonTracker.bracket` in every use.

Escapes are followed across pieces: a piece may end right after a backslash
or inside a ``\\uXXXX`` escape.
"""

from __future__ import annotations

import json
import re

__all__ = ["JsonTracker", "JsonValidator", "JsonCallLexer", "JsonCallReader", "RawArguments", "NEED_MORE", "DONE", "ERROR", "json_object", "strict_loads", "finite_float", "STRING_OPEN", "STRING_END", "CONTROL",
           "BAD_ESCAPE"]

#: :meth:`JsonTracker.string_run` results: the text ended inside the string.
STRING_OPEN = 0
#: The string's closing quote was read.
STRING_END = 1
#: (strict only) a raw control character (U+0000-U+001F) at the returned index, not read.
CONTROL = 2
#: (strict only) the character at the returned index cannot continue an escape.
BAD_ESCAPE = 3

_RAW_STOP = re.compile(r'["\\]')
_STRICT_STOP = re.compile(r'["\\\x00-\x1f]')
_OUTSIDE = re.compile(r'["{}\[\]]')
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_HEX = frozenset("0123456789abcdefABCDEF")


class JsonTracker:
    """Follows JSON text piece by piece: strings, escapes, bracket depth, the top-level close.

    ``inside``: the text so far ends inside a string literal. ``escape``: it
    ends right after a backslash inside one. ``depth``: brackets opened minus
    brackets closed outside strings. ``closed``: the top-level value has
    closed (a ``}`` or ``]`` outside strings brought the depth back to 0, or
    below it for stray closers). ``strict``: string contents are validated
    (see :meth:`string_run`).

    A parser that streams raw arguments sends the text before that closing
    bracket and holds the rest until the call is confirmed, so the streamed
    text of a call that is then abandoned is never a complete JSON object
    (the object's own last ``}`` is the first place its depth returns to 0).
    """

    __slots__ = ("inside", "escape", "depth", "closed", "strict", "_hex_left", "_stop")

    def __init__(self, strict: bool = False) -> None:
        self.inside = False
        self.escape = False
        self.depth = 0
        self.closed = False
        self.strict = strict
        self._hex_left = 0  # hex digits still due in a \uXXXX escape (strict)
        self._stop = _STRICT_STOP if strict else _RAW_STOP

    def feed(self, text: str) -> int:
        """Read ``text`` without validating it; return the index in it of the bracket that closes the top-level value, else -1.

        Only the first close counts (-1 once :attr:`closed` is set). Never
        raises; any text may be fed.
        """
        at = -1
        i, n = 0, len(text)
        while i < n:
            if self.inside:
                i = self.string_run(text, i)[0]  # not strict: STRING_END or STRING_OPEN only
                continue
            hit = _OUTSIDE.search(text, i)
            if hit is None:
                break
            c = hit.group()
            i = hit.end()
            if c == '"':
                self.inside = True
            elif self.bracket(c):
                at = i - 1
        return at

    def bracket(self, c: str) -> bool:
        """Count a bracket (``{[`` or ``}]``) met outside strings; true when it closes the top-level value (once)."""
        if c == "{" or c == "[":
            self.depth += 1
            return False
        self.depth -= 1
        if self.depth <= 0 and not self.closed:
            self.closed = True
            return True
        return False

    def string_run(self, text: str, i: int) -> tuple[int, int]:
        """Follow the inside of a string from ``text[i]`` (:attr:`inside` must be true).

        Returns ``(j, event)``: :data:`STRING_END` with ``j`` just after the
        closing quote (``inside`` is then false); :data:`STRING_OPEN` with
        ``j == len(text)`` when the text ends inside the string (an escape may
        be pending). Strict trackers stop at :data:`CONTROL` (a raw control
        character at ``j``; call again from ``j + 1`` to accept it) and at
        :data:`BAD_ESCAPE` (``text[j]`` cannot continue the escape; the
        tracker must not be fed again). A non-strict tracker takes any
        character after a backslash and any control character as text.
        """
        n = len(text)
        stop = self._stop
        while i < n:
            if self._hex_left:
                if text[i] not in _HEX:
                    return i, BAD_ESCAPE
                self._hex_left -= 1
                i += 1
                continue
            if self.escape:  # the character after a backslash
                self.escape = False
                if self.strict:
                    c = text[i]
                    if c == "u":
                        self._hex_left = 4
                    elif c not in _SIMPLE_ESCAPES:
                        self.escape = True
                        return i, BAD_ESCAPE
                i += 1
                continue
            hit = stop.search(text, i)
            if hit is None:
                return n, STRING_OPEN
            j = hit.start()
            c = text[j]
            if c == '"':
                self.inside = False
                return j + 1, STRING_END
            if c == "\\":
                self.escape = True
                i = j + 1
                continue
            return j, CONTROL
        return n, STRING_OPEN


# Modes of :class:`JsonValidator` between strings.
# (the two modes inside a scalar and the one after the value last: scan tells them from the rest by one comparison)
_V_VALUE, _V_OBJ_OPEN, _V_OBJ_KEY, _V_COLON, _V_ARR_OPEN, _V_AFTER, _V_NUMBER, _V_LITERAL, _V_DONE = range(9)
_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS = frozenset(" \t\n\r")
_NUM_CHARS = frozenset("0123456789eE.+-")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORDS = {"t": "true", "f": "false", "n": "null"}


#: :meth:`JsonValidator.scan` events: the text was read to its end / the top-level value ended just
#: before the returned index / the character at the returned index cannot continue the value /
#: a member hook asked to stop at the returned index / the top-level value had closed (in an earlier
#: scan, or a top-level number or literal in this one) and only whitespace followed, to the text's end.
_NEED, _CLOSED, _FAIL, _PAUSE, _AFTER_END = range(5)


class JsonValidator(JsonTracker):
    """The one strict JSON grammar: an incremental validator of one JSON value (RFC 8259; what ``json.loads`` accepts, minus ``NaN``/``Infinity``).

    Fed the text piece by piece, each character read once (linear, whatever
    the split), it keeps no text: its memory is the open-bracket stack and
    the digits of a number being read, so a call's arguments can be checked
    with flat memory as the call grows (instead of one ``json.loads`` over
    the kept text at the end). Leading and trailing JSON whitespace are
    allowed. Raw control characters inside strings, bad escapes, ``NaN``,
    ``Infinity``, single quotes, trailing commas and text after the value are
    errors. ``objects_only`` (the default) also makes any top-level value
    but an object an error.

    Attributes: ``first`` (the value's first character, ``""`` while only
    whitespace was read), ``failed`` (the text cannot be valid JSON whatever
    follows; nothing more is read), ``error_at`` (the index, in the piece
    whose reading failed, of the first character that cannot continue the
    value), ``closed`` (the top-level value has ended). Never raises.

    Members hook: a subclass that sets ``_hooked`` is told of the members of
    the top-level object (depth 1) as they are read, through ``_key_start``,
    ``_string_end``, ``_member_start``, ``_member_closed`` and ``_control``
    (see :class:`JsonCallLexer`, the Hermes call object); plain validation
    never calls them.
    """

    __slots__ = ("_stack", "_mode", "_in_key", "_word", "_word_pos", "_number", "first", "failed", "error_at",
                 "objects_only", "hooked")

    #: Members hook on (a subclass sets it; see the class docstring).
    _hooked = False

    def __init__(self, objects_only: bool = True) -> None:
        JsonTracker.__init__(self, True)
        # the class's flag, kept per instance: scan reads it a piece, and CPython 3.11 specialises a slot's
        # read, not a class attribute's through an instance
        self.hooked = self._hooked
        self._stack: list[str] = []
        self._mode = _V_VALUE
        self._in_key = False
        self._word = ""
        self._word_pos = 0
        self._number: list[str] = []
        self.first = ""
        self.failed = False
        self.error_at = -1
        self.objects_only = objects_only

    def complete(self) -> bool:
        """True when the text fed so far is exactly one valid JSON value (plus whitespace)."""
        if self.failed:
            return False
        if self._mode == _V_NUMBER and not self._stack:  # a top-level number ends with the text
            return _NUMBER.fullmatch("".join(self._number)) is not None
        return self.closed

    def _value_end(self) -> None:
        """A value (scalar or container) ended; at the top level the whole value has."""
        if self._stack:
            self._mode = _V_AFTER
        else:
            self._mode = _V_DONE
            self.closed = True

    def feed(self, text: str) -> int:
        """Read ``text``; return the index in it of the character that ends the top-level value, else -1.

        That character is the closing bracket of a top-level object or array,
        or the closing quote of a top-level string (a top-level number or
        literal is reported by :meth:`complete` only). On an error, sets
        ``failed`` and ``error_at`` and reads no further (the return value
        still reports an end met before the error). Once ``failed``, a feed
        reads nothing and returns -1.
        """
        if self.failed:
            return -1
        j, event = self.scan(text, 0)
        if event == _NEED:
            return -1
        return self._scanned(text, j, event)

    def _scanned(self, text: str, j: int, event: int) -> int:
        """The rest of :meth:`feed` after its first scan of ``text`` stopped at ``j`` with ``event`` (not ``_NEED``)."""
        at = -1
        if event == _CLOSED:
            at = j - 1
            j, event = self.scan(text, j)  # only whitespace may follow
        if event == _FAIL:
            self.failed = True
            self.error_at = j
        return at

    def scan(self, text: str, i: int) -> tuple[int, int]:
        """Read ``text`` from ``i``: ``(j, event)``, an event above at index ``j``; a reader feeds nothing more
        once ``j < len(text)``. Strings, and between them json.dumps' ``": "``, ``, "``, ``{"`` read in one step
        with the quote (character tests: a pattern call costs more on 4-character pieces); scalars, values'
        starts and keys: :meth:`_scalar`, :meth:`_value`, :meth:`_key`. The members hook's places (depth 1 of
        a hooked reader) take the step-by-step path."""
        hooked = self.hooked
        if self.inside and not (hooked or self.escape or self._hex_left) and '"' not in text and "\\" not in text \
                and text.isprintable():
            return len(text), _NEED  # (the common piece, inside a string: no stop in it, three tests)
        n, stack = len(text), self._stack
        while i < n:
            if self.inside:
                if self.escape or self._hex_left:
                    j, event = self.string_run(text, i)
                else:  # string_run's step with no escape pending (tests/parsers/test_jsonscan.py: json.loads at every split)
                    hit = _STRICT_STOP.search(text, i)
                    if hit is None:
                        return n, _NEED
                    j = hit.start()
                    c = text[j]
                    if c == "\\":
                        self.escape = True
                        i = j + 1
                        continue
                    if c == '"':
                        self.inside = False
                        j += 1
                    event = STRING_END if c == '"' else CONTROL
                if event != STRING_END:  # (the common event first: one test)
                    if event == CONTROL and hooked and self._control(text, j):
                        i = j + 1
                        continue
                    return (n, _NEED) if event == STRING_OPEN else (j, _FAIL)  # (or a control, a bad escape)
                i = j
                if hooked and len(stack) == 1 and not self._string_end(text, i, self._in_key):
                    return i - 1, _FAIL
                if self._in_key or stack:  # (the common case of _value_end)
                    self._mode = _V_COLON if self._in_key else _V_AFTER
                    continue
                self._value_end()
                return i, _CLOSED
            mode = self._mode
            if mode > _V_AFTER:  # inside a number or a literal word, or after the value
                i, event = self._scalar(text, i, mode)
            else:
                c = text[i]
                if c in _WS_CHARS:  # (one space: no pattern run)
                    i = i + 1 if c == " " and i + 1 < n and text[i + 1] not in _WS_CHARS else _WS.match(text, i).end()
                    if i >= n:
                        break
                    c = text[i]
                if mode == _V_AFTER or mode == _V_COLON:
                    if c == ("," if mode == _V_AFTER else ":"):  # a separator, json.dumps' space, the next quote
                        i += 1
                        if mode == _V_AFTER and stack[-1] == "[":
                            self._mode = _V_VALUE
                            continue
                        if i < n and text[i] == " ":
                            i += 1
                        if i < n and text[i] == '"' and not (hooked and len(stack) == 1):
                            self.inside = True  # ', "' / ': "': the next key's / a string value's quote
                            self._in_key = mode == _V_AFTER
                            i += 1
                        else:
                            self._mode = _V_OBJ_KEY if mode == _V_AFTER else _V_VALUE
                        continue
                    if mode == _V_AFTER and (c == "}") == (stack[-1] == "{") and (c == "}" or c == "]"):
                        i, event = self._close(text, i)
                    else:
                        return i, _FAIL
                elif mode == _V_OBJ_OPEN or mode == _V_OBJ_KEY:
                    i, event = self._key(text, i, c, mode)
                else:
                    i, event = self._value(text, i, c, mode)
            if event != _NEED:
                return i, event
        return i, _NEED

    def _scalar(self, text: str, i: int, mode: int) -> tuple[int, int]:
        """:meth:`scan`'s step in a number or a literal word (``true``, ``false``, ``null``), or after the value."""
        if mode == _V_NUMBER:
            return self._number_run(text, i)
        n = len(text)
        if mode == _V_DONE:  # only whitespace may follow the value
            i = _WS.match(text, i).end()
            return (i, _FAIL) if i < n else (n, _AFTER_END)
        word, k = self._word, self._word_pos
        while i < n and k < len(word):
            if text[i] != word[k]:
                return i, _FAIL
            i += 1
            k += 1
        self._word_pos = k
        if k == len(word):
            self._value_end()
        return i, _NEED

    def _number_run(self, text: str, i: int) -> tuple[int, int]:
        """A number's characters from ``text[i]`` (its digits so far in ``_number``); checked whole where it ends."""
        n = len(text)
        end = i
        while end < n and text[end] in _NUM_CHARS:  # (numbers are short: no pattern run)
            end += 1
        self._number.append(text[i:end])
        if end >= n:  # the number may go on in the next piece
            return n, _NEED
        number = "".join(self._number)
        self._number = []
        if not (number.isdigit() and (number[0] != "0" or len(number) == 1)) and _NUMBER.fullmatch(number) is None:
            return end, _FAIL
        if self._stack:  # (the common case of _value_end)
            self._mode = _V_AFTER
        else:
            self._value_end()
        return end, _NEED

    def _value(self, text: str, i: int, c: str, mode: int) -> tuple[int, int]:
        """:meth:`scan`'s step where a value (or, in an open array, its ``]``) starts at ``text[i]`` (``c``)."""
        if mode == _V_ARR_OPEN and c == "]":
            return self._close(text, i)
        if not self.first:
            self.first = c
            if self.objects_only and c != "{":
                return i, _FAIL
        stack = self._stack
        pause = False
        if self.hooked and len(stack) == 1 and stack[0] == "{":
            pause = self._member_start(text, i, c)
            if pause is None:
                return i, _FAIL
        if c == '"':
            self.inside = True
            self._in_key = False
            return i + 1, _NEED
        if c == "{" or c == "[":
            stack.append(c)
            self.depth += 1  # (bracket(c) for an opening bracket)
            i += 1
            if c == "[":
                self._mode = _V_ARR_OPEN
            elif i < len(text) and text[i] == '"' and not (pause or self.hooked and len(stack) == 1):
                self.inside = True  # {" : the first key's quote, read with the bracket
                self._in_key = True
                i += 1
            else:
                self._mode = _V_OBJ_OPEN
            return i, (_PAUSE if pause else _NEED)
        if c == "-" or "0" <= c <= "9":
            self._mode = _V_NUMBER
            return self._number_run(text, i)
        if c in _WORDS:
            self._mode = _V_LITERAL
            self._word = _WORDS[c]
            self._word_pos = 0
            return i, _NEED
        return i, _FAIL

    def _key(self, text: str, i: int, c: str, mode: int) -> tuple[int, int]:
        """:meth:`scan`'s step where a key's quote (or, in an open object, its ``}``) is due at ``text[i]`` (``c``)."""
        if c == '"':
            self.inside = True
            self._in_key = True
            if self.hooked and len(self._stack) == 1:
                self._key_start(i)
            return i + 1, _NEED
        if c == "}" and mode == _V_OBJ_OPEN:
            return self._close(text, i)
        return i, _FAIL

    def _close(self, text: str, i: int) -> tuple[int, int]:
        """The container open at the top of the stack closes at ``text[i]``: ``(i + 1, event)``."""
        stack = self._stack
        stack.pop()
        self.depth -= 1  # (depth is the stack's)
        if not stack:
            self._value_end()
            return i + 1, _CLOSED
        self._mode = _V_AFTER  # (the common case of _value_end)
        if self.hooked and len(stack) == 1 and self._member_closed(text, i + 1):
            return i + 1, _PAUSE
        return i + 1, _NEED

    # ---- the members hook (called only when ``_hooked``)
    def _key_start(self, i: int) -> None:
        """A key of the top-level object opens at ``text[i]`` (its quote)."""

    def _string_end(self, text: str, i: int, key: bool) -> bool:
        """A string member (``key``: a key) of the top-level object ended just before ``i``; false: an error."""
        return True

    def _member_start(self, text: str, i: int, c: str) -> bool | None:
        """A member value starts at ``text[i]`` (``c``): ``None`` is an error, true stops reading after its ``{``."""
        return False

    def _member_closed(self, text: str, i: int) -> bool:
        """A container member value closed just before ``i``; true stops reading there."""
        return False

    def _control(self, text: str, j: int) -> bool:
        """A raw control character at ``text[j]`` in a string: true accepts it (strict JSON does not)."""
        return False


class JsonCallLexer(JsonValidator):
    """A thin layer on :class:`JsonValidator`: one Hermes call object ``{"name": ..., "arguments": {...}}``.

    Fed the text after the opener piece by piece (each character once), it
    records, through the grammar's members hook, the decoded ``name`` (when a
    string) and captures the raw text of the arguments value (which must be
    an object), re-escaping raw control characters inside strings (which
    the Hermes formats accept). ``argument_keys``: the keys whose value is
    the arguments object (one of them per object; Hermes: ``arguments``,
    Llama 3: ``parameters`` or ``arguments``); ``name_keys``: the keys whose
    string value is the name (one of them per object; ``name``, Cohere
    Command: ``tool_name`` or ``name``); a repeated name or arguments key is
    an error. ``name``: the call's name when the markup around the object
    gave it already (Inkling's message header): the arguments stream wherever
    they stand in the object, and a name member that differs from it is an
    error.

    Attributes read by the parser: ``name`` (``str`` or ``None``),
    ``arguments_done`` (the arguments object was read to its ``}``),
    ``stream_arguments`` (the arguments started after the name was known, so
    they may stream), ``arguments`` (a list of argument text pieces not yet
    taken; see :meth:`take_arguments`), ``in_arguments`` (inside the arguments
    value, after its ``{`` and before its ``}``), ``in_argument_text`` (the last
    :meth:`feed` ended inside a string of the arguments, no escape pending:
    a next piece with no quote, backslash or control character is argument
    text as it is, and leaves the lexer as it was: a reader may send it
    without a feed).
    """

    __slots__ = ("_key_text", "_capture", "_sink", "_capture_parts", "_cap_start", "_pause", "_seen_name",
                 "_seen_arguments", "name", "arguments", "arguments_done", "stream_arguments", "in_argument_text",
                 "_argument_keys", "_expected_name", "_name_keys", "in_arguments")

    _hooked = True

    def __init__(self, argument_keys: tuple[str, ...] = ("arguments",), name: str | None = None,
                 name_keys: tuple[str, ...] = ("name",)) -> None:
        super().__init__()
        self._argument_keys = argument_keys
        self._expected_name = name
        self._name_keys = name_keys
        self._key_text: str | None = None
        #: None, "key", "name" or "arguments": what the current text is captured into (the list ``_sink``).
        self._capture: str | None = None
        self._capture_parts: list[str] = []
        self._sink: list[str] = self._capture_parts
        self._cap_start = 0
        self._pause = False
        self._seen_name = False
        self._seen_arguments = False
        self.name: str | None = name
        self.arguments: list[str] = []
        self.arguments_done = False
        self.stream_arguments = False
        self.in_argument_text = False
        #: True while the lexer is inside the ``arguments`` value (after its ``{``, before its ``}``): a field,
        #: not a property, read a delta by ``JsonCallReader._read_object`` (set where the capture becomes or
        #: stops being "arguments").
        self.in_arguments = False

    @property
    def holds_call_member(self) -> bool:
        """Whether the object read so far has a ``name`` or an arguments member."""
        return self._seen_name or self._seen_arguments

    def take_arguments(self) -> str:
        """The argument text captured since the last call (JSON text, possibly ``""``)."""
        text = "".join(self.arguments)
        self.arguments.clear()
        return text

    def feed(self, chunk: str, pause: bool = False) -> tuple[int, str]:  # type: ignore[override]
        """Lex ``chunk`` (the next characters); return ``(used, status)``.

        ``status`` is :data:`DONE` when the top-level object ended (``used``
        characters, up to and including its ``}``, were read), :data:`ERROR`
        when ``chunk[used]`` cannot continue valid JSON of the expected shape
        (nothing from there on is read), :data:`NEED_MORE` when all of
        ``chunk`` was read and the object is still open. With ``pause`` the
        lexer also stops (:data:`NEED_MORE`, ``used < len(chunk)`` possible)
        right after the ``{`` that opens the arguments value and right after
        the ``}`` that closes it, so that a caller can count the text outside
        that value (feed it the rest next). Never raises on any input; after
        ``DONE`` or ``ERROR`` the lexer must not be fed again.
        """
        self._pause = pause
        self._cap_start = 0
        j, event = self.scan(chunk, 0)
        if event == _NEED:  # the piece was read to its end: its captured text is kept
            capture = self._capture
            if capture is not None:
                if j > self._cap_start:
                    self._sink.append(chunk[self._cap_start:j])
                self._cap_start = j
            self.in_argument_text = self.inside and capture == "arguments" and not (self.escape or self._hex_left)
            return j, NEED_MORE
        self.in_argument_text = False
        if event == _CLOSED:
            return j, DONE
        if event == _FAIL:
            self.failed = True
            self.error_at = j
            return j, ERROR
        return j, NEED_MORE

    # ---- the members hook
    def _key_start(self, i: int) -> None:
        self._capture = "key"
        self._sink = self._capture_parts = []
        self._cap_start = i

    def _string_end(self, text: str, i: int, key: bool) -> bool:
        capture = self._capture
        if capture != "key" and capture != "name":
            return True
        if i > self._cap_start:
            self._sink.append(text[self._cap_start:i])
        self._capture = None
        raw = "".join(self._capture_parts)  # a string the grammar validated, quotes included
        value = raw[1:-1] if "\\" not in raw else json.loads(raw)  # (no escape: its text is its value)
        if key:
            self._key_text = value
            return True
        if not is_call_name(value) or (self._expected_name is not None and value != self._expected_name):
            return False
        self.name = value
        return True

    def _member_start(self, text: str, i: int, c: str) -> bool | None:
        key = self._key_text
        if key in self._name_keys:
            if self._seen_name or c != '"':
                return None
            self._seen_name = True
            self._capture = "name"
            self._sink = self._capture_parts = []
            self._cap_start = i
        elif key in self._argument_keys:
            if self._seen_arguments or c != "{":
                return None
            self._seen_arguments = True
            self.stream_arguments = self.name is not None
            self._capture = "arguments"
            self.in_arguments = True
            self._sink = self.arguments
            self._cap_start = i
            if self._pause:  # the arguments' "{": stop right after it
                self.arguments.append("{")
                self._cap_start = i + 1
                return True
        return False

    def _member_closed(self, text: str, i: int) -> bool:
        if self._capture != "arguments":
            return False
        if i > self._cap_start:
            self._sink.append(text[self._cap_start:i])
        self._capture = None
        self.in_arguments = False
        self.arguments_done = True
        return self._pause

    def _control(self, text: str, j: int) -> bool:
        if self._capture is not None:  # accepted, kept escaped
            if j > self._cap_start:
                self._sink.append(text[self._cap_start:j])
            self._sink.append(_CONTROL_ESCAPES[text[j]])
            self._cap_start = j + 1
        return True

    def at_arguments(self, name: str, key: str) -> None:
        """Be as after reading ``{"name": NAME, KEY: {`` with ``pause`` (the arguments' ``{`` taken): the
        head :meth:`JsonCallReader._read_object` matched whole (a ``name`` with no escape)."""
        self._stack[:] = ["{", "{"]
        self.depth = 2
        self._mode = _V_OBJ_OPEN
        self._in_key = True
        self.first = "{"
        self._key_text = key
        self._capture = "arguments"
        self.in_arguments = True
        self._sink = self.arguments
        self._seen_name = self._seen_arguments = True
        self.name = name
        self.stream_arguments = True


#: :meth:`JsonCallLexer.feed` results.
NEED_MORE, DONE, ERROR = "need-more", "done", "error"
#: A surrogate code point: in decoded JSON only from an escape (``"\\ud800"``); pyliteral, schema and llama use it too.
SURROGATE = re.compile("[\ud800-\udfff]")


def is_call_name(value: object) -> bool:
    """Whether a JSON call object's ``name`` value names a call: :func:`callscale.parsers.schema.is_framed_name`.

    A string, not only whitespace, with no control character and no lone surrogate: ``json.loads``
    accepts a lone surrogate escape (``"\\ud800"``), a name no server can encode as UTF-8, and control
    characters (``"get\\nweather"``), a name no client dispatches (docs/formats.md, "Tool names"). The
    JSON call readers (qwen3, llama3_json) and Mistral's array form use it.
    """
    return type(value) is str and _FRAMED_CHARS.fullmatch(value) is not None and not value.isspace()


#: The characters no tool name may hold in any format (docs/formats.md, "Tool names"): control characters
#: (no client dispatches such a name) and lone surrogates (no server can encode them as UTF-8). Written here,
#: the lowest layer, for :func:`is_call_name`; :mod:`callscale.parsers.schema` builds its name rules on it.
NOT_FRAMED_NAME_CHARS = r"\x00-\x1f\x7f\ud800-\udfff"
_FRAMED_CHARS = re.compile(f"[^{NOT_FRAMED_NAME_CHARS}]+")
_CONTROL_ESCAPES = {chr(k): json.dumps(chr(k))[1:-1] for k in range(32)}


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> float:
    """``float(text)``; ``ValueError`` when it is not finite (``1e999`` overflows to ``inf``)."""
    value = float(text)
    if value - value != 0:  # inf (1e999 overflows) or nan
        raise ValueError(f"{text} is not a finite number")
    return value


#: Deepest nesting of arrays and objects :func:`strict_loads` reads: deeper is no JSON here, on every Python
#: (``json`` itself reads about 990 levels on CPython 3.10 and 3.11, less from a deep call stack, and about
#: 10,000 on 3.13).
MAX_JSON_DEPTH = 512

#: A JSON string, or one bracket outside strings (what :func:`_nesting` reads).
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _nesting(text: str) -> int:
    """The deepest nesting of brackets outside strings in ``text`` (linear)."""
    depth = deepest = 0
    for m in _STRING_OR_BRACKET.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif c in "]}":
            depth -= 1
    return deepest


def strict_loads(text: str, finite: bool = False):
    """``json.loads`` of strict JSON (RFC 8259): ``NaN``, ``Infinity``, ``-Infinity`` raise ``ValueError``.

    ``finite``: a number that overflows a float (``1e999``) raises too.
    Raises ``ValueError`` (``json.JSONDecodeError``) for text that is not
    JSON and ``RecursionError`` for nesting deeper than :data:`MAX_JSON_DEPTH`
    (the same on every Python). The one strict decoder of the project
    (parsers, schema typing, ``callscale check``).
    """
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _nesting(text) > MAX_JSON_DEPTH:
        raise RecursionError(f"JSON nested deeper than {MAX_JSON_DEPTH}")
    if finite:
        return json.loads(text, parse_constant=_reject_constant, parse_float=finite_float)
    return json.loads(text, parse_constant=_reject_constant)


def json_object(text: str) -> dict | None:
    """``text`` decoded as one JSON object, or ``None`` (not JSON, not an object, ``NaN``/``Infinity``, too deep)."""
    try:
        value = strict_loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class RawArguments(JsonValidator):
    """The raw JSON arguments of one call, validated and streamed as they arrive; no argument text is kept.

    The one streamer of raw JSON arguments (DeepSeek V3/V3.1, Kimi K2,
    Mistral, gpt-oss): a :class:`JsonValidator` (``first``, ``inside``,
    ``closed``, ``failed`` are its attributes) that also holds the bracket
    closing the top-level value. Memory is the validator's (the open-bracket
    stack, the digits of one number), flat as a call grows. :meth:`feed`
    returns the part of a piece that may be sent now: text up to (not
    including) the bracket that closes the top-level value. That bracket is
    held until :meth:`close` confirms the call, so the streamed text of a
    call that is then abandoned never forms a complete JSON value. JSON
    whitespace after the value is read and dropped (it is not part of the
    arguments).

    The per-piece path of a format is :meth:`scan` then, for an event other
    than 0, :meth:`scanned` (together :meth:`feed`, one Python call fewer
    for the common piece).

    ``objects_only``: the value must be an object (the default); Kimi K2
    also reads a JSON string holding an object.
    """

    __slots__ = ("_held", "_ended")

    def __init__(self, objects_only: bool = True) -> None:
        JsonValidator.__init__(self, objects_only)
        self._held = ""  # the character that closed the top-level value
        self._ended = False  # reading stopped at that character (stop_at_close): what follows is not ours

    def feed(self, text: str, stop_at_close: bool = False) -> tuple[str, int]:
        """Read a piece (characters): ``(text to send now, characters used)``.

        ``used < len(text)`` when the text stops being the arguments at
        ``text[used]``: a character that cannot continue the JSON value
        (:meth:`broken`), or, after the value closed, one that is not JSON
        whitespace (the call's text goes on past its arguments). The caller
        reads ``text[used:]`` as what follows. With ``stop_at_close`` (formats
        whose call ends at that bracket) reading stops right after the
        bracket. Once the text stopped, nothing more is read.
        """
        if self.failed or not text or (stop_at_close and self.closed):
            return "", 0
        j, event = self.scan(text, 0)
        if event == _NEED:
            return text, len(text)
        return self.scanned(text, j, event, stop_at_close)

    def scanned(self, text: str, j: int, event: int, stop_at_close: bool = False) -> tuple[str, int]:
        """:meth:`feed`'s result after ``scan(text, 0)`` stopped at ``j`` with ``event`` (not ``_NEED``)."""
        if self._held and event != _CLOSED:  # the value's closing bracket (or quote) was read in an earlier piece
            if event == _FAIL:
                self.failed = True
                self.error_at = j
                return "", j
            return "", len(text)
        at = self._scanned(text, j, event)
        if at >= 0:
            self._held = text[at]
            self._ended = stop_at_close
            if stop_at_close or not self.failed:
                return text[:at], (at + 1 if stop_at_close else len(text))
            return text[:at], self.error_at
        if self.failed:
            return text[:self.error_at], self.error_at
        return text, len(text)

    def broken(self) -> bool:
        """The text stopped being JSON before the top-level value closed."""
        return self.failed and not self.closed

    def rest_tracker(self) -> JsonTracker:
        """A plain tracker at the string and depth state where the text broke, to find the broken object's end."""
        rest = JsonTracker()
        rest.inside, rest.escape, rest.depth = self.inside, self.escape, self.depth
        return rest

    def close(self, cut: bool = False) -> str | None:
        """The arguments ended: the held text to send when they are one complete value, else ``None`` (abandon).

        No arguments at all (or only whitespace) give ``"{}"`` unless the
        output was ``cut`` off there (then ``None``).
        """
        if not self.first and not self.failed:
            return None if cut else "{}"
        return self._held if self.closed and (self._ended or self.complete()) else None


_PEEK_MIN, _PEEK_MAX = 256, 1 << 16
_BLANKS = re.compile(r"[ \t\n\r]*")
#: Unread characters of a call object's head that :meth:`JsonCallReader._read_object` waits for as a whole
#: (see :func:`_head_pattern`) before it reads them token by token instead.
_HEAD_WAIT = 256


#: The characters of a string member of the head matched whole (no escape, control character or surrogate).
_NAME_CHARS = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff]+')
_JSON_WS = r"[ \t\n\r]*"


def _head_pattern(head_keys: tuple[str, ...], keys: tuple[str, ...]) -> "re.Pattern[str]":
    """The common head of a call object, ``{"K1": "V1", ..., KEY: {`` (the ``head_keys`` in order, each a
    string of :data:`_NAME_CHARS`; JSON whitespace between tokens; a KEY of ``keys``): group ``i + 1`` the
    value of ``head_keys[i]``, the last group the key."""
    ws = _JSON_WS
    members = "".join(r'%s"%s"%s:%s"(%s)"%s,' % (ws, re.escape(k), ws, ws, _NAME_CHARS.pattern, ws)
                      for k in head_keys)
    return re.compile(r'\{%s%s"(%s)"%s:%s\{' % (members, ws, "|".join(map(re.escape, keys)), ws, ws))


def _proper_prefixes(words: tuple[str, ...]) -> str:
    """A pattern that matches a proper prefix of one of ``words``, the empty text included (the longest
    first: measured faster on the heads streams wait at than a trie's nesting or the empty text first)."""
    prefixes = sorted({w[:k] for w in words for k in range(len(w))}, key=len, reverse=True)
    return "(?:%s)" % "|".join(map(re.escape, prefixes))


def _head_wait_pattern(head_keys: tuple[str, ...], keys: tuple[str, ...]) -> "re.Pattern[str]":
    """What a common head still arriving fullmatches (it then waits for the rest, nothing read): a proper
    prefix of ``{"K1": "V1", ..., "KEY": {`` in the encoders' spellings, ``json.dumps``' and compact (as
    Inkling's engines write it; the two may mix), each string value at least one character of
    :data:`_NAME_CHARS` before its quote. Any other spelling is read by the lexer at once.
    ``tests/parsers/test_jsonscan.py`` holds the reader's wait to this rule written plainly."""
    parts: list[tuple[str, ...] | None] = []  # a literal's spellings, or None: a string member's characters
    for n, key in enumerate(head_keys):
        lead = ("{", "{") if n == 0 else ('", ', '",')
        parts += [(lead[0] + '"%s": "' % key, lead[1] + '"%s":"' % key), None]
    parts.append(tuple('", "%s": {' % key for key in keys) + tuple('","%s":{' % key for key in keys))

    def prefix(at: int) -> str:
        part = parts[at]
        if part is None:
            whole, proper = _NAME_CHARS.pattern, "(?:%s)?" % _NAME_CHARS.pattern
        else:
            whole, proper = "(?:%s)" % "|".join(map(re.escape, part)), _proper_prefixes(part)
        if at == len(parts) - 1:
            return proper
        return "(?:%s%s|%s)" % (whole, prefix(at + 1), proper)

    return re.compile(prefix(0))


class _Heads(dict):
    """``{(head keys, argument keys): (head pattern, wait pattern)}``, made on first use (once a spelling)."""

    def __missing__(self, spec: tuple[tuple[str, ...], tuple[str, ...]]) -> tuple:
        value = self[spec] = (_head_pattern(*spec), _head_wait_pattern(*spec))
        return value


_HEADS = _Heads()


#: The transitions of :class:`JsonCallReader`'s states, as h11 writes its rules: {state: {what it reads: next
#: state}} ("format" is the state the format's ``_not_a_call`` / ``_drop_call`` / ``_object_done`` sets; a format's
#: table merges this one, as MiniMax's does ``BLOCK_TRANSITIONS``).
JSON_CALL_TRANSITIONS = {
    "json_open": {"blanks {": "json_head", "anything else, past the head's bound (no call)": "format"},
    "json_head": {'{"name": "NAME", KEY: { (the call starts)': "json_args", "a prefix of it": "json_head",
                  "any other object": "json"},
    "json": {"the head, up to the arguments' { after the name": "json_args",
             "the object, closed (a call or none)": "format", "a JSON error, past the head's bound": "format"},
    "json_args": {"the arguments (streamed)": "json_args", "the object's }, a JSON error, the end": "format"},
}



def json_call_transitions(ends: dict[str, str]) -> dict[str, dict[str, str]]:
    """:data:`JSON_CALL_TRANSITIONS` with the format's states in place of ``"format"``.

    ``ends``: {what the format's hook decides (``_object_done``, ``_not_a_call``,
    ``_drop_call``): the state it sets}; each ``"format"`` target becomes one
    entry per end, read ``"<what the reader read>: <what the hook decided>"``.
    Returns a new {state: {what it reads: next state}} table to merge into the
    format's own (qwen3, llama3_json).
    """
    table: dict[str, dict[str, str]] = {}
    for state, row in JSON_CALL_TRANSITIONS.items():
        table[state] = {}
        for reads, nxt in row.items():
            if nxt != "format":
                table[state][reads] = nxt
                continue
            for what, end in ends.items():
                table[state][f"{reads}: {what}"] = end
    return table


class JsonCallReader:
    """Mixin for a :class:`callscale.parsers.base.ToolParser` whose call is one JSON object ``{"name": ..., ARGS_KEY: {...}}``.

    The reading both Hermes (``qwen3``) and Llama 3 JSON (``llama3_json``)
    do, on :class:`JsonCallLexer`: the call starts (name sent) at the ``{``
    of the arguments when the name came first, and the arguments' raw JSON
    text then streams as it arrives; else the call starts when the object
    ends. The arguments' final ``}`` is held (sent by :meth:`_object_done`'s
    caller when the call is confirmed). Text outside the arguments value
    before the call starts is a head of at most ``max_head`` characters.
    A head ``{"name": "NAME", KEY: {`` (no escape in NAME) is matched whole by
    one pattern, and its encoders' spellings (json.dumps', compact) are waited for while the unread
    text is a prefix of one (up to ``_HEAD_WAIT`` characters, nothing read);
    any other head is read token by token: the same answers, whatever the split.

    The parser sets ``argument_keys``, ``_name_only_is_a_call`` (an object
    with a name and no arguments key is a call with ``{}``) and
    ``_cut_head_is_content``, and ``max_head`` (characters: ``base.MAX_HEAD``), keeps the head's text in
    ``self._raw``, calls :meth:`_open_object` after the opener, runs :meth:`_read_object` in state ``"json"``
    (it may be that state's ``_s_json`` itself), and supplies ``_not_a_call(final=...)``, ``_drop_call()`` and
    ``_object_done()``, which set the format's next state. The mixin's own states: ``"json_open"``
    (:meth:`_s_json_open`, entered by :meth:`_open_object`: blanks and the ``{``), ``"json_head"``
    (:meth:`_s_json_head`: the common head), then
    ``"json"`` (the format's, :meth:`_read_object`: any other head), then ``"json_args"``
    (:meth:`_s_json_args`: the started call's arguments stream).
    """

    argument_keys: tuple[str, ...] = ("arguments",)
    #: The keys whose string value is the call's name.
    name_keys: tuple[str, ...] = ("name",)
    #: The common head's string members before the arguments key, in the encoders' order (one of them among
    #: ``name_keys``: the name): ``{"name": "NAME", KEY: {`` is matched whole (:meth:`_s_json_head`); Cohere
    #: Command writes ``{"tool_call_id": "0", "tool_name": "NAME", "parameters": {``.
    head_keys: tuple[str, ...] = ("name",)
    max_head: int
    #: The call's name given by the markup before the object (set before :meth:`_open_object`), else None.
    _known_name: str | None = None
    _name_only_is_a_call = False
    _cut_head_is_content = False
    _head_spec: tuple | None = None  # (head pattern, wait pattern, the name's group), made with the class

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        names = [n for n, key in enumerate(cls.head_keys) if key in cls.name_keys]
        # (the head's patterns compiled with the class, at import: not in a stream; no name among its
        # members, no fast path)
        cls._head_spec = (*_HEADS[cls.head_keys, cls.argument_keys], names[0] + 1) if names else None

    def _open_object(self, raw: str) -> None:
        """Start reading a call object; ``raw`` (the opener text) is content if it is none."""
        self._raw = [raw]
        self._lexer = None  # made at the object's "{" (an opener followed by no object costs no lexer)
        self._started = False
        self._peek = _PEEK_MIN
        self._obj_head = 0  # characters read before the call started, outside the arguments value
        self._state = "json_open"

    def _s_json_open(self, final: bool) -> bool:
        """State ``"json_open"``: blanks after the opener (within the head's bound), then the object's ``{``.

        Then, in state ``"json_head"``, the common head ``{"name": "NAME", KEY: {`` is matched whole, within
        the head's bound (the arguments' ``{`` is the value's, not the head's): the call starts (state
        ``"json_args"``), with no token-by-token reading. A proper prefix of that head in the encoders' spelling waits for the rest
        (nothing read; the lexer, which reads any spelling, would hold it too: no JSON error in it). Any
        other object is read by the lexer in state ``"json"`` (:meth:`_read_object`).
        """
        sc = self.scanner
        max_head = self.max_head
        after = sc.peek(1)  # ("" at the end of the text)
        if after in _WS_CHARS:  # ("" is not)
            blank, _ = sc.take_run(_BLANKS, max_head + 1 - self._obj_head)
            self._raw.append(blank)
            self._obj_head += len(blank)
            after = sc.peek(1)
        if not after and self._obj_head <= max_head:
            if not final:
                return False
            self._not_a_call(final=not self._cut_head_is_content)
            return True
        if self._obj_head > max_head or after != "{":
            go = self._not_a_call()
            return go is None or go  # (a format's _not_a_call may answer for the state: False, wait)
        self._state = "json_head"
        return True

    def _s_json_head(self, final: bool) -> bool:
        """State ``"json_head"``: at the object's ``{``, the common head matched whole, or waited for (see
        :meth:`_s_json_open`; the spelling: :attr:`head_keys`); else state ``"json"``."""
        sc = self.scanner
        head = self._head_spec  # (head pattern, wait pattern, the name's group) or None
        room = self.max_head + 1 - self._obj_head  # (characters the head may still hold, its last "{" not counted)
        text = sc.peek(room if room <= _HEAD_WAIT else _HEAD_WAIT + 1)  # (what the wait below reads)
        if head is not None and not final and len(text) <= _HEAD_WAIT and len(text) < room \
                and head[1].fullmatch(text) is not None:
            return False  # a proper prefix of the common head in the encoders' spellings: the rest waited for
        if len(text) > _HEAD_WAIT and room > len(text):  # (a longer head is matched whole too)
            text = sc.peek(room)
        known = self._known_name
        lexer = self._lexer = JsonCallLexer(self.argument_keys, known, self.name_keys)
        hit = head[0].match(text) if head is not None else None
        name = hit.group(head[2]) if hit is not None else None
        if name is None or (known is not None and name != known) or not is_call_name(name):
            # (a name the one rule rejects: the lexer's path decides)
            self._state = "json"
            return True
        sc.take(hit.end())
        lexer.at_arguments(name, hit.group(hit.lastindex))
        self._start_object_call()
        self._emit_arguments("{")
        return True

    def _read_object(self, final: bool) -> bool:
        """State ``"json"``: the object read by the lexer up to where its call starts (then state ``"json_args"``).

        Text outside the arguments value before the call starts is a head. False when it needs more text.

        Bounded, growing slices of the unread text (a call that ends early in a long buffer costs O(its
        length), not O(buffer)); at most ``max_head`` characters of head are read (the lexer pauses at the
        arguments' brackets, so the count does not depend on the split).
        """
        sc = self.scanner
        lexer = self._lexer
        max_head = self.max_head
        while True:
            size = self._peek
            head = not lexer.in_arguments
            if head:
                size = min(size, max_head + 1 - self._obj_head)
            chunk = sc.take(size)
            used, status = lexer.feed(chunk, pause=True)
            if used < len(chunk):
                sc.unread(len(chunk) - used)
            self._raw.append(chunk[:used])
            if head:  # (the arguments' "{", where the lexer paused, is the value's)
                self._obj_head += used - lexer.in_arguments
            if lexer.stream_arguments:  # (at the arguments' "{", a pause): they stream in state "json_args"
                self._start_object_call()
                self._send_arguments()
                return True
            if status == DONE:
                return self._head_done()
            if status == ERROR or self._obj_head > max_head:
                self._object_broken()
                return True
            if used == len(chunk) < size:  # (the buffer ended)
                if not final:
                    return False
                self._object_broken(cut=True)  # the output ended inside the object
                return True
            if self._peek < _PEEK_MAX:  # (both powers of two: min(2 * peek, _PEEK_MAX))
                self._peek *= 2

    def _head_done(self) -> bool:
        """The object closed before its call started: a call when it has a name and arguments (or the format
        takes a name alone), sent whole; else no call."""
        lexer = self._lexer
        if not self._started:
            if lexer.name is None or not (lexer.arguments_done or self._name_only_is_a_call):
                self._not_a_call()  # (the lexer, closed, tells a complete object)
                self._lexer = None
                return True
            self._start_object_call()
            if lexer.arguments_done:
                self._send_arguments()
            else:  # a name and no arguments key: a call with {}
                self._emit_arguments("{")
        self._lexer = None
        self._object_done()
        return True

    def _object_broken(self, cut: bool = False) -> None:
        """The object is no call's any more: a JSON error, a head too long, or (``cut``) the output ended in it."""
        if self._started:
            self._drop_call()  # (reads the lexer's state where the call broke)
        elif cut:
            self._not_a_call(final=not self._cut_head_is_content)
        else:
            self._not_a_call()
        self._lexer = None

    def _s_json_args(self, final: bool) -> bool:
        """State ``"json_args"``: the call started; its arguments' raw JSON text streams as it arrives.

        Bounded, growing slices of the unread text; a slice inside a string of the arguments with no quote,
        backslash or control character is sent as it is (``lexer.in_argument_text``: no lexer step, the
        per-delta path of a long value); any other goes through the lexer. The arguments' final ``}`` is held
        (sent by :meth:`_object_done`'s caller when the call is confirmed).
        """
        sc = self.scanner
        lexer = self._lexer
        while True:
            size = self._peek
            chunk = sc.take(size)
            if lexer.in_argument_text and ('"' not in chunk and "\\" not in chunk and chunk.isprintable()
                                           or _STRICT_STOP.search(chunk) is None):
                if chunk:
                    self._emit_arguments(chunk)
            else:
                used, status = lexer.feed(chunk)
                pieces = lexer.arguments
                if pieces:  # (_send_arguments: the per-delta step of short arguments, with no frame)
                    text = pieces[0] if len(pieces) == 1 else "".join(pieces)
                    pieces.clear()
                    if lexer.arguments_done and text.endswith("}"):
                        text = text[:-1]
                    self._emit_arguments(text)
                if status != NEED_MORE:
                    sc.unread(len(chunk) - used)
                    if status == DONE:
                        self._lexer = None
                        self._object_done()
                    else:
                        self._object_broken()
                    return True
            if len(chunk) < size:  # (the buffer ended)
                break
            if size < _PEEK_MAX:
                self._peek = size * 2
        if not final:
            return False
        self._object_broken(cut=True)  # the output ended inside the object
        return True

    def _start_object_call(self) -> None:
        self._begin_call(self._lexer.name)
        self._started = True
        self._raw = []
        self._state = "json_args"

    def _send_arguments(self) -> None:
        """Send the argument text the lexer captured, except the arguments' final ``}`` (sent when the call is confirmed)."""
        lexer = self._lexer
        text = lexer.take_arguments()
        if lexer.arguments_done and text.endswith("}"):
            text = text[:-1]  # the closing brace comes last in the piece that completes the object
        self._emit_arguments(text)

