"""Tool lists in an engine's own tool model, converted once per list.

callscale's workloads and fault cases give tools as OpenAI-style dicts
(``{"type": "function", "function": {"name", "description", "parameters"}}``).
Engines' parsers read them as the engine's pydantic model
(``tool.function.name``). :class:`ToolConverter` finds that model and
converts each list the first time it is passed (a parser receives the same
list object on every increment of a stream, so the cost is once per stream).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Sequence


def find_class(cls: Any, names: Sequence[str], modules: Sequence[str]) -> Any:
    """The first class called one of ``names`` in the modules of ``cls`` and its bases, else in ``modules``.

    The modules of the parser class come first because that is where an
    engine's parser imports its model from (``from ..openai_protocol import
    ChatCompletionToolsParam as Tool``); ``modules`` are the engine's protocol
    modules, tried in order (a module that fails to import is skipped).
    ``None`` when there is none.
    """
    spaces = [vars(sys.modules[k.__module__]) for k in getattr(cls, "__mro__", ())
              if k.__module__ in sys.modules]
    for space in spaces:
        for name in names:
            found = space.get(name)
            if isinstance(found, type):
                return found
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            continue
        for name in names:
            found = getattr(module, name, None)
            if isinstance(found, type):
                return found
    return None


def to_model(model: Any, data: dict) -> Any:
    """``data`` validated into the pydantic ``model`` (v2 ``model_validate``, v1 ``parse_obj``, else ``model(**data)``)."""
    for method in ("model_validate", "parse_obj"):
        if callable(getattr(model, method, None)):
            return getattr(model, method)(data)
    return model(**data)


class ToolConverter:
    """Converts a tool list to ``model`` instances (plain dicts when ``model`` is ``None``), once per list.

    The last list seen and its conversion are kept; a different list object
    is converted anew. A tool the model rejects is left out (an engine
    rejects such a request before its parser sees it).
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self._source: Any = None
        self._converted: list = []

    def __call__(self, tools: Sequence[Any] | None) -> list:
        if tools is self._source and tools is not None:
            return self._converted
        converted = []
        for tool in tools or ():
            if self.model is None or isinstance(tool, self.model):
                converted.append(tool)
                continue
            data = dict(tool) if isinstance(tool, dict) else tool
            if isinstance(data, dict) and "function" not in data:  # a bare function definition
                data = {"type": "function", "function": data}
            try:
                converted.append(to_model(self.model, data))
            except Exception:
                continue
        self._source, self._converted = tools, converted
        return converted
