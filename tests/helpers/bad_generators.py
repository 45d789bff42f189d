"""Test fixture: team workload generators (``--workload bad_generators:NAME``) that misbehave, each in its own
way; ``prints`` is a good generator that prints while it works. ``Parser`` is a plug-in parser living in the
same module as ``beside_parser``, a generator (a generator here would import the parser into the harness)."""

from __future__ import annotations

import os
import sys
import time

from callscale.parsers.deepseek import DeepSeekV31Parser
from team_workloads import config_file


def exits(fmt: str, length: int, seed: int = 0) -> str:
    sys.exit(0)


def exits_hard(fmt: str, length: int, seed: int = 0) -> str:
    os._exit(0)


def hangs(fmt: str, length: int, seed: int = 0) -> str:
    while True:
        time.sleep(0.05)


def too_long(fmt: str, length: int, seed: int = 0) -> str:
    return "x" * (5 * length)


def prints(fmt: str, length: int, seed: int = 0) -> str:
    print("PRINTED BY THE GENERATOR")
    print("PRINTED ON STDERR", file=sys.stderr)
    return config_file(fmt, length, seed)


def beside_parser(fmt: str, length: int, seed: int = 0) -> str:
    return config_file(fmt, length, seed)


class Parser(DeepSeekV31Parser):
    pass
