"""Renderer for OpenBMB MiniCPM5 tool calls (``minicpm5``).

Layout as MiniCPM5's ``chat_template.jinja`` writes an assistant turn's calls (llama.cpp's copy,
``models/templates/openbmb-MiniCPM5-1B.jinja``; ``docs/formats.md``, "MiniCPM5")::

    CONTENT
    <function name="NAME"><param name="KEY">VALUE</param></function>

a newline before each call (before the first only after content). A string value is written verbatim, in a
CDATA section when it holds ``<``, ``&`` or a newline; any other value as Jinja prints it, Python's ``str``
(``True``, ``None``, ``{'k': [1, None]}``). Values are strings unless the schema says otherwise
(``schema_typed``). Tag strings come from :mod:`callscale.parsers.minicpm5`.
"""

from __future__ import annotations

from typing import Any, Sequence

from callscale.parsers.minicpm5 import (CDATA_CLOSE, CDATA_OPEN, FUNCTION_CLOSE, FUNCTION_OPEN, MODEL_SPECIAL,
                                        PARAM_CLOSE, PARAM_OPEN, SPECIAL_TOKENS, TAG_END)

from . import Call, Renderer, register

__all__ = ["MiniCpm5Renderer", "value_text"]


def value_text(value: Any) -> str:
    """A parameter value as the template writes it (``{{ param_value }}``, CDATA for a string holding ``<``, ``&``
    or a newline)."""
    if isinstance(value, str):
        return CDATA_OPEN + value + CDATA_CLOSE if ("<" in value or "&" in value or "\n" in value) else value
    return str(value)


class MiniCpm5Renderer(Renderer):
    """``CONTENT`` + ``\\n`` + one ``<function>`` element a line."""

    name = "minicpm5"
    special_tokens = SPECIAL_TOKENS
    model_special = MODEL_SPECIAL
    opener = FUNCTION_OPEN
    schema_typed = True
    #: a value may hold these as text (in CDATA, or ahead of text that confirms no end); the parser keeps them
    closing_tags = (PARAM_CLOSE, FUNCTION_CLOSE)
    #: an opener that starts no call (a name never closed) is text (parsers.minicpm5)
    stray_openers_are_content = True

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        out = [content]
        for i, call in enumerate(calls):
            if i or content:
                out.append("\n")
            out += [FUNCTION_OPEN, call.name, TAG_END]
            for key, value in call.arguments.items():
                out += [PARAM_OPEN, key, TAG_END, value_text(value), PARAM_CLOSE]
            out.append(FUNCTION_CLOSE)
        return "".join(out)


register(MiniCpm5Renderer())
