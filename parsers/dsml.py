"""DeepSeek V3.2, V4 and V4.1 DSML tool calls (``deepseek_v32``, ``deepseek_v4``, ``deepseek_v41``).

One grammar, three spellings of the tag names (DeepSeek's ``encoding_dsv32.py``
and its V4 successors). A tag name starts with the special token ``｜DSML｜``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .deepseek import EOS

DSML_TOKEN = "｜DSML｜"


@dataclass(frozen=True)
class Spelling:
    """The three tag names of one DSML version (without ``<``, ``</`` and ``>``)."""

    block: str
    invoke: str
    parameter: str


V32 = Spelling(DSML_TOKEN + "function_calls", DSML_TOKEN + "invoke", DSML_TOKEN + "parameter")
V4 = Spelling(DSML_TOKEN + "tool_calls", DSML_TOKEN + "invoke", DSML_TOKEN + "parameter")
V41 = Spelling(DSML_TOKEN + " calls", DSML_TOKEN + " invoke", DSML_TOKEN + " parameter")

SPELLINGS = {"deepseek_v32": V32, "deepseek_v4": V4, "deepseek_v41": V41}
SPECIAL_TOKENS = (EOS, DSML_TOKEN)
