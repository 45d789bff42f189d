"""SoftBank Sarashina tool calls (``sarashina``).

The format (source: SMG's ``crates/tool_parser/src/parsers/sarashina.rs`` and
its tests; no public chat template writes calls) and every reading rule:
``docs/formats.md``, "Sarashina" (the one place). A Python-literal list of
call dicts, after the ``<|tool_calls|>`` special token, or bare at the start
of the output (a detokenizer that skips special tokens drops the token)::

    CONTENT<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo', 'days': 3}}]

Each element is read by the one Python literal reader
(:class:`callscale.parsers.pyliteral.PyLiteralReader`): when its ``'name'``
comes before its ``'arguments'`` dict, the call starts at that dict's ``{``
and its arguments' JSON text streams as the reader writes it (the reader's
streamed member, as :class:`callscale.parsers.jsonscan.JsonCallReader` streams
a JSON call's); any other element is decided when it closes. The common head,
``{'name': 'NAME', 'arguments': {``, is matched whole
(:func:`callscale.parsers.pyliteral.member_head_pattern`), as the JSON call
reader matches its own.
"""

from __future__ import annotations

import re

from . import register
from .base import MAX_HEAD, ToolParser
from .jsonscan import is_call_name
from .pyliteral import PyLiteralReader, json_text, member_head_pattern, member_state
from .scanner import PARTIAL, markers

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" is base.ToolParser's; ``ws``: whitespace; "a / b": the one the reading decides).
SARASHINA_TRANSITIONS = {
    "begin": {"ws [ ws { (a bare list at the start of the output)": "array", "anything else": "content"},
    "content": {"text": "content", "<|tool_calls|>": "calls"},
    "calls": {"ws [": "array", "<|tool_calls|> again (dropped)": "calls",
              "anything else (the token dropped, the text content)": "content"},
    "array": {"ws {": "item", "ws ,": "array", "ws ] (the list's end), or anything else (content)": "content"},
    "item": {"an element (a call, else content)": "array",
             "its arguments' dict after a name (the call starts)": "arguments",
             "text that is no literal (the element is a broken call)": "broken",
             "the end of the output inside the element (a cut call: dropped)": "content"},
    "arguments": {"the arguments' text (streamed), then the element's end": "array",
                  "text that is no literal (a broken call)": "broken",
                  "the end of the output inside the element (a cut call: dropped)": "content"},
    "broken": {"<|tool_calls|> (the text after the break is content)": "content / calls"},
}

__all__ = ["TOOL_CALLS", "SPECIAL_TOKENS", "SarashinaParser"]

#: The calls token (special: id 127 of the Sarashina tokenizer, per SMG's parser).
TOOL_CALLS = "<|tool_calls|>"
SPECIAL_TOKENS = (TOOL_CALLS,)

_M_CONTENT = markers(TOOL_CALLS)
_M_LIST = markers("[", TOOL_CALLS)
_M_ARRAY = markers("{", ",", "]")
_ARGUMENTS = "arguments"  # the element's key whose dict streams
#: The common head of an element, after its ``{``: ``'name': 'NAME', 'arguments': {`` (matched whole)
_HEAD = member_head_pattern(("name",), _ARGUMENTS)
_BARE = re.compile(r"\s*(\[)?\s*")
_SPACE = re.compile(r"\s*")


@register("sarashina")
class SarashinaParser(ToolParser):
    """Streaming parser of Sarashina's Python-literal call lists; rules: ``docs/formats.md``, "Sarashina"."""

    transitions = SARASHINA_TRANSITIONS
    _content_markers = _M_CONTENT
    # a broken call's text from where it broke is content (at the end of the output, or a new calls token)
    broken_restarts = (TOOL_CALLS,)

    def __init__(self) -> None:
        super().__init__()
        self._state = "begin"
        self._reader: PyLiteralReader | None = None  # the element's reader (None: its head not read yet)
        self._item: list[str] = []  # the element's text read so far (content if it makes no call)
        self._streams: bool | None = None  # the element's call streams (None: its arguments not open yet)

    def _open(self, marker: str, final: bool) -> bool:
        """``<|tool_calls|>`` in content: a list follows (its whitespace before ``[``: a bounded head)."""
        self.scanner.head_begin()
        self._state = "calls"
        return True

    def _s_begin(self, final: bool) -> bool:
        """The start of the output: a bare list (``[`` then ``{``, whitespace around them) opens the calls."""
        sc = self.scanner
        text = sc.peek(MAX_HEAD)
        end = _BARE.match(text).end()
        if end == len(text) and not final and end < MAX_HEAD:
            return False  # blank so far, or "[" and blank: wait
        if text[end:end + 1] == "{" and "[" in text[:end]:
            sc.take(end)
            self._state = "array"
        else:
            self._state = "content"
        return True

    def _s_calls(self, final: bool) -> bool:
        sc = self.scanner
        if sc.skip_repeats(TOOL_CALLS):  # the token again (a degenerate model): the ones before, and the blank, dropped
            sc.head_begin()
            if sc.at_end():
                return False
        sc.head_run(_SPACE, final)
        hit = None if sc.head_over() else sc.match(_M_LIST, final)
        if hit is PARTIAL:
            return False
        blank = sc.head_text()
        if hit == "[":
            self._state = "array"
        elif hit == TOOL_CALLS:  # the token again: the one before, and the whitespace after it, dropped
            sc.head_begin()
        else:  # no list: the token is dropped, what follows is content
            self._emit_content(blank)
            self._state = "content"
        return True

    def _s_array(self, final: bool) -> bool:
        """In the list, between elements."""
        sc = self.scanner
        hit = sc.match_after_space(_M_ARRAY, final)
        if hit is PARTIAL:
            return False
        if hit == "{":
            self._reader = None
            self._item = ["{"]
            self._streams = None
            self._state = "item"
        elif hit != ",":  # the list's end (or text that ends it: content)
            self._state = "content"
        return True

    def _s_item(self, final: bool) -> bool:
        """An element, up to the bracket that closes it: a call, or content; a broken call where it stops being
        a literal (a calls token in it is its text: inside a string, else where it breaks)."""
        sc = self.scanner
        if self._streams is None and not final:  # the element's head: read in one piece when it is whole
            rest = sc.rest()
            if len(rest) < MAX_HEAD and "{" not in rest and "}" not in rest and "]" not in rest:
                return False  # (no bracket yet: the arguments' dict, or the element's end, not come; bounded)
        reader = self._reader
        if reader is None:  # the head: the common one matched whole (pyliteral.member_head_pattern), else read
            hit = _HEAD.match(sc.rest())
            self._reader = reader = PyLiteralReader(_ARGUMENTS)
            name = hit and (hit[1] or hit[2])
            if name and self._call_starts({"name": name}):
                sc.take(hit.end())
                self._streams = True
                self._emit_arguments(reader.open_member({"name": name}, "'" not in hit[0]))
                self._state = "arguments"
                return True
            reader.feed("{", True)
        text = sc.take_all()
        used = reader.feed(text, True)
        if reader.member_head is not None and self._streams is None:  # the arguments' dict opened in this piece
            self._streams = self._call_starts(reader.member_head)
            if self._streams:  # (its final "}" sent when the element closes: a broken call's text is no object)
                self._emit_arguments(reader.take_member())
                self._state = "arguments"  # (_member_read's answer decides otherwise when the element ends here)
        elif used == len(text) and not (reader.closed or reader.failed or final):  # (_member_read's last case)
            self._item.append(text)
            return False
        return self._member_read(text, used, final)

    #: The started call's element: its arguments' JSON text as the reader writes it, to the element's end
    #: (``pyliteral.member_state``: one frame a delta); after each piece, :meth:`_member_read`.
    _s_arguments = member_state

    def _member_read(self, text: str, used: int, final: bool) -> bool:
        """After the reader read ``text`` (``used``: :meth:`PyLiteralReader.feed`'s answer): the element closed
        (the rest read again in the list), broke, was cut by the end of the output, or goes on."""
        sc = self.scanner
        reader = self._reader
        streams = self._streams
        if reader.closed:  # the element closed: the rest is read again in the list
            if used < 0:  # it closed in a piece read before (held by the reader as a possible escape)
                held = reader.held_before
                sc.unread(len(text))
                sc.push_back(held[len(held) + used:])
                if not streams:
                    item = "".join(self._item)
                    self._item = [item[:len(item) + used]]
            else:
                if not streams:
                    self._item.append(text[:used])
                sc.unread(len(text) - used)
            self._element()
            self._state = "array"
            return True
        if reader.failed:  # a broken call: its text up to the break is dropped, what follows read by the base state
            self._item = []
            held = reader.held_before if used < 0 else ""
            sc.push_back((held + text)[len(held) + used:])
            return self._broken()
        if not streams:
            self._item.append(text)
        if final:  # the end of the output cut the element: a cut call, dropped
            self._abandon_call()
            self._item = []
            self._state = "content"
        return False

    def _call_starts(self, head: dict) -> bool:
        """The arguments' dict opened after ``head`` (the element's members before it): the call starts when
        they hold a name (the call streams), else the element is decided when it closes."""
        name = head.get("name")
        if isinstance(name, str) and len(name) <= MAX_HEAD and is_call_name(name):
            self._item = []
            self._begin_call(name)
            return True
        return False

    def _element(self) -> None:
        """A whole element: a call when it is ``{'name': NAME, 'arguments': {...}}``, else its text is content."""
        if self._streams:  # the call streamed: its arguments' "}"
            self._emit_arguments("}")
            self._end_call()
            return
        text = "".join(self._item)
        self._item = []
        ok, value = self._reader.end()
        name = value.get("name") if ok and isinstance(value, dict) else None
        arguments = value.get("arguments", {}) if name is not None else None
        if isinstance(name, str) and len(name) <= MAX_HEAD and is_call_name(name) and isinstance(arguments, dict):
            self._begin_call(name)
            self._emit_arguments(json_text(arguments))
            self._end_call()
        else:
            self._emit_content(text)
