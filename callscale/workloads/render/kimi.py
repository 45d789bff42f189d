"""Renderer for Kimi K2 tool calls (``kimi_k2``).

Layout as the Kimi K2 ``chat_template.jinja`` writes an assistant turn with
tool calls: the content, then the section with no separators::

    CONTENT<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{JSON}<|tool_call_end|>...<|tool_calls_section_end|>

The id is ``functions.NAME:INDEX`` with INDEX counting the calls from 0; the
arguments are ``tojson`` (``json.dumps(arguments, ensure_ascii=False)``,
HF's filter). Token strings come from :mod:`callscale.parsers.kimi`.
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.kimi import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    ID_PREFIX,
    SECTION_BEGIN,
    SECTION_END,
    SPECIAL_TOKENS,
)

from . import Call, Renderer, register

__all__ = ["KimiK2Renderer"]


class KimiK2Renderer(Renderer):
    """``CONTENT`` + section begin + one ``<|tool_call_begin|>...<|tool_call_end|>`` per call + section end."""

    name = "kimi_k2"
    special_tokens = SPECIAL_TOKENS
    model_special = (SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARGUMENT_BEGIN, CALL_END)
    opener = SECTION_BEGIN
    schema_typed = False
    #: A JSON string may hold these as text (see parsers.kimi).
    closing_tags = (CALL_END, SECTION_END)

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [content, SECTION_BEGIN]
        for index, call in enumerate(calls):
            out += [CALL_BEGIN, f"{ID_PREFIX}{call.name}:{index}", ARGUMENT_BEGIN,
                    json.dumps(dict(call.arguments), ensure_ascii=False), CALL_END]
        out.append(SECTION_END)
        return "".join(out)


register(KimiK2Renderer())
