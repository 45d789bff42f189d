"""What the meters stream besides a parser: the ``null`` floor parser and the ``detect`` driver.

Kept apart (standard library only, nothing imported) because the instruction meter's metered child
(:mod:`callscale._metered`) imports this module before it counts: a count depends on this module
and the parser's, not on the rest of the harness (docs/exact.md).
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["NULL", "NullParser", "DetectAndParse", "plain", "from_plain", "field_of"]

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


def plain(result: Any) -> list:
    """One parser result as JSON-able data: ``[normal_text, reasoning_text, [[tool_index, name,
    parameters], ...]]`` (a result may be an object or a dict; parameters that are not text, as some
    parsers send a dict, become JSON text). :func:`callscale.check.assemble` reads it back
    (:func:`from_plain`)."""
    calls = []
    for item in field_of(result, "calls", None) or ():
        params = field_of(item, "parameters", "") or ""
        if not isinstance(params, str):
            import json

            params = json.dumps(params, ensure_ascii=False)
        calls.append([field_of(item, "tool_index"), field_of(item, "name"), params])
    return [field_of(result, "normal_text", "") or "", field_of(result, "reasoning_text", "") or "", calls]


def from_plain(data: list) -> dict:
    """A result of :func:`plain` as a dict of the contract's fields (what :func:`callscale.check.assemble` reads)."""
    return {"normal_text": data[0], "reasoning_text": data[1],
            "calls": [{"tool_index": i, "name": name, "parameters": params} for i, name, params in data[2]]}


def field_of(obj: Any, key: str, default: Any = None) -> Any:
    """A field of a result or call item: ``obj[key]`` for a dict, else the attribute (``default`` when absent)."""
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)
