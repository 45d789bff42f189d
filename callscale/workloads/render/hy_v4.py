"""Renderer for Tencent Hunyuan V4 tool calls (``hy_v4``).

Layout as the engines constrain and read the model's output (vLLM 0.34's ``hy_v4`` structural tag: "Adjacent
<tool_call> blocks have no separator, and argument values are emitted verbatim"; SMG's ``hy_v4`` tests;
``docs/formats.md``, "Hunyuan V4")::

    CONTENT<tool_calls:6124c78e><tool_call:6124c78e>NAME<arg_key:6124c78e>KEY</arg_key:6124c78e><arg_value:6124c78e>VALUE</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>

A string value is written verbatim, any other value as JSON (``json.dumps(value, ensure_ascii=False)``),
as the Hy3 template writes them. Tokens carry the suffix of the public checkpoints (``SUFFIX``); token
strings come from :mod:`callscale.parsers.hy_v4`. Values are strings unless the schema says otherwise.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.hy_v4 import MODEL_SPECIAL, SPECIAL_TOKENS, SUFFIX, tags

from . import Call, Renderer, register

__all__ = ["HyV4Renderer", "value_text"]


def value_text(value: Any) -> str:
    """A parameter value as the model writes it: a string verbatim, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


class HyV4Renderer(Renderer):
    """``CONTENT<tool_calls:S>`` + the calls, back to back + ``</tool_calls:S>``."""

    name = "hy_v4"
    special_tokens = SPECIAL_TOKENS
    model_special = MODEL_SPECIAL
    opener = tags(SUFFIX).calls_open
    schema_typed = True
    #: a value may hold these as text; the parser keeps them (its closing-tag rule, parsers.hy_v4)
    closing_tags = (tags(SUFFIX).value_close, tags(SUFFIX).call_close)
    #: parsers.hy_v4 drops the block token of a block that starts no call (markup)
    stray_openers_are_content = False

    def __init__(self, suffix: str = SUFFIX) -> None:
        self.tags = tags(suffix)

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        t = self.tags
        out = [content, t.calls_open]
        for call in calls:
            out += [t.call_open, call.name]
            for key, value in call.arguments.items():
                out += [t.key_open, key, t.key_close, t.value_open, value_text(value), t.value_close]
            out.append(t.call_close)
        out.append(t.calls_close)
        return "".join(out)


register(HyV4Renderer())
