"""Renderer for Cohere Command A / Command R7B tool calls (``cohere_command``).

Layout as the models' chat templates write an assistant turn (CohereForAI c4ai-command-r7b-12-2024,
Command A's ``Cohere2MoE``; ``docs/formats.md``, "Cohere Command")::

    <|START_RESPONSE|>CONTENT<|END_RESPONSE|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "NAME", "parameters": ARGS},
        {"tool_call_id": "1", "tool_name": "NAME", "parameters": ARGS}
    ]<|END_ACTION|>

The templates write a turn with tool calls as a plan (``<|START_THINKING|>``) and the action; content
written before the calls is a response block, as SMG's own examples give it. ``ARGS`` is
``json.dumps(arguments, ensure_ascii=False)`` (the templates' ``tojson``). Token strings come from
:mod:`callscale.parsers.cohere`.
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.cohere import (
    CALL_ID_KEY,
    END_ACTION,
    END_RESPONSE,
    MODEL_SPECIAL,
    SPECIAL_TOKENS,
    START_ACTION,
    START_RESPONSE,
)

from . import Call, Renderer, register

__all__ = ["CohereCommandRenderer"]


class CohereCommandRenderer(Renderer):
    """A response block for the content, then ``<|START_ACTION|>[`` + one object a line + ``\\n]<|END_ACTION|>``."""

    name = "cohere_command"
    special_tokens = SPECIAL_TOKENS
    model_special = MODEL_SPECIAL
    opener = START_ACTION
    #: parsers.cohere drops the action token of a block that starts no call (markup)
    stray_openers_are_content = False

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone (the workloads' plain prose: a text turn's response
        block is markup the parser drops, tests/parsers/test_cohere_command.py)."""
        if not calls:
            return content
        out = [START_RESPONSE, content, END_RESPONSE] if content else []
        if calls:
            out.append(START_ACTION + "[")
            for i, call in enumerate(calls):
                obj = json.dumps({CALL_ID_KEY: str(i), "tool_name": call.name}, ensure_ascii=False)[:-1]
                out += ["\n    ", obj, ', "parameters": ', json.dumps(dict(call.arguments), ensure_ascii=False), "}",
                        "," if i < len(calls) - 1 else ""]
            out.append("\n]" + END_ACTION)
        return "".join(out)


register(CohereCommandRenderer())
