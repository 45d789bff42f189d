"""Mistral tool calls (``mistral``).

The forms (source: mistral-common's instruct tokenizers,
``mistral_common/tokens/tokenizers/instruct.py``: V2/V3 JSON array, V11
``[CALL_ID]``, V13) and the reading rules are in ``docs/formats.md``,
"Mistral". The arguments stream through
:class:`callscale.parsers.jsonscan.RawArguments`. Nothing here raises on
model output; lengths are in characters.
"""

from __future__ import annotations

import re

from . import register
from .base import MAX_HEAD, ToolParser, json_text
from .jsonscan import RawArguments, is_call_name, json_object
from .scanner import PARTIAL, markers

__all__ = ["TOOL_CALLS", "ARGS", "CALL_ID", "THINK", "THINK_END", "SPECIAL_TOKENS", "MistralParser"]

TOOL_CALLS = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
THINK = "[THINK]"
THINK_END = "[/THINK]"
#: Control tokens of the Mistral tokenizers (mistral-common ``SpecialTokens``).
SPECIAL_TOKENS = (TOOL_CALLS, ARGS, CALL_ID, THINK, THINK_END)

_M_CONTENT = markers(TOOL_CALLS, THINK, THINK_END, ARGS, CALL_ID)
_M_THINK = markers(THINK_END)
_M_TOKEN = markers(*SPECIAL_TOKENS)
_M_NAME = markers(ARGS, CALL_ID, TOOL_CALLS, THINK, THINK_END, "{")
_M_ID = markers(ARGS, CALL_ID, TOOL_CALLS, THINK, THINK_END)
_BLANK = re.compile(r"\s*")
_SPACED = re.compile(r"\s")

# states: the _s_<state> methods
_CONTENT, _THINKING, _HEAD, _NAME, _ID, _ARGS_START, _ARGS, _ARRAY, _ITEM, _BROKEN = (
    "content", "thinking", "head", "name", "id", "args_start", "args", "array", "item", "broken_json")


@register("mistral")
class MistralParser(ToolParser):
    """Mistral ``[TOOL_CALLS]`` forms; see the module docstring for the reading rules."""

    writes_reasoning = True

    def __init__(self) -> None:
        super().__init__()
        self._state = _CONTENT
        self._name = ""
        self._args = RawArguments()
        self._rest = self._args.rest_tracker()  # a broken call's JSON state, to find its end
        self._item: list[str] = []   # text of an element of the array form (sent whole when it closes)

    # ------------------------------------------------------------------ helpers
    def _no_call(self, marker: str | None, final: bool = False, raw: str | None = None) -> bool:
        """The head is no call: its text is content (a head cut by the end of the output: dropped); go on at ``marker``."""
        self._head_no_call(self._head_text() if raw is None else raw, final)
        return self._at_token(marker)

    def _at_token(self, marker: str | None) -> bool:
        if marker == TOOL_CALLS:
            self._head_begin()  # the name (and call id): a bounded head (base)
            self._state = _HEAD
        elif marker == THINK:
            self._state = _THINKING
        else:
            self._state = _CONTENT
        return True

    def _read_head(self, m, final: bool) -> tuple[str | None, bool]:
        """Read head text up to a marker of ``m``: ``(marker, decided)``."""
        _, marker = self._head_find(m, final)
        return marker, marker is not None or final or self._head_over()

    # ------------------------------------------------------------------ states
    def _s_content(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_CONTENT, final)
        self._emit_content(text)
        if marker is None:
            return False
        if marker == TOOL_CALLS:  # (_at_token, written out; a state that only reads waits for text: not run)
            self._head_parts = []  # _head_begin(), written out
            self._head_len = 0
            self._state = _HEAD
            return True
        if marker in (ARGS, CALL_ID, THINK_END):
            return True  # stray: dropped
        return self._at_token(marker)

    def _s_thinking(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_THINK, final)
        self._emit_reasoning(text)
        if marker is None:
            return False
        self._state = _CONTENT
        return True

    def _s_head(self, final: bool) -> bool:
        """Right after ``[TOOL_CALLS]``: the array form, or a name."""
        scanner = self.scanner
        buf, pos = scanner._buf, scanner._pos  # (peek and at_end written out: the per-delta path)
        if buf.startswith(TOOL_CALLS, pos):  # openers in a row: each with nothing after it, dropped
            pos += len(TOOL_CALLS)
            while buf.startswith(TOOL_CALLS, pos):
                pos += len(TOOL_CALLS)
            scanner._pos = pos
            self._head_parts = []  # (_head_text dropped, _head_begin: the last opener's head is read on)
            self._head_len = 0
            if pos >= len(buf) and not final:
                return False
        if buf[pos:pos + 1].isspace():
            self._head_run(_BLANK, final)
            pos = scanner._pos
        if pos >= len(buf):
            if final:
                return self._no_call(None, final)
            return False
        if buf[pos] == "[":
            hit = scanner.match(_M_TOKEN, final)
            if hit is PARTIAL:
                return False
            if hit is None:  # not a token: the array form
                scanner.take(1)
                self._head_text()
                self._state = _ARRAY
                return True
            if hit in (TOOL_CALLS, THINK):
                self._head_text()  # an opener with nothing after it: dropped
                return self._at_token(hit)
            return self._no_call(None)  # [ARGS] or [CALL_ID] with no name
        self._state = _NAME
        return True

    def _s_name(self, final: bool) -> bool:
        limit = MAX_HEAD + 1 - self._head_len  # (_read_head and base _head_find, written out: a step a delta)
        text, marker = self.scanner.find_within(_M_NAME, final, limit if limit > 0 else 0)
        if text:
            self._head_len += len(text)
            self._head_parts.append(text)
        if marker is None and not final and self._head_len <= MAX_HEAD:
            return False
        raw = self._head_text()
        name = raw.strip()
        spaced = _SPACED.search(name) is not None
        if marker not in (ARGS, CALL_ID, "{") or not name or spaced:
            if marker == "{":
                raw += marker
                marker = None
            elif marker in (ARGS, CALL_ID, THINK_END):
                marker = None
            # cut by the end of the output only while it may still be a name (prose has spaces)
            return self._no_call(marker, final and not spaced, raw)
        self._name = name
        if marker == CALL_ID:
            self._head_begin(raw)  # the call id: its own bounded head, after the name's text
            self._state = _ID
            return True
        self._begin_call(name)
        self._args = RawArguments()
        if marker == "{":
            self._emit_arguments(self._args.feed("{", stop_at_close=True)[0])
            self._state = _ARGS
        else:
            self._state = _ARGS_START
        return True

    def _s_id(self, final: bool) -> bool:
        marker, decided = self._read_head(_M_ID, final)
        if not decided:
            return False
        if marker != ARGS:
            return self._no_call(marker if marker in (TOOL_CALLS, THINK) else None, final)
        self._head_text()
        self._begin_call(self._name)
        self._args = RawArguments()
        self._state = _ARGS_START
        return True

    def _s_args_start(self, final: bool) -> bool:
        scanner = self.scanner
        buf, pos = scanner._buf, scanner._pos  # (skip_whitespace, at_end and peek written out)
        if pos < len(buf) and buf[pos].isspace():
            scanner.skip_whitespace()
            pos = scanner._pos
        if pos >= len(buf):
            if final:
                self._abandon_call()
                self._state = _CONTENT
                return True
            return False
        if buf[pos] != "{":
            self._abandon_call()
            self._state = _CONTENT
            return True
        self._state = _ARGS
        return self._s_args(final)

    def _s_args(self, final: bool) -> bool:
        scanner = self.scanner
        buf, pos = scanner._buf, scanner._pos  # (rest and take written out: the per-delta step of a call)
        args = v = self._args
        text = buf[pos:] if pos else buf
        j, event = args.scan(text, 0)  # args.feed(text, stop_at_close=True), written out for its common piece
        if not event:
            scanner._pos = pos + len(text)
            if text:
                self._emit_arguments(text)
            if not final:  # (the arguments go on)
                return False
        else:
            send, used = args.scanned(text, j, event, True)
            scanner._pos = pos + used
            if send:
                self._emit_arguments(send)
        if v.failed and not v.closed:  # the text stopped being JSON: a broken call (DESIGN.md)
            self._break_call()
            self._rest = self._args.rest_tracker()
            self._state = _BROKEN
            return True
        if v.closed:
            held = self._args.close()
            if held is None:
                self._abandon_call()
            else:
                self._emit_arguments(held)
                self._end_call()
            self._state = _CONTENT
            return True
        if final:
            self._abandon_call()
            self._state = _CONTENT
            return True
        return False

    def _s_array(self, final: bool) -> bool:
        """Inside the array form, between elements."""
        scanner = self.scanner
        scanner.skip_whitespace()
        if scanner.at_end():
            return False
        c = scanner.peek(1)
        if c == "{":
            self._args = RawArguments()
            self._item = []
            self._state = _ITEM
        elif c == ",":
            scanner.take(1)
        else:
            if c == "]":
                scanner.take(1)
            self._state = _CONTENT
        return True

    def _s_item(self, final: bool) -> bool:
        scanner = self.scanner
        self._item.append(scanner.take(self._args.feed(scanner.rest(), stop_at_close=True)[1]))
        if not self._args.closed:
            return False  # at the end of the output: an element cut off makes no call
        text = "".join(self._item)
        self._item = []
        item = json_object(text)
        name = item.get("name") if item is not None else None
        arguments = item.get("arguments") if item is not None else None
        if is_call_name(name) and isinstance(arguments, dict):
            self._begin_call(name)
            self._emit_arguments(json_text(arguments))
            self._end_call()
        else:
            self._emit_content(text)
        self._state = _ARRAY
        return True

    def _s_broken_json(self, final: bool) -> bool:
        """A broken call's text: dropped up to the bracket that closes its object, else content."""
        end = self._hold_broken_json(self._rest, (TOOL_CALLS,), final)
        if end is None:
            return False
        if end == "":
            return True
        if end == TOOL_CALLS:
            return self._at_token(end)
        self._state = _CONTENT
        return True
