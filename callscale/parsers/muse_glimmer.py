"""Meta Muse Glimmer tool calls (``muse_glimmer``).

The format (sources: the Muse-Glimmer-30B ``chat_template.jinja`` as the
engines read it: vLLM's ``vllm/parser/muse_glimmer.py``, SMG's
``muse_glimmer.rs``, llama.cpp's ``common_chat_params_init_muse_glimmer``;
a real output in llama.cpp issue #29240) and every reading rule:
``docs/formats.md``, "Muse Glimmer" (the one place). The prompt ends with
``<|start|>assistant``, so the output opens inside a message header; each
message names its recipient (``self``: reasoning, ``user``: content, else a
tool) and a tool message holds one ATEM block::

     to=self<|message|>REASONING<|eom|><|start|>assistant to=user<|message|>CONTENT<|eom|>
    <|start|>assistant to=get_weather<|message|><atem:function_calls>
    <atem:invoke name="get_weather">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eom|>

The block, invoke and parameters are MiniMax M2's grammar in the ``atem:``
spelling (``minimax.MiniMaxM2Parser``'s states, its tags as data); this
module holds the message framing: the header, the reasoning body, the
tool message's block opener.
"""

from __future__ import annotations

import re

from . import register
from .minimax import BLOCK_TRANSITIONS, MINIMAX_M2_TRANSITIONS, TAG_END, MiniMaxM2Parser  # (TAG_END: the same)
from .scanner import OVER, PARTIAL, markers

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content" (a user message's body, and text outside messages), "broken" and MiniMax M2's
# block states are shared; ``ws``: whitespace; "a / b": the one the reading decides).
MUSE_GLIMMER_TRANSITIONS = {
    **MINIMAX_M2_TRANSITIONS,
    "begin": {"to= (the header the prompt opened)": "header", "<|message|> (no recipient)": "text",
              "anything else": "content"},
    "content": {"text (outside messages)": "content", "<atem:function_calls> (a block with no header)": "block",
                "<|start|>, or to= (a header with no <|start|>)": "header",
                "<|message|>, <|eom|>, <|eot|> (dropped)": "content"},
    "header": {"[assistant] to=self <|message|>": "reasoning", "[assistant] [to=user] <|message|>": "text",
               "[assistant] to=NAME <|message|>": "tool",
               "[assistant] [to=NAME] then a token (no body: markup)": "content / header",
               "anything else, or past MAX_HEAD (the header's text is content)": "content / header"},
    "text": {"text (content)": "text", "<|message|> (dropped)": "text", "<|eom|>, <|eot|>": "content",
             "<|start|>": "header"},
    "reasoning": {"text (reasoning)": "reasoning", "<|message|> (dropped)": "reasoning", "<|eom|>, <|eot|>": "content",
                  "<|start|>": "header"},
    "tool": {"ws <atem:function_calls> (the whitespace: layout)": "block",
             "anything else (content up to the block)": "tool_text"},
    "tool_text": {"text (content)": "tool_text", "<atem:function_calls>": "block", "<|message|> (dropped)": "tool_text",
                  "<|eom|>, <|eot|>": "content", "<|start|>": "header"},
    "broken": {**BLOCK_TRANSITIONS["broken"], "<|eom|>, <|eot|>": "content",
               "<|start|> (the broken call's text is content)": "content"},
}

__all__ = ["START", "MESSAGE", "EOM", "EOT", "TO", "SELF", "USER", "ASSISTANT", "BLOCK_OPEN", "BLOCK_CLOSE",
           "INVOKE_OPEN", "INVOKE_CLOSE", "PARAM_OPEN", "PARAM_CLOSE", "TAG_END", "SPECIAL_TOKENS",
           "MuseGlimmerParser"]

#: The message framing: special tokens of the Muse Glimmer tokenizer (SMG's ``CONTROL_TOKENS``).
START = "<|start|>"
MESSAGE = "<|message|>"
EOM = "<|eom|>"
EOT = "<|eot|>"
SPECIAL_TOKENS = (START, MESSAGE, EOM, EOT)
#: A header: ``<|start|>`` + role + ``" to="`` + recipient + ``<|message|>``.
ASSISTANT = "assistant"
TO = " to="
#: The recipients that are no tool: reasoning, the user (content).
SELF = "self"
USER = "user"
#: The ATEM block (plain text, not special tokens).
BLOCK_OPEN = "<atem:function_calls>"
BLOCK_CLOSE = "</atem:function_calls>"
INVOKE_OPEN = '<atem:invoke name="'
INVOKE_CLOSE = "</atem:invoke>"
PARAM_OPEN = '<atem:parameter name="'
PARAM_CLOSE = "</atem:parameter>"

_M_BEGIN = markers(TO, TO.lstrip(), MESSAGE)
_M_CONTENT = markers(BLOCK_OPEN, START, MESSAGE, EOM, EOT, TO.lstrip())
_M_HEADER = markers(MESSAGE, START, EOM, EOT)
_M_BODY = markers(START, MESSAGE, EOM, EOT)
_M_TOOL = markers(BLOCK_OPEN)
_M_TOOL_BODY = markers(BLOCK_OPEN, START, MESSAGE, EOM, EOT)
#: A header's words: the role (after ``<|start|>``), the recipient (``to=NAME``).
_HEADER = re.compile(r"\s*(?:assistant)?\s*(?:to=(\S*))?\s*")


@register("muse_glimmer")
class MuseGlimmerParser(MiniMaxM2Parser):
    """Streaming parser of Muse Glimmer messages; rules: ``docs/formats.md``, "Muse Glimmer"."""

    transitions = MUSE_GLIMMER_TRANSITIONS

    writes_reasoning = True
    layout_before_call = ""
    block_open = BLOCK_OPEN
    block_close = BLOCK_CLOSE
    invoke_open = INVOKE_OPEN
    invoke_close = INVOKE_CLOSE
    param_open = PARAM_OPEN
    param_close = PARAM_CLOSE
    message_ends = (EOM, EOT)
    message_restarts = (START,)
    _content_markers = _M_CONTENT

    def __init__(self) -> None:
        super().__init__()
        self._state = "begin"

    def _open(self, marker: str, final: bool) -> bool:
        """A marker outside messages: an ATEM block (the header the model left out), ``<|start|>`` (a header);
        a stray ``<|message|>``, ``<|eom|>``, ``<|eot|>`` is dropped."""
        if marker == BLOCK_OPEN:
            return MiniMaxM2Parser._open(self, marker, final)
        if marker == START:
            self.scanner.head_begin()
            self._state = "header"
        elif marker == TO.lstrip():  # a header whose <|start|> the model left out (a guess: bounded)
            self.scanner.head_begin(marker)
            self._state = "header"
        return True

    def _after_body(self, marker: str | None) -> bool:
        """A message body (text, reasoning) read up to ``marker``: a header at ``<|start|>``, outside messages at
        ``<|eom|>`` / ``<|eot|>``; a stray ``<|message|>`` is dropped."""
        if marker is None:
            return False
        if marker == START:
            self.scanner.head_begin()
            self._state = "header"
        elif marker != MESSAGE:
            self._state = "content"
        return True

    def _s_begin(self, final: bool) -> bool:
        hit = self.scanner.match(_M_BEGIN, final)
        if hit is PARTIAL:
            return False
        if hit is None:
            self._state = "content"
        elif hit == MESSAGE:  # a header with no recipient: the user's
            self._state = "text"
        else:
            self.scanner.head_begin(hit)
            self._state = "header"
        return True

    def _s_header(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_M_HEADER, final)
        if marker is None and not final:
            return False
        raw = self.scanner.head_text()
        words = _HEADER.fullmatch(raw) if marker is not OVER else None
        if marker != MESSAGE or words is None:
            if marker is None:  # the end of the output: a header guessed from to= is the model's text, else cut
                if raw.lstrip().startswith("to="):
                    self._emit_content(raw)
            elif words is None:  # past MAX_HEAD, or text that is no header: content
                self._emit_content(raw)
            # (else a header's words ended by a token, no body: markup, dropped)
            self._state = "content"
            return marker is None or marker is OVER or self._open(marker, final)
        recipient = words.group(1) or USER
        self._state = "reasoning" if recipient == SELF else "text" if recipient == USER else "tool"
        return True

    def _s_text(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_BODY, final)
        self._emit_content(text)
        return self._after_body(marker)

    def _s_reasoning(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_BODY, final)
        self._emit_reasoning(text)
        return self._after_body(marker)

    def _s_tool(self, final: bool) -> bool:
        """A tool message's body: its block, whitespace before it layout; else content up to the block
        (state ``tool_text``)."""
        sc = self.scanner
        hit = sc.match(_M_TOOL, final)
        if hit is None:  # whitespace first (held: bounded), or other text
            hit = sc.match(_M_TOOL, final, self._confirm_ws)
        if hit is PARTIAL:
            return False
        if hit is not None:
            MiniMaxM2Parser._open(self, hit, final)
            if self._confirm_ws.runs:  # (content with the block's text if the block starts no call)
                self._raw[0] = self._confirm_text() + hit
            return True
        blank = self._confirm_text()
        if sc.at_end() or not self._cut_by_end(final, _M_TOOL):  # (an opener cut by the end: dropped, with it)
            self._emit_content(blank)
        self._state = "tool_text"
        return True

    def _s_tool_text(self, final: bool) -> bool:
        """A tool message's text before its block (content), or its whole body when it holds none."""
        sc = self.scanner
        text, marker = sc.find(_M_TOOL_BODY)  # (a partial marker held, even at the end: see below)
        self._emit_content(text)
        if marker == BLOCK_OPEN:
            return MiniMaxM2Parser._open(self, marker, final)
        if marker is None and final and not self._cut_by_end(final, _M_TOOL):  # (an opener cut by the end: dropped)
            self._emit_content(sc.take_all())
        return self._after_body(marker)
