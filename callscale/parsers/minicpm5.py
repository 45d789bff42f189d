"""OpenBMB MiniCPM5 tool calls (``minicpm5``).

The format (sources: MiniCPM5's ``chat_template.jinja`` as llama.cpp ships it,
``models/templates/openbmb-MiniCPM5-1B.jinja``; vLLM 0.34's ``minicpm5xml_tool_parser.py`` and SGLang
0.5.23's ``minicpm5_detector.py``, read for facts) and every reading rule: ``docs/formats.md``,
"MiniCPM5" (the one place)::

    CONTENT
    <function name="get_weather"><param name="city">Paris</param><param name="days">3</param></function>
    <function name="write_file"><param name="text"><![CDATA[a < b
    ]]></param></function>

A call is bare, or inside ``<tool_call>`` ... ``</tool_call>`` (what some serving stacks' models write). This
module holds the tags, markers, the transition table and the ``_s_<state>`` steps; the shared mechanisms
(driver, content, layout, broken calls, bounded heads, confirmed closers, the typed value state) are
base.py's, scanner.py's and schema.py's (``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the one the
# reading decides; tests/parsers/test_transitions.py holds the states to the class's).
MINICPM5_TRANSITIONS = {
    "content": {"text": "content", '[\\n]<function name="': "name", "<tool_call>": "wrap"},
    "wrap": {'ws <function name="': "name", "ws </tool_call> (an empty envelope: markup)": "content",
             "anything else (the opener and ws are content)": "content"},
    "name": {'NAME ">': "body", '<function name=" again (the head before it is text)': "name",
             "a bad name, < or \\n in it, or past MAX_HEAD (the head is content)": "content"},
    "body": {'ws <param name="': "key", "ws </function>": "function_end", "anything else": "broken",
             "the end of the output (a cut call: abandoned)": "content"},
    "key": {'KEY ">': "value_open", 'KEY "> <![CDATA[': "cdata", 'KEY "> anything else': "value",
            "a bad key, or past MAX_HEAD": "broken"},
    "value_open": {"<![CDATA[": "cdata", "anything else": "value"},
    "value": {"text </param>": "value_close"},
    "value_close": {'ws <param name="': "key", "ws </function>": "function_end",
                    "anything else (the tag was value text)": "value",
                    "the end of the output (a cut call: abandoned)": "content"},
    "cdata": {"text ]]>": "cdata_close", "the end of the output (a cut call: abandoned)": "content"},
    "cdata_close": {"ws </param>": "body", "anything else (]]> was value text)": "cdata"},
    "function_end": {'(bare) \\n<function name="': "name", "(bare) anything else": "content",
                     "ws </tool_call>": "content", 'ws <function name="': "name",
                     "anything else (content)": "content"},
    "broken": {"</function> (the call's text dropped)": "function_end", "</tool_call> (dropped)": "content",
               '<function name=", <tool_call> (the text is content)': "content"},
}

import logging
import re

from . import register
from .base import ToolParser
from .scanner import OVER, PARTIAL, markers, value_state
from .schema import UNTYPED, TypedValue, is_tool_name, typed_value

log = logging.getLogger(__name__)

__all__ = [
    "MiniCpm5Parser", "FUNCTION_OPEN", "FUNCTION_CLOSE", "PARAM_OPEN", "PARAM_CLOSE", "TAG_END", "CDATA_OPEN",
    "CDATA_CLOSE", "TOOL_CALL_OPEN", "LAYOUT_OPENER", "TOOL_CALL_CLOSE", "SPECIAL_TOKENS", "MODEL_SPECIAL", "MINICPM5_TRANSITIONS",
]

#: The call: ``FUNCTION_OPEN + name + TAG_END``, its parameters, ``FUNCTION_CLOSE``.
FUNCTION_OPEN = '<function name="'
FUNCTION_CLOSE = "</function>"
#: A parameter: ``PARAM_OPEN + key + TAG_END + value + PARAM_CLOSE``.
PARAM_OPEN = '<param name="'
PARAM_CLOSE = "</param>"
TAG_END = '">'
#: A string value holding ``<``, ``&`` or a newline is written in a CDATA section (the template's rule).
CDATA_OPEN = "<![CDATA["
CDATA_CLOSE = "]]>"
#: The envelope some outputs put a call in (not the template's).
TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"

#: No tag is kept whole: the MLX tokenizer splits ``<function`` (``<f`` + ``unct``: mlx-serve PR #315), so the
#: tags are text a chunking may split anywhere (docs/formats.md, "MiniCPM5").
SPECIAL_TOKENS: tuple[str, ...] = ()
MODEL_SPECIAL: tuple[str, ...] = ()

#: The newline the template writes before a call (after content) is layout: read with the opener.
LAYOUT_OPENER = "\n" + FUNCTION_OPEN
_CONTENT = markers(LAYOUT_OPENER, FUNCTION_OPEN, TOOL_CALL_OPEN)
_WRAP = markers(FUNCTION_OPEN, TOOL_CALL_CLOSE)
_TAG_END = markers(TAG_END)
#: What ends a name's head: its ``">``, or a character no name holds (the head is then text).
_NAME_END = markers(TAG_END, "<", "\n")
_IN_FUNCTION = markers(PARAM_OPEN, FUNCTION_CLOSE)
_PARAM_CLOSE = markers(PARAM_CLOSE)
_CDATA_CLOSE = markers(CDATA_CLOSE)

_KEY = re.compile(r'[^<>"\n]+')
_NO_VALUE = TypedValue(UNTYPED)


@register("minicpm5")
class MiniCpm5Parser(ToolParser):
    """Streaming parser of MiniCPM5 tool calls; rules: ``docs/formats.md``, "MiniCPM5"."""

    transitions = MINICPM5_TRANSITIONS
    #: The whitespace its template writes before a call (base.ToolParser.layout_before_call).
    layout_before_call = "\n"
    _content_markers = _CONTENT
    broken_resume = {FUNCTION_CLOSE: "function_end", TOOL_CALL_CLOSE: "content"}
    broken_restarts = (FUNCTION_OPEN, TOOL_CALL_OPEN)

    def __init__(self) -> None:
        super().__init__()
        self._call_name = ""
        self._wrapped = False  # the call is inside <tool_call>
        self._opener_checked = False  # the head's start read: the opener does not repeat there (state "name")
        self._n_params = 0
        self._value_ends = _PARAM_CLOSE  # (value_state's markers: an instance attribute, read a delta)
        self._tv = _NO_VALUE  # the current value's typed writer (schema.TypedValue)

    def _open(self, marker: str, final: bool) -> bool:
        if marker != TOOL_CALL_OPEN:
            self._wrapped = False
            self._name_head(marker)
        else:
            self._confirm_ws.clear()
            self._state = "wrap"
        return True

    def _name_head(self, prefix: str) -> None:
        """A call's head starts after ``prefix`` (its opener, kept with the head's text): state ``name``, whose
        check for the opener again at the head's start is not made yet."""
        self.scanner.head_begin(prefix)
        self._opener_checked = False
        self._state = "name"

    def _at_end(self) -> None:
        """The end of the output (base hook): a call head is cut (no content), an open call abandoned."""
        if self._state not in ("content", "wrap", "name", "function_end", "broken"):
            log.debug("minicpm5: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
        self._confirm_ws.clear()
        self._tv = _NO_VALUE
        self._state = "content"

    # ------------------------------------------------------------------ the envelope and the call head
    def _s_wrap(self, final: bool) -> bool:
        marker = self.scanner.match(_WRAP, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == FUNCTION_OPEN:
            self._name_head(TOOL_CALL_OPEN + self._confirm_text() + FUNCTION_OPEN)
            self._wrapped = True
        elif marker == TOOL_CALL_CLOSE or self._cut_by_end(final, _WRAP):
            self._confirm_ws.clear()  # an empty envelope, or one the output cut: markup
            self._state = "content"
        else:  # the opener starts no call: it and the whitespace are content
            self._emit_content(TOOL_CALL_OPEN + self._confirm_text())
            self._state = "content"
        return True

    def _s_name(self, final: bool) -> bool:
        sc = self.scanner
        if not self._opener_checked:  # the opener repeated (a degenerate model): each but the last is text
            hit = sc.match_literal(FUNCTION_OPEN, final)
            if hit is PARTIAL:
                return False
            if hit:
                n = 1 + sc.skip_repeats(FUNCTION_OPEN)
                self._emit_content(sc.head_text() + FUNCTION_OPEN * (n - 1))
                sc.head_begin(FUNCTION_OPEN)
                self._wrapped = False
                return True
            self._opener_checked = True  # (decided: text that does not start it now never will; a flag, not a call)
        _, marker = sc.head_find(_NAME_END, final)
        if marker is None:
            return False  # (with final: the output cut the head, no content)
        head = sc.head_text()
        name = head[head.rindex(FUNCTION_OPEN) + len(FUNCTION_OPEN):]
        if marker is not OVER and marker != TAG_END:
            sc.unread(len(marker))  # (read again as content: it may open the next call)
        if marker != TAG_END or not is_tool_name(name):  # (docs/formats.md, "Tool names"): the head is text
            self._emit_content(head if marker != TAG_END else head + marker)
            self._state = "content"
            return True
        self._begin_arguments(name)
        self._state = "body"
        return True

    # ------------------------------------------------------------------ parameters
    def _s_body(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_IN_FUNCTION, final)
        if marker is PARTIAL:  # (the commonest answer, a tag still arriving: tested first)
            return False
        if marker == PARAM_OPEN:
            self.scanner.head_begin()
            self._state = "key"
        elif marker == FUNCTION_CLOSE:
            self._close_call()
        elif self._cut_by_end(final, _IN_FUNCTION):
            return False
        else:
            return self._fail("unexpected text inside <function>")
        return True

    def _s_key(self, final: bool) -> bool:
        sc = self.scanner
        _, marker = sc.head_find(_TAG_END, final)
        if marker is None:
            return False
        if marker is OVER:
            return self._fail("a parameter name longer than MAX_HEAD")
        key = sc.head_text()
        if _KEY.fullmatch(key) is None:
            return self._fail(f"bad parameter name {key!r}")
        self._begin_parameter(key, typed_value(self._param_typing(self._call_name, key)))
        return self._s_value_open(final)

    def _s_value_open(self, final: bool) -> bool:
        """A value's start: a CDATA section, or text (``value_open`` only while a part of ``<![CDATA[`` is all
        there is to read)."""
        hit = self.scanner.match_literal(CDATA_OPEN, final)
        if hit is PARTIAL:
            self._state = "value_open"
            return False
        if not hit:
            self._value_ends = _PARAM_CLOSE
            self._state = "value"
        else:
            self._value_ends = _CDATA_CLOSE
            self._state = "cdata"
        return True

    #: A value's text up to ``</param>`` (or, in a CDATA section, up to ``]]>``), through its typed writer, sent:
    #: the shared value state (``scanner.value_state``); at the tag, :meth:`_value_marker`.
    _s_value = value_state
    _s_cdata = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """The tag after a value's text (``value_state``), or None: the output ended inside the value (the call
        is cut: ``_at_end``)."""
        if marker is None:
            return False
        if marker == PARAM_CLOSE and self._tv.unfinished():  # inside a string of an array or object value: text
            self._emit_arguments(self._tv.feed(marker))
            return True
        self._confirm_ws.clear()
        self._state = "value_close" if marker == PARAM_CLOSE else "cdata_close"
        return True

    def _s_value_close(self, final: bool) -> bool:
        marker = self.scanner.match(_IN_FUNCTION, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:  # the closing tag was value text
            self._emit_arguments(self._tv.feed(PARAM_CLOSE + self._confirm_text()))
            self._state = "value"
            return True
        self._confirm_ws.clear()
        self._end_value()
        if marker == PARAM_OPEN:
            self.scanner.head_begin()
            self._state = "key"
        else:
            self._close_call()
        return True

    def _s_cdata_close(self, final: bool) -> bool:
        marker = self.scanner.match(_PARAM_CLOSE, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:  # ]]> was value text
            self._emit_arguments(self._tv.feed(CDATA_CLOSE + self._confirm_text()))
            self._state = "cdata"
            return True
        self._confirm_ws.clear()
        self._end_value()
        self._state = "body"
        return True

    def _s_function_end(self, final: bool) -> bool:
        if not self._wrapped:  # the next call's newline and opener, compared while they arrive; else content
            hit = self.scanner.match_literal(LAYOUT_OPENER, final)
            if hit is PARTIAL:
                return False
            self._state = "content"
            return self._open(LAYOUT_OPENER, final) if hit else True
        marker = self.scanner.match(_WRAP, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == FUNCTION_OPEN:  # the next call in the same envelope
            self._name_head(FUNCTION_OPEN)
            self._emit_content(self._confirm_text())  # (layout after a call: held by the base)
        elif marker == TOOL_CALL_CLOSE:
            self._confirm_ws.clear()
            self._wrapped = False
            self._state = "content"
        else:  # the envelope's end missing: what follows is content
            self._emit_content(self._confirm_text())
            self._wrapped = False
            self._state = "content"
        return True

    # ------------------------------------------------------------------ helpers
    def _end_value(self) -> None:
        tv, self._tv = self._tv, _NO_VALUE
        self._emit_arguments(tv.end())

    def _close_call(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._state = "function_end"

    def _fail(self, why: str) -> bool:
        log.debug("minicpm5: call %r abandoned: %s", self._call_name, why)
        self._confirm_ws.clear()
        self._tv = _NO_VALUE
        return self._broken()
