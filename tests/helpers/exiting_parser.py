"""Test fixtures for the metered child: parsers that end or crash their process.

- :class:`Exits`: ``os._exit(3)`` on its first increment (a plug-in that
  calls exit, or a C extension that aborts).
- :class:`Segfaults`: dereferences a null pointer through ctypes on its
  first increment (a crashing C extension).

Use them as ``--parser exiting_parser:Exits --format deepseek_v31`` with
``tests/`` importable.
"""

from __future__ import annotations

import os

__all__ = ["Exits", "Segfaults"]


class Exits:
    def parse_streaming_increment(self, delta, tools=None):
        os._exit(3)

    def finish(self, tools=None):
        return None


class Segfaults:
    def parse_streaming_increment(self, delta, tools=None):
        import ctypes

        ctypes.string_at(0)

    def finish(self, tools=None):
        return None
