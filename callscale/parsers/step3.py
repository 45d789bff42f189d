"""StepFun Step-3 tool calls (``step3``).

The format (sources: SGLang's ``step3_detector.py`` and vLLM 0.34's
``step3_tool_parser.py``, read for facts; Step-3's chat template) and every
reading rule: ``docs/formats.md``, "Step-3" (the one place)::

    CONTENT<｜tool_calls_begin｜>
    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
    <steptml:parameter name="city">Paris</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

This module holds the tokens, markers, the transition table and the
``_s_<state>`` steps; the shared mechanisms (driver, content, broken calls,
bounded heads, confirmed closers, typed values) are base.py's and schema.py's
(``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the one the
# reading decides; tests/parsers/test_transitions.py holds the states to the class's).
STEP3_TRANSITIONS = {
    "content": {"text": "content", "CALLS_BEGIN": "block"},
    "block": {"ws CALL_BEGIN": "kind", "ws CALLS_END": "content", "ws CALLS_BEGIN, ws CALL_END (markup)": "block",
              "anything else (content, with its ws)": "content"},
    "kind": {"function SEP": "invoke", "another kind's SEP (the engines skip it)": "broken",
             "an empty head's CALL_END (markup)": "block", "another head's CALL_END, a block token (text of the block)":
             "block", "past MAX_HEAD (content)": "content"},
    "invoke": {'<steptml:invoke name="': "name", "CALL_END (an empty call: markup)": "block",
               "anything else (the head is content)": "content"},
    "name": {'NAME ">': "body", "an empty or bad name": "broken", "past MAX_HEAD (content)": "content"},
    "body": {'ws <steptml:parameter name="': "key", "ws </steptml:invoke>": "end", "anything else": "broken"},
    "key": {'KEY ">': "value", "a bad key, or past MAX_HEAD": "broken"},
    "value": {"text </steptml:parameter>": "close1", "the end of the output inside the call": "content"},
    "close1": {'ws <steptml:parameter name="': "key", "ws </steptml:invoke>": "close2",
               "anything else (the tag was value text)": "value"},
    "close2": {"ws CALL_END": "block", "anything else (the tags were value text)": "value"},
    "end": {"ws CALL_END": "block", "anything else": "broken"},
    "broken": {"CALL_END (the call's text dropped)": "block", "CALLS_END (dropped)": "content",
               "CALL_BEGIN, CALLS_BEGIN (the text is content)": "block"},
}

import logging
import re

from . import register
from .base import ToolParser
from .scanner import OVER, PARTIAL, markers, value_state
from .schema import UNTYPED, TypedValue, is_tool_name

log = logging.getLogger(__name__)

__all__ = [
    "Step3Parser", "CALLS_BEGIN", "CALLS_END", "CALL_BEGIN", "CALL_END", "SEP", "KIND", "INVOKE_OPEN",
    "INVOKE_CLOSE", "PARAM_OPEN", "PARAM_CLOSE", "TAG_END", "SPECIAL_TOKENS", "MODEL_SPECIAL",
    "STEP3_TRANSITIONS",
]

#: The block and call tokens (full-width bars U+FF5C, underscores: not DeepSeek's ``▁``).
CALLS_BEGIN = "<｜tool_calls_begin｜>"
CALLS_END = "<｜tool_calls_end｜>"
CALL_BEGIN = "<｜tool_call_begin｜>"
CALL_END = "<｜tool_call_end｜>"
SEP = "<｜tool_sep｜>"
#: The call's kind, written between ``CALL_BEGIN`` and ``SEP``: the only one the engines read.
KIND = "function"
#: StepTML (plain text, no tokens): ``INVOKE_OPEN + name + TAG_END``, ``PARAM_OPEN + key + TAG_END``.
INVOKE_OPEN = '<steptml:invoke name="'
INVOKE_CLOSE = "</steptml:invoke>"
PARAM_OPEN = '<steptml:parameter name="'
PARAM_CLOSE = "</steptml:parameter>"
TAG_END = '">'

SPECIAL_TOKENS = (CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP)
#: Those the engines list as the model's special tokens (vLLM 0.34 ``Step3ToolParser.SPECIAL_TOKENS``).
MODEL_SPECIAL = (CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END)

_CONTENT = markers(CALLS_BEGIN)
_IN_BLOCK = markers(CALL_BEGIN, CALLS_END, CALLS_BEGIN, CALL_END)
_KIND_END = markers(SEP, CALL_END, CALLS_END, CALLS_BEGIN, CALL_BEGIN)
_INVOKE = markers(INVOKE_OPEN, CALL_END)
_TAG_END = markers(TAG_END)
_IN_INVOKE = markers(PARAM_OPEN, INVOKE_CLOSE)
_CALL_END = markers(CALL_END)

_KEY = re.compile(r'[^<>"\n]+')
_NO_VALUE = TypedValue(UNTYPED)
#: What ends a value's text (value_state).
_M_VALUE_END = markers(PARAM_CLOSE)


@register("step3")
class Step3Parser(ToolParser):
    """Streaming parser of Step-3 tool calls; rules: ``docs/formats.md``, "Step-3"."""

    transitions = STEP3_TRANSITIONS
    _content_markers = _CONTENT
    broken_resume = {CALL_END: "block", CALLS_END: "content"}
    broken_restarts = (CALL_BEGIN, CALLS_BEGIN)
    broken_restart_state = "block"

    def __init__(self) -> None:
        super().__init__()
        self._raw = ""  # the call head read so far (content if it turns out no call)
        self._call_name = ""
        self._n_params = 0
        self._value_ends = _M_VALUE_END  # (value_state's markers: an instance attribute, read a delta)
        self._tv = _NO_VALUE  # the current value's typed writer (schema.TypedValue)
        self._pending = ""  # closing tags (and whitespace) read after a value, not yet decided

    def _open(self, marker: str, final: bool) -> bool:
        self._state = "block"
        return True

    def _at_end(self) -> None:
        """The end of the output (base hook): a call head is cut (no content), an open call abandoned."""
        if self._state in ("body", "key", "value", "close1", "close2", "end"):
            log.debug("step3: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
        self._raw = self._pending = ""
        self._state = "content"

    # ------------------------------------------------------------------ the block and the call head
    def _s_block(self, final: bool) -> bool:
        marker = self.scanner.match(_IN_BLOCK, final, self._confirm_ws)  # (its whitespace held as layout, bounded)
        if marker is PARTIAL or (marker is None and self._cut_by_end(final, _IN_BLOCK)):
            return False
        if marker is None:  # not a call: the block ends, its text is content
            self._emit_content(self._confirm_text())
            self._state = "content"
            return True
        self._confirm_ws.clear()
        if marker == CALL_BEGIN:
            self.scanner.head_begin(CALL_BEGIN)
            self._state = "kind"
        elif marker == CALLS_END:
            self._state = "content"
        return True  # (CALLS_BEGIN, CALL_END: markup, read on in the block)

    def _s_kind(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_KIND_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._emit_content(self.scanner.head_text())
                self._state = "content"
                return True
            return False  # (with final: the output cut the head, no content)
        head = self.scanner.head_text()
        if marker == SEP and head[len(CALL_BEGIN):].strip() == KIND:
            self._raw = head + SEP
            self._state = "invoke"
            return True
        if marker == SEP:  # a call of another kind: broken (the engines skip it), its text to CALL_END dropped
            return self._broken(head + SEP)
        if marker == CALL_END and not head[len(CALL_BEGIN):].strip():
            pass  # an empty call: markup
        elif marker == CALL_END:
            self._emit_content(head + marker)
        else:  # a block token ends the head short: the head is text, the token read again
            self._emit_content(head)
            self.scanner.unread(len(marker))
        self._state = "block"
        return True

    def _s_invoke(self, final: bool) -> bool:
        marker = self.scanner.match(_INVOKE, final)
        if marker == INVOKE_OPEN:
            self._raw += marker
            self.scanner.head_begin()
            self._state = "name"
        elif marker == CALL_END:
            self._state = "block"  # an empty call: markup
        elif marker is PARTIAL or self._cut_by_end(final, _INVOKE):
            return False
        else:
            self._emit_content(self._raw)
            self._state = "content"
        return True

    def _s_name(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_TAG_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._emit_content(self._raw + self.scanner.head_text())
                self._state = "content"
                return True
            return False
        name = self.scanner.head_text()
        self._raw = ""
        if not is_tool_name(name):  # (docs/formats.md, "Tool names")
            return self._fail(f"bad tool name {name!r}")
        self._begin_arguments(name)
        self._state = "body"
        return True

    # ------------------------------------------------------------------ parameters
    def _s_body(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_IN_INVOKE, final)
        if marker == PARAM_OPEN:
            self.scanner.head_begin()
            self._state = "key"
        elif marker == INVOKE_CLOSE:
            self._state = "end"
        elif marker is PARTIAL or self._cut_by_end(final, _IN_INVOKE):
            return False
        else:
            return self._fail("unexpected text inside <steptml:invoke>")
        return True

    def _s_key(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_TAG_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                return self._fail("a parameter name longer than MAX_HEAD")
            return False
        key = self.scanner.head_text()
        if _KEY.fullmatch(key) is None:
            return self._fail(f"bad parameter name {key!r}")
        self._begin_parameter(key, TypedValue(self._param_typing(self._call_name, key)))
        self._state = "value"
        return True

    #: A value's text up to ``</parameter>``, through its typed writer, sent: the shared value state
    #: (``scanner.value_state``); at the tag, :meth:`_value_marker`.
    _s_value = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """``</parameter>`` after a value's text (``value_state``), or None: the output ended inside the value
        (the call is cut: ``_at_end``)."""
        if marker is None:
            return False
        self._pending = PARAM_CLOSE
        self._confirm_ws.clear()
        self._state = "close1"
        return True

    def _s_close1(self, final: bool) -> bool:
        marker = self.scanner.match(_IN_INVOKE, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == PARAM_OPEN:
            self._confirm_ws.clear()
            self._end_value()
            self.scanner.head_begin()
            self._state = "key"
        elif marker == INVOKE_CLOSE:
            self._pending += self._confirm_text() + INVOKE_CLOSE
            self._state = "close2"
        else:  # the closing tag was value text
            self._reject_close()
        return True

    def _s_close2(self, final: bool) -> bool:
        marker = self.scanner.match(_CALL_END, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._reject_close()
            return True
        self._confirm_ws.clear()
        self._end_value()
        self._close_call()
        return True

    def _s_end(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_CALL_END, final)
        if marker == CALL_END:
            self._close_call()
        elif marker is PARTIAL or self._cut_by_end(final, _CALL_END):
            return False
        else:
            return self._fail("no call end after </steptml:invoke>")
        return True

    # ------------------------------------------------------------------ helpers
    def _reject_close(self) -> None:
        """The held closing tag(s) did not end the value: value text, with the whitespace held after them."""
        self._emit_arguments(self._tv.feed(self._pending + self._confirm_text()))
        self._pending = ""
        self._state = "value"

    def _end_value(self) -> None:
        self._pending = ""
        tv, self._tv = self._tv, _NO_VALUE
        self._emit_arguments(tv.end())

    def _close_call(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._state = "block"

    def _fail(self, why: str) -> bool:
        log.debug("step3: call %r abandoned: %s", self._call_name, why)
        self._pending = ""
        self._confirm_ws.clear()
        self._tv = _NO_VALUE
        return self._broken()
