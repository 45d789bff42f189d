"""The streaming fault cases: small outputs that broke public parsers (see README.md beside this file)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

__all__ = ["CASES_FILE", "load"]

CASES_FILE = Path(__file__).with_name("streaming-faults.jsonl")


@lru_cache(maxsize=None)
def _all() -> tuple[dict, ...]:
    lines = CASES_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def load(parser: str | None = None) -> list[dict]:
    """The fault cases as dicts (fields in README.md), optionally only those of one format.

    ``parser``: a registry name (``deepseek_v32``); ``None`` for all. Each
    call returns fresh copies, so a caller may change them.
    """
    return [json.loads(json.dumps(c)) for c in _all() if parser is None or c["parser"] == parser]
