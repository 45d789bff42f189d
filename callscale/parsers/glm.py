"""GLM-4.5 / GLM-4.6 and GLM-4.7 tool calls (``glm45``, ``glm47``).

The format and every reading rule: ``docs/formats.md``, "GLM-4.5 / GLM-4.7"
(the one place). This module holds the tokens, markers and ``_s_<state>``
steps; the shared mechanisms (driver, content, broken calls, bounded heads,
confirmed closers, typed values) are base.py's and schema.py's
(``callscale/parsers/README.md``).

The transition table (``GLM_TRANSITIONS``, below) opens the module.

A value's kind (a string, a string or null, typed at its end, or GLM's own
rule for a parameter the schema does not know) is :class:`schema.TypedValue`'s.
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; ``\\n`` before a tag is layout;
# tests/parsers/test_transitions.py holds it to the class's states and to the states real workloads enter).
GLM_TRANSITIONS = {
    "content": {"text": "content", "<tool_call> (glm45: also \\n<tool_call>)": "name"},
    "name": {"a name, then <arg_key>": "key", "a name, then </tool_call> (no arguments)": "content",
             "<tool_call> with no name before it (a repeat: dropped)": "name",
             "a declared tool that takes no arguments, then </arg_value>, <arg_value> or </arg_key>": "name_stray",
             "a declared tool's name run together with its parameter, then </arg_key> (<arg_key> missing)": "key_done",
             "another name, then </arg_value>, <arg_value> or </arg_key>": "broken",
             "a declared tool's name, then <tool_call>": "name_key",
             "anything else, past MAX_HEAD, or no name (the opener was text)": "content"},
    "name_key": {"KEY </arg_key>, KEY a parameter of the tool (<tool_call> stood for <arg_key>)": "key_done",
                 "anything else (the first opener and name were text; the second opener's name is read)": "name"},
    "name_stray": {"whitespace, then </tool_call> (the zero-argument call)": "content", "anything else": "broken"},
    "key": {"key text, then </arg_key>": "key_done", "<arg_key> before any key text (a repeat: dropped)": "key",
            "another tag, or past MAX_HEAD": "broken"},
    "key_done": {"whitespace, then <arg_value>": "value", "whitespace, then </arg_key> (a repeat: dropped)": "key_done",
                 "anything else": "value_bare"},
    "value": {"text, then </arg_value>": "value_close", "text, then [\\n]<arg_key>": "value_key",
              "the end of the output inside the call": "content",
              "text, then [\\n]</tool_call>": "value_call_end"},
    "value_bare": {"text, then </arg_value>": "value_close", "another tag": "broken"},
    "value_close": {"whitespace, then <arg_key>": "key", "whitespace, then </tool_call>": "content",
                    "anything else (the tag was value text)": "value / value_bare"},
    "value_key": {"a new key, then </arg_key> (</arg_value> was missing)": "key_done",
                  "anything else (the tag was value text)": "value"},
    "value_call_end": {"whitespace, then <tool_call> or the end of the output": "name / content",
                       "anything else (the tag was value text)": "value"},
    "broken": {"text up to </tool_call>": "content", "<tool_call> (the next call)": "content"},
}

import re

from . import register
from .base import ToolParser
from .schema import (TOOL_NAME_RUN, UNTYPED, TypedValue, declares_tool, is_new_parameter, json_string,
                     split_name_and_key, takes_no_arguments, typed_value)
from .scanner import OVER, PARTIAL, markers, value_state

__all__ = [
    "TOOL_CALL", "TOOL_CALL_END", "ARG_KEY", "ARG_KEY_END", "ARG_VALUE", "ARG_VALUE_END",
    "LAYOUT_OPENER", "SPECIAL_TOKENS", "Glm45Parser", "Glm47Parser",
]

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
ARG_KEY = "<arg_key>"
ARG_KEY_END = "</arg_key>"
ARG_VALUE = "<arg_value>"
ARG_VALUE_END = "</arg_value>"
#: The GLM-4.5 template writes ``'\n<tool_call>' + name``: that newline is layout.
LAYOUT_OPENER = "\n" + TOOL_CALL
#: Single tokens of the GLM-4.5/4.7 vocabulary (added special tokens).
SPECIAL_TOKENS = (TOOL_CALL, TOOL_CALL_END, ARG_KEY, ARG_KEY_END, ARG_VALUE, ARG_VALUE_END)

_M_NAME = markers(LAYOUT_OPENER, TOOL_CALL, ARG_KEY, TOOL_CALL_END, ARG_VALUE_END, ARG_VALUE, ARG_KEY_END)
#: A value's or a key's tag right after the name (``<tool_call>NAME</arg_value></tool_call>``): a call the model
#: wrote broken (base ``_s_broken``), never content.
_STRAY_AFTER_NAME = frozenset((ARG_VALUE_END, ARG_VALUE, ARG_KEY_END))
_M_KEY = markers(ARG_KEY_END, TOOL_CALL_END, TOOL_CALL, ARG_KEY)
# After </arg_key>: the value's opener, or the closer repeated (read once: docs/formats.md, "Repeated tags").
_M_VALUE_OPEN = markers(ARG_VALUE, ARG_KEY_END)
_M_CALL_END = markers(TOOL_CALL_END)
# In a value: its closing tag, and the tags that end a value whose </arg_value> is missing
# (one newline before them is layout, as the 4.5 template writes one after </arg_value>).
_M_VALUE = markers(ARG_VALUE_END, "\n" + ARG_KEY, ARG_KEY, "\n" + TOOL_CALL_END, TOOL_CALL_END)
# A value whose <arg_value> is missing: only </arg_value> ends it; any other tag breaks the call.
_M_BARE_VALUE = markers(ARG_VALUE_END, LAYOUT_OPENER, TOOL_CALL, TOOL_CALL_END, ARG_KEY, ARG_KEY_END, ARG_VALUE)
_M_KEY_END = markers(ARG_KEY_END)
_KEY_CHARS = re.compile(r"[^<\n]*")
_M_AFTER_VALUE = markers(ARG_KEY, TOOL_CALL_END)
_M_OPENER = markers(TOOL_CALL)

_NAME_RUN = TOOL_NAME_RUN  # a run of name characters (schema's one name rule)


class _GlmParser(ToolParser):
    """The GLM state machine (states ``_s_<state>``, run by the base driver); the two differ in their layout."""

    transitions = GLM_TRANSITIONS
    broken_ends = (TOOL_CALL_END,)
    broken_restarts = (TOOL_CALL,)
    _content_markers = markers(TOOL_CALL)

    def __init__(self) -> None:
        super().__init__()
        self._opener = TOOL_CALL       # the opener of the name being read (base _head_* hold its text)
        self._name_phase = 0           # 0 leading whitespace, 1 in the name, 2 trailing whitespace
        self._name = ""
        self._key = ""
        self._tv = TypedValue(UNTYPED)  # the current value's typed writer (schema.TypedValue decides its kind)
        self._value_ends = _M_VALUE  # (value_state's markers: an instance attribute, read a delta)
        self._bare = False             # its <arg_value> opener is missing: its text is held (_bare_parts)
        self._bare_parts: list[str] = []
        self._keys: set[str] = set()   # keys of the current call
        self._cand = ""                # the tag of a recovery candidate in a value
        self._first_head = ""          # name_key: the first opener's head, content unless it was a call

    # ------------------------------------------------------------------ helpers
    def _open(self, marker: str, final: bool = False) -> bool:
        """An opener (``marker``; in content: base ``_s_content``'s hook): read the call's name."""
        self._state = "name"
        self._opener = marker
        self.scanner.head_begin()
        self._name_phase = 0
        return True

    def _name_ok(self, text: str) -> bool:
        """Take a piece of name text; False once it cannot be a name."""
        phase = self._name_phase
        for ch in text:
            if ch.isspace():
                if phase == 1:
                    phase = 2
            elif phase == 2 or not _NAME_RUN.match(ch).end():
                return False
            else:
                phase = 1
        self._name_phase = phase
        return True

    def _read_on(self, marker: str | None) -> bool:
        """Read on as content; an opener ``marker`` starts a block, another marker is content."""
        self._state = "content"
        if marker is not None and marker.endswith(TOOL_CALL):
            if marker != TOOL_CALL and not self.layout_before_call:
                self._emit_content(marker[:-len(TOOL_CALL)])  # not this format's layout: content
                marker = TOOL_CALL
            self._open(marker)
        elif marker is not None:
            self._emit_content(marker)
        return True

    def _not_a_call(self, marker: str | None, final: bool = False, name_text: str | None = None) -> bool:
        """The opener was text: pass it and the name text on as content, then ``marker`` as content reads it.

        ``final``: the end of the output decided it: the head of a cut call, dropped (DESIGN.md).
        ``name_text``: the head text, when already taken (the scanner's ``head_text``).
        """
        if name_text is None:
            name_text = self.scanner.head_text()
        self._head_no_call(self._opener + name_text, final, _M_NAME)
        return self._read_on(marker)

    def _empty_opener(self, marker: str | None) -> bool:
        """An opener with no name: dropped (a degenerate repeat, an empty block), ``marker`` read on."""
        if marker == TOOL_CALL:
            return self._open(marker)
        if marker == TOOL_CALL_END:
            marker = None
        return self._read_on(marker)

    def _malformed(self, marker: str | None, held: str = "") -> bool:
        """The open call broke: its text (``held``, then ``marker`` and on) is the broken call's (base.py)."""
        if marker is not None:
            self.scanner.unread(len(marker))
        return self._broken(held)

    def _unclosed(self) -> bool:
        """The output ended inside a call."""
        self._abandon_call()
        self._state = "content"
        return True

    def _end_call_here(self, last: str = "") -> None:
        """The call ends: ``last`` (its last value's end) and the object's ``}`` are sent."""
        self._emit_arguments(last + "}")
        self._end_call()
        self._state = "content"

    # ------------------------------------------------------------------ states
    def _s_name(self, final: bool) -> bool:
        """The name after ``<tool_call>``: a piece up to a marker, decided by it or the bound (docs/formats.md).

        A partial marker stays unread, even at the end of the output (then it is a cut call's markup).
        """
        sc = self.scanner
        if sc.skip_repeats(TOOL_CALL, True):  # the opener repeated right after it: each but the last dropped
            self._opener = TOOL_CALL
            return True
        text, marker = sc.head_find(_M_NAME, False)
        over = marker is OVER
        if over:
            marker = None
        if text:
            if self._name_phase != 2 and _NAME_RUN.fullmatch(text):  # (the common piece)
                self._name_phase = 1
            elif not self._name_ok(text):
                return self._not_a_call(marker)
        if marker is None:
            if over:  # too long for a name: text (only text read can make it so)
                return self._not_a_call(None)
            if not final:
                return False
            head = self.scanner.head_text()
            if not head.strip():
                self.scanner.take_all()
                return self._empty_opener(None)
            return self._not_a_call(None, final, head)
        head = self.scanner.head_text()
        name = head.strip()
        if marker in _STRAY_AFTER_NAME:  # a stray tag: the head and the tag are the broken call's markup ...
            if name and takes_no_arguments(self.tools, name):  # ... unless the tool takes none (name_stray)
                self._name = name
                self._confirm_ws.clear()
                self._state = "name_stray"
                return True
            split = split_name_and_key(self.tools, name) if marker == ARG_KEY_END else None
            if split is None:
                return self._broken()
            # the first key's <arg_key> missing: a declared tool's name run together with its parameter
            self._name, self._key = split
            self._begin_call(self._name)
            self._keys = set()
            self._state = "key_done"
            return True
        if not name:
            return self._empty_opener(marker)
        if marker == TOOL_CALL and declares_tool(self.tools, name):  # <tool_call> for <arg_key>? (name_key)
            self._name = name
            self._first_head = head
            self.scanner.head_begin()
            self._state = "name_key"
            return True
        if marker.endswith(TOOL_CALL):
            return self._not_a_call(marker, False, head)
        self._name = name
        self._begin_call(name)
        self._keys = set()
        if marker == ARG_KEY:
            self.scanner.head_begin()
            self._state = "key"
            return True
        self._emit_arguments("{}")  # </tool_call>: the inline zero-argument form
        self._end_call()
        self._state = "content"
        return True

    def _s_name_key(self, final: bool) -> bool:
        """``<tool_call>`` right after a declared tool's name: it stood for the first ``<arg_key>`` when a
        parameter of that tool and ``</arg_key>`` follow (getsigit/sigit #94); otherwise the first opener
        and its name were text, and the text read here is the second opener's name, read on as usual."""
        sc = self.scanner
        _, decided = sc.head_run(_KEY_CHARS, final)
        if not decided:
            return False
        hit = sc.match(_M_KEY_END, final) if not sc.head_over() else None
        if hit is PARTIAL:
            return False
        key_text = sc.head_text()
        key = key_text.strip()
        if hit is not None and is_new_parameter(self.tools, self._name, key, ()):
            self._begin_call(self._name)
            self._keys = set()
            self._key = key
            self._state = "key_done"
            return True
        if hit is not None:  # read again by the name state
            sc.unread(len(hit))
        first, self._first_head = self._first_head, ""
        self._head_no_call(self._opener + first, False, _M_NAME)
        self._open(TOOL_CALL)
        if key_text:
            sc.head_keep(key_text)
            if not self._name_ok(key_text):
                return self._not_a_call(None)
        return True

    def _s_name_stray(self, final: bool) -> bool:
        """A stray value's or key's tag after the name of a declared tool that takes no arguments: with
        ``</tool_call>`` after it (whitespace between is layout) it is that zero-argument call, else broken."""
        hit = self.scanner.match(_M_CALL_END, final, self._confirm_ws)
        if hit is PARTIAL:
            return False
        if hit is None:
            return self._broken(self._confirm_text())
        if self._confirm_ws.runs:
            self._confirm_ws.clear()
        self._begin_call(self._name)
        self._emit_arguments("{}")
        self._end_call()
        self._state = "content"
        return True

    def _s_key(self, final: bool) -> bool:
        """A key up to ``</arg_key>``; another tag, the bound or the end of the output decide it otherwise."""
        text, marker = self.scanner.head_find(_M_KEY, final)
        if marker is None or marker is OVER:
            if marker is OVER:  # too long for a key (only text read can make it so)
                return self._malformed(None, self.scanner.head_text())
            return self._unclosed() if final else False
        if marker == ARG_KEY and not self.scanner.head_text().strip():  # the opener repeated: read once
            self.scanner.head_begin()
            return True
        if marker != ARG_KEY_END:
            self.scanner.head_begin()  # (its text is the broken call's, from the tag on)
            return self._malformed(marker)
        self._key = self.scanner.head_text().strip()
        self._state = "key_done"
        return True

    def _s_key_done(self, final: bool) -> bool:
        """After ``</arg_key>``: ``<arg_value>`` (after layout whitespace) opens the value; without it the value is bare."""
        sc = self.scanner
        hit = sc.match_after_space(_M_VALUE_OPEN, final)  # (the whitespace: layout, the 4.5 newline)
        if hit is PARTIAL:
            return False
        if hit is None and sc.at_end():  # final
            return self._unclosed()
        if hit == ARG_KEY_END:  # the closer repeated: read once
            return True
        key = self._key
        keys = self._keys
        head = ("{" if not keys else ", ") + json_string(key) + ": "
        keys.add(key)
        self._tv = tv = typed_value(self._param_typing(self._name, key), "auto")
        if hit is None:  # <arg_value> missing: the value runs to its </arg_value>, held back
            self._bare = True
            self._bare_parts = []
            self._emit_arguments(head)
            self._state = "value_bare"
            return True
        self._emit_arguments(head + tv.opening)
        self._state = "value"
        return True

    def _s_value_bare(self, final: bool) -> bool:
        """A value after ``</arg_key>`` with no ``<arg_value>``: held up to ``</arg_value>``.

        Any other tag first means it was no value: the call is broken (its
        text held as the broken call's, base.py); the end of the output cuts it.
        """
        text, marker = self.scanner.find(_M_BARE_VALUE)
        if text:
            self._bare_parts.append(text)
        if marker is None:
            if not final:
                return False
            held = "".join(self._bare_parts)
            self._bare_parts = []
            if not self.scanner.at_end():  # cut inside a tag (a marker's prefix): the cut call's markup
                self.scanner.take_all()
                return self._unclosed()
            return self._malformed(None, held)  # prose after a call left broken: content
        if marker != ARG_VALUE_END:
            held = "".join(self._bare_parts)
            self._bare_parts = []
            return self._malformed(marker, held)
        self._state = "value_close"
        return True

    #: A value's text up to its end, each piece through its typed writer (sent, or held by it): the shared
    #: value state (``scanner.value_state``) up to a tag of ``_M_VALUE``; at the tag, :meth:`_value_marker`.
    _s_value = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """The tag that ended a value's text (``value_state``), or None: the output ended inside the value."""
        if marker is None:
            return self._unclosed()
        if self._tv.unfinished():  # inside a string of an array or object value: its text
            self._emit_arguments(self._tv.feed(marker))
            return True
        if marker == ARG_VALUE_END:
            self._state = "value_close"
            return True
        self._confirm_ws.clear()  # a tag that ends a value missing its </arg_value>, to be confirmed
        self._cand = marker
        if marker.endswith(ARG_KEY):
            self.scanner.head_begin()
            self._state = "value_key"
        else:
            self._state = "value_call_end"
        return True

    def _value_text(self, text: str) -> None:
        """Text that turned out to be part of the value (a rejected closing tag or candidate)."""
        if self._bare:
            self._bare_parts.append(text)
        else:
            self._emit_arguments(self._tv.feed(text))

    def _back_to_value(self) -> bool:
        self._state = "value_bare" if self._bare else "value"
        return True

    def _s_value_key(self, final: bool) -> bool:
        """``<arg_key>`` in a value: it ends the value (``</arg_value>`` missing) when a new key and ``</arg_key>`` follow."""
        _, decided = self.scanner.head_run(_KEY_CHARS, final)
        if not decided:
            return False
        hit = self.scanner.match(_M_KEY_END, final) if not self.scanner.head_over() else None
        if hit is PARTIAL:
            return False
        key_text = self.scanner.head_text()
        key = key_text.strip()
        if hit is None or not is_new_parameter(self.tools, self._name, key, self._keys):
            self._value_text(self._cand + key_text + (hit or ""))
            return self._back_to_value()
        self._emit_arguments(self._value_end())
        self._key = key
        self._state = "key_done"
        return True

    def _s_value_call_end(self, final: bool) -> bool:
        """``</tool_call>`` in a value: it ends value and call (``</arg_value>`` missing) before the end of the output or a new call."""
        hit = self.scanner.match(_M_OPENER, final, self._confirm_ws)
        if hit is PARTIAL:
            return False
        if hit is None and not (final and self.scanner.at_end()):
            self._value_text(self._cand + self._confirm_text())
            return self._back_to_value()
        self._confirm_ws.clear()  # (layout)
        self._end_call_here(self._value_end())
        if hit is not None:
            self._open(hit)
        return True

    def _value_end(self) -> str:
        """The value's end: its JSON text to send (:class:`schema.TypedValue`'s end; a bare value's held text whole)."""
        tv = self._tv
        if not self._bare:
            return tv.end()
        self._bare = False
        text = "".join(self._bare_parts)
        self._bare_parts = []
        return tv.opening + tv.feed(text) + tv.end()

    def _s_value_close(self, final: bool) -> bool:
        """After ``</arg_value>``: it closes the value only before ``<arg_key>`` or ``</tool_call>`` (confirmed: the scanner's ``match`` with base's ``_confirm_ws``)."""
        hit = self.scanner.match(_M_AFTER_VALUE, final, self._confirm_ws)
        if hit is PARTIAL:
            return False
        if hit is None:
            if final and self.scanner.at_end():
                return self._unclosed()
            self._value_text(ARG_VALUE_END + self._confirm_text())
            return self._back_to_value()
        if self._confirm_ws.runs:  # (layout; Layout.clear only when it holds some)
            self._confirm_ws.clear()
        end = self._tv.end() if not self._bare else self._value_end()
        if hit == ARG_KEY:
            self._emit_arguments(end)
            self.scanner.head_begin()
            self._state = "key"
        else:  # the call's end
            self._end_call_here(end)
        return True


@register("glm45")
class Glm45Parser(_GlmParser):
    """GLM-4.5 / GLM-4.6 tool calls (newline layout); reads the GLM-4.7 layout too. See the module docstring."""

    layout_before_call = "\n"
    broken_restarts = (LAYOUT_OPENER, TOOL_CALL)
    _content_markers = markers(LAYOUT_OPENER, TOOL_CALL)


@register("glm47")
class Glm47Parser(_GlmParser):
    """GLM-4.7 tool calls (no newlines); reads the GLM-4.5 layout too. See the module docstring."""
