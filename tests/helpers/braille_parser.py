"""Test fixture: a DeepSeek V3.1 parser with a quadratic term that only Braille patterns trigger.

It wraps the built-in ``deepseek_v31`` parser (so it parses every case right) and, on each delta that
holds a Braille pattern (U+2800-U+28FF, a block no workload and no content kind writes), re-reads
everything received so far through a fresh ``deepseek_v31`` parser, as a parser that "re-syncs" on a
character it does not expect would. On the catalog's workloads it is linear; with Braille in a long
value its cost grows with the square of the length. ``callscale hunt`` must find that unaided
(``tests/commands/test_hunt.py``). Use it as ``--parser braille_parser:BrailleRereads --workload-format
deepseek_v31`` with ``tests/`` importable.
"""

from __future__ import annotations

import re

from callscale.parsers import get

__all__ = ["BrailleRereads"]

_BRAILLE = re.compile("[\u2800-\u28ff]")


class BrailleRereads:
    """``deepseek_v31``, plus a re-read of the whole text received on each delta holding a Braille pattern."""

    def __init__(self) -> None:
        self._inner = get("deepseek_v31")()
        self._received: list[str] = []

    def parse_streaming_increment(self, delta, tools):
        self._received.append(delta)
        if _BRAILLE.search(delta):
            again = get("deepseek_v31")()
            again.parse_streaming_increment("".join(self._received), tools)  # the re-read: O(received)
        return self._inner.parse_streaming_increment(delta, tools)

    def finish(self, tools):
        return self._inner.finish(tools)

    def detect_and_parse(self, text, tools):
        return self._inner.detect_and_parse(text, tools)
