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
# (the two modes inside a scalar and the one after the value last: _scan tells them from the rest by one comparison)
_V_VALUE, _V_OBJ_OPEN, _V_OBJ_KEY, _V_COLON, _V_ARR_OPEN, _V_AFTER, _V_NUMBER, _V_LITERAL, _V_DONE = range(9)
_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS = frozenset(" \t\n\r")
_NUM_CHARS = frozenset("0123456789eE.+-")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORDS = {"t": "true", "f": "false", "n": "null"}


#: :meth:`JsonValidator._scan` events: the text was read to its end / the top-level value ended just
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
    (see :class:`JsonCallLexer`, the Hermes call object), and its own reader
    calls ``_piece_end`` when a piece was read to its end (``_NEED``); plain
    validation never calls them.
    """

    __slots__ = ("_stack", "_mode", "_in_key", "_word", "_word_pos", "_number", "first", "failed", "error_at",
                 "objects_only", "hooked")

    #: Members hook on (a subclass sets it; see the class docstring).
    _hooked = False

    def __init__(self, objects_only: bool = True) -> None:
        # JsonTracker.__init__(self, strict=True), written out (one frame fewer a call)
        self.inside = False
        self.escape = False
        self.depth = 0
        self.closed = False
        self.strict = True
        self._hex_left = 0
        self._stop = _STRICT_STOP
        # the class's flag, kept per instance: _scan reads it a piece, and CPython 3.11 specialises a slot's
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
        j, event = self._scan(text, 0)
        if event == _NEED:
            return -1
        return self._scanned(text, j, event)

    def _scanned(self, text: str, j: int, event: int) -> int:
        """The rest of :meth:`feed` after its first scan of ``text`` stopped at ``j`` with ``event`` (not ``_NEED``)."""
        at = -1
        if event == _CLOSED:
            at = j - 1
            j, event = self._scan(text, j)  # only whitespace may follow
        if event == _FAIL:
            self.failed = True
            self.error_at = j
        return at

    def _scan(self, text: str, i: int) -> tuple[int, int]:
        """Read ``text`` from ``i``: ``(j, event)``, one of the ``_NEED``/``_CLOSED``/``_FAIL``/``_PAUSE``/``_AFTER_END`` events.

        Between strings the encoders' spellings (json.dumps: ``": "``, ``, "``, ``{"``) are read in one
        step with the string's quote, and a number that ends in the piece is checked whole; plain
        character tests, not pattern runs (a pattern call costs more than the steps it saves on
        4-character pieces). The members hook's places (depth 1 of a hooked reader) take the
        step-by-step path.
        """
        n = len(text)
        stack = self._stack
        hooked = self.hooked
        while i < n:
            if self.inside:
                if self.escape or self._hex_left:
                    j, event = self.string_run(text, i)
                else:  # string_run's common step, written out (this strict tracker's stop pattern)
                    if not hooked and '"' not in text and "\\" not in text and text.isprintable():
                        return n, _NEED  # (no stop in the piece: three tests, no pattern run; a hooked reader tested it)
                    hit = _STRICT_STOP.search(text, i)
                    if hit is None:
                        return n, _NEED
                    j = hit.start()
                    c = text[j]
                    if c == '"':
                        self.inside = False
                        j += 1
                        event = STRING_END
                    elif c == "\\":
                        self.escape = True
                        i = j + 1
                        continue
                    else:
                        event = CONTROL
                if event != STRING_END:  # (the common event first: one test)
                    if event == STRING_OPEN:
                        return n, _NEED
                    if event == CONTROL and hooked and self._control(text, j):
                        i = j + 1
                        continue
                    return j, _FAIL  # a control character, or a bad escape
                i = j
                if hooked and len(stack) == 1 and not self._string_end(text, i, self._in_key):
                    return i - 1, _FAIL
                if self._in_key:
                    self._mode = _V_COLON
                elif stack:  # _value_end, written out (its two cases)
                    self._mode = _V_AFTER
                else:
                    self._mode = _V_DONE
                    self.closed = True
                    return i, _CLOSED
                continue
            mode = self._mode
            if mode > _V_AFTER:  # inside a number or a literal word, or after the value
                if mode == _V_NUMBER:
                    end = i
                    while end < n and text[end] in _NUM_CHARS:  # (numbers are short: no pattern run)
                        end += 1
                    self._number.append(text[i:end])
                    if end >= n:
                        return n, _NEED
                    if _NUMBER.fullmatch("".join(self._number)) is None:
                        return end, _FAIL
                    self._number = []
                    if stack:  # _value_end, written out
                        self._mode = _V_AFTER
                    else:
                        self._mode = _V_DONE
                        self.closed = True
                    i = end
                    continue
                if mode == _V_DONE:  # only whitespace may follow the value
                    i = _WS.match(text, i).end()
                    if i < n:
                        return i, _FAIL
                    return n, _AFTER_END
                # a literal word (true, false, null)
                word, k = self._word, self._word_pos
                while i < n and k < len(word):
                    if text[i] != word[k]:
                        return i, _FAIL
                    i += 1
                    k += 1
                self._word_pos = k
                if k == len(word):
                    self._value_end()
                continue
            c = text[i]
            if c in _WS_CHARS:
                if c == " " and i + 1 < n and text[i + 1] not in _WS_CHARS:  # one space: no pattern run
                    i += 1
                else:
                    i = _WS.match(text, i).end()
                    if i >= n:
                        break
                c = text[i]
            if mode == _V_AFTER:
                if c == ",":
                    i += 1
                    if i < n and text[i] == " ":  # (json.dumps' one space, read with the comma)
                        i += 1
                    if stack[-1] == "[":
                        self._mode = _V_VALUE
                    elif i < n and text[i] == '"' and not (hooked and len(stack) == 1):
                        self.inside = True  # , " : the next key's quote, read with the comma (json.dumps' spelling)
                        self._in_key = True
                        i += 1
                    else:
                        self._mode = _V_OBJ_KEY
                elif (c == "}") == (stack[-1] == "{") and (c == "}" or c == "]"):
                    j, event = self._close(text, i)
                    if event != _NEED:
                        return j, event
                    i = j
                else:
                    return i, _FAIL
                continue
            if mode == _V_COLON:
                if c != ":":
                    return i, _FAIL
                i += 1
                if i < n and text[i] == " ":  # (json.dumps' one space, read with the colon)
                    i += 1
                if i < n and text[i] == '"' and not (hooked and len(stack) == 1):
                    self.inside = True  # : " : a string value's quote, read with the colon (json.dumps' spelling)
                    self._in_key = False
                    i += 1
                else:
                    self._mode = _V_VALUE
                continue
            if mode == _V_VALUE or mode == _V_ARR_OPEN:
                if mode == _V_ARR_OPEN and c == "]":
                    j, event = self._close(text, i)
                    if event != _NEED:
                        return j, event
                    i = j
                    continue
                if not self.first:
                    self.first = c
                    if self.objects_only and c != "{":
                        return i, _FAIL
                pause = False
                if hooked and len(stack) == 1 and stack[0] == "{":
                    pause = self._member_start(text, i, c)
                    if pause is None:
                        return i, _FAIL
                if c == '"':
                    self.inside = True
                    self._in_key = False
                    i += 1
                elif c == "{" or c == "[":
                    stack.append(c)
                    self.depth += 1  # (bracket(c) for an opening bracket)
                    i += 1
                    if c == "[":
                        self._mode = _V_ARR_OPEN
                    elif i < n and text[i] == '"' and not (pause or hooked and len(stack) == 1):
                        self.inside = True  # {" : the first key's quote, read with the bracket
                        self._in_key = True
                        i += 1
                    else:
                        self._mode = _V_OBJ_OPEN
                    if pause:
                        return i, _PAUSE
                elif c == "-" or "0" <= c <= "9":
                    end = i + 1
                    while end < n and text[end] in _NUM_CHARS:  # (numbers are short: no pattern run)
                        end += 1
                    if end >= n:  # the number may go on in the next piece
                        self._number = [text[i:]]
                        self._mode = _V_NUMBER
                        return n, _NEED
                    number = text[i:end]
                    if not (number.isdigit() and (c != "0" or end == i + 1)) and _NUMBER.fullmatch(number) is None:
                        return end, _FAIL
                    if stack:  # _value_end, written out
                        self._mode = _V_AFTER
                    else:
                        self._mode = _V_DONE
                        self.closed = True
                    i = end
                elif c in _WORDS:
                    self._mode = _V_LITERAL
                    self._word = _WORDS[c]
                    self._word_pos = 0
                else:
                    return i, _FAIL
            elif mode == _V_OBJ_OPEN or mode == _V_OBJ_KEY:
                if c == '"':
                    self.inside = True
                    self._in_key = True
                    if hooked and len(stack) == 1:
                        self._key_start(i)
                    i += 1
                elif c == "}" and mode == _V_OBJ_OPEN:
                    j, event = self._close(text, i)
                    if event != _NEED:
                        return j, event
                    i = j
                else:
                    return i, _FAIL
            else:  # (the two separator modes and the scalar modes are read above)
                return i, _FAIL
        return i, _NEED  # (a hooked caller then calls _piece_end(text, i): JsonCallLexer.feed, _read_object)

    def _close(self, text: str, i: int) -> tuple[int, int]:
        """The container open at the top of the stack closes at ``text[i]``: ``(i + 1, event)``."""
        stack = self._stack
        stack.pop()
        self.depth -= 1  # (self.bracket(text[i]) and self._value_end(), written out: depth is the stack's)
        if not stack:
            self._mode = _V_DONE
            self.closed = True
            return i + 1, _CLOSED
        self._mode = _V_AFTER
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

    def _piece_end(self, text: str, i: int) -> None:
        """The piece was read up to ``i`` (its end) with the value still open."""


class JsonCallLexer(JsonValidator):
    """A thin layer on :class:`JsonValidator`: one Hermes call object ``{"name": ..., "arguments": {...}}``.

    Fed the text after the opener piece by piece (each character once), it
    records, through the grammar's members hook, the decoded ``name`` (when a
    string) and captures the raw text of the arguments value (which must be
    an object), re-escaping raw control characters inside strings (which
    the Hermes formats accept). ``argument_keys``: the keys whose value is
    the arguments object (one of them per object; Hermes: ``arguments``,
    Llama 3: ``parameters`` or ``arguments``); a repeated ``name`` or
    arguments key is an error.

    Attributes read by the parser: ``name`` (``str`` or ``None``),
    ``arguments_done`` (the arguments object was read to its ``}``),
    ``stream_arguments`` (the arguments started after the name was known, so
    they may stream), ``arguments`` (a list of argument text pieces not yet
    taken; see :meth:`take_arguments`).
    """

    __slots__ = ("_key", "_capture", "_capture_parts", "_cap_start", "_pause", "_seen_name", "_seen_arguments",
                 "name", "arguments", "arguments_done", "stream_arguments", "_argument_keys")

    _hooked = True

    def __init__(self, argument_keys: tuple[str, ...] = ("arguments",)) -> None:
        super().__init__()
        self._argument_keys = argument_keys
        self._key: str | None = None
        #: None, "key", "name" or "arguments": what the current text is captured into.
        self._capture: str | None = None
        self._capture_parts: list[str] = []
        self._cap_start = 0
        self._pause = False
        self._seen_name = False
        self._seen_arguments = False
        self.name: str | None = None
        self.arguments: list[str] = []
        self.arguments_done = False
        self.stream_arguments = False

    @property
    def holds_call_member(self) -> bool:
        """Whether the object read so far has a ``name`` or an arguments member."""
        return self._seen_name or self._seen_arguments

    def take_arguments(self) -> str:
        """The argument text captured since the last call (JSON text, possibly ``""``)."""
        text = "".join(self.arguments)
        self.arguments.clear()
        return text

    @property
    def in_arguments(self) -> bool:
        """True while the lexer is inside the ``arguments`` value (after its ``{``, before its ``}``)."""
        return self._capture == "arguments"

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
        (:meth:`JsonCallReader._read_object` writes this method out: change both.)
        """
        if self.inside and self._capture == "arguments" and not (self.escape or self._hex_left) \
                and ('"' not in chunk and "\\" not in chunk and chunk.isprintable() or _STRICT_STOP.search(chunk) is None):  # the common piece: text inside a string of the arguments
            self.arguments.append(chunk)
            return len(chunk), NEED_MORE
        self._pause = pause
        self._cap_start = 0
        j, event = self._scan(chunk, 0)
        if event == _CLOSED:
            return j, DONE
        if event == _FAIL:
            self.failed = True
            self.error_at = j
            return j, ERROR
        if event == _NEED:
            self._piece_end(chunk, j)
        return j, NEED_MORE

    def _keep(self, text: str) -> None:
        if text:
            if self._capture == "arguments":
                self.arguments.append(text)
            else:
                self._capture_parts.append(text)

    # ---- the members hook
    def _key_start(self, i: int) -> None:
        self._capture = "key"
        self._capture_parts = []
        self._cap_start = i

    def _string_end(self, text: str, i: int, key: bool) -> bool:
        capture = self._capture
        if capture != "key" and capture != "name":
            return True
        if i > self._cap_start:  # (_keep, written out: the capture is a key or the name)
            self._capture_parts.append(text[self._cap_start:i])
        self._capture = None
        raw = "".join(self._capture_parts)  # a string the grammar validated, quotes included
        value = raw[1:-1] if "\\" not in raw else json.loads(raw)  # (no escape: its text is its value)
        if key:
            self._key = value
            return True
        if not is_call_name(value):
            return False
        self.name = value
        return True

    def _member_start(self, text: str, i: int, c: str) -> bool | None:
        key = self._key
        if key == "name":
            if self._seen_name or c != '"':
                return None
            self._seen_name = True
            self._capture = "name"
            self._capture_parts = []
            self._cap_start = i
        elif key in self._argument_keys:
            if self._seen_arguments or c != "{":
                return None
            self._seen_arguments = True
            self._capture = "arguments"
            self.stream_arguments = self.name is not None
            self._cap_start = i
            if self._pause:  # the arguments' "{": stop right after it
                self._keep(text[i:i + 1])
                self._cap_start = i + 1
                return True
        return False

    def _member_closed(self, text: str, i: int) -> bool:
        if self._capture != "arguments":
            return False
        self._keep(text[self._cap_start:i])
        self._capture = None
        self.arguments_done = True
        return self._pause

    def _control(self, text: str, j: int) -> bool:
        if self._capture is not None:  # accepted, kept escaped
            self._keep(text[self._cap_start:j])
            self._keep(_CONTROL_ESCAPES[text[j]])
            self._cap_start = j + 1
        return True

    def _at_arguments(self, name: str, key: str) -> None:
        """Be as after reading ``{"name": NAME, KEY: {`` with ``pause`` (the arguments' ``{`` taken): the
        head :meth:`JsonCallReader._read_object` matched whole (a ``name`` with no escape)."""
        self._stack[:] = ["{", "{"]
        self.depth = 2
        self._mode = _V_OBJ_OPEN
        self._in_key = True
        self.first = "{"
        self._key = key
        self._capture = "arguments"
        self._seen_name = self._seen_arguments = True
        self.name = name
        self.stream_arguments = True

    def _piece_end(self, text: str, i: int) -> None:
        # (JsonCallReader._read_object writes this out in its two loops: change all three)
        capture = self._capture
        if capture is not None:  # (_keep, written out: this runs once a piece)
            if i > self._cap_start:
                if capture == "arguments":
                    self.arguments.append(text[self._cap_start:i])
                else:
                    self._capture_parts.append(text[self._cap_start:i])
            self._cap_start = i


#: :meth:`JsonCallLexer.feed` results.
NEED_MORE, DONE, ERROR = "need-more", "done", "error"
#: A surrogate code point: in decoded JSON only from an escape (``"\\ud800"``); pyliteral, schema and llama use it too.
SURROGATE = re.compile("[\ud800-\udfff]")


def is_call_name(value: object) -> bool:
    """Whether a JSON call object's ``name`` value names a call: a non-empty string without a lone surrogate.

    ``json.loads`` accepts a lone surrogate escape (``"\\ud800"``): a name no server can encode as
    UTF-8 (docs/formats.md, Qwen3). The JSON call readers (qwen3, llama3_json) and Mistral's array form use it.
    """
    return type(value) is str and bool(value) and SURROGATE.search(value) is None
_CONTROL_ESCAPES = {chr(k): json.dumps(chr(k))[1:-1] for k in range(32)}


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> float:
    """``float(text)``; ``ValueError`` when it is not finite (``1e999`` overflows to ``inf``)."""
    value = float(text)
    if value - value != 0:  # inf (1e999 overflows) or nan
        raise ValueError(f"{text} is not a finite number")
    return value


def strict_loads(text: str, finite: bool = False):
    """``json.loads`` of strict JSON (RFC 8259): ``NaN``, ``Infinity``, ``-Infinity`` raise ``ValueError``.

    ``finite``: a number that overflows a float (``1e999``) raises too.
    Raises ``ValueError`` (``json.JSONDecodeError``) for text that is not
    JSON and ``RecursionError`` for nesting deeper than ``json`` reads. The
    one strict decoder of the project (parsers, schema typing, ``callscale check``).
    """
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

    #: ``scan(text, 0)``: read a piece, ``(j, event)``; event 0: the whole piece was read and is to be sent
    #: as it is; any other event: ``scanned(text, j, event)`` gives what :meth:`feed` returns. Only for a
    #: reader that feeds nothing more once ``used < len(text)`` (:meth:`feed` checks it).
    scan = JsonValidator._scan

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
        j, event = self._scan(text, 0)
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


#: The head's opening in the encoders' spelling (json.dumps): the one spelling waited for whole.
_NAME_OPEN = '{"name": "'
#: The characters of a name matched whole (no escape, control character or surrogate).
_NAME_CHARS = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff]+')


def _head_pattern(keys: tuple[str, ...]) -> "re.Pattern[str]":
    """The common head of a call object, ``{"name": "NAME", KEY: {`` (JSON whitespace between, a KEY of
    ``keys``, a NAME of :data:`_NAME_CHARS`): group 1 the name, group 2 the key."""
    ws = r"[ \t\n\r]*"
    return re.compile(r'\{%s"name"%s:%s"(%s)"%s,%s"(%s)"%s:%s\{' % (
        ws, ws, ws, _NAME_CHARS.pattern, ws, ws, "|".join(map(re.escape, keys)), ws, ws))


def _head_tails(keys: tuple[str, ...]) -> tuple[str, ...]:
    """What follows the name in the encoders' spelling of the head, per key: ``", "arguments": {``."""
    return tuple('", "%s": {' % key for key in keys)


class _Heads(dict):
    """``{argument keys: (head pattern, head tails)}``, made on first use (compiled once a key set)."""

    def __missing__(self, keys: tuple[str, ...]) -> tuple:
        value = self[keys] = (_head_pattern(keys), _head_tails(keys))
        return value


_HEADS = _Heads()


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
    one pattern, and its encoders' spelling is waited for while the unread
    text is a prefix of it (up to ``_HEAD_WAIT`` characters, nothing read);
    any other head is read token by token: the same answers, whatever the split.

    The parser sets ``argument_keys``, ``_name_only_is_a_call`` (an object
    with a name and no arguments key is a call with ``{}``) and
    ``_cut_head_is_content``, and ``max_head`` (characters: ``base.MAX_HEAD``), keeps the head's text in
    ``self._raw``, calls :meth:`_open_object` after the opener (it enters the reading state, ``"json"``) and
    :meth:`_read_object` in that state (it may be that state's ``_s_json`` itself), and supplies
    ``_not_a_call(final=...)``, ``_drop_call()`` and ``_object_done()``.
    """

    argument_keys: tuple[str, ...] = ("arguments",)
    max_head: int
    _name_only_is_a_call = False
    _cut_head_is_content = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        _HEADS[cls.argument_keys]  # (the head's pattern compiled with the class, at import: not in a stream)

    def _open_object(self, raw: str) -> None:
        """Start reading a call object; ``raw`` (the opener text) is content if it is none."""
        self._raw = [raw]
        self._lexer = None  # made at the object's "{" (an opener followed by no object costs no lexer)
        self._started = False
        self._peek = _PEEK_MIN
        self._obj_head = 0  # characters read before the call started, outside the arguments value
        self._state = "json"

    def _read_object(self, final: bool) -> bool:
        """Feed the lexer the unread text; false when it needs more text than there is."""
        sc = self.scanner
        lexer = self._lexer
        if lexer is None:  # only blanks read after the opener so far
            max_head = self.max_head
            pos = sc._pos  # (sc.peek(1), written out: this runs at every opener)
            after = sc._buf[pos:pos + 1]  # "" at the end of the text
            if after in _WS_CHARS:
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
            # the common head {"name": "NAME", KEY: { matched whole, within the head's bound (the arguments'
            # "{" is the value's, not the head's): the call starts there, with no token-by-token reading
            keys = self.argument_keys
            pos = sc._pos
            buf = sc._buf
            head_re, tails = _HEADS[keys]
            # a proper prefix of that head in the encoders' spelling: wait for the rest (nothing read; the
            # lexer, which reads any spelling, would hold it too: no JSON error in it)
            text = buf[pos:]
            room = max_head + 1 - self._obj_head  # (characters the head may still hold, its last "{" not counted)
            if not final and len(text) <= _HEAD_WAIT and len(text) < room:
                if len(text) <= 10:
                    if _NAME_OPEN.startswith(text):
                        return False
                elif text.startswith(_NAME_OPEN):
                    q = text.find('"', 10)
                    if _NAME_CHARS.fullmatch(text, 10, len(text) if q < 0 else q) is not None:
                        if q < 0:
                            return False
                        text = text[q:]  # (no generator here: it would make this frame's locals cells)
                        for q in tails:
                            if len(text) < len(q) and q.startswith(text):
                                return False
            hit = head_re.match(buf, pos, pos + room)
            lexer = self._lexer = JsonCallLexer(keys)
            if hit is not None:
                sc._pos = hit.end()
                lexer._at_arguments(hit.group(1), hit.group(2))
                self._start_object_call()
                self._emit_arguments("{")
        # the scanner's buffer read directly (sc.pending(), sc.peek(size), sc.take(used), written out: this
        # runs once a delta in a call); nothing called in the loop moves the scanner but on a return
        buf = sc._buf
        end = len(buf)
        pos = sc._pos
        if self._started:  # the call started: its arguments stream (the loop below for this case: the per-delta path)
            while pos < end:
                chunk = buf[pos:pos + self._peek]
                if lexer.inside and lexer._capture == "arguments" and not (lexer.escape or lexer._hex_left) \
                        and ('"' not in chunk and "\\" not in chunk and chunk.isprintable() or _STRICT_STOP.search(chunk) is None):  # text inside a string of the arguments
                    pos += len(chunk)
                    sc._pos = pos
                    self._emit_arguments(chunk)  # (lexer.arguments is empty: each piece is taken as it is read)
                else:
                    lexer._pause = False
                    lexer._cap_start = 0
                    used, event = lexer._scan(chunk, 0)
                    pos += used
                    sc._pos = pos
                    pieces = lexer.arguments
                    if event == _NEED and lexer._capture == "arguments":  # the arguments go on (the common piece)
                        start = lexer._cap_start  # lexer._piece_end(chunk, used), written out for this case
                        lexer._cap_start = used
                        if pieces:  # (pieces kept in the scan: escaped control characters)
                            if used > start:
                                pieces.append(chunk[start:used])
                            text = "".join(pieces)
                            pieces.clear()
                        else:
                            text = chunk[start:used]
                        if text:
                            self._emit_arguments(text)
                        if self._peek < _PEEK_MAX:
                            self._peek *= 2
                        continue
                    if event == _NEED:  # lexer._piece_end(chunk, used), written out
                        capture = lexer._capture
                        if capture is not None:
                            if used > lexer._cap_start:
                                if capture == "arguments":
                                    pieces.append(chunk[lexer._cap_start:used])
                                else:
                                    lexer._capture_parts.append(chunk[lexer._cap_start:used])
                            lexer._cap_start = used
                    text = "".join(pieces)
                    pieces.clear()
                    if lexer.arguments_done and text.endswith("}"):
                        text = text[:-1]  # held: the closing brace comes last in the piece that completes the object
                    self._emit_arguments(text)
                    if event == _CLOSED:
                        self._lexer = None
                        self._object_done()
                        return True
                    if event == _FAIL:
                        lexer.failed = True
                        lexer.error_at = used
                        self._drop_call()  # (reads the lexer's state where the call broke)
                        self._lexer = None
                        return True
                if self._peek < _PEEK_MAX:
                    self._peek *= 2
            if not final:
                return False
            self._drop_call()  # the output ended inside the object
            self._lexer = None
            return True
        max_head = self.max_head  # (a head's bound: before the call starts)
        while pos < end:
            # Peek a bounded, growing slice: a call that ends early in a long
            # buffer costs O(its length), not O(buffer). Before the call
            # starts, text outside the arguments value is a head: at most
            # max_head characters of it are read (the lexer pauses at the
            # arguments' brackets, so the count does not depend on the split).
            size = self._peek
            head = not self._started and lexer._capture != "arguments"  # (not lexer.in_arguments)
            if head:
                size = min(size, max_head + 1 - self._obj_head)
            chunk = buf[pos:pos + size]
            # lexer.feed(chunk, pause=not self._started), written out (one call a delta fewer)
            if lexer.inside and lexer._capture == "arguments" and not (lexer.escape or lexer._hex_left) \
                    and ('"' not in chunk and "\\" not in chunk and chunk.isprintable() or _STRICT_STOP.search(chunk) is None):  # the common piece: text inside a string of the arguments
                lexer.arguments.append(chunk)
                used, status = len(chunk), NEED_MORE
            else:
                lexer._pause = not self._started
                lexer._cap_start = 0
                used, event = lexer._scan(chunk, 0)
                if event == _CLOSED:
                    status = DONE
                elif event == _FAIL:
                    lexer.failed = True
                    lexer.error_at = used
                    status = ERROR
                else:
                    if event == _NEED:  # lexer._piece_end(chunk, used), written out
                        capture = lexer._capture
                        if capture is not None:
                            if used > lexer._cap_start:
                                if capture == "arguments":
                                    lexer.arguments.append(chunk[lexer._cap_start:used])
                                else:
                                    lexer._capture_parts.append(chunk[lexer._cap_start:used])
                            lexer._cap_start = used
                    status = NEED_MORE
            pos += used
            sc._pos = pos
            if not self._started:
                self._raw.append(chunk[:used])
                if head:  # (the arguments' "{", where the lexer paused, is the value's)
                    self._obj_head += used - (lexer._capture == "arguments")
                if lexer.stream_arguments:
                    self._start_object_call()
            if self._started:
                text = "".join(lexer.arguments)
                lexer.arguments.clear()
                if lexer.arguments_done and text.endswith("}"):
                    text = text[:-1]  # held: the closing brace comes last in the piece that completes the object
                self._emit_arguments(text)
            if status == DONE:
                if not self._started:
                    if lexer.name is None or not (lexer.arguments_done or self._name_only_is_a_call):
                        self._not_a_call()  # (the lexer, closed, tells a complete object)
                        self._lexer = None
                        return True
                    self._start_object_call()
                    if lexer.arguments_done:
                        self._send_object_arguments()
                    else:  # a name and no arguments key: a call with {}
                        self._emit_arguments("{")
                self._lexer = None
                self._object_done()
                return True
            if status == ERROR or (not self._started and self._obj_head > max_head):
                if self._started:
                    self._drop_call()  # (reads the lexer's state where the call broke)
                else:
                    self._not_a_call()
                self._lexer = None
                return True
            if self._peek < _PEEK_MAX:  # (both powers of two: min(2 * peek, _PEEK_MAX))
                self._peek *= 2
        if not final:
            return False
        if self._started:  # the output ended inside the object
            self._drop_call()
        else:
            self._not_a_call(final=not self._cut_head_is_content)
        self._lexer = None
        return True

    def _start_object_call(self) -> None:
        self._begin_call(self._lexer.name)
        self._started = True
        self._raw = []

    def _send_object_arguments(self) -> None:
        """Send the argument text read so far, except the arguments' final ``}`` (sent when the call is confirmed)."""
        text = self._lexer.take_arguments()
        if self._lexer.arguments_done and text.endswith("}"):
            text = text[:-1]  # the closing brace comes last in the piece that completes the object
        self._emit_arguments(text)

