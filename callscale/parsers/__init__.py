"""Streaming tool-call parsers, one module per format family, and their registry.

    >>> import parsers
    >>> parsers.names()                      # registered format names
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

__all__ = ["ToolParser", "ToolCallItem", "StreamingParseResult", "register", "get", "names"]

_REGISTRY: dict[str, type[ToolParser]] = {}
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


def get(name: str) -> type[ToolParser]:
    """The parser class registered as ``name``; call it for a fresh parser.

    Raises ``KeyError`` (listing the known names) for an unknown name.
    """
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown parser {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None
