"""Test fixtures: correct parsers with a small quadratic term, the shape public servers shipped.

One least-squares slope over 1k-8k gives them an exponent at or under 1.3
(the old verdict passed them); their cost is ``a*n + b*n**2`` with a small
``b`` that wins at the lengths users' calls reach. The gate must fail them
by the steepest step or the projection (:mod:`callscale.fit`).

- :class:`HermesLikeParser` (``qwen3`` format, Hermes ``<tool_call>`` JSON):
  like vLLM's Hermes tool parser, each increment rebuilds the text so far
  (``previous + delta``, a copy) and counts the start and end tokens in all
  of it (``str.count``), a per-increment rescan that is cheap per character
  (C speed) but grows with the call.
- :class:`GlmLikeParser` (``glm45`` format): like SGLang's GLM-4.5/4.7
  detectors, now and then (every :attr:`GlmLikeParser.every` increments) it
  joins its buffer and runs a regular expression over all of it to count
  the complete calls.

Both delegate the real parsing to the built-in linear parser, so their
results are right; only their cost sets them apart. Use them as
``--parser small_quadratic_parsers:HermesLikeParser --format qwen3`` with
``tests/`` importable.
"""

from __future__ import annotations

import re

from callscale.parsers.glm import Glm45Parser
from callscale.parsers.qwen import TOOL_CALL_CLOSE, TOOL_CALL_OPEN, Qwen3Parser

__all__ = ["HermesLikeParser", "GlmLikeParser"]


class HermesLikeParser(Qwen3Parser):
    """The built-in ``qwen3`` parser plus a whole-text copy and token count per increment."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._text = ""
        self._opened = self._closed = 0

    def parse_streaming_increment(self, delta, tools=None):
        current = self._text + delta  # vLLM passes previous_text + delta_text: a copy per increment
        self._opened = current.count(TOOL_CALL_OPEN)
        self._closed = current.count(TOOL_CALL_CLOSE)
        self._text = current
        return super().parse_streaming_increment(delta, tools)


_CALL_END = re.compile(re.escape("</tool_call>"))


class GlmLikeParser(Glm45Parser):
    """The built-in ``glm45`` parser plus a regex pass over the whole buffer every ``every`` increments."""

    every = 16

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._buffer: list[str] = []
        self._increments = 0
        self.complete_calls = 0

    def parse_streaming_increment(self, delta, tools=None):
        self._buffer.append(delta)
        self._increments += 1
        if self._increments % self.every == 0:
            self.complete_calls = len(_CALL_END.findall("".join(self._buffer)))
        return super().parse_streaming_increment(delta, tools)
