"""The one incremental reader of Python literals of JSON data (``['a', 'b']``, ``{'k': (1, True, None)}``).

Models write a list or dict parameter as a Python literal in the XML-style
formats (Qwen3-Coder, GLM, MiniMax, Gemma 4) and Llama 4 writes whole calls
in Python syntax. What a literal may hold is :func:`read_python_literal`'s
rule (strings in single or double quotes with Python's escapes, finite ints
and floats, ``True``/``False``/``None`` and JSON's ``true``/``false``/``null``,
lists and tuples (as lists), dicts with string keys, a trailing comma inside
brackets, at most :data:`MAX_LITERAL_DEPTH` deep; after the value, whitespace of
any kind ``str.strip`` removes).

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

__all__ = ["MAX_LITERAL_DEPTH", "PyLiteralReader", "read_python_literal", "SIMPLE_ESCAPES", "unescape"]

#: Deepest nesting of brackets a literal may have.
MAX_LITERAL_DEPTH = 256

_MISSING = object()

#: Python's one-character string escapes (``\\n`` ...); ``\\<newline>`` is a line continuation.
SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
                  "f": "\f", "v": "\v", "\n": ""}
#: The escapes JSON has (RFC 8259 7: ``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX``), by their first letter:
#: any other escape rules JSON out (:attr:`PyLiteralReader.maybe_json`).
_JSON_ESCAPES = '"\\/bfnrtu'
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|\n|.)", re.DOTALL)
_LONGEST_ESCAPE = 10  # \U0010FFFF
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<punct>[\[\](){},:])
  | (?P<quote>['"])
  | (?P<num>[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?)
  | (?P<word>True|False|None|true|false|null)
""", re.VERBOSE)
_NUMBERISH = re.compile(r"[-+0-9_.eE]*")
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
    if e[0] in "xuU":
        code = int(e[1:], 16)
        if code > 0x10FFFF:
            raise ValueError("escape out of range")
        return chr(code)
    if e[0] in "01234567":
        return chr(int(e, 8))
    return "\\" + e  # Python keeps an unknown escape as written


_PLAIN_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")  # the common number: no underscore, point or exponent


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

    __slots__ = ("_stack", "_result", "_tail", "_quote", "_parts", "_out", "_failed", "_exact", "_done", "maybe_json",
                 "as_json", "json")

    def __init__(self) -> None:
        # stack entries: [container, closer, pending key, expecting, has items]; expecting is
        # "value", "sep" (a , or the closer), "colon" (dicts), "key" (dicts)
        self._stack: list[list] = []
        self._result: Any = _MISSING
        self._tail = ""
        self._quote = ""              # inside a string: its quote
        self._parts: list[str] = []   # the string's characters so far
        self._out: list[str] = []     # the JSON text so far (pieces)
        self._done: list[str] = []    # ... and before them, joined a few dozen pieces at a time
        self._failed = False
        self._exact = True
        self.maybe_json = True
        self.as_json = True
        self.json = ""

    def feed(self, text: str) -> None:
        """The next piece of the literal's text."""
        if self._failed or not text:
            return
        try:
            self._read(self._tail + text if self._tail else text, False)
        except (ValueError, KeyError, IndexError, TypeError, OverflowError):
            self._failed = True
            self._tail = ""
            self._out = self._done = []
            return
        if len(self._out) > 64:  # so end() joins few pieces: its cost stays small for a long value
            self._done.append("".join(self._out))
            self._out = []

    def end(self) -> tuple[bool, Any]:
        """The text ended: ``(True, value)`` when it was one literal, else ``(False, None)``. Call once."""
        if not self._failed:
            try:
                self._read(self._tail, True)
            except (ValueError, KeyError, IndexError, TypeError, OverflowError):
                self._failed = True
        if self._failed or self._stack or self._quote or self._result is _MISSING:
            self._failed = True
            self._out = []
            return False, None
        self._done.append("".join(self._out))
        self.json = "".join(self._done) if self._exact else json_text(self._result)
        self._out = self._done = []
        return True, self._result

    # ------------------------------------------------------------------ reading
    def _read(self, buf: str, final: bool) -> None:
        pos, n = 0, len(buf)
        self._tail = ""
        while pos < n:
            quote = self._quote
            if quote:
                run = _RUN[quote].match(buf, pos)
                if run.end() > pos:
                    self._parts.append(run.group())
                    pos = run.end()
                if pos >= n:
                    break
                if buf[pos] == quote:
                    pos += 1
                    self._quote = ""
                    value = "".join(self._parts)
                    self._parts = []
                    self._value(value)
                    continue
                if not final and n - pos < _LONGEST_ESCAPE:  # a partial escape may continue
                    self._tail = buf[pos:]
                    return
                m = _ESCAPE.match(buf, pos)
                if m is None:
                    raise ValueError("a backslash at the end")
                e = m.group(1)
                if e[0] not in _JSON_ESCAPES or e == "\n":
                    self.maybe_json = False
                char = unescape(m)
                if e[0] == "/" or "\ud800" <= char <= "\udfff":
                    self.as_json = False  # JSON reads "/" and joins a surrogate pair; Python does neither
                self._parts.append(char)
                pos = m.end()
                continue
            m = _TOKEN.match(buf, pos)
            if m is None:
                if self._result is not _MISSING and buf[pos].isspace():
                    pos += 1  # whitespace after the value, of any kind ``str.strip`` removes
                    continue
                rest = buf[pos:]
                if not final and (rest in _WORD_PREFIXES or (len(rest) < 3 and _NUMBERISH.fullmatch(rest))):
                    self._tail = rest
                    return
                raise ValueError(f"unexpected text at {pos}")
            kind = m.lastgroup
            if kind == "ws":
                pos = m.end()
                continue
            if kind in ("num", "word") and not final:
                end = _NUMBERISH.match(buf, m.end()).end() if kind == "num" else m.end()
                if end >= n:  # it may go on in the next piece
                    if n - pos > _MAX_TAIL:
                        raise ValueError("a number too long")
                    self._tail = buf[pos:]
                    return
            pos = m.end()
            tok = m.group()
            if self._result is not _MISSING:
                raise ValueError("text after the value")
            if kind == "quote":
                self._start_value()
                if tok == "'":
                    self.maybe_json = False
                self._quote = tok
                self._parts = []
            elif kind == "punct":
                self._punct(tok)
            elif kind == "num":
                if "_" in tok or tok[0] in "+." or tok.endswith(".") or ".e" in tok or ".E" in tok:
                    self.maybe_json = False
                self._value(_number(tok))
            else:
                if tok[0] in "TFN":
                    self.maybe_json = False
                self._value(_WORDS[tok])

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
            if top is not None and top[3] == "key":
                raise ValueError("a container as a dict key")
            self._start_value()
            if len(stack) >= MAX_LITERAL_DEPTH:
                raise ValueError("nested too deep")
            if tok == "(":
                self.maybe_json = False
            stack.append([{} if tok == "{" else [], _CLOSERS[tok], None, "key" if tok == "{" else "value", False])
            self._out.append("{" if tok == "{" else "[")
            return
        if top is None:
            raise ValueError("punctuation outside a container")
        if tok == top[1]:
            if top[3] == "colon" or (top[3] == "value" and isinstance(top[0], dict)):
                raise ValueError("misplaced closer")
            if top[3] in ("value", "key") and top[4]:
                self.maybe_json = False  # a trailing comma
            stack.pop()
            self._out.append("}" if tok == "}" else "]")
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


def read_python_literal(text: str) -> tuple[bool, Any]:
    """Read a whole Python literal of JSON data: ``(True, value)`` or ``(False, None)``; never raises.

    The rule is the module docstring's; linear time, no recursion. A dict
    with a repeated key keeps the last value at the first key's place (as
    Python does).
    """
    reader = PyLiteralReader()
    reader.feed(text)
    return reader.end()
