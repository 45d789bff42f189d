"""Test fixture: a DeepSeek V3.1 parser that, once per process, sleeps CALLSCALE_TEST_SLEEP seconds (default 3)
on its first increment: wall time without CPU time, as a parser on a loaded machine waits for a core."""

from __future__ import annotations

import os
import time

from callscale.parsers.deepseek import DeepSeekV31Parser

_slept = False


class Parser(DeepSeekV31Parser):
    def parse_streaming_increment(self, delta, tools=None):
        global _slept
        if not _slept:
            _slept = True
            time.sleep(float(os.environ.get("CALLSCALE_TEST_SLEEP", "3")))
        return super().parse_streaming_increment(delta, tools)
