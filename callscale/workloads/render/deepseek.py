"""Renderers for DeepSeek V3 and V3.1 tool calls (``deepseek_v3``, ``deepseek_v31``).

Layout as the ``chat_template`` of DeepSeek-V3 and DeepSeek-V3.1 writes an
assistant turn with tool calls (``tokenizer_config.json``; see
``docs/formats.md``); token strings come from :mod:`callscale.parsers.deepseek`.
Arguments are written with ``json.dumps(arguments, ensure_ascii=False)``
(non-ASCII characters as themselves, as a model writes them).
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.deepseek import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    EOS,
    SEP,
    SPECIAL_TOKENS,
    V3_FENCE_CLOSE,
    V3_FENCE_OPEN,
    V3_KIND,
)

from . import Call, Renderer, register

__all__ = ["DeepSeekV3Renderer", "DeepSeekV31Renderer"]


def _arguments(call: Call) -> str:
    return json.dumps(dict(call.arguments), ensure_ascii=False)


class _DeepSeekRenderer(Renderer):
    special_tokens = SPECIAL_TOKENS
    model_special = (EOS,)
    opener = CALLS_BEGIN
    schema_typed = False
    #: What the template writes between two calls.
    between = ""

    def _call(self, call: Call) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, calls: Sequence[Call], content: str = "", end_of_sentence: bool = False) -> str:
        """``content``, then ``<｜tool▁calls▁begin｜>``, the calls, ``<｜tool▁calls▁end｜>``.

        With no calls, the output is ``content`` alone. ``end_of_sentence``
        appends ``<｜end▁of▁sentence｜>`` as the template does at the end of a
        turn (a server usually strips it as a stop token, hence off by default).
        """
        tail = EOS if end_of_sentence else ""
        if not calls:
            return content + tail
        body = self.between.join(self._call(c) for c in calls)
        return content + CALLS_BEGIN + body + CALLS_END + tail


class DeepSeekV3Renderer(_DeepSeekRenderer):
    """V3: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\nARGS\\n```<｜tool▁call▁end｜>``, calls joined by a newline."""

    name = "deepseek_v3"
    between = "\n"
    #: A string value may hold these as text: the arguments end only at a raw
    #: "\n```" (a newline inside a JSON string is written escaped) followed by
    #: the end token, so the parser keeps them in the value.
    closing_tags = (V3_FENCE_CLOSE, CALL_END, CALLS_END)

    def _call(self, call: Call) -> str:
        return (CALL_BEGIN + V3_KIND + SEP + call.name + "\n" + V3_FENCE_OPEN
                + _arguments(call) + V3_FENCE_CLOSE + CALL_END)


class DeepSeekV31Renderer(_DeepSeekRenderer):
    """V3.1: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>``, nothing between calls."""

    name = "deepseek_v31"
    #: The arguments end at the first ``<｜tool▁call▁end｜>``: a value cannot hold it.
    closing_tags = ()

    def _call(self, call: Call) -> str:
        return CALL_BEGIN + call.name + SEP + _arguments(call) + CALL_END


register(DeepSeekV3Renderer())
register(DeepSeekV31Renderer())
