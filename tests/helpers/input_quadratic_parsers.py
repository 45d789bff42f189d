"""Test fixtures: correct parsers whose quadratic term only some inputs trigger.

Each wraps the built-in ``deepseek_v31`` parser (so it parses every case
right; use ``--format deepseek_v31``) and adds work that grows with what it
has received, but only on some deltas. On the text the gate wrote before
content kinds (ASCII Python source, four characters a delta) none of the
triggers appears, and the gate passed them all.

- :class:`RereadsOnCjk`: each delta holding a CJK ideograph, kana or hangul
  scans everything received (a regular expression).
- :class:`RereadsOnAstral`: each delta holding a character outside the BMP (an
  emoji) re-encodes everything received as UTF-16 (to count code units, as a
  client's offsets do).
- :class:`RereadsOnTab`: each delta holding a TAB (raw, or as JSON writes it,
  ``\\t``) scans everything received (a regular expression).
- :class:`RereadsOnEscape`: each delta holding ``\\u`` (a JSON ``\\u`` escape, or
  its start) scans everything received for escapes (a regular expression).
- :class:`SlicesEachDelta`: consumes each delta a character at a time by
  re-slicing it (``rest = rest[1:]``, counting the lines left each time), k**2
  for a delta of k characters:
  linear under any fixed delta size, quadratic where the deltas grow with the
  text (``whole``, ``parts:N``: the non-streaming path, speculative decoding).
- :class:`SlowestGrows`: each time what it received doubles (1k, 2k, 4k ...
  characters) it re-reads everything once: its total is linear (the re-reads
  sum to twice the text, as a doubling buffer's copies do), but its slowest
  single increment grows with the length.
- :class:`DetectRereads`: streams as ``deepseek_v31`` does (linear under every
  delivery), but its non-streaming ``detect_and_parse`` re-reads everything
  read so far at every 32 characters (quadratic): only the ``detect`` delivery
  (``WORKLOAD+detect``) measures it.

``tests/`` must be importable: ``--parser input_quadratic_parsers:RereadsOnCjk --format deepseek_v31``.
"""

from __future__ import annotations

import re

from callscale.parsers.deepseek import DeepSeekV31Parser

__all__ = ["RereadsOnCjk", "RereadsOnAstral", "RereadsOnTab", "RereadsOnEscape", "SlicesEachDelta",
           "SlowestGrows", "DetectRereads"]

#: What a re-read looks for: a pattern that rarely matches, so the scan reads every character.
_REREAD = re.compile(r"<\|[a-z_]+\|>|\\u[0-9a-fA-F]{4}")


class _Rereads(DeepSeekV31Parser):
    """The built-in ``deepseek_v31`` parser plus a re-read of everything received on each triggering delta."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._received: list[str] = []
        self.found = 0

    def triggers(self, delta: str) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def reread(self, text: str) -> int:
        """The re-read of everything received (its cost grows with ``len(text)``)."""
        return len(_REREAD.findall(text))

    def parse_streaming_increment(self, delta, tools=None):
        self._received.append(delta)  # (not ``self._text += delta``: on an attribute that copies every time)
        if self.triggers(delta):
            text = "".join(self._received)
            self._received = [text]
            self.found = self.reread(text)
        return super().parse_streaming_increment(delta, tools)


_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class RereadsOnCjk(_Rereads):
    """Re-reads everything on each delta holding a CJK ideograph, kana or hangul syllable."""

    def triggers(self, delta: str) -> bool:
        return _CJK.search(delta) is not None


class RereadsOnAstral(_Rereads):
    """Re-reads everything on each delta holding a character outside the BMP."""

    def triggers(self, delta: str) -> bool:
        return _ASTRAL.search(delta) is not None

    def reread(self, text: str) -> int:
        return len(text.encode("utf-16-le")) // 2


class RereadsOnTab(_Rereads):
    """Re-reads everything on each delta holding a TAB (raw, or as JSON writes it)."""

    def triggers(self, delta: str) -> bool:
        return "\t" in delta or "\\t" in delta


class RereadsOnEscape(_Rereads):
    """Re-reads everything on each delta holding ``\\u`` (a JSON ``\\u`` escape, or its start)."""

    def triggers(self, delta: str) -> bool:
        return "\\u" in delta


class SlicesEachDelta(DeepSeekV31Parser):
    """Consumes each delta a character at a time by re-slicing (k**2 for a delta of k characters)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lines = 0

    def parse_streaming_increment(self, delta, tools=None):
        rest = delta
        while rest:  # a character at a time, the rest sliced off and its lines counted again: k**2
            self.lines = rest.count("\n")
            rest = rest[1:]
        return super().parse_streaming_increment(delta, tools)


class SlowestGrows(_Rereads):
    """Re-reads everything once each time what it received doubles (from :attr:`first` characters)."""

    first = 1024

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._size = 0
        self._next = self.first

    def triggers(self, delta: str) -> bool:
        self._size += len(delta)
        if self._size < self._next:
            return False
        while self._next <= self._size:
            self._next *= 2
        return True


class DetectRereads(DeepSeekV31Parser):
    """The built-in ``deepseek_v31`` parser whose ``detect_and_parse`` re-reads the text read so far at every 32 characters."""

    def detect_and_parse(self, text, tools=None):
        found = 0
        for at in range(0, len(text), 32):  # everything read so far, again at every 32 characters
            found += len(_REREAD.findall(text, 0, at))
        self.rereads = len(range(0, len(text), 32))
        self.found = found
        return super().detect_and_parse(text, tools)
