"""Test fixtures: correct parsers whose super-linear term grows along one axis of the output or the request.

Each wraps the built-in ``deepseek_v31`` parser (so it parses every case right; use ``--workload-format
deepseek_v31``) and adds work that grows with what it has received, triggered only by some inputs:

- :class:`RereadsOnBidi`: each delta holding a bidirectional control character (U+061C, U+200E, U+200F,
  U+202A-U+202E, U+2066-U+2069) re-reads everything received.
- :class:`RereadsOnDecomposed`: each delta holding a combining mark (category Mn, as decomposed text
  holds) re-reads everything received.
- :class:`RereadsOnAlternation`: each delta whose size differs from the previous one's by a factor of 10
  or more re-reads everything received.
- :class:`RereadsOnBundles`: each delta of 256 characters or more re-reads everything received.
- :class:`GrowsWithKeys`: at each new key of a call's arguments, re-reads that call's arguments so far.
- :class:`GrowsWithDepth`: at each opening bracket of the arguments, re-reads the arguments so far.
- :class:`GrowsWithItems`: at each new item of an array, re-reads the array so far.
- :class:`JoinsEarlierCalls`: at each new call, joins the text of every earlier call (and scans it).
- :class:`ScansEveryTool`: each delta looks through every tool of the request.

``tests/`` must be importable: ``--parser hidden_terms:GrowsWithKeys --workload-format deepseek_v31``.
"""

from __future__ import annotations

import re
import unicodedata

from callscale.parsers.deepseek import CALL_BEGIN, CALL_END, SEP, DeepSeekV31Parser
from input_quadratic_parsers import _REREAD, _Rereads

__all__ = ["RereadsOnBidi", "RereadsOnDecomposed", "RereadsOnAlternation", "RereadsOnBundles", "GrowsWithKeys",
           "GrowsWithDepth", "GrowsWithItems", "JoinsEarlierCalls", "ScansEveryTool"]

_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class RereadsOnBidi(_Rereads):
    """Re-reads everything on each delta holding a bidirectional control character."""

    def triggers(self, delta: str) -> bool:
        return _BIDI.search(delta) is not None


class RereadsOnDecomposed(_Rereads):
    """Re-reads everything on each delta holding a combining mark (category Mn)."""

    def triggers(self, delta: str) -> bool:
        return any(unicodedata.category(ch) == "Mn" for ch in delta)


class RereadsOnAlternation(_Rereads):
    """Re-reads everything on each delta whose size differs from the previous one's by a factor of 10 or more."""

    last = 0

    def triggers(self, delta: str) -> bool:
        last, self.last = self.last, len(delta)
        return bool(last and delta) and max(last, len(delta)) >= 10 * min(last, len(delta))


class RereadsOnBundles(_Rereads):
    """Re-reads everything on each delta of 256 characters or more."""

    def triggers(self, delta: str) -> bool:
        return len(delta) >= 256


class ScansEveryTool(DeepSeekV31Parser):
    """Looks each delta through every tool of the request (for one named in it)."""

    named = 0

    def parse_streaming_increment(self, delta, tools=None):
        self.named = sum(1 for tool in tools or () if tool.get("function", {}).get("name", "\0") in delta)
        return super().parse_streaming_increment(delta, tools)


class _Structure(DeepSeekV31Parser):
    """``deepseek_v31`` plus a reader of the calls' JSON arguments, a character at a time, that calls
    :meth:`on_call`, :meth:`on_key`, :meth:`on_open` and :meth:`on_item` at positions of the text received."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._received: list[str] = []
        self._count = 0
        self._last24 = ""
        self._args_from = -1  # where the current call's arguments start; -1 outside arguments
        self._brackets: list[tuple[str, int]] = []
        self._in_string = self._after_escape = self._expect_key = False
        self.found = 0

    def reread(self, start: int) -> None:
        text = "".join(self._received)
        self._received = [text]
        self.found = len(_REREAD.findall(text, start))

    def on_call(self, at: int) -> None: ...

    def on_key(self, at: int) -> None: ...

    def on_open(self, at: int) -> None: ...

    def on_item(self, at: int, array: int) -> None: ...

    def parse_streaming_increment(self, delta, tools=None):
        self._received.append(delta)
        for i, ch in enumerate(delta):
            self._read(ch, self._count + i)
        self._count += len(delta)
        return super().parse_streaming_increment(delta, tools)

    def _read(self, ch: str, at: int) -> None:
        self._last24 = (self._last24 + ch)[-24:]
        if ch == ">" and self._last24.endswith(CALL_BEGIN):
            self.on_call(at - len(CALL_BEGIN) + 1)
        elif ch == ">" and self._last24.endswith(SEP):
            self._args_from, self._brackets, self._in_string, self._expect_key = at + 1, [], False, False
        elif ch == ">" and self._last24.endswith(CALL_END):
            self._args_from = -1
        elif self._args_from < 0:
            return
        elif self._in_string:
            if self._after_escape:
                self._after_escape = False
            elif ch == "\\":
                self._after_escape = True
            elif ch == '"':
                self._in_string = False
        elif ch == '"':
            self._in_string = True
            if self._expect_key:
                self._expect_key = False
                self.on_key(at)
        elif ch in "[{":
            self._brackets.append((ch, at))
            self._expect_key = ch == "{"
            self.on_open(at)
        elif ch in "]}":
            if self._brackets:
                self._brackets.pop()
        elif ch == "," and self._brackets:
            kind, start = self._brackets[-1]
            self._expect_key = kind == "{"
            if kind == "[":
                self.on_item(at, start)


class GrowsWithKeys(_Structure):
    """At each new key of a call's arguments, re-reads that call's arguments so far."""

    def on_key(self, at: int) -> None:
        self.reread(self._args_from)


class GrowsWithDepth(_Structure):
    """At each opening bracket of the arguments, re-reads the arguments so far."""

    def on_open(self, at: int) -> None:
        self.reread(self._args_from)


class GrowsWithItems(_Structure):
    """At each new item of an array, re-reads the array so far."""

    def on_item(self, at: int, array: int) -> None:
        self.reread(array)


class JoinsEarlierCalls(_Structure):
    """At each new call, joins the text of every earlier call and scans it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._first_call = -1

    def on_call(self, at: int) -> None:
        if self._first_call < 0:
            self._first_call = at
        self.reread(self._first_call)
