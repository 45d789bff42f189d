"""Gemma 4 tool calls (``gemma4``).

The format (source: the Gemma 4 ``chat_template.jinja`` and its
``format_argument`` macro) and every reading rule: ``docs/formats.md``,
"Gemma 4" (the one place)::

    <|tool_call>call:search{filters:{max:3,tags:[<|"|>a<|"|>,<|"|>b<|"|>]},query:<|"|>café "best"<|"|>}<tool_call|>

This module holds the tokens, markers, the incremental arguments-to-JSON
converter and the ``_s_<state>`` steps; the shared mechanisms (driver,
broken calls, bounded heads, typed values) are base.py's and schema.py's
(``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content", "think" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the
# one the reading decides; tests/parsers/test_transitions.py holds the states to the class's).
GEMMA4_TRANSITIONS = {
    "content": {"text": "content", "<|tool_call>": "prefix"},
    "prefix": {"call:": "name", "<|tool_call> again (the one before is text)": "prefix", "anything else": "content"},
    "name": {"NAME {": "key_start", "<|tool_call>": "prefix", "no name, or past MAX_HEAD": "content"},
    "key_start": {'ws <|"|>': "qkey", "ws } (an empty object)": "after_value / end",
                  "anything else (a JSON or Python quoted key too)": "key"},
    "key": {"KEY :": "value", "another mark, or past MAX_HEAD": "broken"},
    "qkey": {'KEY <|"|>': "colon", "past MAX_HEAD": "broken"},
    "colon": {"ws :": "value", "anything else": "broken"},
    "value": {'ws <|"|>': "string", "ws {": "key_start", "ws [": "array_first",
              "ws \" or ' (a JSON or Python string)": "quoted", "anything else": "literal"},
    "quoted": {"the string up to its closing quote": "after_value"},
    "array_first": {"ws ] (an empty list)": "after_value / end", "anything else": "value"},
    "string": {'text <|"|>': "after_value", "the end of the output inside the call": "content"},
    "literal": {"LITERAL ,": "key_start / value", "LITERAL } or ]": "after_value / end",
                'no literal, then text and <|"|> (the opening <|"|> missing)': "bare",
                "anything else": "broken"},
    "bare": {'text <|"|>': "bare_close", "<tool_call|> or <|tool_call>": "broken"},
    "bare_close": {"ws , } or ] (the <|\"|> closed the string)": "key_start / value / after_value / end",
                   "anything else": "broken"},
    "after_value": {"ws ,": "key_start / value", "ws } or ]": "after_value / end",
                    "ws KEY : in an object (the comma missing)": "key", "anything else": "broken"},
    "end": {"ws <tool_call|>": "content", "anything else": "broken"},
    "broken": {"<tool_call|>": "content", "<|tool_call> (the broken call's text is content)": "content"},
}

import json
import logging
import re

from . import register
from .base import ToolParser, json_text
from .pyliteral import read_python_literal
from .schema import UNTYPED, json_string, TypedValue, convert, is_tool_name

_NO_VALUE = TypedValue(UNTYPED)
from .scanner import OVER, PARTIAL, markers

log = logging.getLogger(__name__)

__all__ = ["Gemma4Parser", "CALL_OPEN", "CALL_CLOSE", "CALL_PREFIX", "STRING_DELIM", "SPECIAL_TOKENS"]

#: Special tokens of the Gemma 4 tokenizer.
CALL_OPEN = "<|tool_call>"
CALL_CLOSE = "<tool_call|>"
STRING_DELIM = '<|"|>'
#: Written after ``CALL_OPEN``, before the function name.
CALL_PREFIX = "call:"

SPECIAL_TOKENS = (CALL_OPEN, CALL_CLOSE, STRING_DELIM)

_CONTENT = markers(CALL_OPEN)
_HEAD_PREFIX = len(CALL_OPEN + CALL_PREFIX)  # of a call head's text: the name follows
_PREFIX = markers(CALL_PREFIX)
_NAME_END = markers("{", CALL_OPEN, CALL_CLOSE)
_KEY_END = markers(":", STRING_DELIM, "{", "}", "[", "]", ",", CALL_OPEN, CALL_CLOSE)
_STRING_END = markers(STRING_DELIM)
_STRING_SCAN = _STRING_END.scan().search
_LITERAL_END = markers(",", "}", "]", "{", "[", ":", STRING_DELIM, CALL_OPEN, CALL_CLOSE)
_AFTER_VALUE = markers(",", "}", "]")
_KEY_START = markers("}", STRING_DELIM)
_COLON = markers(":")
_VALUE_START = markers(STRING_DELIM, "{", "[", '"', "'")
#: Inside a JSON or Python quoted string (a value the model wrote without <|"|>): its closing quote or an escape.
_QUOTED_END = {'"': markers('"', "\\", CALL_OPEN, CALL_CLOSE), "'": markers("'", "\\", CALL_OPEN, CALL_CLOSE)}
#: A string whose opening <|"|> is missing: its closing <|"|>, or the call's tokens (then it was no string).
_BARE_END = markers(STRING_DELIM, CALL_OPEN, CALL_CLOSE)
_ARRAY_END = markers("]")
_CALL_END = markers(CALL_CLOSE)

_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
#: How Jinja prints Python's None (``{{ argument }}`` in ``format_argument``).
_PY_NONE = "None"

_OBJ, _ARR = "{", "["
_CLOSER = {_OBJ: "}", _ARR: "]"}

# States.
_S_CONTENT = "content"
_S_PREFIX = "prefix"  # after <|tool_call>: expecting "call:"
_S_NAME = "name"
_S_KEY_START = "key_start"  # after { or , in an object
_S_KEY = "key"  # a bare key
_S_QKEY = "qkey"  # a <|"|>-delimited key
_S_COLON = "colon"  # after a delimited key
_S_VALUE = "value"
_S_ARRAY_FIRST = "array_first"  # after [
_S_STRING = "string"
_S_LITERAL = "literal"
_S_QUOTED = "quoted"  # a JSON or Python quoted string
_S_BARE = "bare"  # a string whose opening <|"|> is missing
_S_BARE_CLOSE = "bare_close"  # after its closing <|"|>
_S_AFTER_VALUE = "after_value"
_S_END = "end"  # after the final }: expecting <tool_call|>

_IN_CALL = {_S_KEY_START, _S_KEY, _S_QKEY, _S_COLON, _S_VALUE, _S_ARRAY_FIRST, _S_STRING,
            _S_LITERAL, _S_QUOTED, _S_BARE, _S_BARE_CLOSE, _S_AFTER_VALUE, _S_END}


@register("gemma4")
class Gemma4Parser(ToolParser):
    """Streaming parser of Gemma 4 tool calls; rules: ``docs/formats.md``, "Gemma 4"."""

    transitions = GEMMA4_TRANSITIONS

    #: The whitespace its encoder writes before a call block (base.ToolParser.layout_before_call).
    layout_before_call = ""
    #: A broken call's text ends at ``<tool_call|>`` (dropped); a new ``<|tool_call>`` makes it content.
    broken_ends = (CALL_CLOSE,)
    broken_restarts = (CALL_OPEN,)
    _content_markers = _CONTENT

    def __init__(self) -> None:
        super().__init__()
        self._state = _S_CONTENT
        self._parts: list[str] = []  # the literal being read (a head or key: base's _head_*)
        self._stack: list[str] = []  # open containers of the arguments
        self._first_key = True  # no member yet in the innermost object
        self._call_name = ""
        self._typing = UNTYPED  # schema typing of the top-level value being read
        self._tv = _NO_VALUE  # the string value's writer (parsers.schema.TypedValue; typed at its end when the schema says)

    # ------------------------------------------------------------------ end of output (states: _s_<state>, base driver)

    def _at_end(self) -> None:
        """The end of the output (base hook, after the driver)."""
        if self._state in (_S_PREFIX, _S_NAME):
            pass  # the output cut the call's head: its markup is no content (DESIGN.md)
        elif self._state in _IN_CALL:
            log.debug("gemma4: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
        self.scanner.head_begin()
        self._parts = []
        self._state = _S_CONTENT

    # ------------------------------------------------------------------ outside a call
    # Each state returns True when it moved on (run again), False when it needs more text.
    # Every state only reads (the waiting rule: callscale/parsers/README.md).
    # Content: base ``_s_content`` over ``_content_markers``.
    def _open(self, opener: str, final: bool) -> bool:
        self.scanner.head_begin(opener)
        self._state = _S_PREFIX
        return True

    def _s_prefix(self, final: bool) -> bool:
        # the head read so far is the opener alone (_open): its text is CALL_OPEN
        sc = self.scanner
        n = sc.skip_repeats(CALL_OPEN)
        if n:  # openers in a row: each but the last is no call, content; the last one's head is read on
            self._emit_content(CALL_OPEN * n)
            return True
        found = sc.match_literal(CALL_PREFIX, final)
        if found is True:
            self.scanner.head_begin(CALL_OPEN + CALL_PREFIX, len(CALL_PREFIX))  # the head (MAX_HEAD) is call:NAME
            self._state = _S_NAME
            return True
        if found is PARTIAL:
            return False
        # not a call: the opener is content (unless the output ends here)
        self._head_no_call(self.scanner.head_text(), final, _PREFIX)
        self._state = _S_CONTENT
        return True

    def _s_name(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_NAME_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:  # too long for a head: content, read on as content after it
                self._emit_content(self.scanner.head_text())
                self._state = _S_CONTENT
                return True
            return False
        head = self.scanner.head_text()
        name = head[_HEAD_PREFIX:].strip()
        if marker == "{" and is_tool_name(name):
            self._call_name = name
            self._begin_call(name)
            self._emit_arguments("{")
            self._stack = [_OBJ]
            self._first_key = True
            self._state = _S_KEY_START
            return True
        self._emit_content(head)
        if marker == CALL_OPEN:
            self._open(marker, final)
        else:
            self._emit_content(marker)
            self._state = _S_CONTENT
        return True

    # ------------------------------------------------------------------ the arguments
    # The steps between values read their marks with one scanner call (match_after_space: whitespace,
    # then a one-character mark or <|"|>).
    def _s_key_start(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_KEY_START, final)
        if marker is PARTIAL:
            return False  # (final: _at_end abandons the call)
        self.scanner.head_begin()
        if marker == STRING_DELIM:
            self._state = _S_QKEY
        elif marker is None:
            self._state = _S_KEY  # (text follows)
        elif self._first_key:  # {} : an empty object
            self._close_container("}")
        else:
            self._fail(marker, "expected a key and ':'")
        return True

    def _s_key(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_KEY_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._fail(None, "a key longer than MAX_HEAD")
                return True
            return False
        key = self.scanner.head_text().strip()
        if len(key) > 2 and key[0] == '"' == key[-1]:  # a key in JSON quotes (a bare key keeps a ' as text)
            ok, value = read_python_literal(key)
            if ok and isinstance(value, str) and value:
                key = value
        if marker != ":" or not key:
            self._fail(marker, "expected a key and ':'")
            return True
        self._emit_key(key)
        return True

    def _s_qkey(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_STRING_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._fail(None, "a key longer than MAX_HEAD")
                return True
            return False
        self._state = _S_COLON
        return True

    def _s_colon(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_COLON, final)
        if marker is PARTIAL or (marker is None and self.scanner.at_end()):
            return False
        if marker is None:
            self._fail(None, "expected ':' after a key")
            return True
        self._emit_key(self.scanner.head_text())
        return True

    def _emit_key(self, key: str) -> None:
        # the ", " before a later member was sent with its comma (_punctuation)
        self._first_key = False
        self._emit_arguments(json_string(key) + ": ")
        self._typing = self._param_typing(self._call_name, key) if len(self._stack) == 1 else UNTYPED
        self._state = _S_VALUE

    def _s_value(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_VALUE_START, final)
        if marker is PARTIAL:
            return False  # (a partial <|"|>, or nothing unread)
        if marker == STRING_DELIM:
            typing = self._typing if len(self._stack) == 1 else UNTYPED
            # a string for a parameter the schema says cannot be one: typed at its end; else streamed
            self._tv = TypedValue(typing) if typing.declared and "string" not in typing.types else _NO_VALUE
            self._emit_arguments(self._tv.opening)
            self._state = _S_STRING
        elif marker == "{":
            self._emit_arguments("{")
            self._stack.append(_OBJ)
            self._first_key = True
            self._state = _S_KEY_START
        elif marker == "[":
            self._emit_arguments("[")
            self._stack.append(_ARR)
            self._state = _S_ARRAY_FIRST
        elif marker is not None:  # " or ': a JSON or Python string (read whole, then written as JSON)
            self._parts = [marker]
            self._state = _S_QUOTED
        else:
            self._parts = []
            self._state = _S_LITERAL
        return True

    def _s_quoted(self, final: bool) -> bool:
        """A value in JSON or Python quotes instead of ``<|"|>`` (docs/formats.md, "Gemma 4"): up to its closing quote."""
        sc = self.scanner
        parts = self._parts
        quote = parts[0]
        while True:
            text, marker = sc.find(_QUOTED_END[quote], final)
            parts.append(text)
            if marker is None:
                return False  # (final: _at_end abandons the call)
            if marker == CALL_OPEN or marker == CALL_CLOSE:  # the call's tokens: it was no string
                self._parts = []
                self._fail(marker, "an unterminated quoted string")
                return True
            parts.append(marker)
            if marker == quote:
                break
            escaped = sc.take(1)  # the escaped character (a quote or backslash is no end)
            if not escaped:
                parts.pop()
                sc.unread(1)
                return False
            parts.append(escaped)
        ok, value = read_python_literal("".join(parts))
        self._parts = []
        if not ok or not isinstance(value, str):
            self._fail(None, "a bad quoted string")
            return True
        self._emit_string(value)
        self._state = _S_AFTER_VALUE
        return True

    def _emit_string(self, value: str) -> None:
        """A whole string value, typed by the schema like a ``<|"|>`` string (schema.TypedValue)."""
        typing = self._typing if len(self._stack) == 1 else UNTYPED
        tv = TypedValue(typing) if typing.declared and "string" not in typing.types else _NO_VALUE
        self._emit_arguments(tv.opening + tv.feed(value) + tv.end())

    def _s_bare(self, final: bool) -> bool:
        """A string whose opening ``<|"|>`` is missing: its text up to the closing ``<|"|>`` (held)."""
        text, marker = self.scanner.find(_BARE_END, final)
        self._parts.append(text)
        if marker is None:
            return False  # (final: _at_end abandons the call)
        if marker != STRING_DELIM:
            self._fail(marker, "no string: a call token before <|\"|>")
            return True
        self._state = _S_BARE_CLOSE
        return True

    def _s_bare_close(self, final: bool) -> bool:
        """After the ``<|"|>`` of a string missing its opener: it closed the string when ``,`` ``}`` or ``]`` follows."""
        marker = self.scanner.match_after_space(_AFTER_VALUE, final)
        if marker is PARTIAL or (marker is None and self.scanner.at_end()):
            return False
        if marker is None:  # an opening <|"|> (the next key's string): the text was no string
            self._fail(None, "a value that is no literal")
            return True
        value = "".join(self._parts).strip()
        self._parts = []
        self._emit_string(value)
        self._punctuation(marker)
        return True

    def _s_array_first(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_ARRAY_END, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._state = _S_VALUE
        else:
            self._close_container("]")
        return True

    def _s_string(self, final: bool) -> bool:
        out, found = self.scanner.until_value(_STRING_SCAN, STRING_DELIM, self._tv, final)  # up to <|"|>
        if out:  # (a held value sends nothing until its end)
            self._emit_arguments(out)
        if not found:
            return False
        tv, self._tv = self._tv, _NO_VALUE
        self._emit_arguments(tv.end())
        self._state = _S_AFTER_VALUE
        return True

    def _s_literal(self, final: bool) -> bool:
        text, marker = self.scanner.find(_LITERAL_END, final)
        self._parts.append(text)
        if marker is None:
            return False
        literal = "".join(self._parts).strip()
        self._parts = []
        if literal == _PY_NONE:
            literal = "null"
        if marker not in _AFTER_VALUE.items or _LITERAL.fullmatch(literal) is None:
            if marker in _AFTER_VALUE.items or marker == STRING_DELIM:  # a string whose <|"|> opener is missing?
                self._parts = [text for text in (literal, marker) if text != STRING_DELIM]
                self._state = _S_BARE_CLOSE if marker == STRING_DELIM else _S_BARE
                return True
            self._fail(marker, f"bad value {literal[:40]!r}")
            return True
        typing = self._typing if len(self._stack) == 1 else UNTYPED
        if typing.is_string and literal != "null":  # a bare scalar for a string parameter
            literal = json.dumps(literal)
        elif typing.declared:
            ok, value = convert(literal, typing)
            literal = json_text(value) if ok else literal
        self._emit_arguments(literal)
        self._punctuation(marker)
        return True

    def _s_after_value(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_AFTER_VALUE, final)
        if marker is PARTIAL or (marker is None and self.scanner.at_end()):
            return False
        if marker is None:
            if self._stack[-1] == _OBJ:  # a key after a value with no comma between: read as if one were there
                self._emit_arguments(", ")
                self._first_key = False
                self.scanner.head_begin()
                self._state = _S_KEY
                return True
            self._fail(None, "expected ',' or a closing bracket")
            return True
        self._punctuation(marker)
        return True

    def _punctuation(self, mark: str) -> None:
        if mark == ",":
            self._emit_arguments(", ")
            if self._stack[-1] == _OBJ:
                self._first_key = False
                self._state = _S_KEY_START
            else:
                self._state = _S_VALUE
        elif mark == _CLOSER[self._stack[-1]]:
            self._close_container(mark)
        else:
            self._fail(None, f"{mark!r} closes {self._stack[-1]!r}")

    def _close_container(self, mark: str) -> None:
        self._stack.pop()
        if self._stack:
            self._emit_arguments(mark)
            self._state = _S_AFTER_VALUE
        else:  # the call's own }: sent when <tool_call|> follows
            self._state = _S_END

    def _s_end(self, final: bool) -> bool:
        self.scanner.skip_whitespace()
        marker = self.scanner.match(_CALL_END, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            if self._cut_by_end(final, _CALL_END) or self.scanner.at_end():
                return False
            self._fail(None, "expected <tool_call|> after the arguments")
            return True
        self._emit_arguments("}")
        self._end_call()
        self._state = _S_CONTENT
        return True

    # ------------------------------------------------------------------ malformed calls
    def _fail(self, marker: str | None, why: str) -> None:
        """Abandon the current call (broken); ``marker`` is the marker just consumed, if any."""
        log.debug("gemma4: call %r abandoned: %s", self._call_name, why)
        self._stack = []
        self._parts = []
        self.scanner.head_begin()
        if marker == CALL_OPEN or marker == CALL_CLOSE:  # read again by the base's broken state
            self.scanner.unread(len(marker))
        self._broken()
