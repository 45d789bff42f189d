"""Inkling tool calls (``inkling``).

The format (sources: vLLM 0.34's ``vllm/parser/inkling.py`` and SGLang's
``inkling_detector.py``, read for facts; Inkling's chat template as its
published ports render it) and every reading rule: ``docs/formats.md``,
"Inkling" (the one place). The generation prompt ends in
``<|message_model|>``, so the output opens in a message header::

    <|content_text|>CONTENT<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>
    {"name":"get_weather","args":{"city":"Paris"}}<|end_message|><|content_model_end_sampling|>

This module holds the tokens, markers, the transition table and the
``_s_<state>`` steps; the call object is read by
:class:`callscale.parsers.jsonscan.JsonCallReader` (shared with ``qwen3`` and
``llama3_json``), the rest by base.py's shared states (content, reasoning,
broken calls, bounded heads) (``callscale/parsers/README.md``).
"""

from __future__ import annotations

import logging

from . import register
from .base import MAX_HEAD, ToolParser
from .jsonscan import JsonCallReader, json_call_transitions
from .scanner import OVER, PARTIAL, Markers, markers
from .schema import is_tool_name

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" and "broken" are base.ToolParser's; the json_* states JsonCallReader's;
# ``ws``: whitespace; KIND: one of the content-kind tokens; END: <|end_message|> or <|content_model_end_sampling|>).
INKLING_TRANSITIONS = {
    "between": {"(the output's start, a block's end: a header not opened by <|message_model|>)": "header"},
    "header": {"NAME <|content_invoke_tool_json|> (NAME the call's, or text if the object names another)": "json_open",
               "<|content_text|>, a raw or error tool block's KIND (text before it is content)": "content",
               "<|content_thinking|>": "thinking", "<|message_model|>": "header", "END": "between",
               "past MAX_HEAD, the end of the output (text: content; a name after <|message_model|>: cut markup)":
               "content"},
    "content": {"text": "content", "<|message_model|>": "header", "<|content_thinking|>": "thinking",
                "<|content_invoke_tool_json|> (no header: the object names the call)": "json_open",
                "END (markup)": "between", "<|content_text|>, a raw or error tool block's KIND (markup)": "content"},
    "thinking": {"text (reasoning)": "thinking", "END": "between",
                 "<|message_model|>, <|content_invoke_tool_json|> (read again)": "content"},
    **json_call_transitions(
        {"the call started and its object closed": "after_object", "no call object (content)": "content",
         "<|content_invoke_tool_json|> again at once (the empty block dropped)": "json_open",
         "a call that broke, or a header's call whose object did": "broken"}),
    "after_object": {"ws END, ws and the end of the output (then read at once as between reads)": "header",
                     "ws END, then layout whitespace up to the end of what arrived (between waits for more)":
                         "between",
                     "ws <|message_model|> or a KIND (its end left out; read again)": "content",
                     "anything else": "broken"},
    "broken": {"END (the call's text dropped)": "between",
               "<|message_model|>, a KIND (the text is content)": "content"},
}

log = logging.getLogger(__name__)

__all__ = [
    "InklingParser", "MESSAGE_MODEL", "CONTENT_TEXT", "CONTENT_THINKING", "INVOKE_TOOL_JSON", "INVOKE_TOOL_TEXT",
    "TOOL_ERROR", "END_SAMPLING", "END_MESSAGE", "ARGS_KEY", "SPECIAL_TOKENS", "MODEL_SPECIAL", "INKLING_TRANSITIONS",
]

#: A model message starts; the text up to the content-kind token is its header (a tool call's function name).
MESSAGE_MODEL = "<|message_model|>"
#: The content kinds: visible text, reasoning, a tool call's JSON object, a raw tool call, a tool error.
CONTENT_TEXT = "<|content_text|>"
CONTENT_THINKING = "<|content_thinking|>"
INVOKE_TOOL_JSON = "<|content_invoke_tool_json|>"
INVOKE_TOOL_TEXT = "<|content_invoke_tool_text|>"
TOOL_ERROR = "<|content_tool_error|>"
#: Ends sampling (a block's end too); ``END_MESSAGE`` ends every block.
END_SAMPLING = "<|content_model_end_sampling|>"
END_MESSAGE = "<|end_message|>"
#: The call object's arguments key: ``{"name": NAME, "args": {...}}``.
ARGS_KEY = "args"

SPECIAL_TOKENS = (MESSAGE_MODEL, CONTENT_TEXT, CONTENT_THINKING, INVOKE_TOOL_JSON, INVOKE_TOOL_TEXT, TOOL_ERROR,
                  END_SAMPLING, END_MESSAGE)
#: Every marker is a dedicated special token (vLLM 0.34 ``INKLING_SPECIAL_TOKENS``).
MODEL_SPECIAL = SPECIAL_TOKENS

_KINDS = (CONTENT_TEXT, CONTENT_THINKING, INVOKE_TOOL_JSON, INVOKE_TOOL_TEXT, TOOL_ERROR)
_ENDS = (END_MESSAGE, END_SAMPLING)
_M_CONTENT = markers(MESSAGE_MODEL, *_KINDS, *_ENDS)
_M_HEADER = _M_CONTENT
_M_THINKING = markers(*_ENDS, MESSAGE_MODEL, INVOKE_TOOL_JSON)
_M_AFTER_OBJECT = markers(*_ENDS, MESSAGE_MODEL, *_KINDS)


@register("inkling")
class InklingParser(JsonCallReader, ToolParser):
    """Streaming parser of Inkling tool calls; rules: ``docs/formats.md``, "Inkling".

    Arguments stream as the raw JSON text of the ``args`` object (read by
    :class:`callscale.parsers.jsonscan.JsonCallReader`); a thinking block is
    reasoning. Never raises on model output.
    """

    transitions = INKLING_TRANSITIONS
    writes_reasoning = True
    _content_markers = _M_CONTENT
    argument_keys = (ARGS_KEY,)
    #: vLLM's converter: an object with a name and no ``args`` is a call with ``{}``.
    _name_only_is_a_call = True
    max_head = MAX_HEAD
    broken_ends = _ENDS
    broken_resume = "between"
    broken_restarts = (MESSAGE_MODEL, *_KINDS)

    def __init__(self) -> None:
        super().__init__()
        self._lexer = None
        self._raw: list[str] = []
        self._known_name: str | None = None
        self._header = ""  # text outside a message before a tool block: content unless it is the call's name
        # the output opens in the header of the message the generation prompt's <|message_model|> began
        self._header_opened = False
        self._layout_run = False  # whitespace after a call being read, over several deltas (layout or content)
        self._state = "between"

    def _open(self, marker: str, final: bool) -> bool:
        """A token read in content (base ``_s_content``)."""
        if marker == INVOKE_TOOL_JSON:
            self._known_name = None  # (_call_object's work inline: a repeated token costs one frame less)
            self._header = ""
            self._open_object("")
        elif marker == MESSAGE_MODEL:
            self._header_opened = True
            self.scanner.head_begin()
            self._state = "header"
        elif marker == CONTENT_THINKING:
            self._state = "thinking"
        elif marker in _ENDS:
            return self._s_between(final)
        return True  # (a text or raw tool block's kind: markup, read on as content)

    def _s_between(self, final: bool) -> bool:
        """Between blocks (and at the output's start): text up to a token is read as a header not opened by
        ``<|message_model|>`` (the model's text unless it names the call that follows). After a call, the
        whitespace before it is layout (base ``_emit_content``: held as its length, dropped before the next
        call), not header text: a header is bounded (``MAX_HEAD``), layout is not."""
        self._header_opened = False
        if self._after_call or self._layout_run:  # (the run goes on as it began, also once decided as content)
            sc = self.scanner
            self._emit_content(sc.skip_whitespace())
            if not final and sc.at_end():
                self._layout_run = True
                self._state = "between"
                return False
        self._layout_run = False
        self.scanner.head_begin()
        self._state = "header"
        return True

    # ------------------------------------------------------------------ the message header
    def _s_header(self, final: bool) -> bool:
        """A message's header, up to a token (a bounded head): a tool call's function name, else the model's text."""
        sc = self.scanner
        _, marker = sc.head_find(_M_HEADER, final)
        if marker is None:
            if not final:
                return False
            # the end of the output: after <|message_model|> a name is a cut header (markup), a token the end
            # cut after it too; else the model's text
            text = sc.head_text()
            if not self._header_opened:
                self._emit_content(text)
            else:
                text = text[:_M_HEADER.cut_start(text)]
                name = text.strip()
                if name and not is_tool_name(name):
                    self._emit_content(text)
            self._state = "content"
            return True
        text = sc.head_text()
        if marker is OVER:  # no header: the model's text
            self._emit_content(text)
            self._state = "content"
            return True
        name = text.strip()
        if marker == INVOKE_TOOL_JSON and name and is_tool_name(name):
            if self._header_opened:  # <|message_model|>NAME: the call's name
                self._call_object(name, "")
            else:  # text outside a message: the call's name if its object says so, else the model's text
                self._call_object(None, text)
            return True
        if not text.isspace():
            self._emit_content(text)  # no function's name: text (SGLang keeps it; vLLM drops it as metadata)
        self._state = "content"
        return self._open(marker, final)

    # ------------------------------------------------------------------ reasoning
    def _s_thinking(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_THINKING, final)
        self._emit_reasoning(text)
        if marker is None:
            return False
        if marker in _ENDS:
            return self._s_between(final)
        self.scanner.unread(len(marker))  # a message or a call opened in an unclosed thinking block: read again
        self._state = "content"
        return True

    # ------------------------------------------------------------------ the call object (JsonCallReader's hooks)
    def _call_object(self, name: str | None, header: str) -> None:
        """A tool block's object follows: ``name`` the call's (from ``<|message_model|>NAME``) or None; ``header``
        text outside a message, a name not yet known to be the call's."""
        self._known_name = name
        self._header = header
        self._open_object("")  # (the token is markup: the object's text alone is content if it is no call)

    def _start_object_call(self) -> None:
        """The call starts (JsonCallReader): text outside a message that names another function was the model's."""
        header, self._header = self._header, ""
        if header and header.strip() != self._lexer.name:
            self._emit_content(header)
        JsonCallReader._start_object_call(self)

    _s_json = JsonCallReader._read_object

    def _not_a_call(self, *more: str, final: bool = False, expected: Markers | None = None) -> bool | None:
        """No call object: its text is content, unless the end of the output cut it; blanks alone are markup. An
        object under a header that named the call (its name disagreeing, a JSON error) is a broken call."""
        if self._known_name is not None and self._lexer is not None:
            self._raw = []
            self._broken()
            return
        if self._header:
            self._emit_content(self._header)
            self._header = ""
        elif self._lexer is None and not (more or final) and self.scanner.match_literal(INVOKE_TOOL_JSON) is True:
            # the token again at once (a degenerate model repeating it): the next block, without content's search
            self._known_name = None
            self._open_object("")
            return True
        raw = self._raw
        text = raw[0] if len(raw) == 1 else "".join(raw)
        if more:
            text += "".join(more)
        if text and not text.isspace():
            self._head_no_call(text, final, expected)
        self._raw = []
        self._state = "content"
        return None

    def _drop_call(self, final: bool = False, expected: Markers | None = None) -> None:
        log.debug("inkling: malformed call %s abandoned", self._current)
        self._cut_by_end(final, expected)
        self._broken()

    def _object_done(self) -> None:
        self._state = "after_object"

    def _s_after_object(self, final: bool) -> bool:
        """Whitespace, then a block's end (or the end of the output, or the next block's token: read again): the
        call ends; anything else breaks it."""
        sc = self.scanner
        marker = sc.match_after_space(_M_AFTER_OBJECT, final)
        if marker is PARTIAL:
            return False
        if marker is None and not self._cut_by_end(final, _M_AFTER_OBJECT):
            self._drop_call(final, _M_AFTER_OBJECT)
            return True
        self._emit_arguments("}")
        self._end_call()
        if marker is None or marker in _ENDS:
            return self._s_between(final)
        sc.unread(len(marker))
        self._state = "content"
        return True
