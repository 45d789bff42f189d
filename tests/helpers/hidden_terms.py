"""Test fixtures: correct parsers with a hidden super-linear term on an axis besides one value's length.

Each wraps the built-in ``deepseek_v31`` parser (so it parses every case right; use
``--parser hidden_terms:NAME --format deepseek_v31``) and adds work that grows with what it has received,
but only on a trigger: a kind of character, a pattern of delta sizes, the structure of the calls, the
request. A gate whose rows grow only one value's length, under one delivery, passes them all.

Characters and deliveries (a re-read of everything received on each triggering delta):

- :class:`RereadsOnBidi`: a delta holding a bidirectional control character (U+061C, U+200E, U+200F,
  U+202A-U+202E, U+2066-U+2069).
- :class:`RereadsOnDecomposed`: a delta holding a combining mark (``unicodedata.combining(ch) != 0``,
  text in NFD).
- :class:`RereadsOnAlternation`: a delta whose size differs from the previous delta's by a factor of 10 or
  more (deltas alternating 1 and 50 characters).
- :class:`RereadsOnBundles`: a delta of 256 characters or more (fixed-size bundles: linear under
  ``parts:16``, which sends only 16 such deltas).

Structure and request (read from the wrapped parser's own results: a call's index, its argument text,
the content):

- :class:`GrowsWithKeys`: at each new key of a call's arguments, re-reads the arguments received so far in
  that call.
- :class:`GrowsWithDepth`: at each opening bracket of the arguments, re-reads the arguments received so
  far (a parser re-parsing partial JSON at each nesting change).
- :class:`GrowsWithItems`: at each new item of an array argument, re-reads the array so far.
- :class:`JoinsEarlierCalls`: at each new call, joins the text (name and arguments) of every earlier call
  of the output and re-reads it.
- :class:`ScansEveryTool`: at each delta, looks through every tool of the request (tools x deltas).
- :class:`GrowsWithTextBetween`: at each delta of content after a call, re-reads everything received (a
  search of the whole output for the calls-block opener each time content resumes).
"""

from __future__ import annotations

import re
import unicodedata

from callscale.parsers.deepseek import DeepSeekV31Parser
from input_quadratic_parsers import _REREAD, _Rereads

__all__ = ["RereadsOnBidi", "RereadsOnDecomposed", "RereadsOnAlternation", "RereadsOnBundles", "GrowsWithKeys",
           "GrowsWithDepth", "GrowsWithItems", "JoinsEarlierCalls", "ScansEveryTool", "GrowsWithTextBetween"]

_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class RereadsOnBidi(_Rereads):
    """Re-reads everything on each delta holding a bidirectional control character."""

    def triggers(self, delta: str) -> bool:
        return _BIDI.search(delta) is not None


class RereadsOnDecomposed(_Rereads):
    """Re-reads everything on each delta holding a combining mark."""

    def triggers(self, delta: str) -> bool:
        return any(unicodedata.combining(ch) for ch in delta)


class RereadsOnAlternation(_Rereads):
    """Re-reads everything on each delta 10 times larger or smaller than the one before."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._last = 0

    def triggers(self, delta: str) -> bool:
        last, self._last = self._last, len(delta)
        return bool(last and delta) and max(last, len(delta)) >= 10 * min(last, len(delta))


class RereadsOnBundles(_Rereads):
    """Re-reads everything on each delta of 256 characters or more."""

    bundle = 256

    def triggers(self, delta: str) -> bool:
        return len(delta) >= self.bundle


class _Structure(DeepSeekV31Parser):
    """The built-in ``deepseek_v31`` parser, watching its own results: each call's argument text as streamed
    (:meth:`arguments`), a new call (:meth:`new_call`), content (:meth:`content`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._index = -1
        self._arguments: list[str] = []  # the current call's argument text, in pieces
        self._earlier: list[str] = []  # every earlier call's text (its name and arguments)
        self._call_name = ""
        self.found = self.rereads = 0

    def reread(self, text: str) -> None:
        """A re-read of ``text`` (its cost grows with ``len(text)``), counted in :attr:`rereads`."""
        self.found = len(_REREAD.findall(text))
        self.rereads += 1

    def received(self) -> str:
        """The current call's argument text received so far."""
        text = "".join(self._arguments)
        self._arguments = [text]
        return text

    def new_call(self) -> None:
        pass

    def arguments(self, piece: str) -> None:
        pass

    def content(self, piece: str) -> None:
        pass

    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        for item in getattr(result, "calls", None) or ():
            if item.tool_index != self._index:
                if self._index >= 0:
                    self._earlier.append(self._call_name + self.received())
                self._index, self._arguments, self._call_name = item.tool_index, [], item.name or ""
                self.new_call()
            if item.parameters:
                self._arguments.append(item.parameters)
                self.arguments(item.parameters)
        if getattr(result, "normal_text", ""):
            self.content(result.normal_text)
        return result


_KEY = re.compile(r'"\s*:')


class GrowsWithKeys(_Structure):
    """At each new key of a call's arguments (a ``":``), re-reads the call's arguments received so far."""

    def arguments(self, piece: str) -> None:
        for _ in _KEY.finditer(piece):
            self.reread(self.received())


class GrowsWithDepth(_Structure):
    """At each opening bracket of the arguments, re-reads the call's arguments received so far."""

    def arguments(self, piece: str) -> None:
        for _ in range(piece.count("{") + piece.count("[")):
            self.reread(self.received())


class GrowsWithItems(_Structure):
    """At each new item of an array argument, re-reads the array so far (from its ``[``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._reset_items()

    def _reset_items(self) -> None:
        self._size = 0  # characters of the current call's arguments
        self._inside = self._escape = False
        self._open: list[tuple[str, int]] = []  # open brackets and where each opened

    def new_call(self) -> None:
        self._reset_items()

    def arguments(self, piece: str) -> None:
        for ch in piece:
            self._size += 1
            if self._inside:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._inside = False
            elif ch == '"':
                self._inside = True
            elif ch in "[{":
                self._open.append((ch, self._size - 1))
            elif ch in "]}" and self._open:
                self._open.pop()
            elif ch == "," and self._open and self._open[-1][0] == "[":
                self.reread(self.received()[self._open[-1][1]:])


class JoinsEarlierCalls(_Structure):
    """At each new call, joins the text (name and arguments) of every earlier call and re-reads it."""

    def new_call(self) -> None:
        self.reread("".join(self._earlier))


class ScansEveryTool(_Structure):
    """At each delta, looks through every tool of the request for the delta's text."""

    def parse_streaming_increment(self, delta, tools=None):
        for tool in tools or ():
            if delta in tool.get("function", {}).get("name", ""):
                self.found += 1
        return super().parse_streaming_increment(delta, tools)


class GrowsWithTextBetween(_Structure):
    """At each delta of content after the first call, re-reads everything received (a search of the whole
    output for the calls-block opener, each time content resumes)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._output: list[str] = []

    def parse_streaming_increment(self, delta, tools=None):
        self._output.append(delta)
        return super().parse_streaming_increment(delta, tools)

    def content(self, piece: str) -> None:
        if self._index >= 0:
            text = "".join(self._output)
            self._output = [text]
            self.reread(text)
