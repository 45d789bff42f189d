"""Renderer for StepFun Step-3 tool calls (``step3``).

Layout as the engines' Step-3 readers describe the model's output (SGLang's
``step3_detector.py`` docstring, vLLM 0.34's Step-3 tests; ``docs/formats.md``,
"Step-3")::

    CONTENT<｜tool_calls_begin｜>
    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
    <steptml:parameter name="KEY">VALUE</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

All calls share one block, one a line. A string value is written verbatim,
any other value as JSON (``json.dumps(value, ensure_ascii=False)``: ``true``,
``null``, ``[1, 2]``). Token strings come from :mod:`callscale.parsers.step3`.
Values are strings unless the schema says otherwise (``schema_typed``).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.step3 import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    INVOKE_CLOSE,
    INVOKE_OPEN,
    KIND,
    MODEL_SPECIAL,
    PARAM_CLOSE,
    PARAM_OPEN,
    SEP,
    SPECIAL_TOKENS,
    TAG_END,
)

from . import Call, Renderer, register

__all__ = ["Step3Renderer", "value_text"]


def value_text(value: Any) -> str:
    """A parameter value as the model writes it: a string verbatim, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


class Step3Renderer(Renderer):
    """``CONTENT<｜tool_calls_begin｜>\\n`` + one call a line + ``<｜tool_calls_end｜>``."""

    name = "step3"
    special_tokens = SPECIAL_TOKENS
    model_special = MODEL_SPECIAL
    opener = CALLS_BEGIN
    schema_typed = True
    #: a value may hold these as text; the parser keeps them (its closing-tag rule, parsers.step3)
    closing_tags = (PARAM_CLOSE, INVOKE_CLOSE)
    #: parsers.step3 drops the block tokens of a block that starts no call (markup)
    stray_openers_are_content = False

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [content, CALLS_BEGIN, "\n"]
        for call in calls:
            out += [CALL_BEGIN, KIND, SEP, INVOKE_OPEN, call.name, TAG_END, "\n"]
            for key, value in call.arguments.items():
                out += [PARAM_OPEN, key, TAG_END, value_text(value), PARAM_CLOSE, "\n"]
            out += [INVOKE_CLOSE, CALL_END, "\n"]
        out.append(CALLS_END)
        return "".join(out)


register(Step3Renderer())
