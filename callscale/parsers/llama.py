"""Llama 3 JSON and Llama 4 pythonic tool calls (``llama3_json``, ``llama4_pythonic``).

The formats (sources: Meta's Llama 3.1 chat template and llama-models'
``models/llama3/tool_utils.py``; llama-models ``models/llama4/prompt_format.md``)
and the reading rules are in ``docs/formats.md``, "Llama 3.1 / 3.2 / 3.3
JSON" and "Llama 4 pythonic". A Llama 3 call object is read by
:class:`callscale.parsers.jsonscan.JsonCallReader`, as ``qwen3``'s. Nothing
here raises on model output; lengths are in characters.
"""

from __future__ import annotations

import math
import re

from . import register
from .base import MAX_HEAD, Layout, ToolParser, json_fragment
from .jsonscan import SURROGATE, JsonCallLexer, JsonCallReader, JsonTracker
from .schema import json_string
from .pyliteral import SIMPLE_ESCAPES  # the one table of Python's one-character escapes
from .scanner import MarkerScanner, markers

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
            if not self._confirm_ws.add(ws):  # past the bound (base.MAX_LAYOUT_RUNS runs): content, decided
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
        self.scanner._pos -= 1  # (unread(1): the "{" was consumed by the caller, in this delta)
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
        except ValueError:  # read in an earlier delta: a scanner that starts with it
            rest = MarkerScanner()
            rest.feed(raw[k:] + sc.take_all())
            self.scanner = rest

    def _object_done(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        if self._confirm_ws.runs:
            self._confirm_ws.clear()
        sc = self.scanner
        pos = sc._pos
        if sc._buf[pos:pos + 3] == _SEP_OPEN:  # the next call's object (state _SEPARATOR's steps, written out)
            sc._pos = pos + 2
            self._open_object(CALL_SEPARATOR)  # (enters state _JSON at its "{")
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

    def _s_content(self, final: bool) -> bool:
        sc = self.scanner
        text, marker = sc.find(_M_JSON_CONTENT, final)
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        if marker == "{":
            self._open_call_object("")
            return True
        return True  # <|python_tag|>: dropped

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
            pos = sc._pos
            buf = sc._buf
            ahead = buf[pos:pos + 3]
            if ahead == _SEP_OPEN:
                sc._pos = pos + 2
                self._open_object(CALL_SEPARATOR)  # (enters state _JSON at its "{")
                return True
            if not final and pos + len(ahead) == len(buf) and _SEP_OPEN.startswith(ahead):
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
_HEAD, _ARGS, _ARG_TEXT, _OPEN_QUOTE, _STRING, _ESCAPE, _NUMBER, _WORD, _AFTER_CALL = (  # the _s_<state> methods
    "head", "args", "arg_text", "open_quote", "string", "escape", "number", "word", "after_call")
# head steps
_H_NAME0, _H_NAME, _H_PAREN, _H_KEY0, _H_KEY, _H_EQ = range(6)
# what the reader expects next inside the arguments
# (_E_SEP: ':' expected, _E_SEP_EQ: '=' expected; the two separators last)
_E_VALUE, _E_AFTER, _E_KEY, _E_SEP, _E_SEP_EQ = range(5)
#: container kinds on the stack: the call's argument list, a list, a tuple, a dict
_CALL, _LIST, _TUPLE, _DICT = "(", "[", "t", "{"
_CLOSER = {_CALL: ")", _LIST: "]", _TUPLE: ")", _DICT: "}"}
_OPENS = {"[": _LIST, "(": _TUPLE, "{": _DICT}
_JSON_CLOSER = {_CALL: "}", _LIST: "]", _TUPLE: "]", _DICT: "}"}

_WORD_RUN = re.compile(r"\w*")  # (\w: str.isalnum() or "_", the same test)
_SPACES = re.compile(r"\s*")  # (\s: str.isspace(), the same test)
_SPACE_CHARS = frozenset(filter(str.isspace, map(chr, range(0x3001))))  # (str.isspace's characters: all below U+3001)
_DQ_TEXT = re.compile(r'[^"\\]*')  # a one-quote string's text up to its quote or a backslash
_SQ_TEXT = re.compile(r"[^'\\]*")
_TEXT_RUN = {'"': _DQ_TEXT, "'": _SQ_TEXT}
_NAME_RUN = re.compile(r"[\w.-]*")
#: A call's head whole, ``name(key=`` or ``name()`` (groups: name, ")", key, "="), or a prefix of one: what the
#: head's steps read, for an ASCII name start (others go through the steps); waited for up to _HEAD_WAIT characters.
_HEAD_RE = re.compile(r"\s*(?:([A-Za-z_][\w.-]*)\s*(?:\(\s*(?:(\))|([A-Za-z_]\w*)\s*(=)?)?)?)?")
_HEAD_WAIT = 128
#: _HEAD_RE's text before its ")" or "=" (no groups): the whole unread text a prefix of a head.
_HEAD_PREFIX = re.compile(r"\s*(?:[A-Za-z_][\w.-]*\s*(?:\(\s*(?:[A-Za-z_]\w*\s*)?)?)?")
_NUMBER_RUN = re.compile(r"[0-9A-Za-z_.+\-]*")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?(?:[0-9]+|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)")
_CONSTANTS = {"True": "true", "False": "false", "None": "null"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_OCTAL = frozenset("01234567")
#: What ends the text of a string value, per quote.
_STRING_ENDS = {q: markers(q, "\\") for q in ("'", '"', "'''", '"""')}
_HEX = frozenset("0123456789abcdefABCDEF")


def _python_number(text: str) -> str | None:
    """A Python number literal as JSON text, or ``None`` when it is none (or not finite)."""
    plain = text.replace("_", "")
    try:
        if _INTEGER.fullmatch(plain):
            return str(int(plain, 0) if not plain.lstrip("+-").isdigit() else int(plain))
        if _DECIMAL.fullmatch(plain):
            value = float(plain)
            return repr(value) if math.isfinite(value) else None  # (json.dumps's text of a finite float)
    except ValueError:  # digits past Python's int-conversion limit
        return None
    return None


def _char_json(ch: str) -> str:
    """One decoded character as the inside of a JSON string (a lone surrogate stays an escape)."""
    return "\\u%04x" % ord(ch) if SURROGATE.match(ch) else json_fragment(ch)


def _is_name_start(c: str) -> bool:
    return c.isalpha() or c == "_"


@register("llama4_pythonic")
class Llama4PythonicParser(_AfterCall, ToolParser):
    """Streaming parser of Llama 4 pythonic tool calls; see the module docstring for the rules.

    Arguments stream as JSON text ``{"key": value, ...}``; a string value
    streams as JSON-escaped pieces while it arrives. Never raises on model
    output.
    """

    def __init__(self) -> None:
        super().__init__()
        self._state = _CONTENT
        # (base's _head_parts: the head text, content if it starts no call; _head_len: its length)
        self._head_len = 0
        self._step = _H_NAME0
        self._first = True            # the head of a list's first call
        self._word = ""               # name, key, number or constant being read (at most MAX_HEAD + 1)
        self._role = "value"          # what the word / number / string is: value, key (call) or dict-key
        self._name = ""
        self._stack: list[str] = []
        self._expect = _E_VALUE
        self._can_close = False       # the container may close here (just opened, or after a comma)
        self._pending = ""            # JSON text still to send, with the next piece: a comma, a key, its ": "
        self._quote = ""
        # (base's _confirm_ws: whitespace after a call, as run lengths)

    def _s_content(self, final: bool) -> bool:
        sc = self.scanner
        text, marker = sc.find(_M_LIST_CONTENT, final)
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        if marker == "[":
            self._open_head("[", first=True)
            return True
        return True  # a python_start/end token: dropped

    # ------------------------------------------------------------------ the head
    def _open_head(self, raw: str, first: bool) -> None:
        self._head_parts = [raw]
        self._head_len = 0
        self._step = _H_NAME0
        self._first = first
        self._word = ""
        self._state = _HEAD

    def _no_call(self) -> bool:
        """The head read so far starts no call: its text is content; read on as content."""
        self._emit_content("".join(self._head_parts))
        self._head_parts = []
        self._state = _CONTENT
        return True

    def _s_head(self, final: bool) -> bool:
        """Read head characters of the unread text: up to one more than a head may hold (the check below
        sees the character that makes it too long), from one bounded slice of the scanner's buffer (peek
        and take written out); a run of name or key characters is read in one match, within the bound."""
        sc = self.scanner
        pos = sc._pos
        buf = sc._buf
        if self._step == _H_NAME0 and not self._head_len:  # nothing read yet: the common head, matched whole
            if not final and len(buf) - pos <= _HEAD_WAIT:  # no "=" nor ")" yet: a prefix waits (a lighter pattern)
                text = buf[pos:]
                if "=" not in text and ")" not in text and _HEAD_PREFIX.fullmatch(text) is not None:
                    return False
            hit = _HEAD_RE.match(buf, pos, pos + MAX_HEAD + 1)
            last = hit.lastindex  # (the groups close in order: the last one read tells the head's form)
            if last == 4:  # name(key=
                self._word = hit.group(3)
                self._name = hit.group(1)
                return self._head_key_done(sc, hit.end())
            if last == 2:  # name()
                self._name = hit.group(1)
                return self._head_empty_call(sc, hit.end())
            end = hit.end()
            if end == len(buf) and not final and end - pos <= _HEAD_WAIT:
                return False  # a prefix of it: wait for the rest (the steps below would hold it too)
        text = buf[pos:pos + MAX_HEAD + 2 - self._head_len]
        parts = self._head_parts
        i = 0
        n = len(text)
        while True:
            if i == n:  # (every unread character read: the end of the buffer)
                sc._pos = pos + i
                return self._no_call() if final else False
            c = text[i]
            if self._head_len >= MAX_HEAD + 1:
                sc._pos = pos + i
                return self._no_call()
            step = self._step
            if step == _H_NAME or step == _H_KEY:
                if c.isalnum() or c == "_" or (step == _H_NAME and c in ".-"):  # the run from here, in one match
                    j = (_NAME_RUN if step == _H_NAME else _WORD_RUN).match(
                        text, i, i + MAX_HEAD + 1 - self._head_len).end()
                    piece = text[i:j]
                    self._word += piece
                    parts.append(piece)
                    self._head_len += j - i
                    i = j
                    continue
                if step == _H_NAME:
                    if c == "(" or c.isspace():
                        self._name = self._word
                        self._step = _H_KEY0 if c == "(" else _H_PAREN
                    else:
                        sc._pos = pos + i
                        return self._no_call()
                elif c == "=":
                    return self._head_key_done(sc, pos + i + 1)
                elif c.isspace():
                    self._step = _H_EQ
                else:
                    sc._pos = pos + i
                    return self._no_call()
            elif step == _H_NAME0:
                if c.isspace():
                    pass
                elif c.isalpha() or c == "_":  # (_is_name_start): the name's run from here
                    self._word = ""
                    self._step = _H_NAME
                    continue
                elif c == "]" and not self._first:  # a trailing comma: the list ends
                    self._head_parts = []
                    self._state = _CONTENT
                    sc._pos = pos + i + 1
                    return True
                else:
                    sc._pos = pos + i
                    return self._no_call()
            elif step == _H_PAREN:
                if c == "(":
                    self._step = _H_KEY0
                elif not c.isspace():
                    sc._pos = pos + i
                    return self._no_call()
            elif step == _H_KEY0:
                if c == ")":
                    return self._head_empty_call(sc, pos + i + 1)
                if c.isalpha() or c == "_":  # (_is_name_start): the key's run from here
                    self._word = ""
                    self._step = _H_KEY
                    continue
                if not c.isspace():
                    sc._pos = pos + i
                    return self._no_call()
            else:  # _H_EQ
                if c == "=":
                    return self._head_key_done(sc, pos + i + 1)
                if not c.isspace():
                    sc._pos = pos + i
                    return self._no_call()
            i += 1
            parts.append(c)
            self._head_len += 1

    def _head_empty_call(self, sc: MarkerScanner, pos: int) -> bool:
        """The head's ``)`` was read (the scanner goes on at ``pos``): a call without arguments."""
        sc._pos = pos
        self._head_parts = []
        self._begin_call(self._name)
        self._emit_arguments("{}")
        self._end_call()
        self._confirm_ws.clear()
        self._state = _AFTER_CALL
        return True

    def _head_key_done(self, sc: MarkerScanner, pos: int) -> bool:
        """The head's ``=`` was read (the scanner goes on at ``pos``): the call starts, its arguments with the key."""
        sc._pos = pos
        self._head_parts = []
        self._begin_call(self._name)
        self._stack = [_CALL]
        self._expect = _E_VALUE
        self._can_close = False
        self._pending = "{" + json_string(self._word) + ": "  # (sent with the value's first piece)
        self._state = _ARGS
        return True

    # ------------------------------------------------------------------ arguments
    def _malformed(self, word: str = "", final: bool = False) -> bool:
        """The started call is malformed (broken): abandon it; content goes on from here.

        ``word``: the bad word or number just read, content too (DESIGN.md: nothing the model
        wrote is lost), unless the end of the output cut it (``final``).
        """
        self._abandon_call()
        if word and not self._cut_by_end(final):
            self._emit_content(word)
        self._stack = []
        self._state = _CONTENT
        return True

    def _open(self, kind: str) -> None:
        self.scanner._pos += 1  # (its one character, peeked: take(1) written out)
        self._stack.append(kind)
        self._emit_arguments("{" if kind == _DICT else "[")
        self._expect = _E_KEY if kind == _DICT else _E_VALUE
        self._can_close = True
        self._pending = ""

    def _start_run(self, state: str, role: str) -> bool:
        self._word = ""
        self._role = role
        self._state = state
        return True

    def _s_args(self, final: bool) -> bool:
        """The arguments: one token a turn, in a loop while the state stays ``_ARGS`` (no driver turn a token).

        The same method is state ``_ARG_TEXT``: the text of a one-quote string a delta cut (the common
        steps of :meth:`_s_string`), so a delta in which the string ends reads on here, with no second
        state run. A token whole in the buffer is read in one match; a word, number or lone opening quote
        the end of the buffer cuts is left unread (at most ``MAX_HEAD`` characters, read again whole with
        the next delta). The scanner's buffer is read directly (skip_whitespace, peek and take written
        out: the per-delta path).
        """
        sc = self.scanner
        buf = sc._buf
        if self._state == _ARG_TEXT:
            if final:  # the output ends inside the string: state _STRING decides
                self._state = _STRING
                return True
            pos = sc._pos
            quote = self._quote
            text = buf[pos:]
            if "\\" not in text:  # (no escape: the text and its end seen without a pattern run)
                if quote not in text:  # the common piece: text to the end of the buffer
                    sc._pos = len(buf)
                    if text:
                        self._emit_arguments(json_string(text)[1:-1])  # (json_fragment written out)
                    return False
                end = text.find(quote)
                sc._pos = pos + end + 1
                closed = json_string(text[:end])[1:]
            else:
                run = _TEXT_RUN[quote]
                closed = self._string_run(buf, pos, run.match(buf, pos).end(), run)
                if closed is None:
                    if sc._pos == len(buf):
                        return False
                    self._state = _STRING  # a longer escape (or a backslash ending the text): state _STRING reads it
                    return True
            self._state = _ARGS  # the string closed (_string_done, written out)
            if self._role == "value":
                self._emit_arguments(closed)
                self._expect = _E_AFTER
            else:  # a dict key's last piece: sent with its value
                self._pending = closed
                self._expect = _E_SEP
        stack = self._stack
        pos = sc._pos  # (the position, kept here while tokens are read: the scanner's is set on leaving)
        while True:
            c = buf[pos:pos + 1]
            if c in _SPACE_CHARS:  # (sc.skip_whitespace(), written out; one space without a pattern run)
                pos += 1
                c = buf[pos:pos + 1]
                if c in _SPACE_CHARS:
                    pos = _SPACES.match(buf, pos).end()
                    c = buf[pos:pos + 1]
            if not c:
                sc._pos = pos
                return self._malformed() if final else False
            top = stack[-1]
            expect = self._expect
            if expect == _E_AFTER:  # after a value: a comma, or its container's closer
                if c == ",":
                    pos += 1
                    self._pending = ", "
                    self._can_close = True
                    self._expect = _E_KEY if top == _CALL or top == _DICT else _E_VALUE
                    continue
                if c != _CLOSER[top]:
                    sc._pos = pos
                    return self._malformed()
            elif expect >= _E_SEP:  # (a call's key and an identifier dict key take '=', other dict keys ':')
                if c != ("=" if expect == _E_SEP_EQ else ":"):
                    sc._pos = pos
                    return self._malformed()
                pos += 1
                self._pending += ": "
                self._expect = _E_VALUE
                continue
            elif not (self._can_close and c == _CLOSER[top]):  # a token starts: not its container's closer
                if expect == _E_KEY and top == _CALL:
                    if not (c.isalpha() or c == "_"):  # (_is_name_start)
                        sc._pos = pos
                        return self._malformed()
                    end = _WORD_RUN.match(buf, pos, pos + MAX_HEAD + 1).end()
                    if end - pos <= MAX_HEAD:
                        if end < len(buf):  # the key whole: its JSON text goes out with its value
                            self._can_close = False
                            self._pending += json_string(buf[pos:end])
                            self._expect = _E_SEP_EQ
                            pos = end
                            continue
                        if not final:  # the buffer cut it: left unread
                            sc._pos = pos
                            return False
                    sc._pos = pos
                    if self._pending:  # (too long, or cut by the end of the output: state _WORD decides)
                        self._emit_arguments(self._pending)
                        self._pending = ""
                    self._can_close = False
                    return self._start_run(_WORD, "key")
                # an element (a dict key, a list's value, a call's or dict's value) starts; the pending text
                # (a comma, a key and its separator) goes out with its first piece
                role = "dict-key" if expect == _E_KEY else "value"
                if c == '"' or c == "'":  # a one-quote string with text (not '' nor a triple quote)
                    if len(buf) - pos <= 16 and not final:  # a short rest: a string it cuts, seen without a pattern run
                        text = buf[pos + 1:]
                        if text and c not in text and "\\" not in text:
                            sc._pos = len(buf)
                            self._can_close = False
                            self._emit_arguments(self._pending + '"' + json_string(text)[1:-1])
                            self._pending = ""
                            self._quote = c
                            self._role = role
                            self._state = _ARG_TEXT
                            return False
                    end = (_DQ_TEXT if c == '"' else _SQ_TEXT).match(buf, pos + 1).end()
                    if end > pos + 1:
                        if end < len(buf) and buf[end] == c:  # whole: its JSON string
                            self._can_close = False
                            if role == "value":
                                self._emit_arguments(self._pending + json_string(buf[pos + 1:end]))
                                self._pending = ""
                                self._expect = _E_AFTER
                            else:
                                self._pending += json_string(buf[pos + 1:end])
                                self._expect = _E_SEP
                            pos = end + 1
                            continue
                        if end == len(buf) and not final:  # its text so far; the rest in state _ARG_TEXT
                            sc._pos = end
                            self._can_close = False
                            self._emit_arguments(self._pending + '"' + json_string(buf[pos + 1:end])[1:-1])
                            self._pending = ""
                            self._quote = c
                            self._role = role
                            self._state = _ARG_TEXT
                            return False
                    elif end == len(buf) and not final:  # the quote ends the buffer: left unread
                        sc._pos = pos
                        return False
                elif c.isalpha() or c == "_":  # a constant, or a dict key's identifier
                    end = _WORD_RUN.match(buf, pos, pos + MAX_HEAD + 1).end()
                    if end - pos <= MAX_HEAD:
                        if end < len(buf):
                            word = buf[pos:end]
                            constant = _CONSTANTS.get(word)
                            if role == "value":
                                if constant is not None:
                                    self._can_close = False
                                    self._emit_arguments(self._pending + constant)
                                    self._pending = ""
                                    self._expect = _E_AFTER
                                    pos = end
                                    continue
                            else:
                                self._can_close = False
                                self._pending += '"' + constant + '"' if constant else json_string(word)
                                self._expect = _E_SEP if constant else _E_SEP_EQ
                                pos = end
                                continue
                        elif not final:  # cut by the buffer: left unread
                            sc._pos = pos
                            return False
                elif c.isdigit() or c in "+-.":
                    end = _NUMBER_RUN.match(buf, pos, pos + MAX_HEAD + 1).end()
                    if end - pos <= MAX_HEAD:
                        if end < len(buf):
                            word = buf[pos:end]  # (_python_number's answer for plain digits: the digits)
                            number = word if word.isdigit() and (word[0] != "0" or end - pos == 1) \
                                else _python_number(word)
                            if number is not None:
                                self._can_close = False
                                if role == "value":
                                    self._emit_arguments(self._pending + number)
                                    self._pending = ""
                                    self._expect = _E_AFTER
                                else:
                                    self._pending += '"' + number + '"'
                                    self._expect = _E_SEP
                                pos = end
                                continue
                        elif not final:  # cut by the buffer: left unread
                            sc._pos = pos
                            return False
                elif role == "value" and (c == "[" or c == "{" or c == "("):  # a container opens (_open, written out)
                    kind = _OPENS[c]
                    stack.append(kind)
                    self._emit_arguments(self._pending + ("{" if kind == _DICT else "["))
                    self._pending = ""
                    self._expect = _E_KEY if kind == _DICT else _E_VALUE
                    self._can_close = True
                    pos += 1
                    continue
                sc._pos = pos
                if self._pending:  # the other tokens: their states read them, the pending text sent first
                    self._emit_arguments(self._pending)
                    self._pending = ""
                self._can_close = False
                self._value_start(c, role)
                if self._state != _ARGS:
                    return True
                pos = sc._pos
                continue
            # the container's closer (_close, written out); a trailing comma is dropped
            pos += 1
            kind = stack.pop()
            self._pending = ""
            self._can_close = False
            if kind == _CALL:
                self._emit_arguments("}")
                self._end_call()
                if self._confirm_ws.runs:
                    self._confirm_ws.clear()
                if buf[pos:pos + 1] == ",":  # the next call's comma (_s_after_call's common case and _open_head,
                    sc._pos = pos + 1          # written out)
                    self._head_parts = [","]
                    self._head_len = 0
                    self._step = _H_NAME0
                    self._first = False
                    self._word = ""
                    self._state = _HEAD
                    return True
                sc._pos = pos
                self._state = _AFTER_CALL
                return True
            self._emit_arguments(_JSON_CLOSER[kind])
            self._expect = _E_AFTER

    _s_arg_text = _s_args  # (state _ARG_TEXT: the same method)

    def _value_start(self, c: str, role: str) -> bool:
        if c == "'" or c == '"':
            self.scanner._pos += 1  # (c, peeked)
            self._quote = c
            self._role = role
            self._state = _OPEN_QUOTE
            return True
        if c.isdigit() or c in "+-.":
            return self._start_run(_NUMBER, role)
        if _is_name_start(c):
            return self._start_run(_WORD, role)
        if role == "value" and c in "[({":
            self._open(_OPENS[c])
            return True
        return self._malformed()

    def _read_run(self, pattern: re.Pattern, final: bool) -> str | None:
        """Read a word or number run (at most ``MAX_HEAD + 1`` characters); its text once it ended, else ``None``."""
        sc = self.scanner
        room = MAX_HEAD + 1 - len(self._word)
        if room > 0:  # one match within the bound, on the buffer (endpos: no slice)
            buf, pos = sc._buf, sc._pos
            end = pattern.match(buf, pos, pos + room).end()
            if end > pos:
                sc._pos = end
                self._word += buf[pos:end]  # (bounded: at most MAX_HEAD + 1 characters in all)
            if end == len(buf) and not final:  # the buffer ended inside the run (or at the bound): wait
                return None
        return self._word

    def _s_word(self, final: bool) -> bool:
        sc = self.scanner  # (self._read_run(_WORD_RUN, final), written out: a word the delta cut goes on here)
        word = self._word
        room = MAX_HEAD + 1 - len(word)
        if room > 0:
            buf, pos = sc._buf, sc._pos
            end = _WORD_RUN.match(buf, pos, pos + room).end()
            if end > pos:
                sc._pos = end
                word = self._word = word + buf[pos:end]
            if end == len(buf) and not final:
                return False
        self._state = _ARGS
        if len(word) > MAX_HEAD:
            return self._malformed(word)
        role = self._role
        if role == "value":
            if word not in _CONSTANTS:
                return self._malformed(word, final)
            self._emit_arguments(_CONSTANTS[word])
            self._expect = _E_AFTER
        elif role == "key":
            self._pending = '"' + json_fragment(word) + '"'
            self._expect = _E_SEP_EQ
        else:  # a dict key: a constant (':' follows) or an identifier ('=' follows, the reference encoder's form)
            constant = _CONSTANTS.get(word)
            self._pending = '"' + (constant or json_fragment(word)) + '"'
            self._expect = _E_SEP if constant else _E_SEP_EQ
        return True

    def _s_number(self, final: bool) -> bool:
        text = self._read_run(_NUMBER_RUN, final)
        if text is None:
            return False
        self._state = _ARGS
        number = _python_number(text) if len(text) <= MAX_HEAD else None
        if number is None:
            return self._malformed(text, final)
        if self._role == "value":
            self._emit_arguments(number)
            self._expect = _E_AFTER
        else:
            self._pending = '"' + number + '"'
            self._expect = _E_SEP
        return True

    # ------------------------------------------------------------------ strings
    def _s_open_quote(self, final: bool) -> bool:
        """Just after an opening quote: an empty string, a triple-quoted one, or a one-quote one."""
        sc = self.scanner
        q = self._quote
        ahead = sc.peek(2)
        if ahead[:1] == q and (len(ahead) == 2 or final):
            if ahead == q + q:
                sc.take(2)
                self._quote = q * 3
                self._emit_arguments('"')
                self._state = _STRING
                return True
            sc.take(1)  # '' or "": the empty string
            self._emit_arguments('""')
            return self._string_done()
        if not ahead or ahead == q:
            return self._malformed() if final else False
        self._emit_arguments('"')
        self._state = _STRING
        return True

    def _string_run(self, buf: str, pos: int, end: int, run: "re.Pattern[str]") -> str | None:
        """A one-quote string's text from ``pos`` (``end``: where ``run``'s first match of text ends).

        Reads runs of text and one-character escapes. Returns the JSON text of what was read with
        the closing quote (the scanner past it) when the string closed; else sends what was read
        and returns None, the scanner at the buffer's end or at an escape longer than one
        character (a backslash that ends the text included).
        """
        sc = self.scanner
        quote = self._quote
        parts = []
        while True:
            if end > pos:
                parts.append(buf[pos:end])
            if end < len(buf):
                if buf[end] == quote:
                    sc._pos = end + 1
                    return json_string("".join(parts))[1:]
                simple = SIMPLE_ESCAPES.get(buf[end + 1:end + 2])
                if simple is not None:
                    parts.append(simple)
                    pos = end + 2
                    end = run.match(buf, pos).end()
                    continue
            sc._pos = end
            if parts:
                self._emit_arguments(json_string("".join(parts))[1:-1])  # (json_fragment written out)
            return None

    def _string_done(self) -> bool:
        self._state = _ARGS
        if self._role == "value":
            self._expect = _E_AFTER
        else:
            self._pending = ""
            self._expect = _E_SEP
        return True

    def _s_string(self, final: bool) -> bool:
        sc = self.scanner
        quote = self._quote
        run = _TEXT_RUN.get(quote)
        if run is not None and not final:  # a one-quote string: runs of text and one-character escapes, by match
            buf, pos = sc._buf, sc._pos
            end = run.match(buf, pos).end()
            if end == len(buf):  # the common piece: text to the end of the buffer
                sc._pos = end
                if end > pos:
                    self._emit_arguments(json_string(buf[pos:end])[1:-1])  # (json_fragment written out)
                return False
            closed = self._string_run(buf, pos, end, run)
            if closed is not None:
                self._emit_arguments(closed)
                return self._string_done()
            if sc._pos == len(buf):
                return False
            # a longer escape, or the text ends at the backslash: read below
        ends = _STRING_ENDS[quote]
        text, marker = sc.find(ends, final)
        if marker is None and not final:  # the common piece: string text, streamed
            if text:
                self._emit_arguments(json_string(text)[1:-1])  # (json_fragment written out)
            return False
        if marker == quote:  # the string ends with no escape before it: its text and the closing quote, sent
            self._emit_arguments(json_string(text)[1:])  # its text and the closing quote (json_fragment written out)
            return self._string_done()
        sc.unread(len(text) + len(marker or ""))
        parts: list[str] = []
        try:
            while True:
                text, marker = sc.find(ends, final)
                if text:
                    parts.append(text)
                if marker is None:
                    if final:
                        return self._malformed()  # the output ended inside the string
                    return False
                if marker == quote:
                    self._flush_string(parts)
                    self._emit_arguments('"')
                    return self._string_done()
                c = sc.peek(1)
                simple = SIMPLE_ESCAPES.get(c)
                if simple is not None:
                    sc.take(1)
                    parts.append(simple)
                    continue
                self._state = _ESCAPE
                return True
        finally:
            self._flush_string(parts)

    def _flush_string(self, parts: list[str]) -> None:
        if parts:
            self._emit_arguments(json_fragment("".join(parts)))
            parts.clear()

    def _s_escape(self, final: bool) -> bool:
        """After a backslash that the string loop could not decide (the text ended there, or a longer escape)."""
        sc = self.scanner
        c = sc.peek(1)
        if not c:
            return self._malformed() if final else False
        simple = SIMPLE_ESCAPES.get(c)
        if simple is not None:
            sc.take(1)
            self._emit_arguments(json_fragment(simple))
        elif c in _HEX_ESCAPES:
            n = _HEX_ESCAPES[c]
            digits = sc.peek(1 + n)[1:]
            if len(digits) < n and not final and sc.pending() < 1 + n and all(d in _HEX for d in digits):
                return False
            if len(digits) < n or not all(d in _HEX for d in digits) or int(digits, 16) > 0x10FFFF:
                return self._malformed()
            sc.take(1 + n)
            self._emit_arguments(_char_json(chr(int(digits, 16))))
        elif c in _OCTAL:
            digits = sc.peek(3)
            k = 0
            while k < len(digits) and digits[k] in _OCTAL:
                k += 1
            if k == len(digits) < 3 and not final:
                return False
            sc.take(k)
            self._emit_arguments(_char_json(chr(int(digits[:k], 8))))
        else:  # an unknown escape keeps its backslash
            sc.take(1)
            self._emit_arguments(json_fragment("\\" + c))
        self._state = _STRING
        return True

    # ------------------------------------------------------------------ after a call
    def _s_after_call(self, final: bool) -> bool:
        sc = self.scanner
        pos = sc._pos
        if sc._buf[pos:pos + 1] == "," and not self._confirm_ws.runs:  # the common case: the next call's comma
            sc._pos = pos + 1
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
