"""Cohere Command A / Command R7B tool calls (``cohere_command``).

The format (sources: the models' chat templates, CohereForAI c4ai-command-r7b-12-2024 and Command A's
``Cohere2MoE``; vLLM 0.34's ``cohere_command`` shim and ``vllm/parser/cohere_command.py``; SMG's
``crates/tool_parser/src/parsers/cohere.rs``, read for facts) and every reading rule:
``docs/formats.md``, "Cohere Command" (the one place)::

    <|START_THINKING|>PLAN<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}
    ]<|END_ACTION|>

A text turn is ``<|START_RESPONSE|>TEXT<|END_RESPONSE|>``. Each call object is read by the shared
:class:`callscale.parsers.jsonscan.JsonCallReader` (name keys ``tool_name`` / ``name``, argument keys
``parameters`` / ``arguments``); this module holds the tokens, markers, the transition table and the
``_s_<state>`` steps around the objects. Nothing here raises on model output; lengths are in characters.
"""

from __future__ import annotations

from .jsonscan import json_call_transitions

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content", "think" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b":
# the one the reading decides; tests/parsers/test_transitions.py holds the states to the class's).
COHERE_TRANSITIONS = {
    "content": {"text": "content", "START_ACTION": "action", "START_THINKING": "think",
                "START_RESPONSE, END_RESPONSE, START_TEXT, END_TEXT, END_THINKING, END_ACTION (markup)": "content"},
    "think": {"text END_THINKING": "content"},
    "action": {"ws [": "list", "ws { (one object, no list)": "json_open", "ws END_ACTION (an empty block: markup)":
               "content", "ws START_ACTION (repeated: markup)": "action",
               "anything else (the token is markup, the text content)": "content"},
    "list": {"ws {": "json_open", "ws ] (no call: markup)": "end",
             "anything else, before a call (the list's text is content)": "content", "anything else": "broken"},
    # the call object: JsonCallReader's states, and where its hooks send cohere_command
    **json_call_transitions({"the call started and its object closed": "after_object",
                             "no call object before a call (content)": "content",
                             "no call object after a call (held as a broken call's)": "broken",
                             "a call that broke": "broken_json", "the output ended in it (cut: dropped)": "content"}),
    "broken_json": {"a broken call's object up to its } (dropped)": "after_object",
                    "END_ACTION (dropped)": "content", "START_ACTION (the held text is content)": "action"},
    "after_object": {"ws ,": "list", "ws ]": "end", "ws END_ACTION (the list's ] missing)": "content",
                     "anything else": "broken"},
    "end": {"ws END_ACTION": "content", "anything else": "broken"},
    "broken": {"END_ACTION (the call's text dropped)": "content", "START_ACTION (the text is content)": "action"},
}

import logging

from . import register
from .base import MAX_HEAD, ToolParser
from .jsonscan import JsonCallLexer, JsonCallReader, JsonTracker
from .scanner import PARTIAL, markers

log = logging.getLogger(__name__)

__all__ = [
    "CohereCommandParser", "START_ACTION", "END_ACTION", "START_THINKING", "END_THINKING", "START_RESPONSE",
    "END_RESPONSE", "START_TEXT", "END_TEXT", "CALL_ID_KEY", "NAME_KEYS", "ARGUMENT_KEYS", "SPECIAL_TOKENS",
    "MODEL_SPECIAL", "COHERE_TRANSITIONS",
]

START_ACTION = "<|START_ACTION|>"
END_ACTION = "<|END_ACTION|>"
START_THINKING = "<|START_THINKING|>"
END_THINKING = "<|END_THINKING|>"
START_RESPONSE = "<|START_RESPONSE|>"
END_RESPONSE = "<|END_RESPONSE|>"
#: Command A Vision / MoE's text delimiters (vLLM's ``COMMAND_A_PLUS_JSON_TAG``; SMG drops them too).
START_TEXT = "<|START_TEXT|>"
END_TEXT = "<|END_TEXT|>"
#: The call object's keys as the templates write them: ``{"tool_call_id": "0", "tool_name": NAME, "parameters": ARGS}``.
CALL_ID_KEY = "tool_call_id"
#: The name's key, then SMG's fallback (``name``); the arguments' key, then SMG's fallback (``arguments``).
NAME_KEYS = ("tool_name", "name")
ARGUMENT_KEYS = ("parameters", "arguments")

SPECIAL_TOKENS = (START_ACTION, END_ACTION, START_THINKING, END_THINKING, START_RESPONSE, END_RESPONSE,
                  START_TEXT, END_TEXT)
#: Tokens of the Command A / R7B vocabulary marked special (vLLM keeps them with ``skip_special_tokens=False``).
MODEL_SPECIAL = SPECIAL_TOKENS

_CONTENT = markers(START_ACTION, START_THINKING, START_RESPONSE, END_RESPONSE, START_TEXT, END_TEXT, END_THINKING,
                   END_ACTION)
_THINK_END = markers(END_THINKING)
_ACTION = markers("[", "{", END_ACTION, START_ACTION)
_LIST = markers("{", "]")
_AFTER_OBJECT = markers(",", "]", END_ACTION)
_END = markers(END_ACTION)
_RESTARTS = (START_ACTION,)
_ENDS = (END_ACTION,)


@register("cohere_command")
class CohereCommandParser(JsonCallReader, ToolParser):
    """Streaming parser of Cohere Command tool calls; rules: ``docs/formats.md``, "Cohere Command"."""

    transitions = COHERE_TRANSITIONS
    name_keys = NAME_KEYS
    argument_keys = ARGUMENT_KEYS
    #: The templates' head, matched whole: ``{"tool_call_id": "0", "tool_name": NAME, "parameters": {``.
    head_keys = (CALL_ID_KEY, NAME_KEYS[0])
    #: SMG's reading: an object with a name and no ``parameters`` is a call with ``{}``.
    _name_only_is_a_call = True
    max_head = MAX_HEAD
    writes_reasoning = True
    reasoning_end = _THINK_END
    _content_markers = _CONTENT
    broken_resume = {END_ACTION: "content"}
    broken_restarts = (START_ACTION,)

    def __init__(self) -> None:
        super().__init__()
        self._lexer: JsonCallLexer | None = None
        self._raw: list[str] = []  # JsonCallReader's: the head of an object not yet a call
        self._head: str | None = None  # the block's text before its first call (content if it holds none)
        self._rest = JsonTracker()  # a broken call's JSON state, to find the end of its object

    def _open(self, marker: str, final: bool) -> bool:
        if marker == START_ACTION:
            self._confirm_ws.clear()
            self._state = "action"
        elif marker == START_THINKING:
            self._state = "think"
        return True  # (the other tokens: markup, read on in content)

    # ------------------------------------------------------------------ the block
    def _s_action(self, final: bool) -> bool:
        """After ``<|START_ACTION|>``: the list's ``[`` (or one object's ``{``); an empty block is markup."""
        sc = self.scanner
        marker = sc.match(_ACTION, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:  # not a block: the token is markup, what follows content (with its whitespace)
            text = self._confirm_text()
            if not (final and sc.at_end()):
                self._emit_content(text)
            self._state = "content"
            return True
        if marker == START_ACTION:  # the action token again: markup, read on after it (its whitespace layout)
            if self._confirm_ws.runs:
                self._confirm_ws.clear()
            return True
        head = self._confirm_text()
        if marker == "[":
            self._head = head + "["
            self._state = "list"
        elif marker == "{":
            self._head = ""
            sc.unread(1)
            self._open_object(head)
        else:
            self._state = "content"  # (an empty block)
        return True

    def _s_list(self, final: bool) -> bool:
        sc = self.scanner
        marker = sc.match(_LIST, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == "{":
            sc.unread(1)
            head = self._head
            self._open_object(self._confirm_text() if head is None else head + self._confirm_text())
        elif marker == "]":
            self._confirm_ws.clear()
            self._state = "end"
        elif self._head is not None:  # no call yet: the list's text is content (the token markup)
            text = self._head + self._confirm_text()
            self._head_no_call(text, final)
            self._state = "content"
        else:
            self._confirm_ws.clear()
            return self._fail("no call object after ,", final)
        return True

    def _s_after_object(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_AFTER_OBJECT, final)
        if marker is PARTIAL:
            return False
        if marker == ",":
            self._state = "list"
        elif marker == "]":
            self._state = "end"
        elif marker == END_ACTION:
            self._state = "content"
        else:
            return self._fail("no , or ] after a call object", final)
        return True

    def _s_end(self, final: bool) -> bool:
        marker = self.scanner.match_after_space(_END, final)
        if marker is PARTIAL:
            return False
        if marker is None:
            return self._fail("no <|END_ACTION|> after the list", final)
        self._state = "content"
        return True

    # ------------------------------------------------------------------ JsonCallReader's hooks
    def _not_a_call(self, final: bool = False) -> None:
        """The object is no call: before the block's first call, its text (the list's ``[`` on) is content and
        the action token markup; after a call, the block is broken (its text dropped at ``<|END_ACTION|>``)."""
        raw = "".join(self._raw)
        self._raw = []
        if final:
            self.scanner.take_all()  # the output cut the block: its markup dropped
            self._state = "content"
        elif self._head is not None:
            self._emit_content(raw)
            self._state = "content"
        else:
            self._broken(raw)

    def _drop_call(self) -> None:
        """The started call broke (DESIGN.md): its text is dropped up to the ``}`` that closes its object (the list
        reads on) or ``<|END_ACTION|>``; another action token first makes it content."""
        log.debug("cohere_command: call object broke")
        self._head = None
        self._break_call()
        rest = self._rest = JsonTracker()
        lexer = self._lexer
        if lexer is not None:
            rest.inside, rest.escape, rest.depth = lexer.inside, lexer.escape, lexer.depth
        self._state = "broken_json"

    def _s_broken_json(self, final: bool) -> bool:
        end = self._hold_broken_json(self._rest, _RESTARTS, final, _ENDS)
        if end is None:
            return False
        if end == "}":
            self._state = "after_object"
        elif end == END_ACTION:
            self._state = "content"
        elif end:  # another action token: the held text was content
            self._confirm_ws.clear()
            self._state = "action"
        return True

    def _object_done(self) -> None:
        self._head = None
        self._emit_arguments("}")
        self._end_call()
        self._state = "after_object"

    _s_json = JsonCallReader._read_object

    def _fail(self, why: str, final: bool) -> bool:
        log.debug("cohere_command: block broken: %s", why)
        if final and self.scanner.at_end():
            self._state = "content"
            return True
        return self._broken()
