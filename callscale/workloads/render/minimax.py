"""Renderer for MiniMax M2 tool calls (``minimax_m2``).

Layout as the MiniMax-M2 ``chat_template.jinja`` writes an assistant turn
with tool calls (HF's ``trim_blocks``/``lstrip_blocks`` applied)::

    CONTENT
    <minimax:tool_call>
    <invoke name="NAME">
    <parameter name="KEY">VALUE</parameter>
    </invoke>
    </minimax:tool_call>

The newline before the block is written even when the content is empty.
All calls share one block. A string value is written verbatim, any other
value as ``tojson`` (``json.dumps(value, ensure_ascii=False)``). Token
strings come from :mod:`callscale.parsers.minimax`. Values are strings unless the
schema says otherwise, so workloads must pass tools with schemas
(``schema_typed``).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.minimax import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    INVOKE_CLOSE,
    INVOKE_OPEN,
    LAYOUT_NEWLINE,
    PARAM_CLOSE,
    PARAM_OPEN,
    SPECIAL_TOKENS,
    TAG_END,
)

from . import Call, Renderer, register

__all__ = ["MiniMaxM2Renderer", "value_text", "invoke_text"]


def value_text(value: Any) -> str:
    """A parameter value as the template writes it: a string verbatim, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def invoke_text(call: Call, invoke_open: str, param_open: str, param_close: str, invoke_close: str) -> list[str]:
    """One invoke's pieces in M2's grammar (the tags of a spelling: M2's, Muse Glimmer's ``atem:``): its head,
    one parameter a line, its closing tag and the newline after it."""
    out = [invoke_open, call.name, TAG_END, "\n"]
    for key, value in call.arguments.items():
        out += [param_open, key, TAG_END, value_text(value), param_close, "\n"]
    out += [invoke_close, "\n"]
    return out


class MiniMaxM2Renderer(Renderer):
    """``CONTENT\\n<minimax:tool_call>\\n`` + one ``<invoke>`` per call + ``</minimax:tool_call>``."""

    name = "minimax_m2"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = BLOCK_OPEN
    stray_openers_are_content = True  # the parser keeps openers that start no call as content
    schema_typed = True
    #: a value may hold these as text; the parser keeps them (closing-tag rule, parsers.minimax)
    closing_tags = (PARAM_CLOSE, INVOKE_CLOSE, BLOCK_CLOSE)
    #: parsers.minimax passes a block that starts no call on as content, verbatim
    stray_openers_are_content = True

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [content, LAYOUT_NEWLINE, BLOCK_OPEN, "\n"]
        for call in calls:
            out += invoke_text(call, INVOKE_OPEN, PARAM_OPEN, PARAM_CLOSE, INVOKE_CLOSE)
        out.append(BLOCK_CLOSE)
        return "".join(out)


register(MiniMaxM2Renderer())
