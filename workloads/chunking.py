"""Chunkings: the ways a server may split model output into deltas.

A chunking spec is a string:

| spec | deltas |
|---|---|
| ``whole`` | the whole text in one delta |
| ``char`` | one character per delta |
| ``fixed:K`` | K characters per delta (the last may be shorter) |
| ``random:SEED:MAX`` | seeded random sizes from 1 to MAX characters, splitting anywhere, also inside special tokens |
| ``tokens:K`` | K characters per delta, but a special token is never split: it is one token of the model's vocabulary, and a detokenizer emits it whole (the default, ``tokens:4``) |

All sizes are in characters. ``"".join(chunk(text, spec)) == text`` always.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["Chunking", "parse_chunking", "chunk", "DEFAULT_CHUNKING", "CHECK_CHUNKINGS"]

DEFAULT_CHUNKING = "tokens:4"

#: The chunkings a correctness check streams every case under: whole, one
#: character, 2, 3, 4 and 7 characters per delta, and 20 seeded random splits
#: of 1-8 characters (these split inside special tokens too).
CHECK_CHUNKINGS = ("whole", "char", "fixed:2", "fixed:3", "fixed:4", "fixed:7") + tuple(
    f"random:{seed}:8" for seed in range(20)
)


@dataclass(frozen=True)
class Chunking:
    """A parsed chunking spec: ``kind`` in whole/char/fixed/random/tokens, ``size`` (characters), ``seed``."""

    kind: str
    size: int = 1
    seed: int = 0

    def __str__(self) -> str:
        if self.kind in ("whole", "char"):
            return self.kind
        if self.kind == "random":
            return f"random:{self.seed}:{self.size}"
        return f"{self.kind}:{self.size}"

    def split(self, text: str, special_tokens: Sequence[str] = ()) -> list[str]:
        """Split ``text`` into deltas; ``special_tokens`` matter for ``tokens:K`` only."""
        if not text:
            return []
        if self.kind == "whole":
            return [text]
        if self.kind in ("char", "fixed"):
            k = self.size
            return [text[i:i + k] for i in range(0, len(text), k)]
        if self.kind == "random":
            rng = random.Random(self.seed)
            out, i = [], 0
            while i < len(text):
                k = rng.randint(1, self.size)
                out.append(text[i:i + k])
                i += k
            return out
        return _token_split(text, self.size, special_tokens)


def _token_split(text: str, k: int, special_tokens: Sequence[str]) -> list[str]:
    """K characters per delta, each special token a delta (part of one) of its own size."""
    specials = sorted({t for t in special_tokens if t}, key=len, reverse=True)
    if not specials:
        return [text[i:i + k] for i in range(0, len(text), k)]
    pattern = re.compile("|".join(re.escape(t) for t in specials))
    out: list[str] = []
    pos = 0
    for hit in pattern.finditer(text):
        out.extend(text[i:min(i + k, hit.start())] for i in range(pos, hit.start(), k))
        out.append(hit.group())
        pos = hit.end()
    out.extend(text[i:i + k] for i in range(pos, len(text), k))
    return out


_SPEC = re.compile(r"^(whole|char|fixed:(\d+)|tokens:(\d+)|random:(\d+):(\d+))$")


def parse_chunking(spec: str) -> Chunking:
    """Parse a chunking spec (see the module docstring).

    Raises ``ValueError`` with a one-line message for anything else, or a
    size below 1.
    """
    hit = _SPEC.match(spec.strip()) if isinstance(spec, str) else None
    if hit is None:
        raise ValueError(
            f"bad chunking {spec!r}: expected whole, char, fixed:K, tokens:K or random:SEED:MAX"
        )
    body = hit.group(1)
    if body in ("whole", "char"):
        return Chunking(body)
    if hit.group(2) is not None:
        chunking = Chunking("fixed", int(hit.group(2)))
    elif hit.group(3) is not None:
        chunking = Chunking("tokens", int(hit.group(3)))
    else:
        chunking = Chunking("random", int(hit.group(5)), int(hit.group(4)))
    if chunking.size < 1:
        raise ValueError(f"bad chunking {spec!r}: the size must be at least 1 character")
    return chunking


def chunk(text: str, spec: str | Chunking = DEFAULT_CHUNKING, special_tokens: Sequence[str] = ()) -> list[str]:
    """Split ``text`` into deltas by a chunking spec; see :func:`parse_chunking`."""
    chunking = spec if isinstance(spec, Chunking) else parse_chunking(spec)
    return chunking.split(text, special_tokens)
