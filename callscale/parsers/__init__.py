"""Streaming tool-call parsers, one module per format family, and their registry.

    >>> from callscale import parsers
    >>> parsers.names()                      # registered format names (aliases: parsers.ALIASES)
    >>> parser = parsers.get("deepseek_v32")()   # a fresh parser
    >>> parser.parse_streaming_increment(delta, tools)

A format module registers its parser classes with :func:`register`; every
module of this package is imported on first use of the registry, so adding a
module is all it takes to add a format.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, TypeVar

from .base import StreamingParseResult, ToolCallItem, ToolParser

__all__ = ["ToolParser", "ToolCallItem", "StreamingParseResult", "register", "get", "names", "ALIASES", "canonical", "only_imported"]

_REGISTRY: dict[str, type[ToolParser]] = {}

#: Other names of a registered format: ``{alias: parser name}``. A model
#: family whose chat template writes exactly a known format's tool calls is
#: that format; ``get``, ``--parser``, ``--workload-format`` and ``callscale
#: parsers`` accept the alias. The evidence for each is in ``docs/formats.md``
#: ("GLM-5.x and Qwen3.5 / Qwen3.6"; "Step-3" for ``step3p5``; "Poolside V1" for ``poolside_v1``; "BerryLM and
#: Nemotron 3" for ``berrylm`` and ``nemotron_v3``).
ALIASES: dict[str, str] = {
    "berrylm": "qwen3_coder",  # BerryLM: vLLM's berrylm parser and SGLang's detector read Qwen3-Coder's XML
    "glm5": "glm47",  # GLM-5.x: GLM-4.7's tool-call text; vLLM and SGLang serve it with glm47
    "nemotron_v3": "qwen3_coder",  # Nemotron 3: vLLM's nemotron_v3 parser is its Qwen3 XML one; SMG: qwen_xml
    "poolside_v1": "glm47",  # Poolside Laguna: GLM-4.5/4.7's tags, content then <tool_call> with no newline
    "qwen3_5": "qwen3_coder",  # Qwen3.5: Qwen3-Coder's XML (scalars as JSON, which qwen3_coder reads)
    "qwen3_6": "qwen3_coder",  # Qwen3.6: the same template as Qwen3.5
    "step3p5": "qwen3_coder",  # Step-3.5 / 3.7: vLLM's step3p5 tool parser is its Qwen3-Coder one (structural tag)
}
_NOT_FORMATS = {"base", "scanner", "jsonscan"}
_loaded = False

P = TypeVar("P", bound=type)


def register(name: str) -> Callable[[P], P]:
    """Class decorator: register a parser class under ``name`` (sets ``cls.name``)."""

    def wrap(cls: P) -> P:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"parser name {name!r} registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return wrap


def only_imported() -> None:
    """From now on the registry holds only the formats whose modules were imported so far (no other module of
    this package is read by :func:`names` or :func:`get`): a process that measures one format (the instruction
    meter's row fork, :mod:`callscale._metered`) imports that format's modules alone."""
    global _loaded
    _loaded = True


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name not in _NOT_FORMATS:
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True


def names() -> list[str]:
    """The registered parser names, sorted."""
    _load()
    return sorted(_REGISTRY)


def canonical(name: str) -> str:
    """The registered name ``name`` stands for: itself, or the format an alias (:data:`ALIASES`) names."""
    return ALIASES.get(name, name)


def get(name: str) -> type[ToolParser]:
    """The parser class registered as ``name`` (or as the format an alias names); call it for a fresh parser.

    Raises ``KeyError`` (listing the known names and aliases) for an unknown name.
    """
    _load()
    try:
        return _REGISTRY[canonical(name)]
    except KeyError:
        raise KeyError(f"unknown parser {name!r}; known: {', '.join(sorted(_REGISTRY))}; "
                       f"aliases: {', '.join(sorted(ALIASES))}") from None
