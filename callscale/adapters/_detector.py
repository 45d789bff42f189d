"""The protocol TensorRT-LLM and SGLang share: ``detect_and_parse`` and ``parse_streaming_increment``.

Both engines' parsers (TensorRT-LLM's ``BaseToolParser``, ported from
SGLang's ``BaseFormatDetector``) take no constructor arguments and return a
``StreamingParseResult(normal_text, calls=[ToolCallItem(tool_index, name,
parameters)])``, the shape callscale's contract has (DESIGN.md), so results
pass through unchanged. What differs from callscale's contract: the tools
are the engine's pydantic model (converted once per list,
:class:`~callscale.adapters._tools.ToolConverter`), and a parser may lack
``finish(tools)`` (TensorRT-LLM's ``BaseToolParser`` has none; its serving
layer calls nothing at the end of a stream), in which case the adapter's
``finish`` returns an empty result: a no-op, so text such a parser holds
back at the end is lost, as it is in the engine.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._tools import ToolConverter, find_class


class DetectorAdapter:
    """One stream of an engine parser of the TensorRT-LLM/SGLang protocol, in callscale's contract."""

    #: Set by :func:`make_factory`: the engine's class, its tool model, whether it has ``finish``.
    engine_class: Any = None
    tool_model: Any = None
    has_finish: bool = True

    def __init__(self) -> None:
        self.inner = self.engine_class()
        self._tools = ToolConverter(self.tool_model)

    def parse_streaming_increment(self, delta: str, tools: Sequence[Any]) -> Any:
        return self.inner.parse_streaming_increment(delta, self._tools(tools))

    def detect_and_parse(self, text: str, tools: Sequence[Any]) -> Any:
        return self.inner.detect_and_parse(text, self._tools(tools))

    def finish(self, tools: Sequence[Any]) -> Any:
        """The engine's ``finish(tools)``, or an empty result where the engine has none (documented no-op)."""
        if self.has_finish:
            return self.inner.finish(self._tools(tools))
        from callscale.parsers.base import StreamingParseResult

        return StreamingParseResult()


def make_factory(cls: Any, engine: str, tool_names: Sequence[str], protocol_modules: Sequence[str]) -> Callable[[], Any]:
    """A subclass of :class:`DetectorAdapter` bound to the engine class ``cls`` (call it for a fresh parser).

    Raises :class:`~callscale.adapters.AdapterError` when ``cls`` lacks
    ``parse_streaming_increment`` or ``detect_and_parse``.
    """
    from .protocol import AdapterError

    missing = [m for m in ("parse_streaming_increment", "detect_and_parse") if not callable(getattr(cls, m, None))]
    if missing:
        name = getattr(cls, "__name__", cls)
        from .protocol import ENGINES

        roots = {(getattr(k, "__module__", "") or "").split(".")[0] for k in getattr(cls, "__mro__", (cls,))}
        if ENGINES.get(engine, ("",))[0] not in roots and not callable(getattr(cls, "finish", None)):
            # read as an engine's class only because it lacks finish(): say what the contract asks
            raise AdapterError(f"{name!s} has no {', '.join(m + '()' for m in missing)} and no finish(): a parser "
                               "needs parse_streaming_increment(delta, tools), detect_and_parse(text, tools) and "
                               "finish(tools) (docs/DESIGN.md, the parser contract; a TensorRT-LLM class may "
                               "lack finish() only)")
        raise AdapterError(f"{name!s} has no {', '.join(missing)}(): not a {engine} tool parser")
    attrs = {
        "engine_class": cls,
        "tool_model": find_class(cls, tool_names, protocol_modules),
        "has_finish": callable(getattr(cls, "finish", None)),
        "__doc__": f"{cls.__module__}.{cls.__name__} ({engine}) in callscale's contract.",
    }
    return type(f"{engine}:{cls.__name__}", (DetectorAdapter,), attrs)
