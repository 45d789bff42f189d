"""Adversarial plug-ins for the isolated gate: each does one thing to its own process.

Every class here is a parser factory the harness must survive: whatever it
does is its own row's (a reason in words), and the built-in parser measured
beside it reads as if it were not there. Use them as
``--parser rogue_parsers:NAME --workload-format deepseek_v31`` with
``tests/`` importable. Modules that misbehave at import are separate:
:mod:`rogue_exit_at_import` (``sys.exit(5)``) and :mod:`rogue_patches_io`
(``print`` and ``open`` replaced).

The parsing itself, where there is any, is the built-in DeepSeek V3.1
parser's, so a fixture is right on its cases except for what it breaks.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time

from callscale.parsers.deepseek import DeepSeekV31Parser

__all__ = ["HangsInInit", "PatchesTheClock", "ExitsHard", "ChangesDirectory", "Segfaults", "KillsItself",
           "EatsMemory", "RecognisesNothing", "DeepSeekOnAnything"]


class HangsInInit(DeepSeekV31Parser):
    """Building it never returns (the factory loops forever)."""

    def __init__(self) -> None:
        while True:
            pass


class PatchesTheClock(DeepSeekV31Parser):
    """On construction, makes every clock of :mod:`time` read 0 (in its own process)."""

    def __init__(self) -> None:
        super().__init__()
        for name in ("process_time", "perf_counter", "monotonic", "time", "thread_time"):
            setattr(time, name, lambda: 0.0)


class ExitsHard(DeepSeekV31Parser):
    """``os._exit(3)`` on its first increment (no clean-up, no exception to catch)."""

    def parse_streaming_increment(self, delta, tools=None):
        os._exit(3)


class ChangesDirectory(DeepSeekV31Parser):
    """Changes the working directory to ``/`` when built."""

    def __init__(self) -> None:
        super().__init__()
        os.chdir("/")


class Segfaults(DeepSeekV31Parser):
    """Reads address 0 on its first increment (SIGSEGV)."""

    def parse_streaming_increment(self, delta, tools=None):
        ctypes.string_at(0)


class KillsItself(DeepSeekV31Parser):
    """Sends itself SIGKILL on its first increment."""

    def parse_streaming_increment(self, delta, tools=None):
        os.kill(os.getpid(), signal.SIGKILL)


class EatsMemory(DeepSeekV31Parser):
    """Allocates without end on its first increment (64 MiB more per step): the memory limit's case."""

    def parse_streaming_increment(self, delta, tools=None):
        hoard = []
        while True:
            hoard.append(bytearray(1 << 26))


class RecognisesNothing:
    """Linear and fast, and parses nothing: every delta goes out as content."""

    def parse_streaming_increment(self, delta, tools=None):
        from callscale.parsers.base import StreamingParseResult

        return StreamingParseResult(delta, [])

    def finish(self, tools=None):
        from callscale.parsers.base import StreamingParseResult

        return StreamingParseResult("", [])


class DeepSeekOnAnything(DeepSeekV31Parser):
    """The built-in DeepSeek V3.1 parser as a plug-in, to be fed another format's text."""
