"""A case: one model output with its tools and the result a correct parser gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .chunking import DEFAULT_CHUNKING, Chunking, chunk
from .render import Call


@dataclass(frozen=True)
class Case:
    """One model output to stream.

    ``format``: the parser registry name whose format the text is in.
    ``workload``: the workload name. ``length``: the requested size in
    characters (``len(text)`` is close to it, not equal). ``text``: the whole
    output. ``tools``: the request's tool list (OpenAI form, dicts).
    ``content``: the expected content. ``calls``: the expected calls.
    ``special_tokens``: strings the ``tokens:K`` chunking keeps whole.
    ``seed``: the seed the workload was made with (same seed, same text).
    ``delivery``: the chunking the workload's name fixes (``write_file+parts:16``), which
    :meth:`deltas` uses whatever chunking a run asks for; ``None`` (the default) when the name fixes none.
    """

    format: str
    workload: str
    length: int
    text: str
    tools: tuple[dict[str, Any], ...]
    content: str
    calls: tuple[Call, ...]
    special_tokens: tuple[str, ...] = ()
    seed: int = 0
    delivery: str | None = None

    def deltas(self, chunking: str | Chunking = DEFAULT_CHUNKING) -> list[str]:
        """The text split into deltas by the case's own ``delivery``, else by the chunking spec given."""
        return chunk(self.text, self.delivery or chunking, self.special_tokens, self.format)

    def chunking(self, chunking: str | Chunking = DEFAULT_CHUNKING) -> str:
        """The chunking :meth:`deltas` applies when asked for ``chunking`` (the case's delivery wins)."""
        return self.delivery or str(chunking)
