"""SGLang's tool-call detectors (``sglang.srt.function_call``, ``BaseFormatDetector``).

Constructor: no arguments. Tools: ``Tool`` of
``sglang.srt.entrypoints.openai.protocol``. Results: ``StreamingParseResult``
as callscale's. ``finish(tools)`` exists since 0.5 (the adapter calls it; a
detector without it gets the documented no-op of :mod:`._detector`).
"""

from __future__ import annotations

from typing import Any, Callable

from ._detector import make_factory

TOOL_MODELS = ("Tool",)
PROTOCOL_MODULES = ("sglang.srt.entrypoints.openai.protocol",)


def factory(cls: Any, fmt: str) -> Callable[[], Any]:
    """A factory of callscale-protocol parsers around the SGLang detector class ``cls``."""
    return make_factory(cls, "sglang", TOOL_MODELS, PROTOCOL_MODULES)
