"""Renderers of the DSML formats: DeepSeek V3.2, V4 and V4.1 (``deepseek_v32``, ``deepseek_v4``, ``deepseek_v41``).

Layout as DeepSeek's ``encoding_dsv32.py`` writes it (``docs/formats.md``,
DSML section): the content, a blank line, then the block, one element per
line::

    Checking.

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">杭州</｜DSML｜parameter>
    <｜DSML｜parameter name="count" string="false">42</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

A string argument is written raw with ``string="true"``; any other value as
``json.dumps`` text (``ensure_ascii=False``) with ``string="false"``. An
invoke with no arguments is written open/close (``<I name="x">``, newline,
``</I>``) for V3.2 and V4.1, and self-closing (``<I name="x"/>``) for V4,
which formats.md says V4 writes. With empty content the block starts the
output (no blank line before it).
"""

from __future__ import annotations

import json
from typing import Sequence

from callscale.parsers.dsml import EOS, SPECIAL_TOKENS, V4, V32, V41, Spelling

from . import Call, Renderer, register

__all__ = ["DsmlRenderer"]


class DsmlRenderer(Renderer):
    """Renderer of one DSML spelling; ``self_closing_empty``: write an invoke without arguments as ``<I name="x"/>``."""

    schema_typed = False

    def __init__(self, name: str, spelling: Spelling, self_closing_empty: bool = False) -> None:
        self.name = name
        self.spelling = spelling
        self.special_tokens = SPECIAL_TOKENS
        self.model_special = (EOS,)
        self.opener = f"<{spelling.block}>"
        # A value may hold the closing tags as text (an agent editing parser code).
        self.closing_tags = (f"</{spelling.parameter}>", f"</{spelling.invoke}>", f"</{spelling.block}>")
        self.self_closing_empty = self_closing_empty

    def render(self, calls: Sequence[Call], content: str = "") -> str:
        """``content``, a blank line and the calls block; ``content`` alone when there are no calls."""
        if not calls:
            return content
        sp = self.spelling
        lines = [self.opener]
        for call in calls:
            if not call.arguments and self.self_closing_empty:
                lines.append(f'<{sp.invoke} name="{call.name}"/>')
                continue
            lines.append(f'<{sp.invoke} name="{call.name}">')
            for key, value in call.arguments.items():
                if isinstance(value, str):
                    kind, text = "true", value
                else:
                    kind, text = "false", json.dumps(value, ensure_ascii=False)
                lines.append(f'<{sp.parameter} name="{key}" string="{kind}">{text}</{sp.parameter}>')
            lines.append(f"</{sp.invoke}>")
        lines.append(f"</{sp.block}>")
        block = "\n".join(lines)
        return f"{content}\n\n{block}" if content else block


register(DsmlRenderer("deepseek_v32", V32))
register(DsmlRenderer("deepseek_v4", V4, self_closing_empty=True))
register(DsmlRenderer("deepseek_v41", V41))
