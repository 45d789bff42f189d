"""Shared test data: the fault cases and the chunkings every parser test streams under."""

from __future__ import annotations

import json
from pathlib import Path

CASES_FILE = Path(__file__).parent / "cases" / "streaming-faults.jsonl"

#: whole, one character, 2, 3, 4 and 7 characters per delta, and 20 seeded
#: random splits of 1-8 characters (these split inside special tokens too).
CHUNKINGS = ["whole", "char", "fixed:2", "fixed:3", "fixed:4", "fixed:7"] + [
    f"random:{seed}:8" for seed in range(20)
]


def load_cases(parser: str | None = None) -> list[dict]:
    """The fault cases, optionally only those for one parser (registry name)."""
    cases = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [c for c in cases if parser is None or c["parser"] == parser]
