"""Renderers for GLM-4.5 and GLM-4.7 tool calls (``glm45``, ``glm47``).

Layout as the GLM chat templates write an assistant turn with tool calls
(HF's ``trim_blocks``/``lstrip_blocks`` applied):

- GLM-4.5/4.6 (``{{ '\\n<tool_call>' + tc.name }}`` then one
  ``<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n`` per argument on its
  own lines)::

      CONTENT\\n<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>\\n<tool_call>...

  The newline before each ``<tool_call>`` is written even when the content is
  empty.
- GLM-4.7 (``{{- '<tool_call>' + tc.name -}}``, arguments inline, calls
  back to back)::

      CONTENT<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call><tool_call>...

A string value is written verbatim, any other value as ``tojson``
(``json.dumps(value, ensure_ascii=False)``). Values are strings unless the
schema says otherwise, so workloads pass tools with schemas
(``schema_typed``). Token strings come from :mod:`callscale.parsers.glm`.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.glm import (
    ARG_KEY,
    ARG_KEY_END,
    ARG_VALUE,
    ARG_VALUE_END,
    SPECIAL_TOKENS,
    TOOL_CALL,
    TOOL_CALL_END,
)

from . import Call, Renderer, register

__all__ = ["Glm45Renderer", "Glm47Renderer", "value_text"]


def value_text(value: Any) -> str:
    """A value as the templates write it: a string verbatim, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


class _GlmRenderer(Renderer):
    special_tokens = model_special = SPECIAL_TOKENS
    opener = TOOL_CALL
    schema_typed = True
    #: A string value may hold these as text: ``</arg_value>`` ends a value
    #: only before ``<arg_key>`` or ``</tool_call>`` (see parsers.glm).
    closing_tags = (ARG_VALUE_END, TOOL_CALL_END)
    #: Written before each ``<tool_call>``, after the name, and after each key and value.
    sep = ""

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output: ``content``, then the calls; with no calls, ``content`` alone."""
        if not calls:
            return content
        sep = self.sep
        out = [content]
        for call in calls:
            out += [sep, TOOL_CALL, call.name, sep]
            for key, value in call.arguments.items():
                out += [ARG_KEY, key, ARG_KEY_END, sep, ARG_VALUE, value_text(value), ARG_VALUE_END, sep]
            out.append(TOOL_CALL_END)
        return "".join(out)


class Glm45Renderer(_GlmRenderer):
    """GLM-4.5/4.6: one element per line, a newline before each call."""

    name = "glm45"
    sep = "\n"


class Glm47Renderer(_GlmRenderer):
    """GLM-4.7: no newlines."""

    name = "glm47"
    sep = ""


register(Glm45Renderer())
register(Glm47Renderer())
