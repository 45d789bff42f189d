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
broken calls, bounded heads, confirmed closers) are base.py's
(``callscale/parsers/README.md``).
"""

from __future__ import annotations

import logging
import re

from . import register
from .base import MAX_HEAD, Layout, ToolParser
from .schema import UNTYPED, TypedValue, is_new_parameter, json_string, tool_name
from .jsonscan import JsonCallLexer, JsonCallReader

_NO_VALUE = TypedValue(UNTYPED)
from .scanner import PARTIAL, Markers, markers

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
_M_NL = markers(_NL)
_M_CLOSE = markers(TOOL_CALL_CLOSE)
_M_QWEN3_CONTENT = markers(*_QWEN3_OPENERS)
_M_QWEN3_JUNK = markers(TOOL_CALL_CLOSE, *_QWEN3_OPENERS)
#: A call whose ``<tool_call>`` is missing starts at ``<function=`` (recovery; see the rules).
_ORPHAN_OPENERS = (_NL + _NL + FUNCTION_OPEN, _NL + FUNCTION_OPEN, FUNCTION_OPEN)
_M_CODER_CONTENT = markers(*_CODER_OPENERS, *_ORPHAN_OPENERS)
_M_CODER_JUNK = markers(TOOL_CALL_CLOSE, *_CODER_OPENERS)
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
# Runs of characters that start no marker of a set (no marker, nor a partial one at the end, can be in them): a
# step reads such a run with one match, and calls the scanner only where one of those characters comes.
# The proper prefixes of a set's markers that are no marker (scanner.Markers.held): the unread rest being one of
# them is match's PARTIAL, tested in a step before that call (a tag split over deltas waits without it).
_BODY_HELD, _BODY_LONGEST = _M_BODY.held, _M_BODY.longest
_FUNCTION_HELD, _FUNCTION_LONGEST = _M_FUNCTION.held, _M_FUNCTION.longest
# (for find: its set nests no marker inside another's prefix, so a rest that is a held prefix holds no marker)
_VALUE_END_HELD, _VALUE_END_LONGEST = _M_VALUE_END.held, _M_VALUE_END.longest
#: A value's held text is the start of a closing tag, held back by find (Qwen3CoderParser._read_value).
_SPLIT = object()
_TAG_RUN = _KEY_CHARS  # _M_TAG_END's markers start with ">", "\n" or "<"
_SPACE = re.compile(r"\s")  # (re's \s on str is str.isspace's test, Py_UNICODE_ISSPACE)
_OPEN_LEN = len(TOOL_CALL_OPEN)
_CLOSE_LEN = len(TOOL_CALL_CLOSE)


# --------------------------------------------------------------------------- shared parser state
_CONTENT, _AFTER_CLOSE, _JUNK = "content", "after_close", "junk"  # (state names: the _s_<state> methods)


class _QwenParser(ToolParser):
    """State shared by both formats: content, the layout newline after a call, dropping an abandoned call's text."""

    _content_markers = _M_QWEN3_CONTENT
    _junk_markers = _M_QWEN3_JUNK

    def __init__(self) -> None:
        super().__init__()
        self._state = _CONTENT
        #: Text of a call head not yet known to be a call (content if it is not one).
        self._raw: list[str] = []

    def _not_a_call(self, *more: str, final: bool = False, expected: Markers | None = None) -> None:
        """The head read so far is not a call: its text (and ``more``) is content; read on as content.

        ``final``, ``expected``: the end of the output may have decided it (a
        cut call's head is dropped; see :meth:`ToolParser._head_no_call`).
        """
        text = "".join(self._raw) + "".join(more) if more else "".join(self._raw)
        if final:
            self._head_no_call(text, final, expected)
        else:  # (_head_no_call when not final: content)
            self._emit_content(text)
        self._raw = []
        self._state = _CONTENT

    def _read_close(self, final: bool) -> object:
        """Whitespace, then ``</tool_call>``: the marker read, ``PARTIAL`` (wait for more), or None (it
        was something else: the call is dropped, :meth:`_drop_call`)."""
        sc = self.scanner
        sc.skip_whitespace()
        marker = sc.match(_M_CLOSE, final)
        if marker is None:
            self._drop_call(final, _M_CLOSE)
        return marker

    def _drop_call(self, final: bool = False, expected: Markers | None = None) -> None:
        """Abandon the started call (broken): its text up to the next ``</tool_call>`` is dropped.

        When ``<tool_call>`` or the end of the output comes first, that text
        is content; the end of the output right here (or after a prefix of an
        ``expected`` marker) cuts the call: nothing is content.
        """
        log.debug("%s: malformed call %s abandoned", self.name, self._current)
        if self._cut_by_end(final, expected):
            self._abandon_call()
        else:
            self._break_call()
        self._state = _JUNK

    def _open(self, marker: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # the shared states (both formats' base driver runs them as _s_<state>; see the tables at the end)
    def _s_content(self, final: bool) -> bool:
        text, marker = self.scanner.find(self._content_markers, final)
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        self._open(marker)
        # (an opener's next state needs text: at the end of a delta it would only wait)
        return True

    def _s_after_close(self, final: bool) -> bool:
        sc = self.scanner
        pos = sc._pos
        if sc._buf.startswith(_NL, pos):  # (match(_M_NL), written out)
            sc._pos = pos + 1
        elif pos >= len(sc._buf) and not final:
            return False
        self._state = _CONTENT
        return True

    def _s_junk(self, final: bool) -> bool:
        text, marker = self.scanner.find(self._junk_markers, final)
        self._hold_broken(text)
        if marker is None:
            return False
        if marker == TOOL_CALL_CLOSE:
            self._broken_call_ended()
            self._state = _AFTER_CLOSE
        else:
            self._broken_is_content()
            self._open(marker)
        return True


# --------------------------------------------------------------------------- qwen3
_JSON, _AFTER_OBJECT, _ENVELOPE, _BETWEEN = "json", "after_object", "envelope", "between"  # (the _s_<state> methods)


@register("qwen3")
class Qwen3Parser(JsonCallReader, _QwenParser):
    """Streaming parser of Qwen3 / Hermes JSON tool calls; rules: ``docs/formats.md``, "Qwen3 / Hermes JSON".

    The call object is read by the shared :class:`callscale.parsers.jsonscan.JsonCallReader`.
    Arguments stream as the raw JSON text of the ``arguments`` object (raw
    control characters inside strings escaped). Never raises on model output.
    """

    #: The Hermes recovery: an object with a name and no arguments key is a call with ``{}``.
    _name_only_is_a_call = True
    max_head = MAX_HEAD

    def __init__(self) -> None:
        super().__init__()
        self._lexer: JsonCallLexer | None = None

    #: A ``<tool_call>`` opens a call object (JsonCallReader; state ``_JSON``).
    _open = JsonCallReader._open_object

    def _not_a_call(self, *more: str, final: bool = False, expected: Markers | None = None) -> bool | None:
        """No call: content, except an envelope holding nothing a call needs (blank, or an object with no name and no arguments).

        That envelope is markup when ``</tool_call>`` follows (after
        whitespace): decided in state ``_ENVELOPE`` (docs/formats.md).
        Returns ``None``, or (another ``<tool_call>`` right here, opened
        at once) whether the next state has text to read.
        """
        lexer = self._lexer
        if not (more or final):
            if lexer is None:  # only blanks were read, up to what follows
                sc = self.scanner
                pos = sc._pos
                ahead = sc._buf[pos:pos + len(TOOL_CALL_OPEN)]
                if TOOL_CALL_CLOSE.startswith(ahead[:2]):
                    self._state = _ENVELOPE
                    return None
                if ahead == TOOL_CALL_OPEN:  # another opener: this one's text is content, and the state
                    # content would open the next call object at once (_s_content, written out: answers for it)
                    self._emit_content("".join(self._raw))
                    sc._pos = pos + len(TOOL_CALL_OPEN)
                    self._open(TOOL_CALL_OPEN)
                    return sc._pos < len(sc._buf)
            elif not lexer.holds_call_member and (lexer.closed or not "".join(self._raw[1:]).strip()):
                self._state = _ENVELOPE
                return None
        if more or final:
            _QwenParser._not_a_call(self, *more, final=final, expected=expected)
        else:  # (_QwenParser._not_a_call, written out for its common case: the head is content)
            self._emit_content("".join(self._raw))
            self._raw = []
            self._state = _CONTENT

    # the states, run by the base driver (the reading state is the call reader itself: no frame between)
    _s_json = JsonCallReader._read_object

    def _s_envelope(self, final: bool) -> bool:
        """An envelope that holds nothing a call needs: markup before ``</tool_call>``."""
        hit = self._confirm(_M_CLOSE, final)
        if hit is PARTIAL:
            return False
        if hit is None and not (final and self.scanner.at_end()):
            super()._not_a_call(self._confirm_text())
        else:  # </tool_call>, or the end of the output (a cut call): markup
            self._confirm_ws.clear()
            self._raw = []
            self._state = _AFTER_CLOSE if hit else _CONTENT
        return True

    def _s_content(self, final: bool) -> bool:
        """``_QwenParser._s_content`` for this class: its markers and opener named directly (no lookups)."""
        sc = self.scanner
        text, marker = sc.find(_M_QWEN3_CONTENT, final)
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        self._open_object(marker)
        return True

    def _s_after_object(self, final: bool) -> bool:
        """Only whitespace, then ``</tool_call>``.

        Its common text, a newline then ``</tool_call>`` and the layout newline after it, is read here
        (``_read_close`` and state ``_AFTER_CLOSE`` written out).
        """
        sc = self.scanner
        pos = sc._pos
        buf = sc._buf
        if buf[pos:pos + 1] == _NL:
            pos += 1
        if buf[pos:pos + _CLOSE_LEN] == TOOL_CALL_CLOSE:
            pos += _CLOSE_LEN
            self._emit_arguments("}")  # held back until the call is confirmed
            self._end_call()
            if buf[pos:pos + 1] == _NL:
                sc._pos = pos + 1
                self._state = _BETWEEN
            else:
                sc._pos = pos
                self._state = _AFTER_CLOSE
            return True
        if pos == len(buf) and not final:  # (whitespace read: as skip_whitespace would)
            sc._pos = pos
            return False
        marker = self._read_close(final)
        if marker is PARTIAL:
            return False
        if marker is not None:
            self._emit_arguments("}")  # held back until the call is confirmed
            self._end_call()
            self._state = _AFTER_CLOSE
        return True

    def _object_done(self) -> None:
        """The call object ended (its call started): wait for ``</tool_call>``."""
        self._state = _AFTER_OBJECT

    def _s_after_close(self, final: bool) -> bool:
        """``_QwenParser._s_after_close`` (the layout newline after ``</tool_call>``), then state ``_BETWEEN``."""
        sc = self.scanner
        pos = sc._pos
        if sc._buf[pos:pos + 1] == _NL:
            sc._pos = pos + 1
        elif pos >= len(sc._buf) and not final:
            return False
        self._state = _BETWEEN
        return True

    def _s_between(self, final: bool) -> bool:
        """Content right after a call: the next ``<tool_call>`` there is read by a slice (no marker search)."""
        sc = self.scanner
        pos = sc._pos
        if sc._buf[pos:pos + _OPEN_LEN] == TOOL_CALL_OPEN:
            sc._pos = pos + _OPEN_LEN
            self._open_object(TOOL_CALL_OPEN)
            return True
        self._state = _CONTENT
        return True


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
    """

    #: The whitespace its encoder writes before a call block (base.ToolParser.layout_before_call).
    layout_before_call = "\n\n"

    _content_markers = _M_CODER_CONTENT
    _junk_markers = _M_CODER_JUNK

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[str] = []  # name / key being read, typed value pieces
        self._call_name = ""
        self._orphan = False  # the current call had no <tool_call> opener
        self._keys: set[str] = set()  # parameter keys of the current call
        self._tv = _NO_VALUE  # the current value's typed writer (parsers.schema.TypedValue)
        self._candidate: list[str | Layout] = []  # a closing candidate: tags and inner whitespace
        self._candidate_ws = Layout()  # whitespace after the candidate's last tag (run lengths: bounded)
        # whitespace after a rejected candidate, decided by the next delta; or _SPLIT (see _read_value)
        self._held_ws: str | object = ""
        self._head_len = 0  # characters of the head (after <tool_call>) or key being read

    def _open(self, marker: str) -> None:
        self._raw = [marker]
        self._head_len = 0
        if marker[-1] == "=":  # ...<function= (no <tool_call>): the name follows at once
            self._orphan = True
            self._parts = []
            self._state = _NAME
        else:
            self._orphan = False
            self._state = _OPEN

    def _start_key(self) -> None:
        self._parts = []
        self._head_len = 0
        self._state = _KEY

    def _start_call(self, name: str) -> None:
        self._raw = []
        self._begin_call(name)
        self._emit_arguments("{")
        self._call_name = name
        self._keys = set()

    # ------------------------------------------------------------------ states (the base driver runs them)
    def _s_after_param_close(self, final: bool) -> bool:
        sc = self.scanner
        # After a candidate </parameter>: <parameter= or </function> confirm it.
        buf, pos = sc._buf, sc._pos
        if pos < len(buf) and buf[pos].isspace():  # (skip_whitespace's own test written out: most steps have none)
            # held as run lengths; past base.MAX_LAYOUT_RUNS runs the candidate is not confirmed (value text)
            if not self._candidate_ws.add(sc.skip_whitespace()):
                self._reject()
                return True
            pos = sc._pos
        if len(buf) - pos < _BODY_LONGEST and not final and buf[pos:] in _BODY_HELD:
            return False
        marker = sc.match(_M_BODY, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._reject()
        elif marker == PARAMETER_OPEN:
            self._end_value()
            self._parts = []  # (_start_key, written out)
            self._head_len = 0
            self._state = _KEY
        elif self._orphan:  # a call without <tool_call> ends at </parameter> </function>
            self._end_value()
            self._state = _FUNC_END
        else:
            self._candidate.append(self._candidate_ws)
            self._candidate.append(marker)
            self._candidate_ws = Layout()
            self._state = _CLOSE2
        return True

    def _s_after_function_close(self, final: bool) -> bool:
        sc = self.scanner
        # After [</parameter> ws] </function>: </tool_call> confirms it (in a call
        # without <tool_call>, the end of the output too).
        buf, pos = sc._buf, sc._pos
        if pos < len(buf) and buf[pos].isspace() and not self._candidate_ws.add(sc.skip_whitespace()):
            self._reject()  # (held whitespace past base.MAX_LAYOUT_RUNS runs: the candidate is value text)
            return True
        pos = sc._pos
        if pos >= len(buf) and not final:
            return False
        if buf.startswith(TOOL_CALL_CLOSE, pos):  # (match's common answer, written out)
            marker = TOOL_CALL_CLOSE
            sc._pos = pos + len(TOOL_CALL_CLOSE)
        else:
            marker = sc.match(_M_CLOSE, final)
        if marker is PARTIAL:
            return False
        if marker is not None or (self._orphan and sc.at_end()):
            self._end_value()
            self._finish_call()
        else:
            self._reject()
        return True

    def _s_after_call_close(self, final: bool) -> bool:
        sc = self.scanner
        # After </tool_call> in a value (</parameter> and </function> missing):
        # the end of the output or a new <tool_call> confirm it.
        buf, pos = sc._buf, sc._pos
        if pos < len(buf) and buf[pos].isspace() and not self._candidate_ws.add(sc.skip_whitespace()):
            self._reject()  # (held whitespace past base.MAX_LAYOUT_RUNS runs: the candidate is value text)
            return True
        if sc._pos >= len(buf) and not final:
            return False
        marker = sc.match(_M_OPEN_ONLY, final)
        if marker is PARTIAL:
            return False
        if marker is not None or sc.at_end():
            self._end_value()
            self._finish_call()
            if marker is not None:
                self._open(marker)
        else:
            self._reject()
        return True

    def _s_open(self, final: bool) -> bool:
        sc = self.scanner
        pos = sc._pos
        if sc._buf.startswith(TOOL_CALL_OPEN, pos):
            # <tool_call> again, right after the opener (a degenerate model repeats it): the head is content
            # (the rule of _not_a_call; nothing is cut here, also when final), and the content state would
            # end at once at this opener (the leftmost content marker): it opens the next head here, without
            # that state's run. (Still state _OPEN; _orphan is false in it.)
            if self._after_call:
                self._emit_content("".join(self._raw))
            else:
                self._out_text.append("".join(self._raw))
            pos += _OPEN_LEN
            sc._pos = pos
            self._raw = [TOOL_CALL_OPEN]
            self._head_len = 0
            return True
        ws = sc.skip_whitespace(MAX_HEAD + 1 - self._head_len) if sc._buf[pos:pos + 1].isspace() else ""
        if ws:
            self._raw.append(ws)
            self._head_len += len(ws)
            if self._head_len > MAX_HEAD:  # too long for a head
                self._not_a_call()
                return True
            pos = sc._pos
        buf = sc._buf
        if len(buf) - pos < _FUNCTION_LONGEST and not final and buf[pos:] in _FUNCTION_HELD:
            return False
        marker = sc.match(_M_FUNCTION, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            if final:
                self._not_a_call(final=True, expected=_M_FUNCTION)
            else:  # (_not_a_call's common case, written out: the head is content; a stray opener repeats)
                self._emit_content("".join(self._raw))
                self._raw = []
                self._state = _CONTENT
        else:
            self._raw.append(marker)
            self._head_len += len(marker)
            self._parts = []
            self._state = _NAME
        return True

    def _read_tag(self, final: bool) -> bool:
        """States ``_NAME`` and ``_KEY``: a function name or parameter key up to ``>``, bounded by :data:`MAX_HEAD`.

        (One step for both: the per-delta read is the same; what the name or key is decides after.)
        """
        sc = self.scanner
        limit = MAX_HEAD + 1 - self._head_len
        if limit < 0:
            limit = 0
        buf, pos = sc._buf, sc._pos
        end = _TAG_RUN.match(buf, pos, pos + limit).end()
        if end == len(buf) or end - pos == limit:  # no marker starts within the bound (find_within's answer)
            sc._pos = end
            text, marker = buf[pos:end], None
        elif buf[end] == _TAG_END:
            sc._pos = end + 1
            text, marker = buf[pos:end], _TAG_END
        else:  # "\n" or "<": perhaps an opener
            text, marker = sc.find_within(_M_TAG_END, final, limit)
        self._head_len += len(text)
        self._parts.append(text)
        if self._state == _KEY:
            if marker is None:
                if not (final or self._head_len > MAX_HEAD):
                    return False
                self._drop_call()
                return True
            key = "".join(self._parts)
            if marker != _TAG_END:  # a new <tool_call> inside the tag
                self._drop_call()
                self._open(marker)
            elif not key or "<" in key or "\n" in key:
                self._drop_call()
            else:
                self._start_value(key)
            return True
        if marker is None:
            over = self._head_len > MAX_HEAD
            if not (final or over):
                return False
            self._not_a_call("".join(self._parts), final=final and not over and not self._orphan)
            return True
        name = "".join(self._parts)
        if marker != _TAG_END:  # a new <tool_call> before the name ended
            self._not_a_call(name)
            self._open(marker)
        elif not name or "<" in name or _SPACE.search(name):
            self._not_a_call(name, marker)
        elif self._orphan:
            if self.tools and all(tool_name(t) != name for t in self.tools):
                self._not_a_call(name, marker)  # prose naming no tool of the request
            else:
                self._raw.append(name + marker)
                self._head_len += len(marker)
                self._call_name = name
                self._state = _ORPHAN_BODY
        else:
            self._start_call(name)
            self._state = _BODY
        return True

    _s_name = _s_key = _read_tag

    def _s_orphan_body(self, final: bool) -> bool:
        sc = self.scanner
        # <function=NAME> without <tool_call>: a call only if <parameter= or </function> follows
        ws = sc.skip_whitespace(MAX_HEAD + 1 - self._head_len)
        self._raw.append(ws)
        self._head_len += len(ws)
        if self._head_len > MAX_HEAD:
            self._not_a_call()
            return True
        marker = sc.match(_M_BODY, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._not_a_call()  # prose mentioning <function=NAME>: content, also when cut
        else:
            self._start_call(self._call_name)
            if marker == PARAMETER_OPEN:
                self._start_key()
            else:
                self._state = _FUNC_END
        return True

    def _s_body(self, final: bool) -> bool:
        sc = self.scanner
        buf, pos = sc._buf, sc._pos
        if pos < len(buf) and buf[pos].isspace():
            sc.skip_whitespace()
            pos = sc._pos
        if len(buf) - pos < _BODY_LONGEST and not final and buf[pos:] in _BODY_HELD:
            return False
        marker = sc.match(_M_BODY, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._drop_call(final, _M_BODY)
        elif marker == PARAMETER_OPEN:
            self._parts = []  # (_start_key, written out)
            self._head_len = 0
            self._state = _KEY
        else:
            self._state = _FUNC_END
        return True

    def _s_function_end(self, final: bool) -> bool:
        sc = self.scanner
        if self._orphan:  # </tool_call> (after one newline) may follow; nothing else is the call's
            marker = sc.match(_M_ORPHAN_END, final)
            if marker is PARTIAL:
                return False
            self._finish_call()  # (then one layout newline, as after </tool_call>)
            return True
        marker = self._read_close(final)
        if marker is PARTIAL:
            return False
        if marker is not None:
            self._finish_call()
        return True

    def _s_key_newline(self, final: bool) -> bool:
        """one layout newline after <parameter=KEY>"""
        sc = self.scanner
        if sc.match(_M_NL, final) is PARTIAL:
            return False
        self._state = _VAL
        return True

    # ------------------------------------------------------------------ values
    def _start_value(self, key: str) -> None:
        tv = self._tv = TypedValue(self._param_typing(self._call_name, key))
        head = (", " if self._keys else "") + json_string(key) + ": " + tv.opening
        self._keys.add(key)
        self._held_ws = ""
        self._emit_arguments(head)
        sc = self.scanner  # one layout newline after <parameter=KEY> (state _KEY_NL when it has not come yet)
        pos = sc._pos
        if pos < len(sc._buf):
            if sc._buf[pos] == _NL:
                sc._pos = pos + 1
            self._state = _VAL
        else:
            self._state = _KEY_NL

    def _value_text(self, text: str) -> None:
        if text:
            out = self._tv.feed(text)
            if out:  # (a held value sends nothing while it streams)
                self._emit_arguments(out)

    def _candidate_found(self, marker: str) -> None:
        """A tag that may end the value: wait for what follows it to decide (its state: :data:`_CANDIDATE_STATE`)."""
        self._candidate = [marker]
        if self._candidate_ws.runs:  # (empty here but after a bug: read its runs, no clear() call a value end)
            self._candidate_ws.clear()
        state = self._state = _CANDIDATE_STATE[marker.lstrip(_NL)]
        if state is _NEXT_KEY:  # \n<parameter=: the next parameter, if a key and ">" follow
            self._parts_key: list[str] = []
            self._head_len = 0

    def _read_value(self, final: bool) -> bool:
        """Read value text up to a candidate end; false when more text is needed."""
        sc = self.scanner
        held = self._held_ws
        if not held:
            pass
        elif held is _SPLIT:
            # find read nothing, holding back the first characters of a closing tag: while the rest may still
            # be one, wait (find's answer, without its call: a tag split over several deltas)
            buf, pos = sc._buf, sc._pos
            if len(buf) - pos < _VALUE_END_LONGEST and not final and buf[pos:] in _VALUE_END_HELD:
                return False
            self._held_ws = ""
        else:
            # Whitespace after a rejected candidate: its last newline may be
            # the layout newline of a closing tag right after it.
            marker = sc.match(_M_HELD_END, final)
            if marker is PARTIAL:
                return False
            self._held_ws = ""
            if marker is None:
                self._value_text(held)
            elif held.endswith(_NL):
                self._value_text(held[:-1])
                self._candidate_found(_NL + marker)
                return True
            elif marker == PARAMETER_OPEN:  # not at a line start: value text
                self._value_text(held + marker)
                return True
            else:
                self._value_text(held)
                self._candidate_found(marker)
                return True
        text, marker = sc.find(_M_VALUE_END, final)
        if text:  # (_value_text, written out: the per-delta path of a value)
            out = self._tv.feed(text)
            if out:
                self._emit_arguments(out)
        elif marker is None and not final:  # nothing read: the rest is a closing tag's start (or nothing)
            self._held_ws = _SPLIT
            return False
        if marker is None:
            if final:
                self._drop_call()
                return True
            return False
        state = _CANDIDATE_STATE[marker]
        if state is _NEXT_KEY or self._candidate_ws.runs:
            self._candidate_found(marker)
        else:  # (_candidate_found's common case, written out)
            self._candidate = [marker]
            self._state = state
        return True

    def _read_next_key(self, final: bool) -> bool:
        """After ``\\n<parameter=`` in a value: a key, ``>`` confirm the value's end (its ``</parameter>`` missing)."""
        sc = self.scanner
        text, decided = sc.take_run(_KEY_CHARS, MAX_HEAD + 1 - self._head_len)
        self._head_len += len(text)
        self._parts_key.append(text)
        if not decided and not final:
            return False
        key = "".join(self._parts_key)
        if self._head_len > MAX_HEAD or sc.peek(1) != _TAG_END \
                or not is_new_parameter(self.tools, self._call_name, key, self._keys):
            self._reject_key()  # value text; read on from the character that decided it
            return True
        sc.take(1)
        self._end_value()
        self._start_value(key)
        return True

    # the states that read a value and the key after a value's "\n<parameter=" (the base driver runs them)
    _s_value = _read_value
    _s_next_key = _read_next_key

    def _reject_key(self) -> None:
        self._value_text(self._candidate_text() + "".join(self._parts_key))
        self._candidate = []
        self._parts_key = []
        self._state = _VAL

    def _reject(self) -> None:
        """The candidate closing tag is value text; the whitespace after it is held (see ``_read_value``)."""
        self._value_text(self._candidate_text())
        self._held_ws = self._candidate_ws.text()
        self._candidate_ws.clear()
        self._candidate = []
        self._state = _VAL

    def _candidate_text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text() for p in self._candidate)

    def _end_value(self) -> None:
        self._candidate = []
        if self._candidate_ws.runs:
            self._candidate_ws.clear()
        tv, self._tv = self._tv, _NO_VALUE
        self._emit_arguments(tv.end())

    def _finish_call(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._state = _AFTER_CLOSE

