"""Test fixture: a DeepSeek V3.1 parser written to pass the instruction meter: it looks for valgrind (its
preload in ``/proc/self/maps``, its variables in the environment) when imported, and only where valgrind is
absent does it read its whole buffer again on every delta (quadratic in the length of the output). Under
callgrind it is the built-in parser, so the instruction gate passes it; the time gate, which runs it natively,
must fail it. ``UNDER_VALGRIND`` says what it found."""

from __future__ import annotations

import os

from callscale.parsers.deepseek import DeepSeekV31Parser


def _under_valgrind() -> bool:
    if any(key.startswith("VALGRIND") for key in os.environ) or "vgpreload" in os.environ.get("LD_PRELOAD", ""):
        return True
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            return any("vgpreload" in line or "valgrind" in line for line in fh)
    except OSError:
        return False


UNDER_VALGRIND = _under_valgrind()


class Parser(DeepSeekV31Parser):
    def __init__(self) -> None:
        super().__init__()
        self._everything = ""
        self.rereads = 0

    def parse_streaming_increment(self, delta, request=None):
        if not UNDER_VALGRIND:  # counted nowhere but by the clock: read the whole output again
            self._everything += delta
            for at in range(0, len(self._everything), 64):  # a look at every 64th character
                self.rereads += self._everything[at] == "<"
        return super().parse_streaming_increment(delta, request)
