"""Upstage Solar Open 2 tool calls (``solar_open2``).

The format (sources: vLLM's ``vllm/tool_parsers/solar_open2_tool_parser.py`` and its tests, read for
facts) and every reading rule: ``docs/formats.md``, "Solar Open 2" (the one place)::

    CONTENT<|tool_call:start|>get_weather
    <|tool_arg:start|>city<|tool_arg:value|>Paris<|tool_arg:end|>
    <|tool_arg:start|>days<|tool_arg:value|>3<|tool_arg:end|>
    <|tool_call:end|>

This module holds the tokens, markers, the transition table and the ``_s_<state>`` steps; the shared
mechanisms (driver, content, layout, broken calls, bounded heads, the typed value state) are base.py's,
scanner.py's and schema.py's (``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the one the
# reading decides; tests/parsers/test_transitions.py holds the states to the class's).
SOLAR_OPEN2_TRANSITIONS = {
    "content": {"text": "content", "CALL_START": "name"},
    "name": {"NAME \\n": "body", "CALL_START again (a repeat: markup)": "name",
             "NAME ARG_START (the newline missing)": "key", "NAME CALL_END (no arguments)": "content",
             "an empty head's CALL_END or CALL_START (markup)": "content / name",
             "a bad or empty name, ARG_VALUE or ARG_END": "broken", "past MAX_HEAD (the head is content)": "content",
             "a head then CALL_START (the head is content)": "name"},
    "body": {"ws ARG_START": "key", "ws CALL_END": "content", "ws CALL_START (CALL_END missing)": "name",
             "anything else": "broken"},
    "key": {"KEY ARG_VALUE": "value", "a bad key, another token, or past MAX_HEAD": "broken"},
    "value": {"text ARG_END": "body", "text ARG_START (ARG_END missing)": "key", "text CALL_END": "content",
              "text CALL_START": "name"},
    "broken": {"CALL_END (the call's text dropped)": "content", "CALL_START (the text is content)": "content"},
}

import logging
import re

from . import register
from .base import ToolParser
from .scanner import OVER, PARTIAL, markers, value_state
from .schema import UNTYPED, TypedValue, is_tool_name, json_string, typed_value

log = logging.getLogger(__name__)

__all__ = [
    "SolarOpen2Parser", "CALL_START", "CALL_END", "ARG_START", "ARG_VALUE", "ARG_END", "NAME_END",
    "SPECIAL_TOKENS", "MODEL_SPECIAL", "SOLAR_OPEN2_TRANSITIONS",
]

#: The call and argument tokens (single special tokens of the Solar Open 2 vocabulary).
CALL_START = "<|tool_call:start|>"
CALL_END = "<|tool_call:end|>"
ARG_START = "<|tool_arg:start|>"
ARG_VALUE = "<|tool_arg:value|>"
ARG_END = "<|tool_arg:end|>"
#: The tool name is the rest of the start token's line.
NAME_END = "\n"

SPECIAL_TOKENS = (CALL_START, CALL_END, ARG_START, ARG_VALUE, ARG_END)
#: All five are the model's special tokens (the engines' parsers read them as text: skip_special_tokens off).
MODEL_SPECIAL = SPECIAL_TOKENS

_CONTENT = markers(CALL_START)
_NAME_END = markers(NAME_END, CALL_START, CALL_END, ARG_START, ARG_VALUE, ARG_END)
_IN_CALL = markers(ARG_START, CALL_END, CALL_START)
_KEY_END = markers(ARG_VALUE, ARG_START, ARG_END, CALL_END, CALL_START)
#: What ends a value's text (value_state): its end token, or a token that shows it missing.
_VALUE_END = markers(ARG_END, ARG_START, CALL_END, CALL_START)

#: A parameter name: no newline, no outer whitespace, not empty.
_KEY = re.compile(r"\S(?:[^\n]*\S)?")
_NO_VALUE = TypedValue(UNTYPED)


@register("solar_open2")
class SolarOpen2Parser(ToolParser):
    """Streaming parser of Solar Open 2 tool calls; rules: ``docs/formats.md``, "Solar Open 2"."""

    transitions = SOLAR_OPEN2_TRANSITIONS
    _content_markers = _CONTENT
    broken_ends = (CALL_END,)
    broken_restarts = (CALL_START,)

    def __init__(self) -> None:
        super().__init__()
        self._call_name = ""
        self._keys: set[str] = set()  # the current call's parameter names (a repeated one: the first value kept)
        self._skip = False  # the current value is a repeated parameter's: read, not sent
        self._value_ends = _VALUE_END  # (value_state's markers: an instance attribute, read a delta)
        self._tv = _NO_VALUE  # the current value's typed writer (schema.TypedValue)

    def _open(self, marker: str, final: bool) -> bool:
        self.scanner.head_begin()
        self._state = "name"
        return True

    def _at_end(self) -> None:
        """The end of the output (base hook): a call head is cut (no content), an open call abandoned."""
        if self._state in ("body", "key", "value"):
            log.debug("solar_open2: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
        self._tv = _NO_VALUE
        self._state = "content"

    # ------------------------------------------------------------------ the call head
    def _s_name(self, final: bool) -> bool:
        sc = self.scanner
        if not sc.head_size() and sc.skip_repeats(CALL_START):  # the start token repeated: each but the last markup
            return True
        _, marker = sc.head_find(_NAME_END, final)
        if marker is None:
            return False  # (with final: the output cut the head, no content)
        if marker is OVER:  # no name line: the head is text (its start token markup)
            self._emit_content(sc.head_text())
            self._state = "content"
            return True
        head = sc.head_text()
        name = head.strip()
        if marker == CALL_START or (marker == CALL_END and not name):
            if name:  # a head ended short by the next start token: text
                self._emit_content(head)
            if marker == CALL_START:
                return self._open(marker, final)
            self._state = "content"  # an empty call: markup
            return True
        if not is_tool_name(name) or marker in (ARG_VALUE, ARG_END):  # (docs/formats.md, "Tool names")
            if marker == NAME_END:
                head += marker
            return self._broken(head)  # (an argument token: markup, dropped)
        self._call_name = name
        self._keys = set()
        self._begin_call(name)
        if marker == CALL_END:
            self._emit_arguments("{}")
            self._end_call()
            self._state = "content"
            return True
        self._emit_arguments("{")
        if marker == ARG_START:
            sc.head_begin()
            self._state = "key"
        else:
            self._state = "body"
        return True

    # ------------------------------------------------------------------ arguments
    def _s_body(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_IN_CALL, final)
        if marker == ARG_START:
            self.scanner.head_begin()
            self._state = "key"
        elif marker == CALL_END:
            self._close_call()
        elif marker == CALL_START:
            self._close_call()
            return self._open(marker, final)
        elif marker is PARTIAL or self._cut_by_end(final, _IN_CALL):
            return False
        else:
            return self._fail("text between arguments")
        return True

    def _s_key(self, final: bool) -> bool:
        sc = self.scanner
        _, marker = sc.head_find(_KEY_END, final)
        if marker is None:
            return False
        if marker is OVER:
            return self._fail("a parameter name longer than MAX_HEAD")
        key = sc.head_text()
        if marker != ARG_VALUE or _KEY.fullmatch(key) is None:
            if marker in (CALL_END, CALL_START):  # (read by the broken state; an argument token is dropped)
                sc.unread(len(marker))
            return self._fail(f"bad parameter name {key!r}")
        keys = self._keys
        self._skip = key in keys
        if self._skip:  # the first value kept (vLLM's rule): this one is read and dropped
            self._tv = TypedValue(UNTYPED, "json")
        else:
            self._tv = tv = typed_value(self._param_typing(self._call_name, key))
            self._emit_arguments((", " if keys else "") + json_string(key) + ": " + tv.opening)
            keys.add(key)
        self._state = "value"
        return True

    #: A value's text up to a token, through its typed writer, sent: the shared value state
    #: (``scanner.value_state``); at the token, :meth:`_value_marker`.
    _s_value = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """The token after a value's text (``value_state``), or None: the output ended inside the value
        (the call is cut: ``_at_end``)."""
        if marker is None:
            return False
        tv, self._tv = self._tv, _NO_VALUE
        if self._skip:
            self._skip = False
        else:
            self._emit_arguments(tv.end())
        if marker == ARG_END:
            self._state = "body"
        elif marker == ARG_START:
            self.scanner.head_begin()
            self._state = "key"
        else:
            self._close_call()
            if marker == CALL_START:
                return self._open(marker, final)
        return True

    # ------------------------------------------------------------------ helpers
    def _close_call(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._state = "content"

    def _fail(self, why: str) -> bool:
        log.debug("solar_open2: call %r abandoned: %s", self._call_name, why)
        self._tv = _NO_VALUE
        self._skip = False
        return self._broken()
