"""What the meters stream besides a parser: the ``null`` floor parser and the ``detect`` driver.

Kept apart (standard library only, nothing imported) because the instruction meter's metered child
(:mod:`callscale._metered`) imports this module before it counts: a count depends on this module
and the parser's, not on the rest of the harness (docs/exact.md).
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["NULL", "NullParser", "DetectAndParse"]

NULL = "null"
"""The name of the built-in floor parser (:class:`NullParser`)."""


class NullParser:
    """The floor: receives every delta and returns nothing.

    Its cost is what receiving the stream costs at all (the loop and one
    method call per delta); a parser's cost is also shown as a multiple of it.
    """

    name = NULL

    def parse_streaming_increment(self, delta: str, tools: Sequence[Any] | None = None) -> None:
        return None

    def finish(self, tools: Sequence[Any] | None = None) -> None:
        return None

    def detect_and_parse(self, text: str, tools: Sequence[Any] | None = None) -> None:
        return None


class DetectAndParse:
    """A parser driven by its non-streaming method behind the streaming contract (chunking ``detect``).

    The one delta (the whole text) goes to ``detect_and_parse(text, tools)`` and its result is that
    increment's; ``finish`` returns None. Any delta after the first is ignored (``detect`` splits a
    text into one).
    """

    def __init__(self, parser) -> None:
        self._parser = parser
        self._done = False

    def parse_streaming_increment(self, delta, tools=None):
        if self._done:
            return None
        self._done = True
        return self._parser.detect_and_parse(delta, tools)

    def finish(self, tools=None):
        return None
