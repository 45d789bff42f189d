"""Renderer for Upstage Solar Open 2 tool calls (``solar_open2``).

Layout as vLLM's Solar Open 2 tests give the model's output (``tests/tool_parsers/test_solar_open2_tool_parser.py``;
``docs/formats.md``, "Solar Open 2")::

    CONTENT<|tool_call:start|>NAME
    <|tool_arg:start|>KEY<|tool_arg:value|>VALUE<|tool_arg:end|>
    <|tool_call:end|>

one argument a line, calls joined by a newline. A string value is written verbatim, any other value as JSON
(``json.dumps(value, ensure_ascii=False)``); values are strings unless the schema says otherwise
(``schema_typed``). Token strings come from :mod:`callscale.parsers.solar_open2`.
"""

from __future__ import annotations

from typing import Sequence

from callscale.parsers.solar_open2 import (ARG_END, ARG_START, ARG_VALUE, CALL_END, CALL_START, MODEL_SPECIAL,
                                           NAME_END, SPECIAL_TOKENS)

from . import Call, Renderer, register
from .step3 import value_text

__all__ = ["SolarOpen2Renderer"]


class SolarOpen2Renderer(Renderer):
    """``CONTENT`` + one call a block, the blocks joined by ``\\n``."""

    name = "solar_open2"
    special_tokens = SPECIAL_TOKENS
    model_special = MODEL_SPECIAL
    opener = CALL_START
    schema_typed = True
    #: parsers.solar_open2 drops a start token that starts no call (markup)
    stray_openers_are_content = False

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        blocks = []
        for call in calls:
            out = [CALL_START, call.name, NAME_END]
            for key, value in call.arguments.items():
                out += [ARG_START, key, ARG_VALUE, value_text(value), ARG_END, "\n"]
            out.append(CALL_END)
            blocks.append("".join(out))
        return content + "\n".join(blocks)


register(SolarOpen2Renderer())
