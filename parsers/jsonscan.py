"""Incremental JSON tracking, shared by the parsers that read JSON arguments as raw text.

Not a format module. :class:`JsonTracker` follows JSON text piece by piece,
each character once (linear in the text whatever the split): whether the
text so far ends inside a string literal (and inside an escape there), the
bracket depth outside strings, and where the top-level value closes.

Two uses:

- as it is, with :meth:`JsonTracker.feed` (the DeepSeek V3/V3.1 and Kimi K2
  parsers): nothing is validated; only ``"`` and ``\\`` inside strings and
  ``"{}[]`` outside them are looked at, so any text at all can be fed;
- as the base of a validating lexer (``strict=True``; Qwen3's
  :class:`parsers.qwen.JsonCallLexer`): the lexer reads the grammar between
  strings itself and hands string contents to :meth:`JsonTracker.string_run`,
  which then also checks escapes (``\\u`` and four hex digits, or one of
  ``"\\/bfnrt``) and reports raw control characters; brackets go through
  :meth:`JsonTracker.bracket` in both uses.

Escapes are followed across pieces: a piece may end right after a backslash
or inside a ``\\uXXXX`` escape.
"""

from __future__ import annotations

import json
import re

__all__ = ["JsonTracker", "RawArguments", "json_object", "STRING_OPEN", "STRING_END", "CONTROL", "BAD_ESCAPE"]

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


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def json_object(text: str) -> dict | None:
    """``text`` decoded as one JSON object, or ``None`` (not JSON, not an object, ``NaN``/``Infinity``, too deep)."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class RawArguments:
    """The raw JSON arguments text of one call, streamed as it arrives (the gpt-oss and Mistral parsers).

    :meth:`feed` returns the part of a piece that may be sent now: text up to
    (not including) the bracket that closes the top-level value; that
    bracket and anything after it are held until :meth:`close` confirms the
    call, so the streamed text of a call that is then abandoned never forms
    a JSON object. :attr:`tracker` tells whether the text so far ends inside
    a string and whether the top-level value has closed.
    """

    __slots__ = ("parts", "held", "tracker")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.held: list[str] = []
        self.tracker = JsonTracker()

    def feed(self, text: str) -> str:
        """Take one piece (characters); return what of it may be streamed now."""
        if not text:
            return ""
        self.parts.append(text)
        if self.tracker.closed:
            self.held.append(text)
            return ""
        at = self.tracker.feed(text)
        if at < 0:
            return text
        self.held.append(text[at:])
        return text[:at]

    def feed_to_close(self, text: str) -> tuple[str, int]:
        """Take ``text`` up to and including the top-level close: ``(what may be streamed now, characters taken)``.

        For formats where that close ends the call (nothing else does):
        fewer than ``len(text)`` characters are taken when the value closes
        inside ``text``; the rest belongs to what follows the call.
        """
        if self.tracker.closed or not text:
            return "", 0
        at = self.tracker.feed(text)
        if at < 0:
            self.parts.append(text)
            return text, len(text)
        self.parts.append(text[:at + 1])
        self.held.append(text[at:at + 1])
        return text[:at], at + 1

    def close(self, cut: bool = False) -> str | None:
        """The arguments ended: the held text to send when they are one JSON object, else ``None`` (abandon).

        Empty (or blank) arguments give ``"{}"`` unless the output was ``cut`` off there.
        """
        text = "".join(self.parts)
        if not text.strip():
            return None if cut else "{}"
        return "".join(self.held) if json_object(text) is not None else None
