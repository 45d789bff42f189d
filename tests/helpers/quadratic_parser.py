"""Test fixture: a working but deliberately quadratic DeepSeek V3.1 tool parser.

It makes the mistake public serving stacks have shipped: on every increment
it re-parses its whole buffer from the start, so streaming n characters
costs O(n^2). Per increment it

- searches the whole buffer again for ``<｜tool▁calls▁begin｜>``;
- re-runs a call pattern over the whole calls block (``finditer`` from the
  block start, each call's arguments matched lazily up to its end token);
- re-decodes the arguments of every call seen so far with ``json.loads``
  (the closed ones to check them, the open one to see whether it is complete);
- sends the difference between what it now sees and what it sent before.

Its answers are right for well-formed V3.1 output (content before the block,
calls with raw JSON arguments), so only its cost sets it apart: the harness
must give it an exponent near 2 and a failing verdict. Use it as
``--parser quadratic_parser:QuadraticParser --format deepseek_v31`` with
``tests/`` importable.
"""

from __future__ import annotations

import json
import re

from callscale.parsers.base import StreamingParseResult, ToolCallItem
from callscale.parsers.deepseek import CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, EOS, SEP

__all__ = ["QuadraticParser"]

_CALL = re.compile(
    re.escape(CALL_BEGIN) + r"(?P<name>.*?)" + re.escape(SEP) + r"(?P<args>.*?)(?P<end>" + re.escape(CALL_END) + r"|\Z)",
    re.S,
)


def _partial_suffix(text: str, token: str) -> int:
    """Length of the longest end of ``text`` that is a proper prefix of ``token``."""
    for k in range(min(len(token) - 1, len(text)), 0, -1):
        if token.startswith(text[-k:]):
            return k
    return 0


class QuadraticParser:
    """DeepSeek V3.1 tool calls, re-parsed from the start of the buffer on every increment."""

    name = "quadratic"

    def __init__(self) -> None:
        self.buffer = ""
        self.sent_content = 0
        self.sent_names: list[str] = []
        self.sent_args: list[int] = []
        self.finished = False

    def parse_streaming_increment(self, delta: str, tools=None) -> StreamingParseResult:
        if self.finished:
            return StreamingParseResult()
        self.buffer += delta
        return self._reparse(final=False)

    def finish(self, tools=None) -> StreamingParseResult:
        if self.finished:
            return StreamingParseResult()
        result = self._reparse(final=True)
        self.finished = True
        return result

    def detect_and_parse(self, text: str, tools=None) -> StreamingParseResult:
        parser = QuadraticParser()
        first = parser.parse_streaming_increment(text, tools)
        last = parser.finish(tools)
        names: dict[int, str] = {}
        args: dict[int, str] = {}
        for item in first.calls + last.calls:
            if item.name is not None:
                names[item.tool_index] = item.name
            args[item.tool_index] = args.get(item.tool_index, "") + item.parameters
        calls = [ToolCallItem(i, names[i], args.get(i, "")) for i in sorted(names)]
        return StreamingParseResult(first.normal_text + last.normal_text, calls)

    def _reparse(self, final: bool) -> StreamingParseResult:
        text = self.buffer.replace(EOS, "")  # a copy of the whole buffer, every time
        start = text.find(CALLS_BEGIN)  # searched from the start, every time
        if start < 0:
            visible = len(text) if final else len(text) - _partial_suffix(text, CALLS_BEGIN)
            content = text[self.sent_content:visible]
            self.sent_content = max(self.sent_content, visible)
            return StreamingParseResult(content, [])
        content = text[self.sent_content:start]
        self.sent_content = max(self.sent_content, start)
        block_end = text.find(CALLS_END, start)
        block = text[start:] if block_end < 0 else text[start:block_end]
        out: list[ToolCallItem] = []
        for index, hit in enumerate(_CALL.finditer(block)):  # every call, from the first, every time
            name, args, closed = hit.group("name").strip(), hit.group("args"), bool(hit.group("end"))
            if not closed and not final:
                args = args[: len(args) - _partial_suffix(args, CALL_END)]
            try:
                json.loads(args)  # re-decoded every time, complete or not
            except ValueError:
                pass
            if index == len(self.sent_names):
                self.sent_names.append(name)
                self.sent_args.append(0)
                out.append(ToolCallItem(index, name, ""))
            piece = args[self.sent_args[index]:]
            if piece:
                self.sent_args[index] = len(args)
                if out and out[-1].tool_index == index:
                    out[-1].parameters += piece
                else:
                    out.append(ToolCallItem(index, None, piece))
        if block_end >= 0:  # text after the block is content again
            tail_start = block_end + len(CALLS_END)
            content += text[max(self.sent_content, tail_start):]
            self.sent_content = len(text)
        return StreamingParseResult(content, out)
