"""Which parsers a run measures: registered ones by name, the ``null`` floor, and users' parsers.

A user's parser plugs in as ``module.path:Attribute``, where the attribute is
a class or any factory that, called with no arguments, returns a fresh
object with ``parse_streaming_increment(delta, tools)`` and
``finish(tools)`` (``detect_and_parse(text, tools)`` too, for the checker).
It is given with the format whose workloads to render for it (a registered
parser's format is its own name). The current directory is importable, as
with ``python -m``.

An engine's own parser class (TensorRT-LLM, SGLang, vLLM) plugs in the same
way, through an adapter of :mod:`callscale.adapters` chosen from the class
or forced by a prefix (``trtllm:``, ``sglang:``, ``vllm:``); for the
engines' known classes the format is looked up
(:data:`callscale.adapters.KNOWN_CLASSES`).

An installed package can register parsers by name in the entry-point group
:data:`ENTRY_POINT_GROUP` (``callscale.parsers``): ``NAME = module:Factory
[FORMAT]``, the format as the entry point's one extra (or as a
``callscale_format`` attribute of the factory). ``--parser NAME`` then finds
it; ``callscale parsers`` lists them.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

from .streaming import NULL, NullParser

__all__ = ["ParserSpec", "PluginError", "resolve", "load_factory", "is_plugin", "takes_format",
           "known_workload_format", "REQUIRED_METHODS", "ENTRY_POINT_GROUP", "entry_points", "entry_point_format", "LazyFactory", "probe", "Broken"]

REQUIRED_METHODS = ("parse_streaming_increment", "finish")

#: The entry-point group packages register parsers in: ``NAME = module:Factory [FORMAT]``.
ENTRY_POINT_GROUP = "callscale.parsers"


class PluginError(ValueError):
    """A parser selection that cannot be used (the message is one line)."""


@dataclass(frozen=True)
class ParserSpec:
    """A parser to measure: ``name`` as shown, the ``format`` its workloads are rendered in
    (``None`` for the format-agnostic ``null``), and a ``factory`` giving a fresh parser.

    A user's parser (``plugin``) has a :class:`LazyFactory`: nothing of it is
    imported until the factory is first called, which only a child process
    does (:func:`probe`, the workers of :mod:`callscale.bounded`, the
    instruction meter's child). ``broken``: why it cannot be measured (its
    child died or hung while importing or building it, in words), set by
    :func:`probe`; every measurement of it then fails with that reason.
    """

    name: str
    format: str | None
    factory: Callable[[], Any]
    plugin: bool = False
    broken: str | None = None


class LazyFactory:
    """A user's parser factory that imports ``target`` (``module.path:Attribute``) on its first call, in
    the process that calls it, and checks it (:func:`load_factory`; :class:`PluginError` on a bad one).

    Calling it returns a fresh parser, as the loaded factory does. The harness's
    own process never calls it: every parser under test is loaded in a child.
    """

    def __init__(self, target: str, fmt: str | None, engine: str | None = None) -> None:
        self.target, self.format, self.engine = target, fmt, engine
        self._loaded: Callable[[], Any] | None = None

    def load(self) -> Callable[[], Any]:
        """The real factory (imported and checked on the first call)."""
        if self._loaded is None:
            self._loaded = load_factory(self.target, self.format, self.engine)
        return self._loaded

    def __call__(self) -> Any:
        return self.load()()

    def __getattr__(self, name: str) -> Any:
        """Other attributes are the loaded factory's (this loads it: only in a child, or in a test)."""
        if name.startswith("__") or name in ("target", "format", "engine", "_loaded"):
            raise AttributeError(name)
        return getattr(self.load(), name)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return getattr(self.load(), "__name__", self.target)

    def __repr__(self) -> str:
        return f"LazyFactory({self.target!r})"


class Broken(Exception):
    """What :func:`probe` found: the parser's child died or hung while loading it (the message is the reason)."""


def is_plugin(name: str) -> bool:
    """True for a ``module.path:Attribute`` selection (with or without an engine prefix)."""
    return ":" in name


def takes_format(name: str) -> bool:
    """True for a selection whose format ``--workload-format`` may set: a plug-in or an entry point."""
    return is_plugin(name) or name in entry_points()


def entry_points() -> dict[str, Any]:
    """The installed entry points of :data:`ENTRY_POINT_GROUP`, by name (``importlib.metadata.EntryPoint``)."""
    from importlib.metadata import entry_points as installed

    return {ep.name: ep for ep in installed(group=ENTRY_POINT_GROUP)}


def entry_point_format(ep: Any, factory: Any = None) -> str | None:
    """An entry point's format: its one extra (``NAME = module:Factory [FORMAT]``), else the factory's
    ``callscale_format`` attribute, else ``None``."""
    extras = list(getattr(ep, "extras", None) or [])
    if extras:
        return extras[0]
    return getattr(factory, "callscale_format", None)


def _import(target: str) -> Any:
    from . import checkout

    target, where = checkout.split(target)
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise PluginError(f"bad parser {target!r}: expected module.path:ClassOrFactory")
    try:  # an engine's checkout (MODULE:CLASS@WHERE, or run from its top): its package roots not run
        found = checkout.locate(module_name, where)
        if found is not None:
            obj = checkout.load(found, module_name, attr)
            if not callable(obj):
                raise PluginError(f"{target!r} is not a class or factory")
            return obj
    except checkout.CheckoutError as exc:
        raise PluginError(f"cannot import {module_name!r} for parser {target!r}: {exc}") from None
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    from .adapters import engine_missing

    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        hint = engine_missing(module_name)
        raise PluginError(f"cannot import {module_name!r} for parser {target!r}: "
                          + (hint or f"{type(exc).__name__}: {' '.join(str(exc).split())}")) from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise PluginError(f"{target!r} is not a class or factory")
    return obj


def load_factory(target: str, fmt: str | None = None, engine: str | None = None) -> Callable[[], Any]:
    """Import ``module.path:Attribute`` and check that it makes a parser.

    An engine's parser class (``engine`` given, or read from the class by
    :func:`callscale.adapters.engine_of`) is wrapped in that engine's
    adapter, for the format ``fmt``. Raises :class:`PluginError` when the
    module or attribute is missing (naming the engine to install when it is
    an engine's), the attribute cannot be called with no arguments, or what
    it returns lacks ``parse_streaming_increment`` or ``finish``.
    """
    from .adapters import AdapterError, adapt, engine_of

    if not target.partition(":")[0] or not target.partition(":")[2]:
        raise PluginError(f"bad parser {target!r}: expected module.path:ClassOrFactory")
    obj = _import(target)
    engine = engine or (engine_of(obj) if isinstance(obj, type) else None)
    if engine is not None:
        try:
            obj = adapt(obj, engine, fmt or "")
        except AdapterError as exc:
            raise PluginError(f"parser {target!r}: {exc}") from None
        except KeyError as exc:  # the format has no renderer (its special tokens are unknown)
            raise PluginError(f"parser {target!r}: {exc}") from None
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

    ``name``: a registered parser (its format is its name), ``null``, a
    selection with a prefix of :data:`callscale.adapters.PREFIXED` (an engine
    reached through a harness of ours),
    ``module.path:Attribute`` with an optional engine prefix (then ``fmt``,
    a format with a renderer, is required unless the class is one of
    :data:`callscale.adapters.KNOWN_CLASSES`), or the name of an entry point
    of :data:`ENTRY_POINT_GROUP` (``fmt`` overrides its format). Raises
    :class:`PluginError` with a one-line message otherwise.
    """
    from .adapters import AdapterError, known_format, prefixed, split_prefix

    if name == NULL:
        return ParserSpec(NULL, None, NullParser)
    adapter = prefixed(name)  # an engine reached through a harness of ours (adapters.PREFIXED)
    if adapter is not None:
        try:
            fmt, subject = adapter.subject(name, fmt, known_workload_format)
        except AdapterError as exc:
            raise PluginError(str(exc)) from None
        return ParserSpec(name, fmt, subject)
    if is_plugin(name):
        engine, target = split_prefix(name)
        fmt = known_workload_format(fmt or known_format(name), name)
        if not target.partition(":")[0] or not target.partition(":")[2]:
            raise PluginError(f"bad parser {target!r}: expected module.path:ClassOrFactory")
        return ParserSpec(name, fmt, LazyFactory(target, fmt, engine), plugin=True)
    from callscale import parsers

    known = parsers.names()
    if name in known or name in parsers.ALIASES:  # an alias is measured as its format
        return ParserSpec(name, parsers.canonical(name), parsers.get(name))
    points = entry_points()
    if name in points:
        ep = points[name]
        target = ep.value.split("[")[0].strip()
        fmt = fmt or entry_point_format(ep)
        if not fmt:  # the format is an attribute of the factory: read in a child, not here
            fmt = _entry_point_attribute_format(target, name)
        fmt = known_workload_format(fmt, name)
        return ParserSpec(name, fmt, LazyFactory(target, fmt), plugin=True)
    raise PluginError(f"unknown parser {name!r}; known: {', '.join(known + sorted(points) + [NULL])},"
                      " or module.path:ClassOrFactory with --workload-format (see callscale parsers)")


def _format_of(target: str) -> str | None:
    return getattr(_import(target), "callscale_format", None)


def _entry_point_attribute_format(target: str, name: str, timeout: float = 60.0) -> str | None:
    """An entry point factory's ``callscale_format`` attribute, read in a child process."""
    from .bounded import CaseTimeout, Worker, WorkerFailed

    with Worker(_format_of, timeout) as worker:
        try:
            return worker.call(target)
        except RuntimeError as exc:
            if str(exc).startswith("PluginError: "):
                raise PluginError(str(exc)[len("PluginError: "):]) from None
            raise PluginError(f"parser {name!r} cannot be loaded: {exc}") from None
        except (CaseTimeout, WorkerFailed) as exc:
            raise PluginError(f"parser {name!r} cannot be loaded: {exc}") from None


def _load_in_child(factory: Any) -> str:
    factory.load()
    return "ok"


def probe(specs: list[ParserSpec], timeout: float | None = 120.0,
          memory_limit: int | None = None) -> list[ParserSpec]:
    """Load and build each user's parser of ``specs`` once, each in a child process of its own.

    Returns the specs, a parser whose child died or overran ``timeout``
    seconds while importing or building it marked ``broken`` with the reason
    in words (``exit 5``, ``killed by SIGSEGV``, ``timeout after 5 s``,
    ``out of memory``, ``SystemExit: 5``): that parser's rows fail, the
    others are measured. Raises :class:`PluginError` (one line) for a
    selection that cannot be used at all: the module or attribute is
    missing, or what the factory makes lacks the parser's methods.
    Registered parsers and ``null`` are not probed (they are this package's).
    """
    from dataclasses import replace

    from .bounded import DEFAULT_MEMORY_LIMIT, CaseTimeout, Worker, WorkerFailed

    out = []
    for spec in specs:
        if not isinstance(spec.factory, LazyFactory):
            out.append(spec)
            continue
        with Worker(_load_in_child, timeout, memory_limit or DEFAULT_MEMORY_LIMIT) as worker:
            try:
                worker.call(spec.factory)
                out.append(spec)
            except RuntimeError as exc:
                text = str(exc)
                if text.startswith("PluginError: "):
                    raise PluginError(text[len("PluginError: "):]) from None
                out.append(replace(spec, broken=f"{text} (loading {spec.name})"))
            except (CaseTimeout, WorkerFailed) as exc:
                out.append(replace(spec, broken=f"{exc} (loading {spec.name})"))
    return out


def known_workload_format(fmt: str | None, name: str) -> str:
    """``fmt`` checked against the renderers (:class:`PluginError` when missing or unknown)."""
    if not fmt:
        raise PluginError(f"parser {name!r} needs --workload-format NAME: the format whose workloads "
                          "to render for it")
    from callscale.parsers import canonical
    from callscale.workloads import render

    known = render.names()
    fmt = canonical(fmt)  # an alias (callscale.parsers.ALIASES) names its format
    if fmt not in known:
        from callscale.parsers import ALIASES

        raise PluginError(f"unknown format {fmt!r}; known: {', '.join(known + sorted(ALIASES)) or 'none yet'}")
    return fmt
