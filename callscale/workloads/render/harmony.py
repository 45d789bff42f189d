"""Renderer for gpt-oss tool calls in the harmony format (``gpt_oss``).

Lays the output out as gpt-oss writes it after the prompt's
``<|start|>assistant`` (harmony ``docs/format.md``, "Receiving tool calls"
and "Preambles"): the content as a ``commentary`` preamble to the user,
then one message per call with the recipient in the channel part and
``<|constrain|>json``, each ended by ``<|call|>``; messages after the first
start with ``<|start|>assistant``::

    <|channel|>commentary<|message|>CONTENT<|end|><|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{JSON}<|call|><|start|>assistant...

The arguments are ``json.dumps(arguments, ensure_ascii=False)`` (the chat
template's ``tojson``). Token strings come from :mod:`callscale.parsers.harmony`.
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.harmony import CALL, CHANNEL, CONSTRAIN, END, FUNCTIONS, MESSAGE, SPECIAL_TOKENS, START

from . import Call, Renderer, register

__all__ = ["HarmonyRenderer"]

ROLE = "assistant"


class HarmonyRenderer(Renderer):
    """A ``commentary`` preamble (the content), then one ``to=functions.NAME`` message per call."""

    name = "gpt_oss"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = START + ROLE
    schema_typed = False
    #: A JSON string may hold these as text (see parsers.harmony).
    closing_tags = (CALL, END)

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        messages = []
        if content:
            messages.append(f"{CHANNEL}commentary{MESSAGE}{content}{END}")
        for call in calls:
            args = json.dumps(dict(call.arguments), ensure_ascii=False)
            messages.append(f"{CHANNEL}commentary to={FUNCTIONS}{call.name} {CONSTRAIN}json{MESSAGE}{args}{CALL}")
        return (START + ROLE).join(messages)


register(HarmonyRenderer())
