"""Renderers for Llama 3 JSON and Llama 4 pythonic tool calls (``llama3_json``, ``llama4_pythonic``).

Layouts (see ``docs/formats.md`` and the docstring of :mod:`callscale.parsers.llama`;
token strings come from :mod:`callscale.parsers.llama`):

- ``llama3_json``: ``content``, then per call ``{"name": NAME, "parameters":
  ARGS}`` as the Llama 3.1 chat template writes it (ARGS is ``tojson``,
  non-ASCII characters as themselves), calls joined by ``"; "`` (the template
  allows one call; several are written as vLLM's ``llama3_json`` reads them).
- ``llama4_pythonic``: ``content``, then ``[NAME(KEY=VALUE, ...), ...]`` as the
  Llama 4 prompt format and llama-models' ``python_list`` encoder write it.
  Values are Python literals: strings in double quotes with the escapes of a
  JSON string (every JSON escape is a Python escape; the reference encoder
  writes strings unescaped, which breaks on a quote in the value), numbers as
  Python writes them, ``True``/``False``/``None``, lists ``[...]``, dicts
  ``{"KEY": VALUE}``.

Both models write their calls as the whole reply (``call_first``): the
catalog's workloads then open with the call (``callscale.workloads.catalog.intro``).

Neither format has a closing special token. ``opener`` (what
``repeated_opener`` repeats) is the special token a model writes before its
calls: ``<|python_tag|>`` (Llama 3), ``<|python_start|>`` (Llama 4); both
parsers drop it as markup. ``closing_tags`` (what ``literal_closing_tags``
puts in a value) are the texts that end a call or continue a call list,
which a parser must read as string text.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from callscale.parsers.llama import (
    CALL_SEPARATOR,
    LLAMA3_SPECIAL_TOKENS,
    LLAMA4_SPECIAL_TOKENS,
    PYTHON_START,
    PYTHON_TAG,
)

from . import Call, Renderer, register

__all__ = ["Llama3JsonRenderer", "Llama4PythonicRenderer", "python_literal"]


class Llama3JsonRenderer(Renderer):
    """``content`` then the calls as ``{"name": ..., "parameters": ...}`` objects joined by ``"; "``."""

    name = "llama3_json"
    special_tokens = model_special = LLAMA3_SPECIAL_TOKENS
    opener = PYTHON_TAG
    schema_typed = False
    #: Llama 3.x writes a JSON call as the whole reply, with no sentence before it (docs/formats.md).
    call_first = True
    #: The end of a call, and a separator with the next call's head, as string text.
    closing_tags = ('"}}', '"}' + CALL_SEPARATOR + '{"name": "')

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        return content + CALL_SEPARATOR.join(
            f'{{"name": {json.dumps(c.name, ensure_ascii=False)}, '
            f'"parameters": {json.dumps(dict(c.arguments), ensure_ascii=False)}}}'
            for c in calls
        )


def python_literal(value: Any) -> str:
    """A JSON value as a Python literal (characters): see the module docstring.

    Raises ``TypeError`` for a value that is not JSON data.
    """
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(str(k))}: {python_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


class Llama4PythonicRenderer(Renderer):
    """``content`` then one ``[NAME(KEY=VALUE, ...), ...]`` list of all calls."""

    name = "llama4_pythonic"
    special_tokens = model_special = LLAMA4_SPECIAL_TOKENS
    opener = PYTHON_START
    schema_typed = False
    #: Llama 4 writes its call list as the whole reply, with no sentence before it (docs/formats.md).
    call_first = True
    #: The end of a call, of the list, and the next call's head, as string text.
    closing_tags = ('"), write_file(path="', "'), read_file(path='", '")] ')

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """The model output; with no calls, ``content`` alone."""
        if not calls:
            return content
        return content + "[" + ", ".join(
            c.name + "(" + ", ".join(f"{k}={python_literal(v)}" for k, v in c.arguments.items()) + ")"
            for c in calls
        ) + "]"


register(Llama3JsonRenderer())
register(Llama4PythonicRenderer())
