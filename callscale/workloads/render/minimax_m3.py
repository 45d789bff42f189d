"""Renderer for MiniMax M3 tool calls (``minimax_m3``).

Layout as vLLM 0.33 (``vllm/parser/minimax_m3.py``) and TensorRT-LLM
(``minimax_m3_parser.py``) show the MiniMax-M3 ``chat_template.jinja``
writing an assistant turn with tool calls (the template itself is not in the
stored sources; the newline before the block is MiniMax M2's)::

    CONTENT
    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="NAME">
    ]<]minimax[>[<KEY>VALUE]<]minimax[>[</KEY>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

A string value is written verbatim; a number, boolean or null as its JSON
text; an object as one child element per key and a list as one ``<item>``
element per member, children written back to back; an empty object or list
as an empty element. All calls share one block. Values are typed by the
tool schema, so workloads pass tools with schemas (``schema_typed``).
Token strings come from :mod:`callscale.parsers.minimax_m3`.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.minimax_m3 import (
    MAX_DEPTH,
    BLOCK_CLOSE,
    BLOCK_OPEN,
    INVOKE_CLOSE,
    INVOKE_OPEN,
    ITEM,
    LAYOUT_NEWLINE,
    SPECIAL_TOKENS,
    TAG_END,
    THINK_CLOSE,
    THINK_OPEN,
    close_tag,
    open_tag,
)

from . import Call, Renderer, register

__all__ = ["MiniMaxM3Renderer", "element"]


def element(name: str, value: Any) -> str:
    """``]<]minimax[>[<name>BODY]<]minimax[>[</name>`` for one value, nested values as child elements."""
    if isinstance(value, str):
        body = value
    elif isinstance(value, dict):
        body = "".join(element(k, v) for k, v in value.items())
    elif isinstance(value, list):
        body = "".join(element(ITEM, v) for v in value)
    else:
        body = json.dumps(value, ensure_ascii=False)
    return open_tag(name) + body + close_tag(name)


class MiniMaxM3Renderer(Renderer):
    """``CONTENT\\n]<]minimax[>[<tool_call>\\n`` + one invoke per call + the block's end."""

    name = "minimax_m3"
    special_tokens = SPECIAL_TOKENS
    model_special = (THINK_OPEN, THINK_CLOSE)
    opener = BLOCK_OPEN
    schema_typed = True
    #: a text value may hold these as text; the parser keeps them (closing-tag rule, parsers.minimax_m3)
    closing_tags = (close_tag("content"), INVOKE_CLOSE, BLOCK_CLOSE)
    #: parsers.minimax_m3 passes a block that starts no call on as content, verbatim
    stray_openers_are_content = True
    #: Elements nest at most ``MAX_DEPTH`` deep, the parameter's element one of them.
    max_value_depth = MAX_DEPTH - 1

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [content, LAYOUT_NEWLINE, BLOCK_OPEN, "\n"]
        for call in calls:
            out += [INVOKE_OPEN, call.name, TAG_END, "\n"]
            for key, value in call.arguments.items():
                out += [element(key, value), "\n"]
            out += [INVOKE_CLOSE, "\n"]
        out.append(BLOCK_CLOSE)
        return "".join(out)


register(MiniMaxM3Renderer())
