"""Qwen3 (Hermes JSON) and Qwen3-Coder (XML) tool calls (``qwen3``, ``qwen3_coder``).

Both formats wrap each call in ``<tool_call>`` ... ``</tool_call>``. The
formats (source: the Qwen3 and Qwen3-Coder ``chat_template``) and every
reading rule: ``docs/formats.md``, "Qwen3 / Hermes JSON" and "Qwen3-Coder
XML" (the one place; Qwen3.5/3.6 are ``qwen3_coder``: "GLM-5.x and Qwen3.5 /
Qwen3.6"). This module holds the tokens, markers and ``_s_<state>`` steps:
``qwen3``'s call object is read by
:class:`callscale.parsers.jsonscan.JsonCallReader` (shared with
``llama3_json``), ``qwen3_coder``'s values by
:class:`callscale.parsers.schema.TypedValue`; the shared mechanisms (driver,
content, broken calls, bounded heads, confirmed closers) are base.py's
(``callscale/parsers/README.md``).
"""

from __future__ import annotations

import logging
import re

from . import register
from .base import MAX_HEAD, MAX_LAYOUT_RUNS, Layout, ToolParser
from .schema import UNTYPED, TypedValue, is_new_parameter, is_tool_name, json_string, tool_name, typed_value
from .jsonscan import JsonCallLexer, JsonCallReader, json_call_transitions
from .scanner import OVER, PARTIAL, Markers, markers

# The transition tables, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods of each class; "broken" and "content" are base.ToolParser's; ``ws``: whitespace).
QWEN3_TRANSITIONS = {
    "content": {"text": "content", "[\\n]<tool_call>": "json_open"},
    # the call object: JsonCallReader's states, and where its hooks send qwen3
    **json_call_transitions({"the call started and its object closed": "after_object",
                             "<tool_call> again": "json_open", "an empty envelope": "envelope",
                             "no call object": "content", "a call that broke": "broken"}),
    "envelope": {"ws </tool_call>": "after_close", "anything else": "content"},
    "after_object": {"ws </tool_call>": "after_close", "anything else": "broken"},
    "after_close": {"[\\n]": "content"},
    "broken": {"</tool_call>": "after_close", "[\\n]<tool_call>": "content"},
}
QWEN3_CODER_TRANSITIONS = {
    "content": {"text": "content", "[\\n[\\n]]<tool_call>": "open", "[\\n[\\n]]<function=": "name"},
    "open": {"<tool_call> again": "open", "ws <function=": "name", "ws </": "envelope", "anything else": "content"},
    "envelope": {"</tool_call> (an empty envelope: markup)": "after_close", "anything else": "content"},
    "name": {"NAME> after <tool_call>": "body", "NAME> after <function=": "orphan_body",
             "[\\n[\\n]]<tool_call>": "open", "no name": "content"},
    "orphan_body": {"ws <parameter=": "key", "ws </function>": "function_end", "anything else": "content"},
    "body": {"ws <parameter=": "key", "ws </function>": "function_end", "anything else": "broken"},
    "key": {"KEY> [\\n]": "value", "KEY> (nothing more yet)": "key_newline", "[\\n[\\n]]<tool_call>": "open",
            "no key": "broken"},
    "key_newline": {"[\\n]": "value"},
    "value": {"text": "value", "[\\n]</parameter>": "after_param_close", "[\\n]</function>": "after_function_close",
              "[\\n]</tool_call>": "after_call_close", "\\n<parameter=": "next_key", "the end": "broken"},
    "after_param_close": {"ws <parameter=": "key", "ws </function>": "after_function_close",
                          "ws </function> (no <tool_call>)": "function_end", "anything else": "value"},
    "after_function_close": {"ws </tool_call> (or the end, no <tool_call>)": "after_close",
                             "anything else": "value"},
    "after_call_close": {"ws <tool_call>": "open", "ws, the end": "after_close", "anything else": "value"},
    "next_key": {"a new KEY> [\\n]": "value", "a new KEY> (nothing more yet)": "key_newline",
                 "anything else": "value"},
    "function_end": {"ws </tool_call> ([\\n]</tool_call> or nothing, no <tool_call>)": "after_close",
                     "anything else": "broken"},
    "after_close": {"[\\n]": "content"},
    "broken": {"</tool_call>": "after_close", "[\\n[\\n]]<tool_call>": "content"},
}

log = logging.getLogger(__name__)

__all__ = [
    "Qwen3Parser",
    "Qwen3CoderParser",
    "JsonCallLexer",
    "TOOL_CALL_OPEN",
    "TOOL_CALL_CLOSE",
    "FUNCTION_OPEN",
    "FUNCTION_CLOSE",
    "PARAMETER_OPEN",
    "PARAMETER_CLOSE",
    "SPECIAL_TOKENS",
    "QWEN3_TRANSITIONS",
    "QWEN3_CODER_TRANSITIONS",
]

#: Opens one call (both formats); a single token of the Qwen3 vocabulary.
TOOL_CALL_OPEN = "<tool_call>"
#: Closes one call (both formats); a single token of the Qwen3 vocabulary.
TOOL_CALL_CLOSE = "</tool_call>"
#: Qwen3-Coder: ``<function=NAME>`` opens the function of a call.
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
#: Qwen3-Coder: ``<parameter=KEY>`` opens one parameter.
PARAMETER_OPEN = "<parameter="
PARAMETER_CLOSE = "</parameter>"
#: The tags a detokenizer emits whole (``<tool_call>`` and ``</tool_call>``
#: are added tokens of the Qwen3 / Qwen3-Coder tokenizers; the XML tags of
#: Qwen3-Coder are ordinary text).
SPECIAL_TOKENS = (TOOL_CALL_OPEN, TOOL_CALL_CLOSE)

_TAG_END = ">"
_NL = "\n"

# Marker sets (no marker of a set is a proper prefix of another one: the
# scanner returns a complete marker as soon as it sees it).
_QWEN3_OPENERS = (_NL + TOOL_CALL_OPEN, TOOL_CALL_OPEN)
_CODER_OPENERS = (_NL + _NL + TOOL_CALL_OPEN, _NL + TOOL_CALL_OPEN, TOOL_CALL_OPEN)
_M_CLOSE = markers(TOOL_CALL_CLOSE)
_M_QWEN3_CONTENT = markers(*_QWEN3_OPENERS)
#: A call whose ``<tool_call>`` is missing starts at ``<function=`` (recovery; see the rules).
_ORPHAN_OPENERS = (_NL + _NL + FUNCTION_OPEN, _NL + FUNCTION_OPEN, FUNCTION_OPEN)
_M_CODER_CONTENT = markers(*_CODER_OPENERS, *_ORPHAN_OPENERS)
_M_FUNCTION = markers(FUNCTION_OPEN)
_M_TAG_END = markers(_TAG_END, *_CODER_OPENERS)
_M_BODY = markers(PARAMETER_OPEN, FUNCTION_CLOSE)
# In a value: the closing tag, and the tags that end a value whose </parameter> is missing.
_M_VALUE_END = markers(_NL + PARAMETER_CLOSE, PARAMETER_CLOSE, _NL + PARAMETER_OPEN, _NL + FUNCTION_CLOSE,
                       FUNCTION_CLOSE, _NL + TOOL_CALL_CLOSE, TOOL_CALL_CLOSE)
_M_HELD_END = markers(PARAMETER_CLOSE, PARAMETER_OPEN, FUNCTION_CLOSE, TOOL_CALL_CLOSE)
_M_OPEN_ONLY = markers(TOOL_CALL_OPEN)
_M_ORPHAN_END = markers(_NL + TOOL_CALL_CLOSE, TOOL_CALL_CLOSE)
_KEY_CHARS = re.compile(r"[^<>\n]*")
_WS = re.compile(r"\s*")  # (re's \s on str is str.isspace's test, Py_UNICODE_ISSPACE)

_NO_VALUE = TypedValue(UNTYPED)


# --------------------------------------------------------------------------- shared parser state
_CONTENT, _AFTER_CLOSE, _BROKEN = "content", "after_close", "broken"  # (state names: the _s_<state> methods)


class _QwenParser(ToolParser):
    """What both formats share: content (base), a call's end, the layout newline after it, broken calls (base)."""

    _content_markers = _M_QWEN3_CONTENT
    # base _s_broken: a broken call's text is dropped up to </tool_call> (then one layout newline); an opener
    # first makes it content and is read again as content
    broken_ends = (TOOL_CALL_CLOSE,)
    broken_resume = _AFTER_CLOSE
    broken_restarts = _QWEN3_OPENERS
    # base _s_envelope: <tool_call>, whitespace, </tool_call> is markup (then one layout newline)
    envelope_close = _M_CLOSE
    envelope_resume = _AFTER_CLOSE

    def _no_call(self, text: str, final: bool = False, expected: Markers | None = None) -> None:
        """The head read (``text``, opener included) is no call: content; read on as content.

        ``final``, ``expected``: the end of the output may have decided it (a
        cut call's head is dropped; see :meth:`ToolParser._head_no_call`).
        """
        self._head_no_call(text, final, expected)
        self._state = _CONTENT

    def _drop_call(self, final: bool = False, expected: Markers | None = None) -> None:
        """Abandon the started call (broken): its text up to the next ``</tool_call>`` is dropped.

        When ``<tool_call>`` or the end of the output comes first, that text
        is content; the end of the output right here (or after a prefix of an
        ``expected`` marker) cuts the call: nothing is content.
        """
        log.debug("%s: malformed call %s abandoned", self.name, self._current)
        self._cut_by_end(final, expected)  # (a cut call: its unread rest is dropped, nothing is held)
        self._broken()

    def _close_call(self, final: bool) -> bool:
        """Whitespace, then ``</tool_call>``: the call ends (:meth:`_finish_call`); anything else breaks it."""
        marker = self.scanner.match_after_space(_M_CLOSE, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._drop_call(final, _M_CLOSE)
        else:
            self._finish_call()
        return True

    def _finish_call(self) -> None:
        """The call is confirmed: its held final ``}`` is sent; then the layout newline (state ``after_close``)."""
        self._emit_arguments("}")
        self._end_call()
        self._state = _AFTER_CLOSE

    def _s_after_close(self, final: bool) -> bool:
        """One layout newline after ``</tool_call>``, then content."""
        if self.scanner.match_literal(_NL, final) is PARTIAL:
            return False
        self._state = _CONTENT
        return True


# --------------------------------------------------------------------------- qwen3
_ENVELOPE = "envelope"


@register("qwen3")
class Qwen3Parser(JsonCallReader, _QwenParser):
    """Streaming parser of Qwen3 / Hermes JSON tool calls; rules: ``docs/formats.md``, "Qwen3 / Hermes JSON".

    The call object is read by the shared :class:`callscale.parsers.jsonscan.JsonCallReader`.
    Arguments stream as the raw JSON text of the ``arguments`` object (raw
    control characters inside strings escaped). Never raises on model output.
    """

    transitions = QWEN3_TRANSITIONS

    #: The Hermes recovery: an object with a name and no arguments key is a call with ``{}``.
    _name_only_is_a_call = True
    max_head = MAX_HEAD

    def __init__(self) -> None:
        super().__init__()
        self._lexer: JsonCallLexer | None = None
        #: Text of a call head not yet known to be a call (content if it is not one): JsonCallReader's.
        self._raw: list[str] = []

    def _open(self, marker: str, final: bool) -> bool:
        """A ``<tool_call>`` (base ``_s_content``) opens a call object (JsonCallReader; state ``json_open``)."""
        self._open_object(marker)
        return True

    def _not_a_call(self, *more: str, final: bool = False, expected: Markers | None = None) -> bool | None:
        """JsonCallReader's hook: no call (content), except an envelope that holds nothing a call needs.

        That envelope (blank, or an object with no name and no arguments) is
        markup when ``</tool_call>`` follows (after whitespace): decided in
        state ``envelope`` (docs/formats.md). Right after the opener, another
        ``<tool_call>`` makes the head content and opens the next call object
        at once: then returns True (the next state reads on). Else returns None.
        """
        if not (more or final):
            lexer = self._lexer
            if lexer is None:  # only blanks were read, up to what follows
                sc = self.scanner
                if sc.match_literal(TOOL_CALL_OPEN) is True:  # (content's answer at it, without its search)
                    self._emit_content("".join(self._raw))
                    self._open_object(TOOL_CALL_OPEN)
                    return True
                if TOOL_CALL_CLOSE.startswith(sc.peek(2)):
                    return self._envelope()
            elif not lexer.holds_call_member and (lexer.closed or not "".join(self._raw[1:]).strip()):
                return self._envelope()
        self._no_call("".join(self._raw) + "".join(more), final, expected)
        self._raw = []
        return None

    # the states, run by the base driver (the reading state is the call reader itself: no frame between)
    _s_json = JsonCallReader._read_object

    def _envelope(self) -> None:
        """The head read holds nothing a call needs: base ``_s_envelope`` decides it (markup before ``</tool_call>``)."""
        self.scanner.head_begin("".join(self._raw))
        self._raw = []
        self._state = _ENVELOPE

    def _object_done(self) -> None:
        """The call object ended (its call started): wait for ``</tool_call>``."""
        self._state = "after_object"

    #: Only whitespace, then ``</tool_call>``: the call ends; anything else breaks it.
    _s_after_object = _QwenParser._close_call


# --------------------------------------------------------------------------- qwen3_coder
# the states of qwen3_coder: methods _s_<state> of Qwen3CoderParser (the base driver)
(_OPEN, _NAME, _ORPHAN_BODY, _BODY, _FUNC_END, _KEY, _KEY_NL, _VAL, _CLOSE1, _CLOSE2, _CLOSE3, _NEXT_KEY) = (
    "open", "name", "orphan_body", "body", "function_end", "key", "key_newline", "value", "after_param_close",
    "after_function_close", "after_call_close", "next_key",
)
#: The state after a tag that may end a value (a marker of _M_VALUE_END, with or without its newline).
_CANDIDATE_STATE = {PARAMETER_CLOSE: _CLOSE1, FUNCTION_CLOSE: _CLOSE2, TOOL_CALL_CLOSE: _CLOSE3, PARAMETER_OPEN: _NEXT_KEY}
_CANDIDATE_STATE.update({_NL + tag: state for tag, state in _CANDIDATE_STATE.items()})


@register("qwen3_coder")
class Qwen3CoderParser(_QwenParser):
    """Streaming parser of Qwen3-Coder XML tool calls; rules: ``docs/formats.md``, "Qwen3-Coder XML".

    Arguments stream as JSON text ``{"key": value, ...}``; a string value
    streams as JSON-escaped pieces while it arrives, a schema-typed value is
    sent converted (:mod:`callscale.parsers.schema`) when its end is confirmed. Never
    raises on model output.

    A call head (``<tool_call>``, whitespace, ``<function=``, the name) and a
    key are base bounded heads (``_head_*``): the head's first part is its
    fixed text, the name the parts after it. A tag that may end a value is a
    candidate confirmed by what follows (the scanner's ``match`` with base's ``_confirm_ws``).
    """

    transitions = QWEN3_CODER_TRANSITIONS

    #: The whitespace its encoder writes before a call block (base.ToolParser.layout_before_call).
    layout_before_call = "\n\n"

    _content_markers = _M_CODER_CONTENT
    broken_restarts = _CODER_OPENERS

    def __init__(self) -> None:
        super().__init__()
        self._call_name = ""
        self._orphan = False  # the current call had no <tool_call> opener
        self._keys: set[str] = set()  # parameter keys of the current call
        self._tv = _NO_VALUE  # the current value's typed writer (parsers.schema.TypedValue)
        # a closing candidate: its tags and the whitespace between them (the whitespace after its last tag: base
        # _confirm_ws, run lengths)
        self._candidate: list[str | Layout] = []
        self._held_ws = ""  # whitespace after a rejected candidate, decided by the next delta (see _s_value)

    def _open(self, marker: str, final: bool) -> bool:
        """An opener read in content (base ``_s_content``): a call head starts."""
        self.scanner.head_begin(marker)
        if marker[-1] == "=":  # ...<function= (no <tool_call>): the name follows at once
            self._orphan = True
            self._state = _NAME
        else:
            self._orphan = False
            self._state = _OPEN
        return True

    def _start_call(self, name: str) -> None:
        self._begin_call(name)
        self._emit_arguments("{")
        self._call_name = name
        self._keys = set()

    # ------------------------------------------------------------------ a call's head (the base driver runs them)
    def _s_open(self, final: bool) -> bool:
        """After ``<tool_call>``: whitespace, then ``<function=``."""
        sc = self.scanner
        text = sc.head_again(TOOL_CALL_OPEN)
        if text is not None:
            # <tool_call> again right after the opener (a degenerate model repeats it): the head is content (the
            # rule of a head that is no call; nothing is cut here, also when final) and this opener starts the
            # next head (content's answer at it, without its search)
            self._emit_content(text)
            return True
        ws, _ = self.scanner.head_run(_WS, final)
        if ws and self.scanner.head_over():  # too long for a head
            self._no_call(self.scanner.head_text())
            return True
        marker = sc.match(_M_FUNCTION, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            if TOOL_CALL_CLOSE.startswith(sc.peek(2)) and not (final and sc.at_end()):
                self._state = _ENVELOPE  # only whitespace in it so far: base _s_envelope decides (markup)
            else:
                self._no_call(self.scanner.head_text(), final, _M_FUNCTION)
        else:  # the name follows: the head's fixed text becomes its first part
            sc.head_keep(marker, join=True)
            self._state = _NAME
        return True

    def _s_name(self, final: bool) -> bool:
        """A function name up to ``>`` (bounded head): the call starts, or the head is no call."""
        sc = self.scanner
        text, marker = sc.head_find(_M_TAG_END, final)
        if marker is None or marker is OVER:
            over = marker is OVER
            if not (final or over):
                return False
            self._no_call(self.scanner.head_text(), final and not over and not self._orphan)
            return True
        name = sc.head_peek(1)
        if marker != _TAG_END:  # a new <tool_call> before the name ended
            self._no_call(self.scanner.head_text())
            self._open(marker, final)
        elif not is_tool_name(name):
            self._no_call(self.scanner.head_text() + marker)
        elif self._orphan:
            if self.tools and all(tool_name(t) != name for t in self.tools):
                self._no_call(self.scanner.head_text() + marker)  # prose naming no tool of the request
            else:
                sc.head_keep(marker)
                self._call_name = name
                self._state = _ORPHAN_BODY
        else:
            self._start_call(name)
            self._state = _BODY
        return True

    def _s_orphan_body(self, final: bool) -> bool:
        """``<function=NAME>`` without ``<tool_call>``: a call only if ``<parameter=`` or ``</function>`` follows."""
        self.scanner.head_run(_WS, final)
        if self.scanner.head_over():  # (its ">" counts too)
            self._no_call(self.scanner.head_text())
            return True
        marker = self.scanner.match(_M_BODY, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._no_call(self.scanner.head_text())  # prose mentioning <function=NAME>: content, also when cut
        else:
            self._start_call(self._call_name)
            if marker == PARAMETER_OPEN:
                self.scanner.head_begin()
                self._state = _KEY
            else:
                self._state = _FUNC_END
        return True

    def _s_body(self, final: bool) -> bool:
        """Whitespace, then ``<parameter=`` (a key) or ``</function>``; anything else breaks the call."""
        marker = self.scanner.match_after_space(_M_BODY, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._drop_call(final, _M_BODY)
        elif marker == PARAMETER_OPEN:  # a key: a bounded head
            self.scanner.head_begin()
            self._state = _KEY
        else:
            self._state = _FUNC_END
        return True

    def _s_key(self, final: bool) -> bool:
        """A parameter key up to ``>`` (bounded head); a missing or bad key breaks the call."""
        text, marker = self.scanner.head_find(_M_TAG_END, final)
        if marker is None or marker is OVER:
            if not (final or marker is OVER):
                return False
            self._drop_call()
            return True
        key = self.scanner.head_peek()
        if marker != _TAG_END:  # a new <tool_call> inside the tag
            self._drop_call()
            self._open(marker, final)
        elif not key or "<" in key or "\n" in key:
            self._drop_call()
        else:
            self._start_value(key)
        return True

    def _s_key_newline(self, final: bool) -> bool:
        """One layout newline after ``<parameter=KEY>`` (when it had not come yet: :meth:`_start_value`)."""
        if self.scanner.match_literal(_NL, final) is PARTIAL:
            return False
        self._state = _VAL
        return True

    def _s_function_end(self, final: bool) -> bool:
        """After ``</function>``: ``</tool_call>`` (in a call without ``<tool_call>``: may follow, after one newline)."""
        if self._orphan:  # nothing else is the call's
            if self.scanner.match(_M_ORPHAN_END, final) is PARTIAL:
                return False
            self._finish_call()  # (then one layout newline, as after </tool_call>)
            return True
        return self._close_call(final)

    # ------------------------------------------------------------------ values
    def _start_value(self, key: str) -> None:
        tv = self._tv = typed_value(self._param_typing(self._call_name, key))
        head = (", " if self._keys else "") + json_string(key) + ": " + tv.opening
        self._keys.add(key)
        self._held_ws = ""
        self._emit_arguments(head)
        # one layout newline after <parameter=KEY> (state _KEY_NL while it has not come yet)
        self._state = _KEY_NL if self.scanner.match_literal(_NL) is PARTIAL else _VAL

    def _value_text(self, text: str) -> None:
        if text:
            out = self._tv.feed(text)
            if out:  # (a held value sends nothing while it streams)
                self._emit_arguments(out)

    def _s_value(self, final: bool) -> bool:
        """Value text up to a tag that may end the value (a candidate); false when more text is needed.

        At a candidate, the state :data:`_CANDIDATE_STATE` names waits for what follows it to decide.
        """
        marker = self._held_end(final) if self._held_ws else None
        if marker is None:
            text, marker = self.scanner.find(_M_VALUE_END, final)
            if text:  # (the per-delta step of a value: its text into the typed writer, what it sends now sent)
                out = self._tv.feed(text)
                if out:
                    self._emit_arguments(out)
            if marker is None:
                if final:
                    self._drop_call()
                    return True
                return False
        elif marker is PARTIAL:
            return False
        elif not marker:  # (the held text and a tag were value text)
            return True
        self._candidate = [marker]
        state = self._state = _CANDIDATE_STATE[marker]
        if state is _NEXT_KEY:  # \n<parameter=: the next parameter, if a key and ">" follow
            self.scanner.head_begin()
        return True

    def _held_end(self, final: bool):
        """Whitespace held after a rejected candidate: its last newline may be the layout newline of a closing tag
        right after it. Returns the candidate tag read, ``""`` (a tag read as value text), ``PARTIAL`` (wait), or
        None (the held text was value text: read on)."""
        marker = self.scanner.match(_M_HELD_END, final)
        if marker is PARTIAL:
            return marker
        held, self._held_ws = self._held_ws, ""
        if marker is None:
            self._value_text(held)
            return None
        if held.endswith(_NL):
            self._value_text(held[:-1])
            return _NL + marker
        if marker == PARAMETER_OPEN:  # not at a line start: value text
            self._value_text(held + marker)
            return ""
        self._value_text(held)
        return marker

    def _s_after_param_close(self, final: bool) -> bool:
        """After a candidate ``</parameter>``: ``<parameter=`` or ``</function>`` confirm it."""
        marker = self.scanner.match(_M_BODY, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._reject()
        elif marker == PARAMETER_OPEN:
            self._end_value()
            self.scanner.head_begin()
            self._state = _KEY
        elif self._orphan:  # a call without <tool_call> ends at </parameter> </function>
            self._end_value()
            self._state = _FUNC_END
        else:  # </function>: confirmed by </tool_call> in turn
            self._candidate.append(self._confirm_ws)
            self._candidate.append(marker)
            self._confirm_ws = Layout()
            self._state = _CLOSE2
        return True

    def _s_after_function_close(self, final: bool) -> bool:
        """After ``[</parameter> ws] </function>``: ``</tool_call>`` confirms it (without ``<tool_call>``: the end)."""
        marker = self.scanner.match(_M_CLOSE, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is not None or (self._orphan and self._ends_here(final)):
            self._end_value()
            self._finish_call()
        else:
            self._reject()
        return True

    def _s_after_call_close(self, final: bool) -> bool:
        """After ``</tool_call>`` in a value (``</parameter>``, ``</function>`` missing): a new ``<tool_call>`` or
        the end of the output confirm it."""
        marker = self.scanner.match(_M_OPEN_ONLY, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None and not self._ends_here(final):
            self._reject()
            return True
        self._end_value()
        self._finish_call()
        if marker is not None:
            self._open(marker, final)
        return True

    def _ends_here(self, final: bool) -> bool:
        """The end of the output right after a candidate (its whitespace within the layout bound)."""
        return final and self.scanner.at_end() and len(self._confirm_ws.runs) <= MAX_LAYOUT_RUNS

    def _s_next_key(self, final: bool) -> bool:
        """After ``\\n<parameter=`` in a value: a new key and ``>`` confirm the value's end (its ``</parameter>`` missing)."""
        sc = self.scanner
        text, decided = self.scanner.head_run(_KEY_CHARS, final)
        if not decided:
            return False
        key = self.scanner.head_text()
        if self.scanner.head_over() or sc.peek(1) != _TAG_END \
                or not is_new_parameter(self.tools, self._call_name, key, self._keys):
            self._value_text(self._candidate_text() + key)  # value text; read on from the character that decided it
            self._candidate = []
            self._state = _VAL
            return True
        sc.take(1)
        self._end_value()
        self._start_value(key)
        return True

    def _reject(self) -> None:
        """The candidate closing tag is value text; the whitespace after it is held (see ``_held_end``)."""
        self._value_text(self._candidate_text())
        self._held_ws = self._confirm_text()
        self._candidate = []
        self._state = _VAL

    def _candidate_text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text() for p in self._candidate)

    def _end_value(self) -> None:
        self._candidate = []
        if self._confirm_ws.runs:
            self._confirm_ws.clear()
        tv, self._tv = self._tv, _NO_VALUE
        self._emit_arguments(tv.end())
