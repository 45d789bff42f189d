"""Renderer for Inkling tool calls (``inkling``).

Layout as the engines' Inkling readers describe the model's output (vLLM
0.34's ``vllm/parser/inkling.py`` docstring, SGLang's ``InklingDetector``
structural tag; ``docs/formats.md``, "Inkling"). The generation prompt ends
in ``<|message_model|>``, so the output opens in that message's header::

    <|content_text|>CONTENT<|end_message|><|message_model|>NAME<|content_invoke_tool_json|>
    {"name":"NAME","args":{...}}<|end_message|><|message_model|>NAME2...<|content_model_end_sampling|>

(one line in the output; wrapped here). Each call is a message of its own,
its header the function name; the object is compact JSON
(``json.dumps(..., separators=(",", ":"), ensure_ascii=False)``), ``name``
first, as SGLang's structural tag forces it. Token strings come from
:mod:`callscale.parsers.inkling`.
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.inkling import (ARGS_KEY, CONTENT_TEXT, END_MESSAGE, END_SAMPLING, INVOKE_TOOL_JSON,
                                       MESSAGE_MODEL, MODEL_SPECIAL, SPECIAL_TOKENS)

from . import Call, Renderer, register

__all__ = ["InklingRenderer", "call_object"]


def call_object(call: Call) -> str:
    """One call's JSON object as the model writes it: ``{"name":"NAME","args":{...}}``."""
    return json.dumps({"name": call.name, ARGS_KEY: dict(call.arguments)}, separators=(",", ":"), ensure_ascii=False)


class InklingRenderer(Renderer):
    """A text block for the content, then one message a call, then the end of sampling."""

    name = "inkling"
    special_tokens = SPECIAL_TOKENS
    model_special = MODEL_SPECIAL
    opener = INVOKE_TOOL_JSON
    schema_typed = False
    #: a JSON string may hold the block's end as text; the parser reads it by the string's state
    closing_tags = (END_MESSAGE,)
    #: parsers.inkling: a tool block's token with no call object after it is markup
    stray_openers_are_content = False

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [CONTENT_TEXT, content, END_MESSAGE, MESSAGE_MODEL] if content else []
        for i, call in enumerate(calls):
            if i:
                out.append(MESSAGE_MODEL)
            out += [call.name, INVOKE_TOOL_JSON, call_object(call), END_MESSAGE]
        out.append(END_SAMPLING)
        return "".join(out)


register(InklingRenderer())
