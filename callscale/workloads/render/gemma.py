"""Renderer for Gemma 4 tool calls (``gemma4``).

Layout as the Gemma 4 ``chat_template.jinja`` writes tool calls: per call
``<|tool_call>call:NAME{`` + ``key:value`` pairs joined by ``,`` + ``}<tool_call|>``,
calls back to back. Values follow its ``format_argument`` macro with
``escape_keys=False``: strings between ``<|"|>`` tokens, verbatim; booleans
``true``/``false``; mappings ``{k:v,...}`` with bare keys in ``dictsort``
order (case-insensitive); sequences ``[v,...]``; numbers as Python prints
them; ``None`` as Jinja prints it, ``None``. Token strings come from
:mod:`callscale.parsers.gemma`.

The template writes a turn's content after its tool calls; ``render`` puts
``content`` before them, as models also do and as :class:`Renderer` asks
(the parser reads both).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from callscale.parsers.gemma import CALL_CLOSE, CALL_OPEN, CALL_PREFIX, SPECIAL_TOKENS, STRING_DELIM

from . import Call, Renderer, register

__all__ = ["Gemma4Renderer", "format_argument"]


def _dictsort(mapping: Mapping[str, Any]):
    # Jinja's dictsort: by key, case-insensitive (stable for ties).
    return sorted(mapping.items(), key=lambda kv: kv[0].lower() if isinstance(kv[0], str) else kv[0])


def format_argument(value: Any) -> str:
    """One value in Gemma 4 syntax (bare keys at every depth), as ``format_argument`` writes it."""
    if isinstance(value, str):
        return STRING_DELIM + value + STRING_DELIM
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{format_argument(v)}" for k, v in _dictsort(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(format_argument(v) for v in value) + "]"
    return str(value)  # numbers; None prints as None


class Gemma4Renderer(Renderer):
    """``content`` + ``<|tool_call>call:NAME{ARGS}<tool_call|>`` per call."""

    name = "gemma4"
    special_tokens = model_special = SPECIAL_TOKENS
    opener = CALL_OPEN
    stray_openers_are_content = True  # the parser keeps openers that start no call as content
    schema_typed = False
    #: a <|"|> string holds any text verbatim, this token too (parsers.gemma)
    closing_tags = (CALL_CLOSE,)
    #: parsers.gemma passes an opener not followed by call:NAME{ on as content, verbatim
    stray_openers_are_content = True

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        out = [content]
        for call in calls:
            out.append(CALL_OPEN + CALL_PREFIX + call.name + format_argument(dict(call.arguments)) + CALL_CLOSE)
        return "".join(out)


register(Gemma4Renderer())
