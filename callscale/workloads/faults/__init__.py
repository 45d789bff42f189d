"""The streaming fault cases: small outputs that broke public parsers (see README.md beside this file)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

__all__ = ["CASES_FILES", "load"]

#: ``streaming-faults.jsonl``: splits that broke streaming parsers;
#: ``model-output.jsonl``: what models really write (schema typing, the
#: mistakes the field recovers from); ``reported-outputs.jsonl``: outputs
#: from public reports of 2025-2026, each naming its thread in
#: ``source``. Same fields; a case may carry ``tools``.
CASES_FILES = (
    Path(__file__).with_name("streaming-faults.jsonl"),
    Path(__file__).with_name("model-output.jsonl"),
    Path(__file__).with_name("reported-outputs.jsonl"),
)


@lru_cache(maxsize=None)
def _all() -> tuple[dict, ...]:
    cases = []
    for path in CASES_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                case.setdefault("tools", [])
                cases.append(case)
    return tuple(cases)


def load(parser: str | None = None) -> list[dict]:
    """The fault cases as dicts (fields in README.md), optionally only those of one format.

    ``parser``: a registry name (``deepseek_v32``); ``None`` for all. Each
    call returns fresh copies, so a caller may change them.
    """
    return [json.loads(json.dumps(c)) for c in _all() if parser is None or c["parser"] == parser]
