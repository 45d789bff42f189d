"""Test fixtures for bounded runs: parsers that never return, and one that raises.

- :class:`Hangs`: loops forever on its first increment (a broken
  ``while`` over the buffer, a fault that hangs a server's event loop).
- :class:`HangsOnLongCalls`: parses nothing and returns at once until it
  has received :attr:`HangsOnLongCalls.limit` characters, then loops
  forever, so the short lengths of a run finish and a longer one hangs.
- :class:`Raises`: raises on its first increment.

Use them as ``--parser hanging_parser:Hangs --format deepseek_v31`` with
``tests/`` importable.
"""

from __future__ import annotations

__all__ = ["Hangs", "HangsOnLongCalls", "Raises"]


class Hangs:
    def parse_streaming_increment(self, delta, tools=None):
        while True:
            pass

    def finish(self, tools=None):
        return None


class HangsOnLongCalls:
    limit = 3000

    def __init__(self) -> None:
        self.received = 0

    def parse_streaming_increment(self, delta, tools=None):
        self.received += len(delta)
        while self.received > self.limit:
            pass
        return None

    def finish(self, tools=None):
        return None


class Raises:
    def parse_streaming_increment(self, delta, tools=None):
        raise ValueError("cannot parse this")

    def finish(self, tools=None):
        return None
