"""TensorRT-LLM's tool parsers (``tensorrt_llm.serve.tool_parser``, ``BaseToolParser``).

Constructor: no arguments. Tools: ``ChatCompletionToolsParam`` of
``tensorrt_llm.serve.openai_protocol`` (imported as ``Tool`` by
``base_tool_parser.py``). Results: ``StreamingParseResult`` as callscale's.
``BaseToolParser`` has no ``finish``: the adapter supplies a no-op one
(see :mod:`._detector`).
"""

from __future__ import annotations

from typing import Any, Callable

from ._detector import make_factory

TOOL_MODELS = ("Tool", "ChatCompletionToolsParam")
PROTOCOL_MODULES = ("tensorrt_llm.serve.openai_protocol",)


def factory(cls: Any, fmt: str) -> Callable[[], Any]:
    """A factory of callscale-protocol parsers around the TensorRT-LLM parser class ``cls``."""
    return make_factory(cls, "trtllm", TOOL_MODELS, PROTOCOL_MODULES)
