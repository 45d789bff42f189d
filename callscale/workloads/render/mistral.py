"""Renderer for Mistral tool calls (``mistral``).

Lays calls out as mistral-common's V13 instruct tokenizer encodes an
assistant turn (Magistral, Devstral): the content, then per call
``[TOOL_CALLS]NAME[ARGS]{JSON}`` with no separators and no call id::

    CONTENT[TOOL_CALLS]NAME[ARGS]{JSON}[TOOL_CALLS]NAME[ARGS]{JSON}

The arguments are ``json.dumps(arguments, ensure_ascii=False)``, as the
tokenizer writes them. Token strings come from :mod:`callscale.parsers.mistral`.
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.mistral import ARGS, SPECIAL_TOKENS, TOOL_CALLS

from . import Call, Renderer, register

__all__ = ["MistralRenderer"]


class MistralRenderer(Renderer):
    """``CONTENT`` + one ``[TOOL_CALLS]NAME[ARGS]{JSON}`` per call."""

    name = "mistral"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = TOOL_CALLS
    schema_typed = False
    #: The arguments end at the object's own closing bracket, so a JSON string may hold the tokens as text.
    closing_tags = (TOOL_CALLS, ARGS)

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        out = [content]
        for call in calls:
            out += [TOOL_CALLS, call.name, ARGS, json.dumps(dict(call.arguments), ensure_ascii=False)]
        return "".join(out)


register(MistralRenderer())
