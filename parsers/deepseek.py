"""DeepSeek V3 and V3.1 tool calls (``deepseek_v3``, ``deepseek_v31``).

Token strings are the special tokens of DeepSeek's tokenizer, as the V3 and
V3.1 chat templates write them (full-width bars U+FF5C, ``▁`` U+2581).
"""

from __future__ import annotations

#: End-of-sequence token of every DeepSeek model; dropped wherever it appears.
EOS = "<｜end▁of▁sentence｜>"
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
#: V3 only: the word before the separator, and the fence around the arguments.
V3_KIND = "function"
V3_FENCE_OPEN = "```json\n"
V3_FENCE_CLOSE = "\n```"

SPECIAL_TOKENS = (EOS, CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP)
