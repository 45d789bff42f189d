"""The one incremental reader of Python literals of JSON data (``['a', 'b']``, ``{'k': (1, True, None)}``).

Models write a list or dict parameter as a Python literal in the XML-style
formats (Qwen3-Coder, GLM, MiniMax, Gemma 4) and Llama 4 writes whole calls
in Python syntax. What a literal may hold is :func:`read_python_literal`'s
rule (strings in single or double quotes with Python's escapes, finite ints
and floats, ``True``/``False``/``None`` and JSON's ``true``/``false``/``null``,
lists and tuples (as lists; ``(x)`` without a comma is ``x``, as Python reads
it), dicts with string keys, a trailing comma inside brackets, at most
:data:`MAX_LITERAL_DEPTH` deep; after the value, whitespace of any kind
``str.strip`` removes).

:class:`PyLiteralReader` reads it from pieces as they arrive (``feed``),
keeping only the container stack, the value built so far, the JSON text of
the value built so far, and an undecided tail of at most a few characters
(a partial escape, number or word): each character is looked at once, so the
cost of a long value is spread over the increments that bring it, and
:meth:`PyLiteralReader.end` only joins. Never raises on model text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .jsonscan import SURROGATE, finite_float  # (SURROGATE: the one pattern, re-exported)
from .scanner import markers

__all__ = ["MAX_LITERAL_DEPTH", "PyLiteralReader", "read_python_literal", "SIMPLE_ESCAPES", "unescape",
           "PyArgumentReader", "member_state", "member_head_pattern", "PY_CONSTANTS", "python_number", "char_json",
           "long_escape"]

#: Deepest nesting of brackets a literal may have.
MAX_LITERAL_DEPTH = 256

_MISSING = object()

#: Python's one-character string escapes (``\\n`` ...); ``\\<newline>`` is a line continuation (and so is a
#: backslash before CR or CRLF, which Python's tokenizer reads as a newline: :func:`unescape`, :func:`long_escape`).
SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
                  "f": "\f", "v": "\v", "\n": ""}
#: The escapes JSON has (RFC 8259 7: ``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX``), by their first letter:
#: any other escape rules JSON out (:attr:`PyLiteralReader.maybe_json`).
_JSON_ESCAPES = '"\\/bfnrtu'
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|\n|\r\n?|.)", re.DOTALL)
_LONGEST_ESCAPE = 10  # \U0010FFFF
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<punct>[\[\](){},:])
  | (?P<quote>['"])
  | (?P<num>[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?)
  | (?P<word>True|False|None|true|false|null)
""", re.VERBOSE)
_PUNCT = frozenset("[](){},:")
_QUOTE = '"'
_NUMBERISH = re.compile(r"[-+0-9_.eE]*")
_NUMBER_GOES_ON = frozenset("-+_.eE")  # (after its digits: a character _NUMBERISH reads on)
_RUN = {"'": re.compile(r"[^'\\]*"), '"': re.compile(r'[^"\\]*')}
_WORDS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
_WORD_PREFIXES = frozenset(w[:k] for w in _WORDS for k in range(1, len(w)))
_CLOSERS = {"[": "]", "(": ")", "{": "}"}
_MAX_TAIL = 5000  # a number longer than this is no literal Python reads (4300 digits)


def unescape(m: "re.Match[str]") -> str:
    """The character(s) of one Python string escape (a match of ``_ESCAPE``); raises ``ValueError`` out of range."""
    e = m.group(1)
    if e in SIMPLE_ESCAPES:
        return SIMPLE_ESCAPES[e]
    if e[0] == "\r":  # a line continuation over CR or CRLF (Python reads either as a newline)
        return ""
    if e[0] in "xuU":
        code = int(e[1:], 16)
        if code > 0x10FFFF:
            raise ValueError("escape out of range")
        return chr(code)
    if e[0] in "01234567":
        return chr(int(e, 8))
    return "\\" + e  # Python keeps an unknown escape as written


#: The one-character escapes: (character, its JSON text, whether JSON has the escape).
_SIMPLE_JSON = {e: (c, json.encoder.encode_basestring(c)[1:-1], e in _JSON_ESCAPES and e != "\n")
                for e, c in SIMPLE_ESCAPES.items()}
_PLAIN_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")  # the common number: no underscore, point or exponent


def _escape_cut(buf: str, pos: int) -> bool:
    """Whether the escape at ``buf[pos]`` (a backslash) may go on past the end of ``buf`` (a backslash alone, or
    a hex, octal or CR escape shorter than its longest form): only then is it held for the next piece."""
    if pos + 1 >= len(buf):
        return True
    if buf[pos + 1] in SIMPLE_ESCAPES:
        return False
    try:
        return long_escape(buf[pos + 1:pos + _LONGEST_ESCAPE], False) is None
    except ValueError:  # (no escape: the reader's own escape rule rejects it)
        return False


def _number(text: str) -> int | float:
    if _PLAIN_INT.fullmatch(text) is not None:
        return int(text)  # at most 4300 digits (Python's own limit), else ValueError
    if "__" in text or text.endswith("_") or "_." in text or "._" in text:
        raise ValueError(text)
    body = text.replace("_", "")
    if "." in body or "e" in body or "E" in body:
        return finite_float(body)
    digits = body.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0":
        raise ValueError(text)  # 007 is no Python literal
    return int(body)  # at most 4300 digits (Python's own limit), else ValueError


_encode_string = json.encoder.encode_basestring  # json.dumps(str, ensure_ascii=False)


def _json_piece(text: str) -> str:
    """Characters of a string as the inside of its JSON text (json_text's, without the quotes): pieces of a
    string so written join to the whole string's.

    Printable characters other than ``"`` and ``\\`` are their own JSON text (``str.isprintable`` is False for
    the control characters JSON escapes, and for lone surrogates): the hot paths test that first, as it costs
    a third of the encoder's call and slice.
    """
    piece = _encode_string(text)[1:-1]
    if piece.isascii() or SURROGATE.search(piece) is None:  # (isascii: a flag of the string, no scan)
        return piece
    return SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), piece)


def json_text(value: Any) -> str:
    """``value`` as JSON text, non-ASCII characters as themselves, except surrogates.

    A value decoded from JSON may hold a lone surrogate (from an escape such
    as ``"\\ud800"``, which ``json.loads`` accepts); written raw it would make
    the arguments text impossible to encode as UTF-8, so it stays escaped.
    What a client decodes is the same value.
    """
    kind = type(value)
    if kind is int:
        return int.__repr__(value)  # (json.dumps' text for an int, without building an encoder)
    if kind is float and value - value == 0:  # (a finite float: json.dumps writes float.__repr__)
        return float.__repr__(value)
    text = _encode_string(value) if kind is str else json.dumps(value, ensure_ascii=False)
    return SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text) if SURROGATE.search(text) else text


class PyLiteralReader:
    """Reads one Python literal from pieces: :meth:`feed` each piece, then :meth:`end`.

    ``end()`` returns ``(True, value)`` or ``(False, None)``; :attr:`json` is
    then the value's JSON text (``json.dumps(value, ensure_ascii=False)``
    with surrogates escaped), written as the value was read. :attr:`maybe_json`
    is False once the text used syntax JSON lacks (single quotes, a tuple,
    ``True``/``None``, a trailing comma, ``+``/``_``/``.5`` numbers,
    Python-only escapes): a caller that tries strict JSON first may skip it.
    It never goes False on text JSON reads (every JSON escape, ``\\/`` too, keeps
    it), so a caller reading "JSON, else a Python literal" gets the same value
    from a streamed reader as from the whole text (``docs/formats.md``,
    "Schema typing": a value is JSON or a Python literal as a whole).
    :attr:`as_json` stays True while the value read is also what ``json.loads``
    gives for the same text (when it is JSON): it goes False at the escapes
    the two read apart, ``\\/`` and an escaped surrogate (JSON joins a pair).
    """

    __slots__ = ("_stack", "_result", "_tail", "_quote", "_parts", "_out", "failed", "_exact", "_done", "maybe_json",
                 "as_json", "json", "_broke_at", "closed", "_member", "_member_out", "member_head",
                 "_keep", "_nested", "held_before", "_text_quote")

    def __init__(self, member: str | None = None) -> None:
        # stack entries: [container, closer, pending key, expecting, has items(, the JSON pieces outside it)];
        # expecting is "value", "sep" (a , or the closer), "colon" (dicts), "key" (dicts); a tuple and the
        # streamed member write their JSON text into pieces of their own (the outer ones kept on their entry)
        self._stack: list[list] = []
        self._result: Any = _MISSING
        self._tail = ""
        self._quote = ""              # inside a string: its quote
        self._parts: list[str] = []   # the string's characters so far
        self._out: list[str] = []     # the JSON text so far (pieces)
        self._done: list[str] = []    # ... and before them, joined a few dozen pieces at a time
        self.failed = False  # the text read so far stopped being a literal
        self.closed = False  # a whole value was read (its closing bracket or quote)
        self._broke_at = 0
        self._exact = True
        self.maybe_json = True
        self.as_json = True
        self.json = ""
        self._member = member         # the top-level dict's key whose dict value streams (take_member)
        self._member_out: list[str] | None = None  # (made when the member opens)
        #: The top-level dict's members read before the streamed member's value opened (a new dict), else None.
        self.member_head: dict | None = None
        self._keep = True             # string values kept (False: the member streams, its value is not built)
        self._nested = 0              # pieces of their own open (a tuple's, the member's)
        #: The unread end of the pieces fed before the last :meth:`feed` (a word, number or escape that may go
        #: on: at most ``_MAX_TAIL`` characters); a negative answer of :meth:`feed` counts back into it.
        self.held_before = ""
        # the quote of the member's string the reader is directly in, with nothing held and no value built
        # (member_state's fast path: a piece without this quote or a backslash is its own JSON text), else ""
        self._text_quote = ""

    def take_member(self) -> str:
        """The JSON text of the streamed member's dict value read since the last call, and from now on that
        value is not built (:meth:`end`'s value holds no strings of it, :attr:`json` is rewritten from the value).

        The member (the constructor's ``member``): the first member of the top-level dict under that key
        whose value is a dict; its text starts at its ``{`` once :attr:`member_head` is set, and never holds
        its closing ``}``. A string's text comes in pieces as it arrives,
        everything else as it completes; a tuple's text once it closes (``(x)`` is ``x``); a repeated key
        is written as it was read (a JSON decoder keeps the last). ``""`` before the member opened.
        """
        out = self._member_out
        if not out:
            return ""
        if self._keep:
            self._keep = False
            self._exact = False
            self._text_quote = self._quote if not self._tail and self._out is out else ""
        text = out[0] if len(out) == 1 else "".join(out)
        out.clear()
        return text

    def open_member(self, members: dict[str, str], json_like: bool) -> str:
        """A fresh reader (one built with a ``member``, nothing fed) put where :meth:`feed` of the top-level
        dict's head, then :meth:`take_member`, leave it: its ``{``, ``members`` (string keys and values, in
        order), then the streamed member's key, ``:`` and ``{``; returns what ``take_member`` would, ``"{"``.
        :attr:`member_head` is ``members``. For a caller that matched the common head whole
        (:func:`member_head_pattern`); ``json_like``: every string of the head in double quotes (else
        :attr:`maybe_json` goes False, as :meth:`feed` of single quotes makes it). The head's own JSON text is
        not kept: once the member opens, :meth:`end`'s :attr:`json` is written from the value.
        """
        self._stack = [[dict(members), "}", self._member, "value", True], [{}, "}", None, "key", False, self._out]]
        self.member_head = members
        self.maybe_json = json_like
        self._exact = self._keep = False
        self._out = self._member_out = []
        self._nested = 1
        return "{"

    def feed(self, text: str, stop_at_close: bool = False) -> int:
        """The next piece of the literal's text; returns how many of its characters were read.

        All of them, unless ``stop_at_close``: then reading stops right after the bracket (or quote) that
        completes the value, and the characters after it are left unread (the text that follows a literal
        element in a list: ``, {...}]``). :attr:`closed` tells whether the value is complete. When the piece
        stops being a literal (:attr:`failed`), where it stopped: the token that broke it starts there (a
        call's text that breaks into prose: the prose starts there); negative when that token began in the
        pieces before (a word or escape held back at their end: at most a few characters).
        """
        if self.failed or not text:
            return len(text)
        tail = self._tail
        quote = self._quote
        if quote and not tail and quote not in text and "\\" not in text:  # inside a string, no quote or escape
            if self._keep:  # (what _read's string run does, without its frame: a streamed value's delta)
                self._parts.append(text)
            if text.isprintable() and '"' not in text:  # (its JSON text: itself)
                self._out.append(text)
                return len(text)
            piece = _encode_string(text)[1:-1]  # (_json_piece, without its frame)
            self._out.append(piece if piece.isascii() or SURROGATE.search(piece) is None else _json_piece(text))
            return len(text)
        self.held_before = tail
        try:
            end = self._read(tail + text if tail else text, False, stop_at_close)
        except (ValueError, KeyError, IndexError, TypeError, OverflowError):
            return self._broke(tail)
        if not self._nested and len(self._out) > 64:  # so end() joins few pieces: its cost stays small for a long value
            self._done.append("".join(self._out))
            self._out = []
        if not self._keep:  # (a streamed member: is the reader directly in one of its strings?)
            quote = self._quote
            self._text_quote = quote if quote and not self._tail and self._out is self._member_out else ""
        return end - len(tail)

    def _broke(self, tail: str) -> int:
        """The piece just read (after the held ``tail``) stopped being a literal: :meth:`feed`'s answer."""
        self.failed = True
        self._tail = ""
        self._text_quote = ""
        self._out = self._done = []  # (the member's text read before the break stays for take_member)
        return self._broke_at - len(tail)

    def unfinished(self) -> bool:
        """Whether the text read so far still reads as a literal and is inside one of its strings (so it
        cannot end here: any text may follow in a string, while markup outside one is no literal). False
        once the text stopped reading, or when the unread tail (a possible partial escape at the end) may
        close the string: then nothing is known."""
        if self.failed:
            return False
        tail, quote = self._tail, self._quote
        if tail and quote:  # an escape at the end: inside the string unless the tail holds its quote
            i, n = 0, len(tail)
            while i < n:
                c = tail[i]
                if c == "\\":
                    i += 2
                elif c == quote:
                    return False
                else:
                    i += 1
        return bool(quote)

    def end(self) -> tuple[bool, Any]:
        """The text ended: ``(True, value)`` when it was one literal, else ``(False, None)``. Call once."""
        if not self.failed and self._tail:  # (a word or number held at the end: read as ended)
            try:
                self._read(self._tail, True)
            except (ValueError, KeyError, IndexError, TypeError, OverflowError):
                self.failed = True
        if self.failed or self._stack or self._quote or self._result is _MISSING:
            self.failed = True
            self._out = []
            return False, None
        self._done.append("".join(self._out))
        self.json = "".join(self._done) if self._exact else json_text(self._result)
        self._out = self._done = []
        return True, self._result

    # ------------------------------------------------------------------ reading
    def _read(self, buf: str, final: bool, stop: bool = False) -> int:
        """Read ``buf``; returns where reading stopped (``len(buf)``, or with ``stop`` where the value completed)."""
        pos, n = 0, len(buf)
        self._tail = ""
        if stop and self.closed:
            return 0
        stack = self._stack
        try:
            while pos < n:  # (with stop: where a value completed, the reading returns right after it)
                quote = self._quote
                if quote:
                    # the string's run: up to its quote, or a backslash (a str method, not the run's pattern,
                    # when the piece holds no backslash: a pattern's call costs as much as a few dozen steps)
                    if "\\" in buf:
                        end = _RUN[quote].match(buf, pos).end()
                    else:
                        end = buf.find(quote, pos)
                        if end < 0:
                            end = n
                    if end > pos:
                        piece = buf[pos:end]
                        if self._keep:
                            self._parts.append(piece)
                        if piece.isprintable() and '"' not in piece:  # (no backslash: its JSON text is itself)
                            self._out.append(piece)
                        else:
                            text = _encode_string(piece)[1:-1]  # (_json_piece, without its frame)
                            self._out.append(text if text.isascii() or SURROGATE.search(text) is None
                                             else _json_piece(piece))
                        pos = end
                    if pos >= n:
                        break
                    if buf[pos] == quote:  # the string ends: its value (below)
                        pos += 1
                        self._quote = ""
                        parts = self._parts
                        if parts:
                            value = "".join(parts)
                            self._parts = []
                        else:  # (none kept: a streamed member's string)
                            value = ""
                        self._out.append(_QUOTE)
                        top = stack[-1] if stack else None
                        expecting = top[3] if top is not None else ""
                    else:
                        simple = _SIMPLE_JSON.get(buf[pos + 1]) if pos + 1 < n else None
                        if simple is not None:  # a one-character escape (\\n, \\'): its character and JSON text
                            char, piece, json_like = simple
                            if not json_like:
                                self.maybe_json = False
                            if self._keep:
                                self._parts.append(char)
                            self._out.append(piece)
                            pos += 2
                            continue
                        pos = self._escape(buf, pos, n, final)
                        if pos < 0:  # (held: it may go on)
                            return n
                        continue
                else:
                    c = buf[pos]
                    # (the common tokens by their first character, without the token pattern; a string's start and
                    # "," and ":" as _start_value and _punct read them, without their frames)
                    if c == "'" or c == '"':  # (a string starts: the commonest token, tested first)
                        tok = ""
                    elif c == "," or c == ":":
                        if not stack or self._result is not _MISSING:
                            raise ValueError("punctuation outside a container")
                        top = stack[-1]
                        if c == ",":
                            if top[3] != "sep":
                                raise ValueError("misplaced comma")
                            top[3] = "key" if top[0].__class__ is dict else "value"
                        else:
                            if top[3] != "colon":
                                raise ValueError("misplaced colon")
                            top[3] = "value"
                        pos += 1
                        if pos < n and buf[pos] == " ":  # (the space a literal writes after them)
                            pos += 1
                        continue
                    elif c in _PUNCT:
                        if self._result is not _MISSING:
                            raise ValueError("text after the value")
                        self._punct(c)
                        pos += 1
                        if stop and self.closed:
                            return pos
                        continue
                    elif c == " ":
                        pos += 1
                        continue
                    else:  # a plain decimal integer this piece ends (its text its JSON text), else _token's
                        end = pos
                        if "0" <= c <= "9":  # (its digits by comparison: a pattern's call costs more)
                            end += 1
                            while end < n and "0" <= buf[end] <= "9":
                                end += 1
                        if end == n and end > pos and not final and n - pos <= _MAX_TAIL:  # digits to the piece's end:
                            self._tail = buf[pos:]  # held, as _token holds a number that may go on (without its frame)
                            return n
                        tok = buf[pos:end]
                        if not (end < n and tok and buf[end] not in _NUMBER_GOES_ON and (c != "0" or end - pos == 1)
                                and end - pos < 4300):
                            pos = self._token(buf, pos, n, final)
                            if pos < 0:  # (held: it may go on)
                                return n
                            if stop and self.closed:
                                return pos
                            continue
                    # a value (or a dict key) starts: its place checked, the separator before it written
                    # (_start_value's, without its frame)
                    if self._result is not _MISSING:
                        raise ValueError("text after the value")
                    top = stack[-1] if stack else None
                    expecting = ""
                    if top is not None:
                        expecting = top[3]
                        if expecting == "key" or expecting == "value":
                            if top[4] and (expecting == "key" or top[0].__class__ is not dict):
                                self._out.append(", ")
                        else:
                            raise ValueError("two values without a comma")
                    if tok:  # (its value below)
                        if expecting == "key":
                            raise ValueError("a dict key that is not a string")
                        self._out.append(tok)
                        value = int(tok)
                        pos = end
                    else:
                        if c == "'":
                            self.maybe_json = False
                        end = buf.find(c, pos + 1)
                        if end < 0 or "\\" in buf:  # not whole here, or maybe an escape (a backslash in the piece)
                            self._quote = c
                            if end < 0 and "\\" not in buf:  # the rest of the piece is the string's text (the run's)
                                piece = buf[pos + 1:]
                                if piece.isprintable() and '"' not in piece:  # (its JSON text: itself)
                                    self._parts = [piece] if self._keep else []
                                    self._out.append(_QUOTE + piece)
                                    break
                            self._parts = []
                            self._out.append(_QUOTE)
                            pos += 1
                            continue
                        value = buf[pos + 1:end]  # the whole string, no escape: its value (below)
                        piece = _encode_string(value)
                        self._out.append(piece if piece.isascii() or SURROGATE.search(piece) is None
                                         else _QUOTE + _json_piece(value) + _QUOTE)
                        pos = end + 1
                # a string's or integer's value (a dict key, a string's: _value's, without its frame)
                if expecting == "key":
                    if value in top[0]:
                        self._exact = False  # the JSON text written would repeat the key
                    top[2] = value
                    self._out.append(": ")
                    if pos + 1 < n and buf[pos] == ":" and buf[pos + 1] == " ":  # (the ": " after a key: read with it)
                        top[3] = "value"
                        pos += 2
                    else:
                        top[3] = "colon"
                elif top is None:  # (the whole literal a string or an integer: closed)
                    self._value(value, written=True)
                    if stop:
                        return pos
                else:  # a container's value (expected: checked where it started): _value's, without its frame
                    container = top[0]
                    if container.__class__ is dict:
                        container[top[2]] = value
                    else:
                        container.append(value)
                    top[4] = True
                    if pos + 1 < n and buf[pos] == "," and buf[pos + 1] == " ":  # (the ", " after a value)
                        top[3] = "key" if container.__class__ is dict else "value"
                        pos += 2
                    else:
                        top[3] = "sep"
        except (ValueError, KeyError, IndexError, TypeError, OverflowError):
            self._broke_at = pos  # (where the token that broke the literal starts: feed answers it)
            raise
        return n

    def _escape(self, buf: str, pos: int, n: int, final: bool) -> int:
        """The escape at ``buf[pos]`` (a backslash in a string), other than a one-character one: read; the index
        after it, or -1 when it is held (it may go on in the next piece: ``_tail``). Raises ``ValueError`` where it
        is none."""
        if not final and n - pos < _LONGEST_ESCAPE and _escape_cut(buf, pos):  # it may go on
            self._tail = buf[pos:]
            return -1
        m = _ESCAPE.match(buf, pos)
        if m is None:
            raise ValueError("a backslash at the end")
        e = m.group(1)
        if e[0] not in _JSON_ESCAPES or e == "\n":
            self.maybe_json = False
        char = unescape(m)
        if e[0] == "/" or "\ud800" <= char <= "\udfff":
            self.as_json = False  # JSON reads "/" and joins a surrogate pair; Python does neither
        if self._keep:
            self._parts.append(char)
        self._out.append(_json_piece(char))
        return m.end()

    def _token(self, buf: str, pos: int, n: int, final: bool) -> int:
        """A token at ``buf[pos]`` that is no punctuation and no string (whitespace, a number, a word): read; the
        index after it, or -1 when it is held (it may go on in the next piece: ``_tail``). Raises ``ValueError``
        where the text is no literal."""
        c = buf[pos]
        m = _TOKEN.match(buf, pos)
        if m is None:
            if self._result is not _MISSING and c.isspace():
                return pos + 1  # whitespace after the value, of any kind ``str.strip`` removes
            rest = buf[pos:]
            if not final and (rest in _WORD_PREFIXES or (len(rest) < 3 and _NUMBERISH.fullmatch(rest))):
                self._tail = rest
                return -1
            raise ValueError(f"unexpected text at {pos}")
        kind = m.lastgroup
        if kind == "ws":
            return m.end()
        if not final:
            end = _NUMBERISH.match(buf, m.end()).end() if kind == "num" else m.end()
            if end >= n:  # it may go on in the next piece
                if n - pos > _MAX_TAIL:
                    raise ValueError("a number too long")
                self._tail = buf[pos:]
                return -1
        tok = m.group()
        if self._result is not _MISSING:
            raise ValueError("text after the value")
        if kind == "num":
            if "_" in tok or tok[0] in "+." or tok.endswith(".") or ".e" in tok or ".E" in tok:
                self.maybe_json = False
            self._value(_number(tok))
        else:  # a word
            if tok[0] in "TFN":
                self.maybe_json = False
            self._value(_WORDS[tok])
        return m.end()

    def _start_value(self) -> None:
        """A value (or key) starts here: check its place, write the separator before it."""
        stack = self._stack
        if not stack:
            return
        top = stack[-1]
        expecting = top[3]
        if expecting == "value":
            if not isinstance(top[0], dict) and top[4]:
                self._out.append(", ")
        elif expecting == "key":
            if top[4]:
                self._out.append(", ")
        else:
            raise ValueError("two values without a comma")

    def _punct(self, tok: str) -> None:
        stack = self._stack
        top = stack[-1] if stack else None
        if tok in _CLOSERS:
            if top is not None:  # its place checked, the separator before it written (_start_value's, without its frame)
                expecting = top[3]
                if expecting == "value":
                    if top[4] and top[0].__class__ is not dict:
                        self._out.append(", ")
                elif expecting == "key":
                    raise ValueError("a container as a dict key")
                else:
                    raise ValueError("two values without a comma")
            if len(stack) >= MAX_LITERAL_DEPTH:
                raise ValueError("nested too deep")
            entry = [{} if tok == "{" else [], _CLOSERS[tok], None, "key" if tok == "{" else "value", False]
            if tok == "(":  # its text once it closes: "[...]", or x itself for (x)
                self.maybe_json = False
                entry.append(self._out)
                self._out = []
                self._nested += 1
            elif (self._member is not None and tok == "{" and len(stack) == 1 and top[2] == self._member
                  and self.member_head is None and isinstance(top[0], dict)):  # the streamed member opens
                self.member_head = dict(top[0])
                self._exact = False  # (its text is taken away: the JSON text is written from the value)
                entry.append(self._out)
                self._out = self._member_out = []
                self._out.append("{")
                self._nested += 1
            else:
                self._out.append("{" if tok == "{" else "[")
            stack.append(entry)
            return
        if top is None:
            raise ValueError("punctuation outside a container")
        if tok == top[1]:
            if top[3] == "colon" or (top[3] == "value" and isinstance(top[0], dict)):
                raise ValueError("misplaced closer")
            if top[3] in ("value", "key") and top[4]:
                self.maybe_json = False  # a trailing comma
            stack.pop()
            if len(top) > 5:  # a tuple's or the member's own pieces: back to the outer ones
                inner, self._out = self._out, top[5]
                self._nested -= 1
                if tok == ")":  # (the member's text stays for take_member, without its "}")
                    if top[3] == "sep" and len(top[0]) == 1:  # (x): Python's parentheses, x itself
                        self._out.append("".join(inner))
                        self._value(top[0][0], written=True)
                        return
                    self._out.append("[" + "".join(inner) + "]")
            else:
                self._out.append("}" if tok == "}" else "]")
            if stack:  # the outer container's value (expected: checked where this one opened): _value's, without its frame
                outer = stack[-1]
                container = outer[0]
                if container.__class__ is dict:
                    container[outer[2]] = top[0]
                else:
                    container.append(top[0])
                outer[3] = "sep"
                outer[4] = True
            else:
                self._value(top[0], written=True)
        elif tok == ",":
            if top[3] != "sep":
                raise ValueError("misplaced comma")
            top[3] = "key" if isinstance(top[0], dict) else "value"
        elif tok == ":":
            if top[3] != "colon":
                raise ValueError("misplaced colon")
            top[3] = "value"
        else:
            raise ValueError("mismatched bracket")

    def _value(self, value: Any, written: bool = False) -> None:
        """A complete value: into the container on top, or the result; its JSON text written."""
        if not written:
            if not isinstance(value, str):
                self._start_value()
            self._out.append(json_text(value))
        stack = self._stack
        if not stack:
            self._result = value
            self.closed = True
            return
        top = stack[-1]
        if top[3] == "key":
            if not isinstance(value, str):
                raise ValueError("a dict key that is not a string")
            if value in top[0]:
                self._exact = False  # the JSON text written would repeat the key
            top[2] = value
            top[3] = "colon"
            self._out.append(": ")
        elif top[3] == "value":
            if isinstance(top[0], dict):
                top[0][top[2]] = value
            else:
                top[0].append(value)
            top[3] = "sep"
            top[4] = True
        else:
            raise ValueError("two values without a comma")


# --------------------------------------------------------------------------- the common head, matched whole
_HEAD_WS = r"[ \t\r\n]*"  # (the whitespace _TOKEN reads between tokens)
_HEAD_CHARS = r"""[^'"\\]+"""  # (a string of the head matched whole: no quote of either kind, no escape)


def member_head_pattern(head_keys: tuple[str, ...], member: str) -> "re.Pattern[str]":
    """The common head of a dict whose ``member`` streams, after its ``{``: ``'K1': 'V1', ..., 'MEMBER': {``
    (the ``head_keys`` in order, each value a string of neither quote nor backslash, a key or value in single or
    double quotes, the whitespace :class:`PyLiteralReader` reads between tokens): groups ``2i + 1`` and ``2i + 2``
    the value of ``head_keys[i]`` (the one its quote filled). A caller that matched it reads what
    :meth:`PyLiteralReader.open_member` makes of it, the same state :meth:`PyLiteralReader.feed` reaches reading
    it token by token (``tests/parsers/test_pyliteral.py``); any other head is read by ``feed``. (The Python
    literal's spelling of :func:`callscale.parsers.jsonscan`'s ``_head_pattern``.)"""
    ws = _HEAD_WS

    def string(text: str) -> str:
        return r"""(?:'%s'|"%s")""" % (text, text)

    members = "".join(r"""%s%s%s:%s(?:'(%s)'|"(%s)")%s,""" % (ws, string(re.escape(k)), ws, ws, _HEAD_CHARS,
                                                              _HEAD_CHARS, ws) for k in head_keys)
    return re.compile(r"%s%s%s%s:%s\{" % (members, ws, string(re.escape(member)), ws, ws))


# --------------------------------------------------------------------------- the streamed member's state
def member_state(self: Any, final: bool) -> bool:
    """A format's state for a streamed member's text, written once (``_s_arguments = member_state``): the
    unread text fed to the reader and the member's JSON text sent, one Python frame a delta.

    ``self`` (a :class:`callscale.parsers.base.ToolParser`) holds ``_reader`` (a :class:`PyLiteralReader`
    whose member opened and was taken once: :meth:`PyLiteralReader.take_member`) and the format's step
    after each piece, ``_member_read(text, used, final) -> bool`` (the state's answer; ``used``:
    :meth:`PyLiteralReader.feed`'s answer). The unread text (``scanner.take_all``) is read as
    ``feed(text, True)`` then ``take_member()`` would, and the member's text is sent (``_emit_arguments``).
    While the value goes on, every character read, the state waits (False), or at the end of the output
    answers ``_member_read(text, len(text), True)``; when the value completed or broke in the piece,
    ``_member_read(text, used, final)``.

    A piece inside a string of the member itself with no quote and no backslash, or one backslash of a
    one-character escape (a long value's delta), is its JSON text as it is, read without the reading loop.
    """
    text = self.scanner.take_all()
    reader = self._reader
    quote = reader._text_quote
    if quote:
        if "\\" not in text:
            if quote in text:
                chars = None
            elif text.isprintable() and '"' not in text:  # (its JSON text: itself)
                if text:
                    self._emit_arguments(text)
                return self._member_read(text, len(text), final) if final else False
            else:
                chars = text
        else:  # one one-character escape (\\n, \\'), not at the end, and no other backslash nor quote
            k = text.find("\\")
            simple = _SIMPLE_JSON.get(text[k + 1:k + 2])
            head, rest = text[:k], text[k + 2:]
            if simple is None or "\\" in rest or quote in head or quote in rest:
                chars = None
            else:
                if not simple[2]:
                    reader.maybe_json = False
                chars = head + simple[0] + rest
        if chars is not None:
            if not (chars.isprintable() and '"' not in chars and "\\" not in chars):  # (else its JSON text: itself)
                piece = _encode_string(chars)[1:-1]  # (_json_piece, without its frame)
                chars = piece if piece.isascii() or SURROGATE.search(piece) is None else _json_piece(chars)
            self._emit_arguments(chars)
            return self._member_read(text, len(text), final) if final else False
    n = len(text)
    if reader.failed or not n:
        used = reader.feed(text, True)
    else:  # (feed's reading, without its frame and its string's fast path: _read's string run reads the same)
        tail = reader._tail
        reader.held_before = tail
        try:
            end = reader._read(tail + text if tail else text, False, True)
        except (ValueError, KeyError, IndexError, TypeError, OverflowError):
            used = reader._broke(tail)
        else:  # (no join of the outer pieces, as feed's: while the member streams, its own pieces take the text)
            quote = reader._quote  # (the member taken once: its strings are not kept)
            reader._text_quote = quote if quote and not reader._tail and reader._out is reader._member_out else ""
            used = end - len(tail) if tail else end
    out = reader._member_out
    if out:  # (take_member's, without its frame; a join of one piece is that piece)
        piece = "".join(out)
        out.clear()
        self._emit_arguments(piece)
    if used != n or reader.closed or reader.failed:  # the value completed or broke here
        return self._member_read(text, used, final)
    return self._member_read(text, n, final) if final else False


def read_python_literal(text: str) -> tuple[bool, Any]:
    """Read a whole Python literal of JSON data: ``(True, value)`` or ``(False, None)``; never raises.

    The rule is the module docstring's; linear time, no recursion. A dict
    with a repeated key keeps the last value at the first key's place (as
    Python does).
    """
    reader = PyLiteralReader()
    reader.feed(text)
    return reader.end()


# --------------------------------------------------------------------------- call arguments, streamed
# The second reader of this module's rule, for a format that writes whole calls in Python syntax (Llama 4):
# ``KEY=VALUE, ...)`` read from a scanner and sent as the JSON object ``{"KEY": VALUE, ...}`` while it
# arrives (a string value in pieces). Its dialect is Python's own, not PyLiteralReader's JSON-alike one:
# ``True``/``False``/``None`` only, every int literal Python reads (``0x1f``, ``1_000``), triple quotes,
# dict keys that are numbers or constants, and the reference encoder's ``{KEY=VALUE}``; see docs/formats.md,
# "Llama 4 pythonic". It shares this module's escape table and string runs.

#: Python's constants as JSON text.
PY_CONSTANTS = {"True": "true", "False": "false", "None": "null"}
#: Python's number literals (its grammar: an underscore only between digits or after a base prefix; no leading
#: zero in a decimal integer but zeros), with one sign: matched before the underscores are dropped.
_DIGITS = r"[0-9](?:_?[0-9])*"
_DECIMAL = re.compile(r"[+-]?(?:(?:{d})?\.{d}(?:{e})?|{d}\.(?:{e})?|{d}{e})".format(
    d=_DIGITS, e=r"[eE][+-]?" + _DIGITS))
_INTEGER = re.compile(r"[+-]?(?:[1-9](?:_?[0-9])*|0(?:_?0)*|0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+"
                      r"|0[bB](?:_?[01])+)")
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")


def python_number(text: str) -> str | None:
    """A Python number literal (any int form, a float) as JSON text; ``None`` when it is none or not finite."""
    if text.isdigit() and (text[0] != "0" or len(text) == 1):  # the common number: its digits
        return text
    plain = text.replace("_", "")
    try:
        if _INTEGER.fullmatch(text):
            return str(int(plain, 0) if not plain.lstrip("+-").isdigit() else int(plain))
        if _DECIMAL.fullmatch(text):
            value = float(plain)
            return repr(value) if value - value == 0 else None  # (json.dumps's text of a finite float)
    except ValueError:  # digits past Python's int-conversion limit
        return None
    return None


def char_json(ch: str) -> str:
    """One decoded character as the inside of a JSON string (a lone surrogate stays an escape)."""
    return "\\u%04x" % ord(ch) if SURROGATE.match(ch) else _encode_string(ch)[1:-1]


def long_escape(text: str, final: bool) -> tuple[str, int] | None:
    """The escape after a backslash whose first character is ``text[0]`` and is no one-character escape.

    Returns ``(JSON text of its character(s), characters read)``; ``None`` when ``text`` may be cut inside it
    (not ``final``). Raises ``ValueError`` for a ``\\x``, ``\\u``, ``\\U`` without its hex digits or past
    U+10FFFF (no Python string). An unknown escape keeps its backslash; octal takes up to three digits.
    """
    c = text[0]
    n = _HEX_ESCAPES.get(c)
    if n is not None:
        digits = text[1:1 + n]
        for d in digits:
            if d not in _HEX:
                raise ValueError("a bad hex escape")
        if len(digits) < n:
            if final:
                raise ValueError("a cut hex escape")
            return None
        code = int(digits, 16)
        if code > 0x10FFFF:
            raise ValueError("an escape out of range")
        return char_json(chr(code)), 1 + n
    if c == "\r":  # a line continuation over CR or CRLF (Python reads either as a newline): no character
        if len(text) < 2 and not final:
            return None  # (an LF may follow)
        return "", 2 if text[1:2] == "\n" else 1
    if c in _OCTAL:
        k = 1
        while k < len(text) and k < 3 and text[k] in _OCTAL:
            k += 1
        if k == len(text) < 3 and not final:
            return None
        return char_json(chr(int(text[:k], 8))), k
    return _encode_string("\\" + c)[1:-1], 1


_ST_ARGS, _ST_ARG_TEXT, _ST_OPEN_QUOTE, _ST_STRING, _ST_ESCAPE = "args", "arg_text", "open_quote", "string", "escape"  # its states
# what the reader expects next (_E_SEP: ':' expected, _E_SEP_EQ: '=' expected; the two separators last)
_E_VALUE, _E_AFTER, _E_KEY, _E_SEP, _E_SEP_EQ = range(5)
#: container kinds on the stack: the call's argument list, a list, a tuple, a dict
_CALL, _LIST, _TUPLE, _DICT = "(", "[", "t", "{"
_CLOSER = {_CALL: ")", _LIST: "]", _TUPLE: ")", _DICT: "}"}
_OPENS = {"[": _LIST, "(": _TUPLE, "{": _DICT}
_JSON_CLOSER = {_CALL: "}", _LIST: "]", _TUPLE: "]", _DICT: "}"}
_WORD_RUN = re.compile(r"\w*")  # (\w: str.isalnum() or "_", the same test)
_NUMBER_RUN = re.compile(r"[0-9A-Za-z_.+\-]*")
_SPACES = re.compile(r"\s*")  # (\s: str.isspace(), the same test)
_SPACE_CHARS = frozenset(filter(str.isspace, map(chr, range(0x3001))))  # (str.isspace's characters: all below U+3001)
#: What ends the text of a string value, per quote.
_STRING_ENDS = {q: markers(q, "\\") for q in ("'", '"', "'''", '"""')}


class PyArgumentReader:
    """Reads a call's keyword arguments in Python syntax, ``KEY=VALUE, ...)``, and streams them as JSON.

    A mixin of a :class:`callscale.parsers.base.ToolParser` (its states ``args``, ``open_quote``,
    ``string`` and ``escape`` join the parser's table; it reads ``self.scanner`` and sends with
    ``_emit_arguments``). The format calls :meth:`_args_begin` once its head read ``NAME(KEY=``; this
    reader sends ``{"KEY": `` with the value's first piece, each value as JSON (a string in pieces
    while it arrives; others when they end; a key read whole goes out with its value's first piece,
    with the ``, `` before and ``: `` after it), and at the list's ``)`` sends ``}`` and calls the
    format's :meth:`_args_done`. A word or number is read whole (at most :attr:`word_bound`
    characters, the format's ``MAX_HEAD``: it waits unread at the end of the buffer, then is decided).
    Anything else (a positional value, a name that is no constant, an unbalanced bracket, a word past
    the bound) makes the call malformed (:meth:`_malformed`). Never raises on model text.
    """

    #: The longest word or number (characters); the format sets it (its ``MAX_HEAD``).
    word_bound: int

    def _args_init(self) -> None:
        self._stack: list[str] = []
        self._expect = _E_VALUE
        self._can_close = False       # the container may close here (just opened, or after a comma)
        self._pending = ""            # JSON text still to send, with the next piece: a comma, a key, its ": "
        self._quote = ""              # the string being read: its quote (one or three characters)
        self._role = "value"          # what the string is: a value or a dict key

    def _args_begin(self, key: str) -> None:
        """The head read ``NAME(KEY=``: read the arguments from the first value on (state ``args``)."""
        self._stack = [_CALL]
        self._expect = _E_VALUE
        self._can_close = False
        self._pending = "{" + _encode_string(key) + ": "  # (sent with the value's first piece)
        self._state = _ST_ARGS

    def _args_done(self) -> bool:
        """Hook: the arguments' ``)`` was read (consumed; ``}`` sent): set the next state."""
        raise NotImplementedError

    def _malformed(self, word: str = "", final: bool = False) -> bool:
        """The started call is malformed (broken): abandon it; content goes on from here.

        ``word``: the bad word or number just read, content too (DESIGN.md: nothing the model
        wrote is lost), unless the end of the output cut it (``final``).
        """
        self._abandon_call()
        if word and not self._cut_by_end(final):
            self._emit_content(word)
        self._stack = []
        self._state = "content"
        return True

    def _flush_pending(self) -> None:
        if self._pending:
            self._emit_arguments(self._pending)
            self._pending = ""

    # ------------------------------------------------------------------ tokens
    def _s_args(self, final: bool) -> bool:
        """One token a turn, in a loop on the unread text while the state stays ``args``.

        The unread text is taken whole and what the loop leaves is put back (``unread``: a word cut by
        the buffer's end, at most ``word_bound`` characters, or text the next state reads): one scanner
        call a turn, mostly. Separators and closers are read here, a key or an element by
        :meth:`_element`, which answers the index to go on from, or -1 when it stopped (the scanner
        then at the right place and the state set).
        """
        sc = self.scanner
        text = sc.take_all()
        n = len(text)
        i = 0
        if self._state == _ST_ARG_TEXT:  # a one-quote string a delta cut: its text, then the tokens after it
            q = self._quote
            if q not in text and "\\" not in text:  # the common piece: string text, streamed (no pattern run)
                if n:
                    self._emit_arguments(_encode_string(text)[1:-1])
                return self._malformed() if final else False
            i = _RUN[q].match(text).end()
            if text[i] == "\\":  # an escape: state string reads it
                self._emit_arguments(_encode_string(text[:i])[1:-1])
                sc.unread(n - i)
                self._state = _ST_STRING
                return True
            self._string_end(_encode_string(text[:i])[1:])
            i += 1
        while True:
            if i < n and text[i] in _SPACE_CHARS:  # (one space, the separators' own, without a pattern run)
                i += 1
                if i < n and text[i] in _SPACE_CHARS:
                    i = _SPACES.match(text, i).end()
            if i == n:
                return self._malformed() if final else False
            c = text[i]
            expect = self._expect
            top = self._stack[-1]
            if expect == _E_AFTER:  # after a value: a comma, or its container's closer
                if c == ",":
                    i += 1
                    self._pending = ", "
                    self._can_close = True
                    self._expect = _E_KEY if top == _CALL or top == _DICT else _E_VALUE
                    continue
                if c != _CLOSER[top]:
                    sc.unread(n - i)
                    return self._malformed()
            elif expect >= _E_SEP:  # (a call's key and an identifier dict key take '=', other dict keys ':')
                if c != ("=" if expect == _E_SEP_EQ else ":"):
                    sc.unread(n - i)
                    return self._malformed()
                i += 1
                self._pending += ": "
                self._expect = _E_VALUE
                continue
            elif not (self._can_close and c == _CLOSER[top]):  # a token starts: not its container's closer
                if (c == '"' or c == "'") and (expect != _E_KEY or top != _CALL):
                    i = self._string_start(text, i, final)
                else:
                    i = self._element(text, i, final)
                if i < 0:  # (stopped at ~i: the rest put back)
                    if ~i < n:
                        sc.unread(n - ~i)
                    return self._state != _ST_ARGS
                continue
            i += 1  # the container's closer; a trailing comma is dropped
            self._stack.pop()
            self._pending = ""
            self._can_close = False
            if top == _CALL:
                if i < n:
                    sc.unread(n - i)
                self._emit_arguments("}")
                return self._args_done()
            self._emit_arguments(_JSON_CLOSER[top])
            self._expect = _E_AFTER

    _s_arg_text = _s_args  # (state arg_text: the same method, see its first step)

    def _element(self, text: str, i: int, final: bool) -> int:
        """A token at ``text[i]`` other than a string: a call's key, a dict's key or a value, read whole.

        Answers the index after it, or ``~k`` (negative) when reading stops at ``text[k]``: the state
        was set (the call is malformed), or a word or number the end of the buffer cuts waits unread
        there. A key goes out with its value's first piece, the pending text (a comma, a key and its
        separator) with the value.
        """
        c = text[i]
        expect = self._expect
        if c.isalpha() or c == "_":
            run = _WORD_RUN
        elif expect == _E_KEY and self._stack[-1] == _CALL:  # a call's key is an identifier
            return self._bad(text, i, "", False, flush=False)
        elif c.isdigit() or c == "-" or c == "+" or c == ".":
            run = _NUMBER_RUN
        elif expect == _E_VALUE and c in _OPENS:  # a container opens
            kind = _OPENS[c]
            self._stack.append(kind)
            self._emit_arguments(self._pending + ("{" if kind == _DICT else "["))
            self._pending = ""
            self._expect = _E_KEY if kind == _DICT else _E_VALUE
            self._can_close = True
            return i + 1
        else:
            return self._bad(text, i, "", False)
        bound = self.word_bound
        end = run.match(text, i, i + bound + 1).end()
        if end == len(text) and not final and end - i <= bound:
            return ~i  # the end of the buffer may cut it: it waits, unread
        word = text[i:end]
        if run is _NUMBER_RUN:  # (plain digits are their own JSON text: python_number's answer, held by a test)
            json = word if word.isdigit() and (word[0] != "0" or end - i == 1) else \
                python_number(word) if end - i <= bound else None
            kind = _E_SEP  # (a number as a dict key: a JSON string, ':' follows)
        elif end - i > bound:
            return self._bad(text, end, word, False)
        else:
            json = PY_CONSTANTS.get(word)
            kind = _E_SEP if json is not None else _E_SEP_EQ  # (an identifier key: '=' follows)
            if expect == _E_KEY and (json is None or self._stack[-1] == _CALL):
                json = _encode_string(word)[1:-1]
                kind = _E_SEP_EQ
        if json is None:
            return self._bad(text, end, word, final)
        self._can_close = False
        if expect == _E_VALUE:
            self._emit_arguments(self._pending + json)
            self._pending = ""
            self._expect = _E_AFTER
        else:
            self._pending += '"' + json + '"'
            self._expect = kind
        return end

    def _bad(self, text: str, end: int, word: str, final: bool, flush: bool = True) -> int:
        """Malformed at ``text[end]`` (``word``, just before it, is content; the pending text sent first when
        ``flush``): the scanner is placed there; ``~len(text)`` (nothing more to put back)."""
        if end < len(text):
            self.scanner.unread(len(text) - end)
        if flush:
            self._flush_pending()
        self._malformed(word, final)
        return ~len(text)

    # ------------------------------------------------------------------ strings
    def _string_start(self, text: str, i: int, final: bool) -> int:
        """A string (a value or a dict's key) at ``text[i]``, its quote: whole in the text, or its first piece
        and state ``arg_text`` (``open_quote`` for ``''``, a triple quote or an escape first); see :meth:`_element`."""
        c = text[i]
        role = "value" if self._expect == _E_VALUE else "dict-key"
        end = _RUN[c].match(text, i + 1).end()
        self._can_close = False
        if end > i + 1:
            if end < len(text) and text[end] == c:  # whole, without escapes: its JSON string
                piece = _encode_string(text[i + 1:end])
                if role == "value":
                    self._emit_arguments(self._pending + piece)
                    self._pending = ""
                    self._expect = _E_AFTER
                else:
                    self._pending += piece
                    self._expect = _E_SEP
                return end + 1
            self._emit_arguments(self._pending + '"' + _encode_string(text[i + 1:end])[1:-1])
            self._pending = ""  # (cut by the buffer, or an escape: the text so far; the rest in state arg_text)
            self._state = _ST_ARG_TEXT
            self._quote = c
            self._role = role
            return ~end
        if end == len(text) and not final:  # the quote ends the buffer: left unread
            return ~i
        self._flush_pending()  # '', a triple quote, or an escape first: state open_quote decides
        self._state = _ST_OPEN_QUOTE
        self._quote = c
        self._role = role
        return ~(i + 1)

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
                self._state = _ST_STRING
                return True
            sc.take(1)  # '' or "": the empty string
            return self._string_end('""')
        if not ahead or ahead == q:
            return self._malformed() if final else False
        self._emit_arguments('"')
        self._state = _ST_STRING
        return True

    def _string_end(self, piece: str) -> bool:
        """The string's last JSON piece (its closing quote included): sent, or a dict key's held for its value."""
        self._state = _ST_ARGS
        if self._role == "value":
            self._emit_arguments(piece)
            self._expect = _E_AFTER
        else:
            self._pending = piece
            self._expect = _E_SEP
        return True

    def _s_string(self, final: bool) -> bool:
        """A string's text up to its quote, streamed; one-character escapes read here, longer ones in state escape."""
        sc = self.scanner
        quote = self._quote
        ends = _STRING_ENDS[quote]
        text, marker = sc.find(ends, final)
        if marker is None:  # the common piece: string text, streamed
            if text:
                self._emit_arguments(_encode_string(text)[1:-1])
            return self._malformed() if final else False
        if marker == quote:
            return self._string_end(_encode_string(text)[1:])  # its text and the closing quote
        parts = [text]
        while True:  # after a backslash
            simple = SIMPLE_ESCAPES.get(sc.peek(1))
            if simple is None:
                self._emit_arguments(_encode_string("".join(parts))[1:-1])
                self._state = _ST_ESCAPE
                return True
            sc.take(1)
            parts.append(simple)
            text, marker = sc.find(ends, final)
            parts.append(text)
            if marker is None:
                self._emit_arguments(_encode_string("".join(parts))[1:-1])
                return self._malformed() if final else False
            if marker == quote:
                return self._string_end(_encode_string("".join(parts))[1:])

    def _s_escape(self, final: bool) -> bool:
        """After a backslash the string state could not decide (the text ended there, or a longer escape)."""
        sc = self.scanner
        c = sc.peek(1)
        if not c:
            return self._malformed() if final else False
        simple = SIMPLE_ESCAPES.get(c)
        if simple is not None:
            sc.take(1)
            self._emit_arguments(_encode_string(simple)[1:-1])
        else:
            try:
                read = long_escape(sc.peek(9), final)
            except ValueError:
                return self._malformed()
            if read is None:
                return False
            sc.take(read[1])
            self._emit_arguments(read[0])
        self._state = _ST_STRING
        return True

