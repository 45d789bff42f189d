"""Tencent Hunyuan V4 tool calls (``hy_v4``).

The format (sources: vLLM 0.34's ``hy_v4_tool_parser.py`` and its ``hy_v4`` structural tag; SMG's
``crates/tool_parser/src/parsers/hy_v4.rs`` and its tests, read for facts; the Hy3 chat template's token
spelling) and every reading rule: ``docs/formats.md``, "Hunyuan V4" (the one place)::

    CONTENT<tool_calls:6124c78e><tool_call:6124c78e>get_weather<arg_key:6124c78e>city</arg_key:6124c78e>
    <arg_value:6124c78e>Paris</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>

(one line, no whitespace between the tags). Every structural token carries the checkpoint's suffix
(``:6124c78e``, or none); the parser learns it from the block's opener, as SMG does, and reads the block's
other tokens with it. This module holds the tokens, markers, the transition table and the ``_s_<state>``
steps; the shared mechanisms (driver, content, broken calls, bounded heads, confirmed closers, typed values)
are base.py's and schema.py's (``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; ``ws``: whitespace; ``S``: the suffix;
# "a / b": the one the reading decides; tests/parsers/test_transitions.py holds the states to the class's).
HY_V4_TRANSITIONS = {
    "content": {"text": "content", "<tool_calls": "suffix"},
    "suffix": {"S > (S empty, or : and no whitespace, < or >; at most MAX_SUFFIX)": "block",
               "anything else, past MAX_HEAD (the head is content)": "content"},
    "block": {"ws <tool_call S>": "name", "ws </tool_calls S>": "content", "ws <tool_calls S> (repeated: markup)": "block",
              "anything else (the block token markup, the text content)": "content"},
    "name": {"NAME <arg_key S>": "key", "NAME </tool_call S> (no arguments)": "block",
             "</tool_call S> with no name (an empty call: markup)": "block", "another tag, a bad name": "broken",
             "past MAX_HEAD (the head is content)": "content"},
    "key": {"KEY </arg_key S>": "key_done", "another tag, a bad key, past MAX_HEAD": "broken"},
    "key_done": {"ws <arg_value S>": "value", "anything else": "broken"},
    "value": {"text </arg_value S>": "close", "the end of the output inside the call": "content"},
    "close": {"ws <arg_key S>": "key", "ws </tool_call S>": "block",
              "anything else (the tag was value text)": "value"},
    "broken": {"</tool_call S> (the call's text dropped)": "block", "</tool_calls S> (dropped)": "content",
               "<tool_call S> (the text is content)": "block"},
}

import logging
import re

from . import register
from .base import ToolParser
from .scanner import OVER, PARTIAL, Markers, markers, value_state
from .schema import UNTYPED, TypedValue, is_tool_name

log = logging.getLogger(__name__)

__all__ = [
    "HyV4Parser", "Tags", "tags", "SUFFIX", "MAX_SUFFIX", "BLOCK_STEM", "SPECIAL_TOKENS", "MODEL_SPECIAL",
    "HY_V4_TRANSITIONS",
]

#: The suffix of every public Hy4 checkpoint's tokens (SMG's tests, ``tencent/Hy4-preview``; vLLM's docstring).
SUFFIX = ":6124c78e"
#: What opens a block, before its suffix and ``>``: the one content marker.
BLOCK_STEM = "<tool_calls"
_SUFFIX_TEXT = re.compile(r"(?::[^\s<>]+)?")  # "" or ":" then no whitespace, "<" or ">" (vLLM's and SMG's)
#: The longest suffix read as one (the public one is 9 characters): a longer one is text, so that a block's
#: marker sets stay small whatever the output writes.
MAX_SUFFIX = 64
_KEY = re.compile(r'[^<>\n]+')
_NO_VALUE = TypedValue(UNTYPED)


class Tags:
    """The structural tokens and marker sets of one suffix (``""`` or ``":6124c78e"``): ``tags(suffix)``.

    The sets are made here, not through ``scanner.markers`` (whose cache keeps every set it made): a suffix
    comes from the output, and only the first :data:`_TAGS_KEPT` suffixes' sets are kept."""

    __slots__ = ("suffix", "calls_open", "calls_close", "call_open", "call_close", "key_open", "key_close",
                 "value_open", "value_close", "tokens", "in_block", "name_end", "key_end", "value_begin",
                 "after_value", "value_end", "broken_markers", "broken_resume_at")

    def __init__(self, suffix: str) -> None:
        def tag(name: str, close: bool = False) -> str:
            return ("</" if close else "<") + name + suffix + ">"
        self.suffix = suffix
        self.calls_open, self.calls_close = tag("tool_calls"), tag("tool_calls", True)
        self.call_open, self.call_close = tag("tool_call"), tag("tool_call", True)
        self.key_open, self.key_close = tag("arg_key"), tag("arg_key", True)
        self.value_open, self.value_close = tag("arg_value"), tag("arg_value", True)
        self.tokens = (self.calls_open, self.calls_close, self.call_open, self.call_close, self.key_open,
                       self.key_close, self.value_open, self.value_close)
        self.in_block = Markers((self.call_open, self.calls_close, self.calls_open))
        # the name ends at the first key or the call's end; any other token there breaks the call
        self.name_end = Markers((*self.tokens[1:6], self.value_open, self.value_close))
        self.key_end = Markers((self.key_close, self.call_open, self.call_close, self.calls_close, self.key_open,
                               self.value_open, self.value_close))
        self.value_begin = Markers((self.value_open,))
        self.value_end = Markers((self.value_close,))  # (value_state's markers)
        self.after_value = Markers((self.key_open, self.call_close))
        # the broken-call tokens of this suffix (base _s_broken reads them from the instance)
        self.broken_markers = Markers((self.call_close, self.calls_close, self.call_open))
        self.broken_resume_at = {self.call_close: "block", self.calls_close: "content"}


_TAGS: dict[str, Tags] = {}
_TAGS_KEPT = 16  # suffixes kept compiled (one checkpoint writes one; more are made again, each once a block)


def tags(suffix: str = SUFFIX) -> Tags:
    """The :class:`Tags` of ``suffix`` (compiled once for the first suffixes seen)."""
    t = _TAGS.get(suffix)
    if t is None:
        t = Tags(suffix)
        if len(_TAGS) < _TAGS_KEPT:
            _TAGS[suffix] = t
    return t


_DEFAULT = tags(SUFFIX)
tags("")
SPECIAL_TOKENS = _DEFAULT.tokens
#: The structural tokens are added tokens of the checkpoint's vocabulary (vLLM reads their ids; its suffix
#: detection reads them from ``get_vocab``).
MODEL_SPECIAL = SPECIAL_TOKENS
_CONTENT = markers(BLOCK_STEM)
_GT = markers(">")


@register("hy_v4")
class HyV4Parser(ToolParser):
    """Streaming parser of Hunyuan V4 tool calls; rules: ``docs/formats.md``, "Hunyuan V4"."""

    transitions = HY_V4_TRANSITIONS
    _content_markers = _CONTENT
    # (the class's broken-call tokens are the default suffix's; a block's own are set when its suffix is read)
    broken_resume = dict(_DEFAULT.broken_resume_at)
    broken_restarts = (_DEFAULT.call_open,)
    broken_restart_state = "block"

    def __init__(self) -> None:
        super().__init__()
        self._t = _DEFAULT  # the current block's tokens
        self._value_ends = _DEFAULT.value_end  # (value_state's markers: the current block's, an instance attribute)
        self._call_name = ""
        self._n_params = 0
        self._tv = _NO_VALUE  # the current value's typed writer (schema.TypedValue)
        self._pending = ""  # the closing tag read after a value, not yet confirmed

    def _open(self, marker: str, final: bool) -> bool:
        self.scanner.head_begin(marker)
        self._state = "suffix"
        return True

    def _at_end(self) -> None:
        """The end of the output (base hook): an open call is abandoned (its markup never content)."""
        if self._state in ("key", "key_done", "value", "close"):
            log.debug("hy_v4: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
        self._pending = ""
        self._state = "content"

    # ------------------------------------------------------------------ the block
    def _s_suffix(self, final: bool) -> bool:
        """``<tool_calls`` read: the suffix up to ``>`` (bounded); it spells the block's other tokens."""
        _, marker = self.scanner.head_find(_GT, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._emit_content(self.scanner.head_text())
                self._state = "content"
                return True
            return False  # (with final: the output cut the head, no content)
        head = self.scanner.head_text()
        suffix = head[len(BLOCK_STEM):]
        if len(suffix) > MAX_SUFFIX or _SUFFIX_TEXT.fullmatch(suffix) is None:  # not a block token: text
            self._emit_content(head + marker)
            self._state = "content"
            return True
        t = self._t
        if t.suffix != suffix:
            t = self._t = tags(suffix)
            self._value_ends = t.value_end
            self._broken_markers = t.broken_markers
            self._broken_resume_at = t.broken_resume_at
        self._confirm_ws.clear()
        self._state = "block"
        return True

    def _s_block(self, final: bool) -> bool:
        t = self._t
        marker = self.scanner.match(t.in_block, final, self._confirm_ws)  # (its whitespace held, bounded)
        if marker is PARTIAL or (marker is None and self._cut_by_end(final, t.in_block)):
            return False
        if marker is None:  # not a call: the block ends, its text is content
            self._emit_content(self._confirm_text())
            self._state = "content"
            return True
        self._confirm_ws.clear()
        if marker == t.call_open:
            self.scanner.head_begin()
            self._state = "name"
        elif marker == t.calls_close:
            self._state = "content"
        return True  # (the block's opener again: markup, read on in the block)

    def _s_name(self, final: bool) -> bool:
        t = self._t
        _, marker = self.scanner.head_find(t.name_end, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._emit_content(t.call_open + self.scanner.head_text())
                self._state = "content"
                return True
            return False  # (with final: the output cut the head, no content)
        name = self.scanner.head_text().strip()
        if marker == t.call_close and not name:
            self._state = "block"  # an empty call: markup
            return True
        if marker != t.key_open and marker != t.call_close:
            self.scanner.unread(len(marker))  # (read again by the broken call)
            return self._fail(f"{marker} after the name")
        if not is_tool_name(name):  # (docs/formats.md, "Tool names")
            return self._fail(f"bad tool name {name!r}")
        self._call_name = name
        self._n_params = 0
        self._begin_call(name)
        if marker == t.call_close:
            self._emit_arguments("{}")
            self._end_call()
            self._state = "block"
            return True
        self._emit_arguments("{")
        self.scanner.head_begin()
        self._state = "key"
        return True

    # ------------------------------------------------------------------ arguments
    def _s_key(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(self._t.key_end, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                return self._fail("a parameter name longer than MAX_HEAD")
            return False
        key = self.scanner.head_text()
        if marker != self._t.key_close:
            self.scanner.unread(len(marker))
            return self._fail(f"{marker} in a parameter name")
        if _KEY.fullmatch(key) is None:
            return self._fail(f"bad parameter name {key!r}")
        self._begin_parameter(key, TypedValue(self._param_typing(self._call_name, key)))
        self._state = "key_done"
        return True

    def _s_key_done(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(self._t.value_begin, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            if final and self.scanner.at_end():
                return False  # (the output ended: the call is abandoned, _at_end)
            return self._fail("no <arg_value> after the parameter name")
        self._state = "value"
        return True

    #: A value's text up to its block's ``</arg_value…>``, through its typed writer, sent: the shared value state
    #: (``scanner.value_state``, on ``_value_ends``: the block's ``value_end``); at the tag, :meth:`_value_marker`.
    _s_value = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """The closing tag after a value's text (``value_state``), or None: the output ended inside the value
        (the call is abandoned: ``_at_end``)."""
        if marker is None:
            return False
        self._pending = marker
        self._confirm_ws.clear()
        self._state = "close"
        return True

    def _s_close(self, final: bool) -> bool:
        t = self._t
        marker = self.scanner.match(t.after_value, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:  # the closing tag was value text
            if final and self.scanner.at_end():
                self._confirm_ws.clear()
                return False  # (the output ended after it: the call is abandoned, _at_end)
            self._emit_arguments(self._tv.feed(self._pending + self._confirm_text()))
            self._pending = ""
            self._state = "value"
            return True
        self._confirm_ws.clear()
        self._pending = ""
        tv, self._tv = self._tv, _NO_VALUE
        if marker == t.key_open:
            self._emit_arguments(tv.end())
            self.scanner.head_begin()
            self._state = "key"
        else:
            self._emit_arguments(tv.end() + "}")
            self._end_call()
            self._state = "block"
        return True

    def _fail(self, why: str) -> bool:
        log.debug("hy_v4: call %r abandoned: %s", self._call_name, why)
        self._pending = ""
        self._confirm_ws.clear()
        self._tv = _NO_VALUE
        return self._broken()
