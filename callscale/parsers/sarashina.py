"""SoftBank Sarashina tool calls (``sarashina``).

The format (source: SMG's ``crates/tool_parser/src/parsers/sarashina.rs`` and
its tests; no public chat template writes calls) and every reading rule:
``docs/formats.md``, "Sarashina" (the one place). A Python-literal list of
call dicts, after the ``<|tool_calls|>`` special token, or bare at the start
of the output (a detokenizer that skips special tokens drops the token)::

    CONTENT<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo', 'days': 3}}]

Each element is read by the one Python literal reader
(:class:`callscale.parsers.pyliteral.PyLiteralReader`), as Mistral's array
form reads its JSON elements: a call when it closes, with its arguments'
JSON text.
"""

from __future__ import annotations

import re

from . import register
from .base import MAX_HEAD, ToolParser
from .jsonscan import is_call_name
from .pyliteral import PyLiteralReader, json_text
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
             "text that is no literal (the element is a broken call)": "broken",
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
        self._reader = PyLiteralReader()
        self._item: list[str] = []  # the element's text read so far (content if it makes no call)

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
            self._reader = reader = PyLiteralReader()
            reader.feed("{", True)
            self._item = ["{"]
            self._state = "item"
        elif hit != ",":  # the list's end (or text that ends it: content)
            self._state = "content"
        return True

    def _s_item(self, final: bool) -> bool:
        """An element, up to the bracket that closes it: a call, or content; a broken call where it stops being
        a literal (a calls token in it is its text: inside a string, else where it breaks)."""
        sc = self.scanner
        text = sc.take_all()
        reader = self._reader
        used = reader.feed(text, True)
        if reader.closed:  # the element closed: the rest is read again in the list
            if used < 0:  # it closed in a piece read before (held by the reader as a possible escape)
                sc.unread(len(text))
                item = "".join(self._item)
                self._item = [item[:len(item) + used]]
                sc.push_back(item[len(item) + used:])
            else:
                self._item.append(text[:used])
                sc.unread(len(text) - used)
            self._element()
            self._state = "array"
            return True
        if reader.failed:  # a broken call: its text up to the break is dropped, what follows read by the base state
            item = "".join(self._item)
            self._item = []
            sc.push_back((item + text)[len(item) + used:])
            return self._broken()
        self._item.append(text)
        if final:  # the end of the output cut the element: a cut call, dropped
            self._item = []
            self._state = "content"
        return False

    def _element(self) -> None:
        """A whole element: a call when it is ``{'name': NAME, 'arguments': {...}}``, else its text is content."""
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
