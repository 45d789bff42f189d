"""Which parsers a run measures: registered ones by name, the ``null`` floor, and users' parsers.

A user's parser plugs in as ``module.path:Attribute``, where the attribute is
a class or any factory that, called with no arguments, returns a fresh
object with ``parse_streaming_increment(delta, tools)`` and
``finish(tools)`` (``detect_and_parse(text, tools)`` too, for the checker).
It is given with the format whose workloads to render for it (a registered
parser's format is its own name). The current directory is importable, as
with ``python -m``.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

from .measure import NULL, NullParser

__all__ = ["ParserSpec", "PluginError", "resolve", "load_factory", "is_plugin", "REQUIRED_METHODS"]

REQUIRED_METHODS = ("parse_streaming_increment", "finish")


class PluginError(ValueError):
    """A parser selection that cannot be used (the message is one line)."""


@dataclass(frozen=True)
class ParserSpec:
    """A parser to measure: ``name`` as shown, the ``format`` its workloads are rendered in
    (``None`` for the format-agnostic ``null``), and a ``factory`` giving a fresh parser."""

    name: str
    format: str | None
    factory: Callable[[], Any]
    plugin: bool = False


def is_plugin(name: str) -> bool:
    """True for a ``module.path:Attribute`` selection."""
    return ":" in name


def load_factory(target: str) -> Callable[[], Any]:
    """Import ``module.path:Attribute`` and check that it makes a parser.

    Raises :class:`PluginError` when the module or attribute is missing, the
    attribute cannot be called with no arguments, or what it returns lacks
    ``parse_streaming_increment`` or ``finish``.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise PluginError(f"bad parser {target!r}: expected module.path:ClassOrFactory")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise PluginError(f"cannot import {module_name!r} for parser {target!r}: "
                          f"{type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise PluginError(f"{target!r} is not a class or factory")
    try:
        sample = obj()
    except Exception as exc:
        raise PluginError(f"{target}() failed: {type(exc).__name__}: {exc}") from None
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(sample, m, None))]
    if missing:
        raise PluginError(f"{target}() gives a {type(sample).__name__} without {', '.join(missing)}()")
    return obj


def resolve(name: str, fmt: str | None = None) -> ParserSpec:
    """The :class:`ParserSpec` for a selection.

    ``name``: a registered parser (its format is its name), ``null``, or
    ``module.path:Attribute`` (then ``fmt``, a format with a renderer, is
    required). Raises :class:`PluginError` with a one-line message otherwise.
    """
    if name == NULL:
        return ParserSpec(NULL, None, NullParser)
    if is_plugin(name):
        if not fmt:
            raise PluginError(f"parser {name!r} needs --workload-format NAME: the format whose workloads "
                              "to render for it")
        from workloads import render

        known = render.names()
        if fmt not in known:
            raise PluginError(f"unknown format {fmt!r}; known: {', '.join(known) or 'none yet'}")
        return ParserSpec(name, fmt, load_factory(name), plugin=True)
    import parsers

    known = parsers.names()
    if name not in known:
        raise PluginError(f"unknown parser {name!r}; known: {', '.join(known + [NULL])},"
                          " or module.path:ClassOrFactory with --format")
    return ParserSpec(name, name, parsers.get(name))
