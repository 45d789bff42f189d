"""Renderer for Meta Muse Glimmer tool calls (``muse_glimmer``).

What the Muse-Glimmer-30B chat template (llama.cpp's
``models/templates/muse-glimmer.jinja``, llama-cpp-python 0.3.36) writes for
an assistant turn after the prompt's ``<|start|>assistant``, the answer
before the calls as a ``to=user`` message ended by ``<|eom|>`` (llama.cpp
PR #26879; a real output: llama.cpp issue #29240)::

     to=user<|message|>CONTENT<|eom|><|start|>assistant to=NAME<|message|><atem:function_calls>
    <atem:invoke name="NAME">
    <atem:parameter name="KEY">VALUE</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eot|>

One message a call (its recipient the call's name), the ATEM lines joined
by newlines; each call's message ends with ``<|eom|>``, the last with
``<|eot|>`` (the template's ``end_token`` before the tool results). The template's ``render_atem`` writes a string verbatim,
``true``/``false``, ``null``, and a list or mapping as JSON; a number as
its text (JSON's). With no calls the output is the content alone (the
workloads' plain prose). Token strings come from
:mod:`callscale.parsers.muse_glimmer`.
"""

from __future__ import annotations

from typing import Sequence

from callscale.parsers.muse_glimmer import (ASSISTANT, BLOCK_CLOSE, BLOCK_OPEN, EOM, EOT, INVOKE_CLOSE, INVOKE_OPEN,
                                            MESSAGE, PARAM_CLOSE, PARAM_OPEN, SPECIAL_TOKENS, START, TO, USER)

from . import Call, Renderer, register
from .minimax import invoke_text

__all__ = ["MuseGlimmerRenderer"]


class MuseGlimmerRenderer(Renderer):
    """A ``to=user`` message (the content), then one tool message of one ATEM block a call."""

    name = "muse_glimmer"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = BLOCK_OPEN
    schema_typed = True
    #: a value may hold these as text; the parser keeps them (the closing-tag rule of MiniMax M2's grammar)
    closing_tags = (PARAM_CLOSE, INVOKE_CLOSE, BLOCK_CLOSE)
    #: a block in no tool message, or one that starts no call, is content, verbatim (parsers.muse_glimmer)
    stray_openers_are_content = True

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = []
        if content:
            out += [TO, USER, MESSAGE, content, EOM, START, ASSISTANT]
        for i, call in enumerate(calls):
            if i:
                out += [START, ASSISTANT]
            out += [TO, call.name, MESSAGE, BLOCK_OPEN, "\n"]
            out += invoke_text(call, INVOKE_OPEN, PARAM_OPEN, PARAM_CLOSE, INVOKE_CLOSE)
            out += [BLOCK_CLOSE, EOT if i == len(calls) - 1 else EOM]
        return "".join(out)

    def render_segments(self, segments: Sequence[tuple[str, Sequence[Call]]]) -> str:
        """Segments in one turn: a calls block that ends the turn (``<|eot|>``) ends its message instead
        (``<|eom|>``) and the next segment opens a new assistant message."""
        parts = [self.render(calls, content) for content, calls in segments]
        turn = EOM + START + ASSISTANT
        return "".join(p[:-len(EOT)] + turn if i < len(parts) - 1 and p.endswith(EOT) else p
                       for i, p in enumerate(parts))


register(MuseGlimmerRenderer())
