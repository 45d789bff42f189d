"""Test fixture: a correct parser whose cost is per request, not per character.

:class:`VocabularyParser` is the built-in ``qwen3`` parser whose constructor builds a pattern over a
tokenizer's whole special-token vocabulary (100,000 strings, escaped and joined into one alternation,
then ``re.compile``), as vLLM's Mistral tool parser did on every request (vLLM issue 58145: the
parser was made per request and compiled patterns over every special token on the event loop). Its
streaming is the built-in parser's, linear in the length of a call, so no length axis shows the
cost; the gate's per-request rule (``request_factor``, docs/gate.md) must fail it. Python's pattern
cache spares it the compilation after the first request, not the escaping and joining: about 0.1 s of
CPU a request natively.

Use it as ``--parser vocabulary_parser:VocabularyParser --workload-format qwen3`` with
``tests/helpers`` importable.
"""

from __future__ import annotations

import re

from callscale.parsers.qwen import Qwen3Parser

__all__ = ["VocabularyParser", "SPECIAL_TOKENS"]

SPECIAL_TOKENS = tuple(f"<|special_{i:06d}|>" for i in range(100_000))
"""The tokenizer's special tokens (what a real one lists: ``<|...|>`` strings, one per id)."""


class VocabularyParser(Qwen3Parser):
    """The built-in ``qwen3`` parser plus a pattern over :data:`SPECIAL_TOKENS` made in its constructor."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.special = re.compile("|".join(map(re.escape, SPECIAL_TOKENS)))
