"""Renderers: write tool calls as a model of each format would, for workloads and tests.

A renderer is registered under the parser name of its format (``deepseek_v32``
...) and lays calls out as the model publisher's encoder or chat template does
(see ``docs/formats.md``). Token strings are imported from the parser
modules, never spelled again here.

    >>> from workloads import render
    >>> r = render.get("deepseek_v3")
    >>> text = r.render([render.Call("get_weather", {"city": "Paris"})], content="Hi.")

Each renderer module in this package calls :func:`register` at import; all
are imported on first use of the registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

__all__ = ["Call", "Renderer", "register", "get", "names"]


@dataclass(frozen=True)
class Call:
    """One tool call to render: the function name and its arguments (a JSON object)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


class Renderer:
    """Base class of a format's renderer.

    ``name``: the format (= parser registry name). ``special_tokens``: the
    strings a detokenizer emits whole (the ``tokens:K`` chunking never splits
    them). ``model_special``: those of ``special_tokens`` the model's own
    tokenizer marks special (vLLM's ``all_special_tokens``; engine parsers drop
    special tokens that are not their terminals), spelled with the parser
    module's constants; ``callscale.tokenizers.MODEL_SPECIAL`` reads it, and
    ``None`` (unstated) fails ``tests/workloads/test_tokenizers.py``. ``opener``: the
    calls-block opener, what a degenerate model repeats.
    ``schema_typed``: values are strings unless the tool schema gives another
    type, so a workload must pass tools with schemas. ``closing_tags``: the
    format's closing strings that a string value may contain as literal text
    (an agent editing parser code) and that a correct parser keeps in the
    value; ``()`` (the default) when a value cannot contain them (they are
    special tokens, or the format has no way to tell), and the
    ``literal_closing_tags`` workload then falls back to plain source code.
    ``stray_openers_are_content``: what the format's parser makes of openers
    that start no call (a degenerate model repeating the opener): ``False``,
    dropped as markup (no content); ``True``, passed on verbatim as content.
    Either way no call; each parser module documents its choice.
    ``max_value_depth``: the deepest nesting of objects and arrays in one argument value the format's
    parser reads, where the format limits it (``None``: no limit of its own; the ``deep_value`` workload
    nests no deeper).
    """

    name: str = ""
    special_tokens: tuple[str, ...] = ()
    model_special: tuple[str, ...] | None = None
    opener: str = ""
    schema_typed: bool = False
    closing_tags: tuple[str, ...] = ()
    stray_openers_are_content: bool = False
    max_value_depth: int | None = None

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output: ``content``, then the calls (a calls block), as the encoder lays them out.

        With no calls, the output is ``content`` alone.
        """
        raise NotImplementedError

    def render_segments(self, segments: Sequence[tuple[str, Sequence[Call]]]) -> str:
        """The model output of content and calls in turn: each ``(content, calls)`` segment's content, then its
        calls (a calls block), as the model writes text between calls. By default each segment is rendered
        alone (:meth:`render`) and the renderings joined; a format whose output ends its turn after a calls
        block overrides this to continue the turn instead."""
        return "".join(self.render(calls, content) for content, calls in segments)


_RENDERERS: dict[str, Renderer] = {}
_loaded = False


def register(renderer: Renderer) -> Renderer:
    """Register a renderer instance under ``renderer.name``."""
    if renderer.name in _RENDERERS:
        raise ValueError(f"renderer {renderer.name!r} registered twice")
    _RENDERERS[renderer.name] = renderer
    return renderer


def _load() -> None:
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def names() -> list[str]:
    """Formats with a registered renderer, sorted."""
    _load()
    return sorted(_RENDERERS)


def get(name: str) -> Renderer:
    """The renderer of format ``name`` (an alias of :data:`callscale.parsers.ALIASES`: of its format);
    ``KeyError`` (listing known names) if none."""
    from callscale.parsers import canonical

    _load()
    try:
        return _RENDERERS[canonical(name)]
    except KeyError:
        raise KeyError(f"no renderer for format {name!r}; known: {', '.join(sorted(_RENDERERS))}") from None
