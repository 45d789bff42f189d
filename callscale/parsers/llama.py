"""Llama 3 JSON and Llama 4 pythonic tool calls (``llama3_json``, ``llama4_pythonic``).

The formats (sources: Meta's Llama 3.1 chat template and llama-models'
``models/llama3/tool_utils.py``; llama-models ``models/llama4/prompt_format.md``)
and the reading rules are in ``docs/formats.md``, "Llama 3.1 / 3.2 / 3.3
JSON" and "Llama 4 pythonic". A Llama 3 call object is read by
:class:`callscale.parsers.jsonscan.JsonCallReader`, as ``qwen3``'s. Nothing
here raises on model output; lengths are in characters.
"""

from __future__ import annotations

from .jsonscan import json_call_transitions

# The transition tables, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; tests/parsers/test_transitions.py holds each
# to its class's states and to the states real workloads enter).
LLAMA3_JSON_TRANSITIONS = {
    "content": {"text": "content", "{ (read again by the call reader)": "json_open",
                "<|python_tag|> (dropped)": "content"},
    # the call object: JsonCallReader's states, and where its hooks send llama3_json
    **json_call_transitions({"the call started and its object closed": "separator",
                             "then '; {' (the next object)": "json_open",
                             "no call object (content; a JSON error: the next { inside it)": "content",
                             "a call that broke": "broken_json"}),
    "separator": {'"; {" whole (the next object)': "json_open", "whitespace and one ; held, then {": "json_open",
                  "anything else (the held text is content)": "content"},
    "broken_json": {"a broken call's object up to its }": "separator", "<|python_tag|>": "content",
                    '"; {" (the next object)': "json_open"},
}
LLAMA4_PYTHONIC_TRANSITIONS = {
    "content": {"text": "content", "[ (a call list)": "head", "<|python_start|>, <|python_end|> (dropped)": "content"},
    "head": {"NAME(KEY= (at most MAX_HEAD)": "args", "NAME() (no arguments)": "after_call",
             "anything else, past MAX_HEAD (the list was text)": "content"},
    # the arguments: pyliteral.PyArgumentReader's states (Python keyword arguments streamed as JSON)
    "args": {"a separator, number, word or key": "args", "a quote": "open_quote",
             "a one-quote string's text a delta cut": "arg_text", ") (the arguments' end)": "after_call",
             "malformed (the call abandoned)": "content"},
    "arg_text": {"the string's text, then its quote": "args", "the buffer's end": "arg_text",
                 "the string's text and its quote, then another string the buffer cuts (read as args reads it)":
                 "string"},
    "open_quote": {"the same quote twice more (triple-quoted) or any other character": "string",
                   "the closing quote (an empty string)": "args"},
    "string": {"text up to its quote": "args", "a backslash before a longer escape": "escape",
               "the end of the output inside the call": "content"},
    "escape": {"the escape's characters": "string", "a malformed escape": "content"},
    "after_call": {", (the next call)": "head", "] (the list's end)": "content", "anything else": "content"},
}

import re

from . import register
from .base import MAX_HEAD, Layout, ToolParser
from .jsonscan import JsonCallLexer, JsonCallReader, JsonTracker
from .pyliteral import PyArgumentReader
from .scanner import PARTIAL, markers

__all__ = [
    "PYTHON_TAG", "PYTHON_START", "PYTHON_END", "LLAMA3_SPECIAL_TOKENS", "LLAMA4_SPECIAL_TOKENS",
    "ARGUMENT_KEYS", "CALL_SEPARATOR", "Llama3JsonParser", "Llama4PythonicParser",
]

#: Llama 3.1+: the token before a tool call (a single token of the Llama 3 vocabulary).
PYTHON_TAG = "<|python_tag|>"
#: Llama 4: the tokens around a call list (single tokens of the Llama 4 vocabulary).
PYTHON_START = "<|python_start|>"
PYTHON_END = "<|python_end|>"
LLAMA3_SPECIAL_TOKENS = (PYTHON_TAG,)
LLAMA4_SPECIAL_TOKENS = (PYTHON_START, PYTHON_END)
#: The keys a Llama 3 call object may carry its arguments under.
ARGUMENT_KEYS = ("parameters", "arguments")
#: Between two Llama 3 JSON calls (as vLLM's llama3_json reads them).
CALL_SEPARATOR = "; "


# --------------------------------------------------------------------------- shared
class _AfterCall:
    """What both formats do right after a call: hold whitespace until the next character decides it."""

    scanner: object
    _confirm_ws: Layout  # (base's: the whitespace held after a closing mark, before what decides it)

    def _next_after_call(self, final: bool) -> str:
        """Hold the whitespace here; return the next character (not consumed), or ``""`` when none is there yet.

        At the end of the output the held text (whitespace, Llama 3's one
        ``;``) is layout after the last call: dropped.
        """
        sc = self.scanner
        ws = sc.skip_whitespace()
        if ws:
            if not self._after_call:  # this gap's whitespace was decided as content (past the bound): it stays so
                self._emit_content(self._take_held() + ws)
            elif not self._confirm_ws.add(ws):  # past the bound (base.MAX_LAYOUT_RUNS runs): content, decided
                self._emit_content(self._take_held())
        c = sc.peek(1)
        if not c and final:
            self._confirm_ws.clear()
        return c

    def _take_held(self) -> str:
        held = self._confirm_ws.text()
        self._confirm_ws.clear()
        return held


# --------------------------------------------------------------------------- llama3_json
_M_JSON_CONTENT = markers("{", PYTHON_TAG)
_CONTENT, _JSON, _SEP, _BROKEN = "content", "json", "separator", "broken_json"  # the _s_<state> methods
#: What ends a broken call's text before its object closes: the call token, the next call's object.
_BROKEN_ENDS = (PYTHON_TAG, CALL_SEPARATOR.strip() + " {", CALL_SEPARATOR.strip() + "{")
_SEP_OPEN = CALL_SEPARATOR + "{"  # the common text between two calls' objects


@register("llama3_json")
class Llama3JsonParser(_AfterCall, JsonCallReader, ToolParser):
    """Streaming parser of Llama 3 JSON tool calls; see the module docstring for the rules.

    Each call object is read by the shared
    :class:`callscale.parsers.jsonscan.JsonCallReader` (the Hermes lexer,
    head bound and argument streaming, as ``qwen3``); only what surrounds an
    object is this format's. Never raises on model output.
    """

    transitions = LLAMA3_JSON_TRANSITIONS
    argument_keys = ARGUMENT_KEYS
    #: Not Qwen3's recovery: an object without arguments may be prose ({"name": "Ada", "age": 36}).
    _name_only_is_a_call = False
    max_head = MAX_HEAD
    #: No opener: a candidate object the output cuts before its call started may be prose.
    _cut_head_is_content = True

    def __init__(self) -> None:
        super().__init__()
        self._raw: list[str] = []
        self._lexer: JsonCallLexer | None = None
        self._semicolon = False
        self._rest = JsonTracker()  # a broken call's JSON state, to find the end of its object

    def _open_call_object(self, before: str) -> None:
        """A ``{`` was just read (``before``: held separator text): start a candidate call object there.

        The ``{`` is stepped back over (it was read in this delta), so the call reader reads the object
        from its first character, as after Qwen3's opener.
        """
        self.scanner.unread(1)
        self._open_object(before)  # (enters state _JSON)

    def _not_a_call(self, final: bool = False) -> None:
        """The candidate is no call: its text is content (a head the end of the output cut is dropped).

        When its JSON broke, reading goes on at the next ``{`` inside it (a
        ``{"`` in prose must not hide a call that starts inside what it
        read); its head is at most ``MAX_HEAD`` characters, so each
        character is read a bounded number of times.
        """
        raw = "".join(self._raw)
        self._raw = []
        self._state = _CONTENT
        lexer = self._lexer
        k = -1
        if lexer is not None and lexer.failed and not final and len(raw) <= 2 * MAX_HEAD:
            k = raw.find("{", raw.find("{") + 1)
        if k < 0:
            self._head_no_call(raw, final)
            return
        self._emit_content(raw[:k])
        sc = self.scanner
        try:
            sc.unread(len(raw) - k)
        except ValueError:  # read in an earlier delta: in front of the unread text again
            sc.push_back(raw[k:])

    def _object_done(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        if self._confirm_ws.runs:
            self._confirm_ws.clear()
        sc = self.scanner
        if sc.match_literal(_SEP_OPEN) is True:  # the next call's object, its "{" read again by state _JSON
            sc.unread(1)
            self._open_object(CALL_SEPARATOR)
            return
        self._semicolon = False
        self._state = _SEP

    def _drop_call(self) -> None:
        """The started call broke (DESIGN.md): its text is dropped up to the ``}`` that closes its object, else content."""
        self._break_call()
        rest = self._rest = JsonTracker()
        lexer = self._lexer
        if lexer is not None:
            rest.inside, rest.escape, rest.depth = lexer.inside, lexer.escape, lexer.depth
        self._state = _BROKEN

    _content_markers = _M_JSON_CONTENT

    def _open(self, marker: str, final: bool) -> bool:
        if marker == "{":
            self._open_call_object("")
        return True  # (<|python_tag|>: dropped)

    _s_json = JsonCallReader._read_object  # (the state is the reader itself: no frame between)

    def _s_broken_json(self, final: bool) -> bool:
        end = self._hold_broken_json(self._rest, _BROKEN_ENDS, final)
        if end is None:
            return False
        if end == "":
            return True
        self._confirm_ws.clear()
        self._semicolon = False
        if end == "}":  # after the broken object: as after a call
            self._state = _SEP
        elif end == PYTHON_TAG:
            self._state = _CONTENT
        else:  # "; {": the next call's object; the separator is content
            self._emit_content(end[:-1])
            self._open_call_object("")
        return True

    def _s_separator(self, final: bool) -> bool:
        """After a call: whitespace and one ``;`` are held until what follows decides them.

        The common text, ``"; {"``, is read whole: a prefix of it that ends the buffer is left unread
        (at most two characters) until the next delta.
        """
        sc = self.scanner
        if not self._semicolon and not self._confirm_ws.runs:  # nothing held yet
            found = sc.match_literal(_SEP_OPEN, final)
            if found is True:
                sc.unread(1)
                self._open_object(CALL_SEPARATOR)  # (enters state _JSON at its "{")
                return True
            if found is PARTIAL:
                return False
        c = self._next_after_call(final)
        if not c:
            return False
        if c == ";" and not self._semicolon:
            sc.take(1)
            self._confirm_ws.add(c)
            self._semicolon = True
        elif c == "{":
            sc.take(1)
            self._open_call_object(self._take_held())
        else:
            self._emit_content(self._take_held())
            self._state = _CONTENT
        return True


# --------------------------------------------------------------------------- llama4_pythonic
_M_LIST_CONTENT = markers("[", PYTHON_START, PYTHON_END)
_HEAD, _AFTER_CALL = "head", "after_call"  # the _s_<state> methods (the arguments' states: pyliteral's)
#: The head's steps: the whole head matched at once (_H_WHOLE), else one step a part.
_H_WHOLE, _H_NAME0, _H_NAME, _H_PAREN, _H_KEY0, _H_KEY, _H_EQ = range(7)
_SPACES = re.compile(r"\s*")
_NAME_RUN = re.compile(r"[\w.-]*")
_KEY_RUN = re.compile(r"\w*")  # (\w: str.isalnum() or "_", the same test)
_PAREN = re.compile(r"\(")
#: What each step reads before the character that decides it.
_STEP_RUN = {_H_NAME0: _SPACES, _H_NAME: _NAME_RUN, _H_PAREN: _SPACES, _H_KEY0: _SPACES, _H_KEY: _KEY_RUN,
             _H_EQ: _SPACES}
#: A call's head whole, ``name(key=`` or ``name()`` (groups: name, ")", key, "="), or a prefix of one: what the
#: head's steps read, for an ASCII name start (others go through the steps); waited for up to _HEAD_WAIT characters.
_HEAD_RE = re.compile(r"\s*(?:([A-Za-z_][\w.-]*)\s*(?:\(\s*(?:(\))|([A-Za-z_]\w*)\s*(=)?)?)?)?")
_HEAD_WAIT = 128
#: _HEAD_RE's text before its ")" or "=" (no groups): the whole unread text a prefix of a head.
_HEAD_PREFIX = re.compile(r"\s*(?:[A-Za-z_][\w.-]*\s*(?:\(\s*(?:[A-Za-z_]\w*\s*)?)?)?")


def _is_name_start(c: str) -> bool:
    return c.isalpha() or c == "_"


@register("llama4_pythonic")
class Llama4PythonicParser(_AfterCall, PyArgumentReader, ToolParser):
    """Streaming parser of Llama 4 pythonic tool calls; see the module docstring for the rules.

    This class reads the call syntax, ``[NAME(`` ... ``), ...]``; each call's keyword arguments are
    read by the shared :class:`callscale.parsers.pyliteral.PyArgumentReader` and stream as JSON text
    ``{"key": value, ...}`` (a string value in pieces while it arrives). Never raises on model output.
    """

    transitions = LLAMA4_PYTHONIC_TRANSITIONS
    word_bound = MAX_HEAD
    _content_markers = _M_LIST_CONTENT

    def __init__(self) -> None:
        super().__init__()
        self._args_init()
        self._step = _H_WHOLE
        self._first = True            # the head of a list's first call
        self._word = ""               # the head's name or key being read
        self._name = ""

    def _open(self, marker: str, final: bool) -> bool:
        if marker == "[":
            self._open_head("[", first=True)
        return True  # (a python_start/end token: dropped)

    # ------------------------------------------------------------------ the head
    def _open_head(self, raw: str, first: bool) -> None:
        """``raw`` (``[``, or a call's ``,`` and the layout before it) starts a head: kept as its text (in
        ``_word`` while the head is matched whole; base's bounded head from the first step on)."""
        self._step = _H_WHOLE
        self._first = first
        self._word = raw
        self._state = _HEAD

    def _no_call(self) -> bool:
        """The head read so far starts no call: its text is content; read on as content."""
        self._emit_content(self.scanner.head_text())
        self._state = _CONTENT
        return True

    def _s_head(self, final: bool) -> bool:
        """The head: matched whole when it starts with an ASCII name and is in the buffer (or waits for it,
        up to ``_HEAD_WAIT`` characters), else read a step at a time within ``MAX_HEAD`` (base's bounded head)."""
        if self._step == _H_WHOLE:
            sc = self.scanner
            text = sc.peek(MAX_HEAD + 1)
            if not final and len(text) <= _HEAD_WAIT and "=" not in text and ")" not in text \
                    and _HEAD_PREFIX.fullmatch(text) is not None:
                return False  # no "=" nor ")" yet: a prefix waits (a lighter pattern)
            hit = _HEAD_RE.match(text)
            last = hit.lastindex  # (the groups close in order: the last one read tells the head's form)
            if last == 4 or last == 2:  # name(key= or name()
                sc.take(hit.end())
                self._name = hit.group(1)
                if last == 2:
                    return self._empty_call()
                self._begin_call(self._name)
                self._args_begin(hit.group(3))
                return True
            if hit.end() == len(text) and not final and len(text) <= _HEAD_WAIT:
                return False  # a prefix of it: wait for the rest (the steps would hold it too)
            self.scanner.head_begin(self._word)
            self._word = ""
            self._step = _H_NAME0
        while True:
            step = self._step
            text, decided = self.scanner.head_run(_STEP_RUN[step], final)
            if step == _H_NAME or step == _H_KEY:
                self._word += text
            if self.scanner.head_over():
                return self._no_call()
            if not decided:
                return False
            c = self.scanner.peek(1)
            if not c:  # (the end of the output)
                return self._no_call()
            answer = self._head_step(step, c, final)
            if answer is not None:
                return answer

    def _head_step(self, step: int, c: str, final: bool) -> bool | None:
        """The character ``c`` that ended step ``step``'s run: the next step (None), or the state's answer."""
        if step == _H_NAME0:
            if _is_name_start(c):
                self._step = _H_NAME
                return None
            if c == "]" and not self._first:  # a trailing comma: the list ends
                self.scanner.take(1)
                self.scanner.head_text()
                self._state = _CONTENT
                return True
        elif step == _H_NAME or step == _H_PAREN:
            if c == "(":
                self.scanner.head_run(_PAREN, final)
                self._name = self._word
                self._word = ""
                self._step = _H_KEY0
                return None
            if step == _H_NAME and c.isspace():
                self._step = _H_PAREN
                return None
        elif step == _H_KEY0:
            if c == ")":
                self.scanner.take(1)
                self.scanner.head_text()
                return self._empty_call()
            if _is_name_start(c):
                self._step = _H_KEY
                return None
        elif c == "=":  # _H_KEY, _H_EQ
            self.scanner.take(1)
            self.scanner.head_text()
            self._begin_call(self._name)
            self._args_begin(self._word)
            return True
        elif step == _H_KEY and c.isspace():
            self._step = _H_EQ
            return None
        return self._no_call()

    def _empty_call(self) -> bool:
        """``NAME()`` was read: a call without arguments."""
        self._begin_call(self._name)
        self._emit_arguments("{}")
        self._end_call()
        self._confirm_ws.clear()
        self._state = _AFTER_CALL
        return True

    # ------------------------------------------------------------------ after a call
    def _args_done(self) -> bool:
        self._end_call()
        if self._confirm_ws.runs:
            self._confirm_ws.clear()
        self._state = _AFTER_CALL
        return True

    def _s_after_call(self, final: bool) -> bool:
        sc = self.scanner
        if not self._confirm_ws.runs and sc.match_literal(",") is True:  # the common case: the next call's comma
            self._open_head(",", first=False)
            return True
        c = self._next_after_call(final)
        if not c:
            return False
        held = self._take_held()
        if c == ",":
            sc.take(1)
            self._open_head(held + ",", first=False)
        elif c == "]":
            sc.take(1)
            self._state = _CONTENT
        else:
            self._emit_content(held)
            self._state = _CONTENT
        return True
