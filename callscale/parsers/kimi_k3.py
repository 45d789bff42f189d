"""Kimi K3 tool calls, reasoning and response (``kimi_k3``): the XTML element tree.

The format (sources: moonshotai/Kimi-K3 ``encoding_k3.py`` as the engines
quote it, vLLM 0.33, TensorRT-LLM, SGLang) and every reading rule:
``docs/formats.md``, "Kimi K3, XTML" (the one place). An element is
``<|open|>TAG ATTRS<|sep|>BODY<|close|>TAG<|sep|>``; what a model writes
after an instruct prompt::

    CONTENT<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="K" type="string"<|sep|>VALUE<|close|>argument<|sep|>...<|close|>call<|sep|>...<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>

This module holds the tokens, markers and ``_s_<state>`` steps; the shared
mechanisms (driver, ``think`` state, broken calls, bounded heads, confirmed
closers, typed values) are base.py's and schema.py's
(``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "think" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the one the
# reading decides).
KIMI_K3_TRANSITIONS = {
    "content": {"text": "content", "TOOLS_OPEN": "tools", "THINK_OPEN": "think", "channel markup (dropped)": "content"},
    "think": {"text THINK_CLOSE": "content"},
    "tools": {"text (content)": "tools", "CALL_HEAD": "call_head", "TOOLS_CLOSE": "content",
              "a repeated opener, channel markup (dropped)": "tools"},
    "call_head": {"ATTRS SEP naming a tool": "call", "a head naming none": "broken",
                  "past MAX_HEAD (content)": "tools"},
    "call": {"ws ARG_HEAD": "arg_head", "ws JSON_HEAD": "json_head", "ws CALL_CLOSE": "tools",
             "anything else": "broken"},
    "arg_head": {"ATTRS SEP with a new key": "value", "a bad head, past MAX_HEAD": "broken"},
    "value": {"text (typed, streamed)": "value", "ARG_CLOSE": "close1", "the end of the output inside the call": "content"},
    "close1": {"ws ARG_HEAD": "arg_head", "ws CALL_CLOSE": "close2", "anything else (value text)": "value"},
    "close2": {"ws CALL_HEAD": "call_head", "ws TOOLS_CLOSE": "content", "the end": "tools",
               "anything else (value text)": "value"},
    "json_head": {"ATTRS SEP": "json", "after arguments, past MAX_HEAD": "broken"},
    "json": {"a JSON object, JSON_CLOSE": "call", "anything else, JSON_CLOSE": "broken"},
    "broken": {"CALL_CLOSE (the text dropped)": "tools", "TOOLS_CLOSE (the text dropped)": "content",
               "CALL_HEAD (the text is content)": "tools"},
}

import logging
import re

from . import register
from .base import ToolParser, json_text
from .jsonscan import strict_loads
from .scanner import OVER, PARTIAL, markers
from .schema import UNTYPED, TypedValue, is_tool_name, json_string, Typing, parameter_typing

log = logging.getLogger(__name__)

__all__ = [
    "KimiK3Parser", "OPEN", "CLOSE", "SEP", "END_OF_MSG", "THINK_OPEN", "THINK_CLOSE", "RESPONSE_OPEN",
    "RESPONSE_CLOSE", "TOOLS_OPEN", "TOOLS_CLOSE", "MESSAGE_CLOSE", "CALL_HEAD", "CALL_CLOSE", "ARG_HEAD",
    "ARG_CLOSE", "JSON_HEAD", "JSON_CLOSE", "SPECIAL_TOKENS", "escape_attr", "open_tag",
]

#: The control tokens (special tokens of the K3 tokenizer).
OPEN = "<|open|>"
CLOSE = "<|close|>"
SEP = "<|sep|>"
END_OF_MSG = "<|end_of_msg|>"
SPECIAL_TOKENS = (OPEN, CLOSE, SEP, END_OF_MSG)

THINK_OPEN = f"{OPEN}think{SEP}"
THINK_CLOSE = f"{CLOSE}think{SEP}"
RESPONSE_OPEN = f"{OPEN}response{SEP}"
RESPONSE_CLOSE = f"{CLOSE}response{SEP}"
TOOLS_OPEN = f"{OPEN}tools{SEP}"
TOOLS_CLOSE = f"{CLOSE}tools{SEP}"
MESSAGE_CLOSE = f"{CLOSE}message{SEP}"
#: An element head: ``CALL_HEAD + ATTRS + SEP`` (ATTRS is `` tool="..." index="..."``).
CALL_HEAD = f"{OPEN}call"
CALL_CLOSE = f"{CLOSE}call{SEP}"
ARG_HEAD = f"{OPEN}argument"
ARG_CLOSE = f"{CLOSE}argument{SEP}"
JSON_HEAD = f"{OPEN}json"
JSON_CLOSE = f"{CLOSE}json{SEP}"

_CHANNEL = (THINK_CLOSE, RESPONSE_OPEN, RESPONSE_CLOSE, MESSAGE_CLOSE, END_OF_MSG)
_CONTENT = markers(TOOLS_OPEN, THINK_OPEN, *_CHANNEL)
_THINK = markers(THINK_CLOSE)
_TOOLS = markers(CALL_HEAD, TOOLS_CLOSE, TOOLS_OPEN, *_CHANNEL)
_HEAD_END = markers(SEP)
_IN_CALL = markers(ARG_HEAD, JSON_HEAD, CALL_CLOSE)
_VALUE_END = markers(ARG_CLOSE)
_JSON_END = markers(JSON_CLOSE)
_AFTER_ARG = markers(ARG_HEAD, CALL_CLOSE)
_AFTER_CALL = markers(CALL_HEAD, TOOLS_CLOSE)

_ATTRS = re.compile(r'(?:\s+[\w.:-]+="[^"]*")*\s*')
_ATTR = re.compile(r'([\w.:-]+)="([^"]*)"')

#: The ``type`` attribute values and the typing they give a value.
_TYPES = {
    "number": Typing(("number",)),
    "boolean": Typing(("boolean",)),
    "null": Typing((), True),
    "object": Typing(("object",)),
    "array": Typing(("array",)),
}


def escape_attr(value: str) -> str:
    """An attribute value as ``encoding_k3._escape_attr_value`` writes it (``&`` then ``"``)."""
    return value.replace("&", "&amp;").replace('"', "&quot;")


def _unescape_attr(value: str) -> str:
    return value.replace("&quot;", '"').replace("&amp;", "&")


def open_tag(tag: str, **attrs: str) -> str:
    """``<|open|>TAG k="v" ...<|sep|>`` with escaped attribute values."""
    return OPEN + tag + "".join(f' {k}="{escape_attr(v)}"' for k, v in attrs.items()) + SEP


def _attrs(text: str) -> dict[str, str] | None:
    """The attributes of a head (the text between the tag name and ``<|sep|>``), or ``None`` if malformed."""
    if _ATTRS.fullmatch(text) is None or (text and not text[0].isspace()):
        return None
    return {k: _unescape_attr(v) for k, v in _ATTR.findall(text)}


@register("kimi_k3")
class KimiK3Parser(ToolParser):
    """Streaming parser of Kimi K3 XTML output; rules: ``docs/formats.md``, "Kimi K3, XTML".

    States (``_s_<state>``, run by the base driver): ``content``, ``think``,
    ``tools`` (between calls), ``call_head``, ``call`` (between arguments),
    ``arg_head``, ``value``, ``close1`` (after ``<|close|>argument<|sep|>``:
    does the value end?), ``close2`` (after it and ``<|close|>call<|sep|>``:
    does the call end?), ``json_head``, ``json``, and the base's ``broken``
    (a broken call's text, :meth:`ToolParser._s_broken`).
    """

    transitions = KIMI_K3_TRANSITIONS

    writes_reasoning = True
    reasoning_end = _THINK
    #: A broken call's text ends at the call's end (read on between calls) or the
    #: tools element's end (read on as content); a new call head makes it content.
    broken_resume = {CALL_CLOSE: "tools", TOOLS_CLOSE: "content"}
    broken_restarts = (CALL_HEAD,)
    broken_restart_state = "tools"

    def __init__(self) -> None:
        super().__init__()
        self._call_name = ""
        self._keys: set[str] = set()
        self._whole = False  # the arguments came as one json body (written whole)
        self._value = TypedValue(UNTYPED)  # the current argument's value, typed as it streams (schema)
        self._json_parts: list[str] = []  # a json body's text
        self._pending: list[str] = []

    def _at_end(self) -> None:  # (the end-of-output step as base's hook: the per-delta loop is base's)
        if self._state not in ("content", "think", "tools", "broken", "call_head"):
            log.debug("kimi_k3: call %r never closed; abandoned", self._call_name)
            self._abandon_call()
        self._state = "content"

    # Every state only reads (the waiting rule: callscale/parsers/README.md).
    # ------------------------------------------------------------------ outside calls
    def _s_content(self, final: bool) -> bool:
        sc = self.scanner
        text, marker = sc.find(_CONTENT)
        if marker is None and final:
            rest = sc.take_all()
            if not (rest.startswith((OPEN, CLOSE)) and rest in _CONTENT.prefixes):  # else cut markup
                text += rest
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        if marker == TOOLS_OPEN:
            self._state = "tools"
        elif marker == THINK_OPEN:
            self._state = "think"
        return True  # other channel markup: dropped

    def _s_tools(self, final: bool) -> bool:
        sc = self.scanner
        text, marker = sc.find(_TOOLS)
        if marker is None and final:
            rest = sc.take_all()
            if rest not in _TOOLS.prefixes:  # a partial marker at the end is cut markup
                text += rest
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        if marker == CALL_HEAD:
            self.scanner.head_begin(CALL_HEAD)
            self._state = "call_head"
        elif marker == TOOLS_CLOSE:
            self._state = "content"
        return True  # a repeated opener, channel markup: dropped

    # ------------------------------------------------------------------ a call
    def _s_call_head(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_HEAD_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:  # no head: its text is content, read on in the tools element
                self._emit_content(self.scanner.head_text())
                self._state = "tools"
                return True
            return False
        head = self.scanner.head_text()[len(CALL_HEAD):]
        attrs = _attrs(head)
        name = attrs.get("tool", "") if attrs is not None else ""
        if not is_tool_name(name):  # the head is the broken call's text (DESIGN.md)
            self._call_name = ""
            return self._fail(f"call head {head!r} names no tool", CALL_HEAD + head + SEP)
        self._call_name = name
        self._keys = set()
        self._whole = False
        self._begin_call(name)
        self._state = "call"
        return True

    def _s_call(self, final: bool) -> bool:
        sc = self.scanner
        sc.skip_whitespace()
        marker = sc.match(_IN_CALL, final)
        if marker is PARTIAL:
            return False
        if marker == ARG_HEAD and not self._whole:
            self.scanner.head_begin()
            self._state = "arg_head"
        elif marker == JSON_HEAD:
            if self._keys or self._whole:
                return self._fail("a json body after arguments")
            self.scanner.head_begin()
            self._state = "json_head"
        elif marker == CALL_CLOSE:
            self._close_call()
            self._state = "tools"
        else:
            if sc.at_end() or self._cut_by_end(final, _IN_CALL):
                return False  # final: the call is cut, _at_end abandons it
            return self._fail("unexpected text inside a call")
        return True

    def _s_arg_head(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_HEAD_END, final)
        if marker is None or marker is OVER:
            return self._fail("an argument head longer than MAX_HEAD") if marker is OVER else False
        head = self.scanner.head_text()
        attrs = _attrs(head)
        key = attrs.get("key") if attrs is not None else None
        if not key or key in self._keys:
            return self._fail(f"bad argument head {head!r}")
        kind = attrs.get("type")
        if kind == "string":
            typing = Typing(("string",))
        else:
            typing = _TYPES.get(kind) or parameter_typing(self.tools, self._call_name, key)
        self._value = value = TypedValue(typing)
        self._emit_arguments(("{" if not self._keys else ", ") + json_string(key) + ": " + value.opening)
        self._keys.add(key)
        self._state = "value"
        return True

    def _s_value(self, final: bool) -> bool:
        text, marker = self.scanner.find(_VALUE_END, final)
        self._value_text(text)
        if marker is None:
            return False
        if self._value.unfinished():  # inside a string of an array or object value: its text
            self._value_text(marker)
            return True
        self._confirm_ws.clear()
        self._state = "close1"
        return True

    def _value_text(self, text: str) -> None:
        if text:
            self._emit_arguments(self._value.feed(text))  # (a held value sends nothing until its end)

    def _s_close1(self, final: bool) -> bool:
        marker = self.scanner.match(_AFTER_ARG, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == ARG_HEAD:
            self._confirm_ws.clear()
            self._end_value()
            self.scanner.head_begin()
            self._state = "arg_head"
        elif marker == CALL_CLOSE:
            self._pending = [ARG_CLOSE, self._confirm_text(), CALL_CLOSE]
            self._state = "close2"
        else:
            self._reject_close([ARG_CLOSE])
        return True

    def _s_close2(self, final: bool) -> bool:
        if self._cut_by_end(final, _AFTER_CALL):  # the end of the output (or a cut tag) follows
            self._confirm_ws.clear()
            self._end_value()
            self._close_call()
            self._state = "tools"
            return False
        marker = self.scanner.match(_AFTER_CALL, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._reject_close(self._pending)
            return True
        self._confirm_ws.clear()
        self._end_value()
        self._close_call()
        if marker == CALL_HEAD:
            self.scanner.head_begin(CALL_HEAD)
            self._state = "call_head"
        else:
            self._state = "content"
        return True

    def _s_json_head(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_HEAD_END, final)
        if marker is None or marker is OVER:
            return self._fail("a json head longer than MAX_HEAD") if marker is OVER else False
        self.scanner.head_text()
        self._json_parts = []
        self._state = "json"
        return True

    def _s_json(self, final: bool) -> bool:
        text, marker = self.scanner.find(_JSON_END, final)
        if text:
            self._json_parts.append(text)
        if marker is None:
            return False
        raw = "".join(self._json_parts)
        self._json_parts = []
        try:
            value = strict_loads(raw)
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            return self._fail("the json body is not a JSON object")
        self._whole = True
        self._emit_arguments(json_text(value))
        self._state = "call"
        return True

    # ------------------------------------------------------------------ helpers
    def _reject_close(self, tags: list[str]) -> None:
        """The held-back closing tag(s) did not end the value: value text; scan on after them."""
        self._value_text("".join(tags) + self._confirm_text())
        self._pending = []
        self._state = "value"

    def _end_value(self) -> None:
        self._pending = []
        self._emit_arguments(self._value.end())

    def _close_call(self) -> None:
        self._emit_arguments("" if self._whole else "}" if self._keys else "{}")
        self._end_call()

    def _fail(self, why: str, rest: str = "") -> bool:
        log.debug("kimi_k3: call %r broken: %s", self._call_name, why)
        self._pending = []
        self._json_parts = []
        self._confirm_ws.clear()
        return self._broken(rest)
