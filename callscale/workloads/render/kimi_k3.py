"""Renderer for Kimi K3 XTML output (``kimi_k3``).

Layout as ``encoding_k3.py`` (moonshotai/Kimi-K3) writes an assistant turn,
quoted by vLLM 0.33 (``structural_tag_registry.py``, ``kimi_k3_tool_parser.py``)
and TensorRT-LLM (``kimi_k3_tool_parser.py``): no layout between elements.
What the model generates after a generation prompt that opened the response
channel (``<|open|>message role="assistant"<|sep|><|open|>response<|sep|>``)::

    CONTENT<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|><|close|>call<|sep|>...<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>

``index`` counts from 1. ``type`` follows the value's JSON type
(``encoding_k3._xtml_type``: an integer is ``number``); a string value is
written raw, any other as JSON (``json.dumps(value, ensure_ascii=False)``;
the model file's separators are not in the stored sources). Attribute values
escape ``&`` and ``"``. Token strings come from :mod:`callscale.parsers.kimi_k3`.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.kimi_k3 import (
    ARG_CLOSE,
    CALL_CLOSE,
    END_OF_MSG,
    MESSAGE_CLOSE,
    RESPONSE_CLOSE,
    SPECIAL_TOKENS,
    TOOLS_CLOSE,
    TOOLS_OPEN,
    open_tag,
)

from . import Call, Renderer, register

__all__ = ["KimiK3Renderer", "xtml_type", "xtml_value"]


def xtml_type(value: Any) -> str:
    """The ``type`` attribute of a value: string, boolean, number, null, object or array."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return "object" if isinstance(value, dict) else "array"


def xtml_value(value: Any) -> str:
    """A value's body: a string raw, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class KimiK3Renderer(Renderer):
    """``CONTENT<|close|>response<|sep|>`` + the tools element + ``<|close|>message<|sep|><|end_of_msg|>``."""

    name = "kimi_k3"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = TOOLS_OPEN
    schema_typed = False  # the type attribute types each value
    #: a string value may hold these as text; the parser keeps them (closing-tag rule, parsers.kimi_k3)
    closing_tags = (ARG_CLOSE, CALL_CLOSE, TOOLS_CLOSE)
    #: parsers.kimi_k3 drops a repeated tools opener as markup
    stray_openers_are_content = False

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [content, RESPONSE_CLOSE, TOOLS_OPEN]
        for index, call in enumerate(calls, 1):
            out.append(open_tag("call", tool=call.name, index=str(index)))
            for key, value in call.arguments.items():
                out += [open_tag("argument", key=key, type=xtml_type(value)), xtml_value(value), ARG_CLOSE]
            out.append(CALL_CLOSE)
        out += [TOOLS_CLOSE, MESSAGE_CLOSE, END_OF_MSG]
        return "".join(out)


register(KimiK3Renderer())
