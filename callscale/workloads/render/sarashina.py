"""Renderer for SoftBank Sarashina tool calls (``sarashina``).

The layout SMG's ``sarashina.rs`` reads and its tests write (no public chat
template writes calls): the content, then ``<|tool_calls|>`` and the calls
as Python's ``repr`` of a list of ``{'name': ..., 'arguments': {...}}``
dicts (single-quoted strings, ``True``/``False``/``None``)::

    CONTENT<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]

With no calls the output is the content alone. Token strings come from
:mod:`callscale.parsers.sarashina`.
"""

from __future__ import annotations

from typing import Sequence

from callscale.parsers.sarashina import SPECIAL_TOKENS, TOOL_CALLS

from . import Call, Renderer, register

__all__ = ["SarashinaRenderer"]


class SarashinaRenderer(Renderer):
    """``CONTENT<|tool_calls|>`` + ``repr`` of the list of call dicts."""

    name = "sarashina"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = TOOL_CALLS
    #: parsers.sarashina drops a calls token that starts no list (markup); the text after it is content
    stray_openers_are_content = False

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        return content + TOOL_CALLS + repr([{"name": c.name, "arguments": dict(c.arguments)} for c in calls])


register(SarashinaRenderer())
