"""Kimi K2 tool calls (``kimi_k2``).

The format (source: Moonshot's Kimi K2 chat template) and the reading rules
are in ``docs/formats.md``, "Kimi K2". The arguments stream through
:class:`callscale.parsers.jsonscan.RawArguments`. Nothing here raises on
model output; lengths are in characters.
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "broken" is base.ToolParser's; "content" also reads a tool-calls section, between calls
# (its text there dropped); ``ws``: whitespace; "a / b": the one the reading decides).
KIMI_K2_TRANSITIONS = {
    "content": {"text (content, or dropped in a section)": "content", "SECTION_BEGIN, SECTION_END": "content",
                "CALL_BEGIN": "id"},
    "id": {"ID ARGUMENT_BEGIN (a name)": "args", "an id naming nothing, past MAX_HEAD, the end": "content",
           "another token (read in the section)": "content / id"},
    "args": {"the arguments (streamed)": "args", "CALL_END inside a JSON string": "end_check",
             "CALL_END, CALL_BEGIN, SECTION_END": "content / id", "text that is no JSON": "broken"},
    "end_check": {"ws then CALL_BEGIN or SECTION_END, or the end": "content / id",
                  "anything else (CALL_END was string text)": "args"},
    "broken": {"CALL_END (the text dropped)": "content", "a section token (the text is content)": "content"},
}

import json
import re

from . import register
from .base import ToolParser, json_text, tool_name
from .schema import is_framed_name, tool_list
from .jsonscan import RawArguments, strict_loads
from .scanner import OVER, PARTIAL, markers

__all__ = [
    "SECTION_BEGIN", "SECTION_END", "SECTION_BEGIN_SINGULAR", "SECTION_END_SINGULAR",
    "CALL_BEGIN", "ARGUMENT_BEGIN", "CALL_END", "ID_PREFIX", "SPECIAL_TOKENS",
    "call_name", "resolve_name", "tool_names", "KimiK2Parser",
]

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
#: The singular spelling some checkpoints emit (accepted by vLLM's kimi_k2 parser).
SECTION_BEGIN_SINGULAR = "<|tool_call_section_begin|>"
SECTION_END_SINGULAR = "<|tool_call_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
#: The call id is ``functions.NAME:INDEX``.
ID_PREFIX = "functions."
#: Single tokens of the Kimi K2 vocabulary.
SPECIAL_TOKENS = (
    SECTION_BEGIN, SECTION_END, SECTION_BEGIN_SINGULAR, SECTION_END_SINGULAR,
    CALL_BEGIN, ARGUMENT_BEGIN, CALL_END,
)

_OPENERS = (SECTION_BEGIN, SECTION_BEGIN_SINGULAR)
_CLOSERS = (SECTION_END, SECTION_END_SINGULAR)

_M_CONTENT = markers(*_OPENERS)
_M_SECTION = markers(CALL_BEGIN, *_CLOSERS, *_OPENERS, CALL_END, ARGUMENT_BEGIN)
_M_ID = markers(ARGUMENT_BEGIN, CALL_BEGIN, *_CLOSERS, *_OPENERS, CALL_END)
_M_ARGS = markers(CALL_END, CALL_BEGIN, *_CLOSERS, *_OPENERS)
_M_AFTER_END = markers(CALL_BEGIN, *_CLOSERS)

_CONTENT, _ID, _ARGS, _END_CHECK = "content", "id", "args", "end_check"  # the _s_<state> methods


def call_name(call_id: str) -> str:
    """The function name in a Kimi K2 call id (``functions.NAME:INDEX`` -> ``NAME``).

    The ``functions.`` prefix is optional; ``:INDEX`` is dropped only when
    INDEX is a number. Returns ``""`` for an id with no name.
    """
    name = call_id.strip()
    if name.startswith(ID_PREFIX):
        name = name[len(ID_PREFIX):]
    head, sep, tail = name.rpartition(":")
    if sep and tail.strip().isdigit():
        name = head
    return name.strip()


_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def tool_names(tools) -> list[str]:
    """The names of the request's ``tools`` (non-empty strings), in order: what :func:`resolve_name` matches."""
    return [n for n in (tool_name(t) for t in tool_list(tools)) if isinstance(n, str) and n]


def resolve_name(call_id: str, tools, names: list[str] | None = None) -> str:
    """The tool a call id names: :func:`call_name`, or a request tool whose sanitised id it is.

    Clients that echo call ids back sanitised to ``[A-Za-z0-9_-]`` teach the
    model ids such as ``functions_get_weather_1``. When the request has tools
    and the name from :func:`call_name` is none of them, the id is matched
    against each tool name ``T`` sanitised the same way (every other
    character replaced by ``_``): ``functions_T_N``, ``functions.T_N``, ``T_N``
    and ``T`` (``N`` digits, the ``functions`` prefix and the index
    optional) give ``T``; the first tool that matches wins. Otherwise the
    name is :func:`call_name`'s. The id is at most
    :data:`callscale.parsers.base.MAX_HEAD` characters, so this is bounded work.
    ``names``: :func:`tool_names` of ``tools``, when the caller has them.
    """
    name = call_name(call_id)
    if names is None:
        names = tool_names(tools)
    if not name or not names or name in names:
        return name
    raw = call_id.strip()
    for tool in names:
        safe = re.escape(_UNSAFE_ID_CHARS.sub("_", tool))
        if re.fullmatch(rf"(?:functions[._])?{safe}(?:[_:][0-9]+)?", raw):
            return tool
    return name


@register("kimi_k2")
class KimiK2Parser(ToolParser):
    """Kimi K2 tool calls; see the module docstring for the reading rules."""

    transitions = KIMI_K2_TRANSITIONS

    # a broken call's text (the base's broken state): dropped at its <|tool_call_end|>; content when another
    # token (read again in the section) or the end of the output comes first
    broken_ends = (CALL_END,)
    broken_restarts = (CALL_BEGIN, *_CLOSERS, *_OPENERS)

    def __init__(self) -> None:
        super().__init__()
        self._in_section = False       # state "content" reads a tool-calls section (the broken state resumes there)
        # the arguments, validated and streamed as they arrive; no text kept
        self._args = RawArguments(objects_only=False)
        self._hold: list[str] = []      # arguments written as a JSON string (double-encoded): held whole
        self._pending: list[str] = []   # whitespace after a <|tool_call_end|> met inside a string
        self._names_of: object = None   # the tools object whose tool_names are self._names
        self._names: list[str] = []

    # ------------------------------------------------------------------ helpers
    def _section_marker(self, marker: str, final: bool) -> bool:
        """Act on a marker met between calls (or ending a call)."""
        self._in_section = marker not in _CLOSERS  # a repeated opener, a stray end or argument token: in it
        if marker == CALL_BEGIN:
            self._state = _ID
            self.scanner.head_begin()  # the call id: a bounded head (base)
        else:
            self._state = _CONTENT
        # every state only reads: with nothing unread and more to come the next would wait
        return True

    def _close_call(self, cut: bool = False) -> None:
        """The arguments ended: complete the call if they are one JSON object, else abandon it.

        Empty arguments give ``{}``, unless the output was ``cut`` off (ended)
        there. Arguments written as one JSON string whose text is a JSON
        object (double-encoded, as the template rendered earlier calls) are
        that object.
        """
        held = self._args.close(cut)
        string = "".join(self._hold)
        self._hold = []
        value = None
        first = self._args.first
        if held is not None and first != "[":  # (a top-level number never closes: held is None)
            if first != '"':
                self._emit_arguments(held)
                self._end_call()
                return
            try:
                value = strict_loads(json.loads(string + held))
            except (ValueError, TypeError, RecursionError):
                value = None
        if isinstance(value, dict):
            self._emit_arguments(json_text(value))
            self._end_call()
        else:
            self._abandon_call()

    def _send(self, text: str) -> bool:
        """A piece of argument text: validated, streamed up to the top-level close; true when the call broke.

        Arguments written as a JSON string (double-encoded) are held whole
        until the call ends. At the first character that cannot continue a
        JSON value the call is broken: the text from there is held by the
        base's broken state (``broken_ends``, ``broken_restarts``).
        """
        if not text:
            return False
        j, event = self._args.scan(text, 0)  # (RawArguments' per-piece path: scan, then _sent)
        return self._sent(text, j, event)

    def _sent(self, text: str, j: int, event: int) -> bool:
        """:meth:`_send` after the arguments' ``scan(text, 0)`` stopped at ``j`` with ``event``."""
        args = self._args
        if not event:
            send, used = text, len(text)
        else:
            send, used = args.scanned(text, j, event)
        first = args.first
        if first == '"':
            self._hold.append(send)
        elif first in ("", "{"):  # nothing else can be a call's arguments
            self._emit_arguments(send)
        if used == len(text):
            return False
        self._hold = []
        self._args = RawArguments(objects_only=False)
        self._broken(text[used:])
        return True

    # ------------------------------------------------------------------ states
    def _s_content(self, final: bool) -> bool:
        if self._in_section:
            # text in a section outside calls is dropped: not the model's answer (docs/formats.md)
            _, marker = self.scanner.find(_M_SECTION, final)
            if marker is None:
                return False
            return self._section_marker(marker, final)
        text, marker = self.scanner.find(_M_CONTENT, final)
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        return self._section_marker(marker, final)

    def _s_id(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_M_ID, final)
        if marker is None or marker is OVER:
            if final or marker is OVER:  # the output ended in a call id, or it is too long: no call
                self.scanner.head_text()
                self._state = _CONTENT  # (in the section)
                return True
            return False
        raw = self.scanner.head_text()
        if marker == ARGUMENT_BEGIN:
            tools = self.tools
            if tools is not self._names_of:  # the tool names, once per tools object
                self._names_of, self._names = tools, tool_names(tools)
            name = resolve_name(raw, tools, self._names)
            if not is_framed_name(name):  # no name any client dispatches (docs/formats.md, "Tool names")
                name = ""
        else:
            name = ""
        if not name:  # no call: the id text is text of the section
            if marker == ARGUMENT_BEGIN:
                self._state = _CONTENT  # (in the section)
                return True
            return self._section_marker(marker, final)
        self._begin_call(name)
        self._hold = []
        self._args = RawArguments(objects_only=False)
        self._state = _ARGS
        return True

    def _s_args(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_ARGS)  # a partial token stays unread, even at the end
        if text:
            args = self._args
            j, event = args.scan(text, 0)  # (RawArguments' per-piece path)
            if not event and args.first == "{":  # an object's piece read whole: sent as it is (else _sent decides)
                self._emit_arguments(text)
            elif self._sent(text, j, event):
                if marker is not None:  # read again by the broken state
                    self.scanner.unread(len(marker))
                return True
        if marker is None:
            if final:  # the output ended in the arguments (or in a token after them): cut there
                self.scanner.take_all()
                self._close_call(cut=True)
                self._state = _CONTENT  # (in the section)
                return True
            return False
        if self._args.inside:
            if marker == CALL_END:
                self._state = _END_CHECK
                self._pending = []
                return True
            self._send(marker)
            return True
        self._close_call()
        return self._section_marker(marker, final)

    def _s_end_check(self, final: bool) -> bool:
        """``<|tool_call_end|>`` inside a JSON string: a real end only before another call, the section end or the end."""
        scanner = self.scanner
        ws = scanner.skip_whitespace()
        if ws:
            self._pending.append(ws)
        if scanner.at_end():
            if final:
                self._close_call()
                self._state = _CONTENT  # (in the section)
                return True
            return False
        hit = scanner.match(_M_AFTER_END, final)
        if hit is PARTIAL:
            return False
        if hit is None:
            pending, self._pending = CALL_END + "".join(self._pending), []
            self._state = _ARGS
            self._send(pending)
            return True
        self._pending = []
        self._close_call()
        return self._section_marker(hit, final)
