"""Mistral tool calls (``mistral``).

The forms (source: mistral-common's instruct tokenizers,
``mistral_common/tokens/tokenizers/instruct.py``: V2/V3 JSON array, V11
``[CALL_ID]``, V13) and the reading rules are in ``docs/formats.md``,
"Mistral". The arguments stream through
:class:`callscale.parsers.jsonscan.RawArguments`. Nothing here raises on
model output; lengths are in characters.
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content", "think" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the
# one the reading decides; tests/parsers/test_transitions.py holds the states to the class's).
MISTRAL_TRANSITIONS = {
    "content": {"text": "content", "[TOOL_CALLS]": "head", "[THINK]": "think",
                "[ARGS], [CALL_ID], [/THINK] (stray: dropped)": "content"},
    "think": {"text [/THINK]": "content"},
    "head": {"[TOOL_CALLS] again (dropped)": "head", "ws [ (no token: the array form)": "array",
             "ws [TOOL_CALLS] or [THINK]": "head / think", "ws NAME": "name",
             "[ARGS] or [CALL_ID] with no name, or the end": "content"},
    "name": {"NAME [ARGS]": "args_start", "NAME {": "args", "NAME [CALL_ID]": "id",
             "no name, a spaced one, or past MAX_HEAD (content)": "content / head / think"},
    "id": {"ID [ARGS]": "args_start", "anything else (content)": "content / head / think"},
    "args_start": {"ws {": "args", "anything else": "content"},
    "args": {"the arguments' JSON object": "content", "text that is no JSON": "broken_json"},
    "array": {"ws {": "item", "ws ,": "array", "ws ], or anything else": "content"},
    "item": {"an element (a call, else content)": "array", "text that is no JSON": "broken_item"},
    "broken_json": {"the bracket that closes the object": "content", "[TOOL_CALLS] (the text is content)": "head"},
    "broken_item": {"the bracket that closes the element (its text is content)": "array",
                    "[TOOL_CALLS] (the text is content)": "head"},
}

import re

from . import register
from .base import ToolParser, json_text
from .jsonscan import RawArguments, is_call_name, json_object
from .scanner import OVER, PARTIAL, markers

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
_CONTENT, _THINKING, _HEAD, _NAME, _ID, _ARGS_START, _ARGS, _ARRAY, _ITEM, _BROKEN, _BROKEN_ITEM = (
    "content", "think", "head", "name", "id", "args_start", "args", "array", "item", "broken_json", "broken_item")


@register("mistral")
class MistralParser(ToolParser):
    """Mistral ``[TOOL_CALLS]`` forms; see the module docstring for the reading rules."""

    transitions = MISTRAL_TRANSITIONS

    writes_reasoning = True
    reasoning_end = _M_THINK
    _content_markers = _M_CONTENT

    def __init__(self) -> None:
        super().__init__()
        self._state = _CONTENT
        self._name = ""
        self._args = RawArguments()
        self._rest = self._args.rest_tracker()  # a broken call's JSON state, to find its end
        self._item: list[str] = []   # text of an element of the array form (sent whole when it closes)
        self._head_spaced = False  # whitespace read in state head (the head then is not empty)

    # ------------------------------------------------------------------ helpers
    def _no_call(self, marker: str | None, final: bool = False, raw: str | None = None) -> bool:
        """The head is no call: its text is content (a head cut by the end of the output: dropped); go on at ``marker``."""
        self._head_no_call(self.scanner.head_text() if raw is None else raw, final)
        return self._at_token(marker)

    def _at_token(self, marker: str | None, final: bool = False) -> bool:
        """Go on at ``marker``: a call's head, reasoning, else content (a stray token is dropped)."""
        if marker == TOOL_CALLS:
            self.scanner.head_begin()  # the name (and call id): a bounded head (base)
            self._head_spaced = False
            self._state = _HEAD
        elif marker == THINK:
            self._state = _THINKING
        else:
            self._state = _CONTENT
        return True

    #: A control token read in content (base ``_s_content`` over ``_content_markers``).
    _open = _at_token

    def _read_head(self, m, final: bool) -> tuple[str | None, bool]:
        """Read head text up to a marker of ``m``: ``(marker, decided)``."""
        _, marker = self.scanner.head_find(m, final)
        if marker is OVER:
            return None, True
        return marker, marker is not None or final

    # ------------------------------------------------------------------ states
    # Content: base ``_s_content`` over ``_content_markers``; reasoning: base ``_s_think`` (state "think").
    def _s_head(self, final: bool) -> bool:
        """Right after ``[TOOL_CALLS]``: the array form, or a name."""
        scanner = self.scanner
        if scanner.skip_repeats(TOOL_CALLS):  # openers in a row: each with nothing after it, dropped
            if self._head_spaced:  # the last opener's head is read on (the whitespace read before it dropped)
                self._head_spaced = False
                self.scanner.head_begin()
            return True
        c = scanner.peek(1)
        if c.isspace():
            self.scanner.head_run(_BLANK, final)
            self._head_spaced = True
            c = scanner.peek(1)
        if not c:
            if final:
                return self._no_call(None, final)
            return False
        if c == "[":
            hit = scanner.match(_M_TOKEN, final)
            if hit is PARTIAL:
                return False
            if hit is None:  # not a token: the array form
                scanner.take(1)
                self.scanner.head_text()
                self._state = _ARRAY
                return True
            if hit in (TOOL_CALLS, THINK):
                self.scanner.head_text()  # an opener with nothing after it: dropped
                return self._at_token(hit)
            return self._no_call(None)  # [ARGS] or [CALL_ID] with no name
        self._state = _NAME
        return True

    def _s_name(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_M_NAME, final)
        if marker is None and not final:
            return False
        if marker is OVER:
            marker = None
        raw = self.scanner.head_text()
        name = raw.strip()
        spaced = _SPACED.search(name) is not None
        if marker not in (ARGS, CALL_ID, "{") or spaced or not is_call_name(name):
            if marker == "{":
                raw += marker
                marker = None
            elif marker in (ARGS, CALL_ID, THINK_END):
                marker = None
            # cut by the end of the output only while it may still be a name (prose has spaces)
            return self._no_call(marker, final and not spaced, raw)
        self._name = name
        if marker == CALL_ID:
            self.scanner.head_begin(raw)  # the call id: its own bounded head, after the name's text
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
        self.scanner.head_text()
        self._begin_call(self._name)
        self._args = RawArguments()
        self._state = _ARGS_START
        return True

    def _s_args_start(self, final: bool) -> bool:
        scanner = self.scanner
        scanner.skip_whitespace()
        c = scanner.peek(1)
        if not c:
            if final:
                self._abandon_call()
                self._state = _CONTENT
                return True
            return False
        if c != "{":
            self._abandon_call()
            self._state = _CONTENT
            return True
        self._state = _ARGS
        return self._s_args(final)

    def _s_args(self, final: bool) -> bool:
        scanner = self.scanner
        args = v = self._args
        text = scanner.take_all()
        # a piece through the raw arguments (parsers/README.md, "Raw JSON arguments"): event 0, all of it is sent
        j, event = args.scan(text, 0)
        if not event:
            if text:
                self._emit_arguments(text)
            if not final:  # (the arguments go on)
                return False
        else:
            send, used = args.scanned(text, j, event, True)
            scanner.unread(len(text) - used)  # (the text after the arguments: read by the next state)
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
        if self._args.broken():  # no JSON: content up to the bracket that closes it (another shape)
            self._break_call("".join(self._item))
            self._item = []
            self._rest = self._args.rest_tracker()
            self._state = _BROKEN_ITEM
            return True
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
        """A broken call's text: dropped up to the bracket that closes its object, else content. In state
        ``broken_item`` (an array element that is no JSON) it is content either way, and the array goes on."""
        item = self._state == _BROKEN_ITEM
        end = self._hold_broken_json(self._rest, (TOOL_CALLS,), final, keep=item)
        if end is None:
            return False
        if end == "":
            return True
        if end == TOOL_CALLS:
            return self._at_token(end)
        self._state = _ARRAY if item else _CONTENT
        return True

    _s_broken_item = _s_broken_json
