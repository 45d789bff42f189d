"""Renderers for Qwen3 (Hermes JSON) and Qwen3-Coder (XML) tool calls (``qwen3``, ``qwen3_coder``).

Layout as the ``chat_template`` of Qwen3 and of Qwen3-Coder writes an
assistant turn with tool calls (see ``docs/formats.md`` and the
docstring of :mod:`callscale.parsers.qwen`); tag strings come from :mod:`callscale.parsers.qwen`.
JSON is written as the templates' ``tojson`` does: ``json.dumps(value,
ensure_ascii=False)`` (non-ASCII characters as themselves).

The templates trim the content of a history turn (Qwen3-Coder) or keep it
(Qwen3); a model's fresh output is not trimmed, so ``content`` is written as
given and the expected content of a case is exactly ``content``.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.qwen import (
    FUNCTION_CLOSE,
    FUNCTION_OPEN,
    PARAMETER_CLOSE,
    PARAMETER_OPEN,
    SPECIAL_TOKENS,
    TOOL_CALL_CLOSE,
    TOOL_CALL_OPEN,
)

from . import Call, Renderer, register

__all__ = ["Qwen3Renderer", "Qwen3CoderRenderer", "coder_value_text"]


class Qwen3Renderer(Renderer):
    """``content``, a newline when there is content, then the calls one per ``<tool_call>`` block, newline-separated."""

    name = "qwen3"
    special_tokens = SPECIAL_TOKENS
    model_special = ()
    opener = TOOL_CALL_OPEN
    stray_openers_are_content = True  # the parser keeps openers that start no call as content
    schema_typed = False
    #: A JSON string may hold ``</tool_call>`` as text; the parser tells it
    #: from the real one by the JSON string state.
    closing_tags = (TOOL_CALL_CLOSE,)

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output (see the class docstring); with no calls, ``content`` alone."""
        if not calls:
            return content
        blocks = "\n".join(
            f'{TOOL_CALL_OPEN}\n{{"name": {json.dumps(c.name, ensure_ascii=False)}, '
            f'"arguments": {json.dumps(dict(c.arguments), ensure_ascii=False)}}}\n{TOOL_CALL_CLOSE}'
            for c in calls
        )
        return (content + "\n" if content else "") + blocks


def coder_value_text(value: Any) -> str:
    """A Qwen3-Coder parameter value as the template writes it (characters).

    A string as is; an object or array as ``tojson``; anything else as
    Jinja's ``| string`` (Python ``str``: ``5``, ``1.5``, ``True``, ``None``).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class Qwen3CoderRenderer(Renderer):
    """``content``, two newlines when there is content, then the calls one per ``<tool_call>`` block, newline-separated.

    Each call: ``<tool_call>\\n<function=NAME>\\n``, per parameter
    ``<parameter=KEY>\\nVALUE\\n</parameter>\\n`` (VALUE from
    :func:`coder_value_text`), then ``</function>\\n</tool_call>``. Values
    other than strings need the tool schema to read back (``schema_typed``).
    """

    name = "qwen3_coder"
    special_tokens = SPECIAL_TOKENS
    model_special = ()
    opener = TOOL_CALL_OPEN
    stray_openers_are_content = True  # the parser keeps openers that start no call as content
    schema_typed = True
    #: The parser keeps a literal ``</parameter>`` in a value unless a valid
    #: continuation follows it; ``</function>`` and ``</tool_call>`` are
    #: plain text inside a value.
    closing_tags = (PARAMETER_CLOSE, FUNCTION_CLOSE, TOOL_CALL_CLOSE)

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output (see the class docstring); with no calls, ``content`` alone."""
        if not calls:
            return content
        blocks = []
        for c in calls:
            params = "".join(
                f"{PARAMETER_OPEN}{key}>\n{coder_value_text(value)}\n{PARAMETER_CLOSE}\n"
                for key, value in c.arguments.items()
            )
            blocks.append(f"{TOOL_CALL_OPEN}\n{FUNCTION_OPEN}{c.name}>\n{params}{FUNCTION_CLOSE}\n{TOOL_CALL_CLOSE}")
        return (content + "\n\n" if content else "") + "\n".join(blocks)


register(Qwen3Renderer())
register(Qwen3CoderRenderer())
