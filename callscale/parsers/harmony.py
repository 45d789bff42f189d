"""gpt-oss tool calls: the harmony format (``gpt_oss``).

The format (source: OpenAI's harmony guide, openai/harmony ``docs/format.md``,
and the gpt-oss chat template, ``chat_template.jinja`` of
openai/gpt-oss-20b) and the reading rules are in ``docs/formats.md``,
"gpt-oss, harmony". JSON bodies stream through
:class:`callscale.parsers.jsonscan.RawArguments`. Nothing here raises on
model output; lengths are in characters.
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "broken" is base.ToolParser's; "content" is outside messages; ``ws``: whitespace;
# "a / b": the one the reading decides).
HARMONY_TRANSITIONS = {
    "begin": {"CHANNEL or to= (a header with no START)": "header", "anything else": "content"},
    "content": {"text (content)": "content", "START, CHANNEL": "header", "a stray token (dropped)": "content"},
    "header": {"HEADER MESSAGE (a recipient)": "pre_args", "HEADER MESSAGE (none)": "text",
               "HEADER then START, END, CALL, RETURN (MESSAGE missing)": "header / content / text / args / code",
               "past MAX_HEAD": "content"},
    "text": {"text (content or reasoning)": "text", "END, CALL, RETURN": "content", "START": "header"},
    "pre_args": {"ws {, or a functions. call": "args", "ws anything else": "code", "the end": "content"},
    "args": {"the arguments (streamed)": "args", "an end token inside a JSON string": "end_check",
             "END, CALL, RETURN": "content", "START": "header", "text that is no JSON": "broken"},
    "end_check": {"ws START": "header", "the end": "content", "anything else (the token was string text)": "args"},
    "code": {"text (a code argument)": "code", "END, CALL, RETURN": "content", "START": "header"},
    "broken": {"END, CALL, RETURN (the text dropped)": "content", "START (the text is content)": "content"},
}

import re

from . import register
from .base import ToolParser, json_fragment
from .jsonscan import RawArguments
from .schema import is_framed_name
from .scanner import OVER, PARTIAL, markers

__all__ = [
    "START", "END", "MESSAGE", "CHANNEL", "CONSTRAIN", "RETURN", "CALL", "SPECIAL_TOKENS",
    "FUNCTIONS", "ANALYSIS", "read_header", "HarmonyParser",
]

START = "<|start|>"
END = "<|end|>"
MESSAGE = "<|message|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"
RETURN = "<|return|>"
CALL = "<|call|>"
#: Special tokens of the o200k_harmony encoding (harmony docs/format.md).
SPECIAL_TOKENS = (START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL)
#: The namespace of developer-defined functions in a recipient.
FUNCTIONS = "functions."
#: The channel of the chain of thought.
ANALYSIS = "analysis"
#: The argument a non-JSON call body (code for a built-in tool) is passed as.
CODE_ARGUMENT = "code"

_ENDS = (END, CALL, RETURN)
_M_START = markers(CHANNEL, " to=", "to=")
_M_OUTSIDE = markers(START, CHANNEL, END, CALL, RETURN, MESSAGE, CONSTRAIN)
_M_HEADER = markers(MESSAGE, START, END, CALL, RETURN)
_M_BODY = markers(END, CALL, RETURN, START)
_M_NEXT = markers(START)
_TOKENS = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))
_RECIPIENT = re.compile(r"(?:^|\s)to=(\S+)")
#: The words of a header (role, recipient, channel, recipient, content type) before a body whose <|message|> is missing.
_HEADER_WORDS = re.compile(r"\s*(?:assistant\b)?(?:\s*to=[^\s<{]+)?(?:\s*<\|channel\|>\s*[^\s<{]*)?"
                           r"(?:\s*to=[^\s<{]+)?(?:\s*<\|constrain\|>\s*[^\s<{]*)?")

# states: the _s_<state> methods (outside messages is "content")
_BEGIN, _OUTSIDE, _HEADER, _TEXT, _PRE_ARGS, _ARGS, _END_CHECK, _CODE = (
    "begin", "content", "header", "text", "pre_args", "args", "end_check", "code")


def read_header(raw: str) -> tuple[str, str]:
    """``(recipient, channel)`` of a message header (the text between ``<|start|>`` and ``<|message|>``).

    ``""`` for a missing part. ``<|constrain|>`` and ``<|channel|>`` separate
    words, so ``to=functions.f<|constrain|>json`` names ``functions.f``.
    """
    words = _TOKENS.sub(" ", raw)
    hit = _RECIPIENT.search(words)
    recipient = hit.group(1) if hit else ""
    _, sep, channel_part = raw.partition(CHANNEL)
    channel_words = _TOKENS.sub(" ", channel_part).split() if sep else []
    channel = channel_words[0] if channel_words and not channel_words[0].startswith("to=") else ""
    return recipient, channel


def _cut_header_word(text: str) -> bool:
    """Whether ``text``, where the output ended, may be the start of a header word (``to=``, ``json``, a token)."""
    return not any(c.isspace() for c in text) and any(
        w.startswith(text) or text.startswith(w) for w in ("to=", "json", "<|"))


@register("gpt_oss")
class HarmonyParser(ToolParser):
    """gpt-oss (harmony) messages; see the module docstring for the reading rules."""

    transitions = HARMONY_TRANSITIONS

    writes_reasoning = True
    # a broken call's text: dropped up to an end token, content when <|start|> comes first (DESIGN.md)
    broken_ends = _ENDS
    broken_restarts = (START,)

    def __init__(self) -> None:
        super().__init__()
        self._state = _BEGIN
        self._guessed = False        # the header was guessed from a leading "to=" (no token)
        self._reasoning = False      # the current text body is reasoning
        self._function_call = False  # the current call's recipient is in functions.
        self._lead: list[str] = []   # blank text before a call body's first character
        self._args = RawArguments()
        self._end: list[str] = []    # an end token met inside a JSON string, and the blanks after it

    # ------------------------------------------------------------------ helpers
    def _after(self, marker: str | None, seed: str = "", guessed: bool = False) -> bool:
        """Go on after a message or header ended at ``marker``: a header at ``START`` (``seed``: the text it
        opens with; ``guessed``: from a leading ``to=``, no token), else outside messages."""
        if marker != START:
            self._state = _OUTSIDE
            return True
        self.scanner.head_begin(seed)
        self._guessed = guessed
        self._state = _HEADER
        return True

    def _finish_json(self, cut: bool) -> None:
        held = self._args.close(cut)
        if held is None:
            self._abandon_call()
        else:
            self._emit_arguments(held)
            self._end_call()
        self._args = RawArguments()

    def _args_piece(self, text: str) -> bool:
        """Stream a piece of a JSON body; true when the body stopped being the arguments in it.

        Then the call is broken (DESIGN.md "Content and markup"): the text
        from where it stopped (also prose after a complete object) is held by
        the broken-call mechanism of :mod:`callscale.parsers.base`.
        """
        if not text:
            return False
        j, event = self._args.scan(text, 0)  # (RawArguments' per-piece path: scan, then _args_sent)
        return self._args_sent(text, j, event)

    def _args_sent(self, text: str, j: int, event: int) -> bool:
        """:meth:`_args_piece` after the arguments' ``scan(text, 0)`` stopped at ``j`` with ``event``."""
        if not event:
            self._emit_arguments(text)
            return False
        send, used = self._args.scanned(text, j, event)
        self._emit_arguments(send)
        if used == len(text):
            return False
        self._args = RawArguments()
        return self._broken(text[used:])

    # ------------------------------------------------------------------ states
    def _s_begin(self, final: bool) -> bool:
        hit = self.scanner.match(_M_START, final)
        if hit is PARTIAL:
            return False
        if hit is None:
            self._state = _OUTSIDE
            return True
        return self._after(START, hit, hit != CHANNEL)

    def _s_content(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_OUTSIDE, final)
        self._emit_content(text)
        if marker is None:
            return False
        if marker == START:
            return self._after(START)
        if marker == CHANNEL:
            return self._after(START, CHANNEL)
        return True  # a stray token: dropped

    def _s_header(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_M_HEADER, final)  # a bounded head (the scanner's)
        if marker is None and not final:
            return False
        over = marker is OVER
        if over:
            marker = None
        raw = self.scanner.head_text()
        if marker == MESSAGE:
            self._open_body(raw)
            return True
        # <|message|> missing: the header's words, then the body (docs/formats.md)
        if not over and raw.strip() in ("", "assistant"):  # an empty envelope (<|start|> repeated): markup
            return self._after(marker)
        head = _HEADER_WORDS.match(raw).end()
        recipient, channel = read_header(raw[:head])
        if over and (self._guessed or recipient):  # too long for a call's header: content, tokens dropped
            self._emit_content(_TOKENS.sub("", raw))
            self._state = _OUTSIDE
            return True
        if self._guessed:  # cut short: a header guessed from a leading "to=" is content
            self._emit_content(raw)
            return self._after(marker)
        body = _TOKENS.sub("", raw[head:]).lstrip()
        if marker is None and final and _cut_header_word(body):
            body = ""  # a header word or token the end of the output cut
        if not (over or (body and (recipient or channel))):  # nothing a message needs: markup
            return self._after(marker)
        if not self._open_body(raw[:head]):
            if body.startswith("json"):
                body = body[4:].lstrip()  # the content type the chat template writes without <|constrain|>
        elif over and not self._reasoning:  # content read on as outside messages (stray tokens dropped)
            self._emit_content(body)
            self._state = _OUTSIDE
            return True
        return self._body_at(body, marker, final)

    def _open_body(self, header: str) -> bool:
        """A message body starts after ``header``: a call's or a text's; true for a text."""
        recipient, channel = read_header(header)
        name = recipient[len(FUNCTIONS):] if recipient.startswith(FUNCTIONS) else recipient
        if is_framed_name(name):  # (docs/formats.md, "Tool names")
            self._begin_call(name)
            self._function_call = recipient.startswith(FUNCTIONS)
            self._lead = []
            self._state = _PRE_ARGS
            return False
        self._reasoning = channel == ANALYSIS
        self._state = _TEXT
        return True

    def _body_at(self, body: str, marker: str | None, final: bool) -> bool:
        """Read ``body`` (read already, no leading blank), then ``marker``, in the state :meth:`_open_body` set."""
        if self._state == _PRE_ARGS:
            if body[:1] == "{" or self._function_call:
                self._args = RawArguments()
                self._state = _ARGS
            else:
                self._emit_arguments('{"%s": "' % CODE_ARGUMENT)
                self._state = _CODE
        if self._state == _ARGS:
            self._args_at(body, marker, final)
        elif self._state == _CODE:
            self._code_at(body, marker, final)
        else:
            self._text_at(body, marker)
        return True

    def _s_text(self, final: bool) -> bool:
        return self._text_at(*self.scanner.find(_M_BODY, final))

    def _text_at(self, text: str, marker: str | None) -> bool:
        if self._reasoning:
            self._emit_reasoning(text)
        else:
            self._emit_content(text)
        if marker is None:
            return False
        return self._after(marker)

    def _s_pre_args(self, final: bool) -> bool:
        scanner = self.scanner
        blank = scanner.skip_whitespace()
        if blank:
            self._lead.append(blank)
        if scanner.at_end():
            if final:
                self._abandon_call()  # the output ended before the body
                self._state = _OUTSIDE
                return True
            return False
        lead = "".join(self._lead)
        self._lead = []
        if scanner.peek(1) == "{" or self._function_call:
            self._args = RawArguments()
            self._emit_arguments(self._args.feed(lead)[0])
            self._state = _ARGS
        else:
            self._emit_arguments('{"%s": "%s' % (CODE_ARGUMENT, json_fragment(lead)))
            self._state = _CODE
        return True

    def _s_args(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_BODY, final)
        if marker is None and not final:  # the common piece: argument text, streamed
            j, event = self._args.scan(text, 0)
            if not event:  # (read whole: sent as it is, with no frame; else _args_sent decides)
                self._emit_arguments(text)
                return False
            return self._args_sent(text, j, event)
        return self._args_at(text, marker, final)

    def _args_at(self, text: str, marker: str | None, final: bool) -> bool:
        if self._args_piece(text):
            if marker:  # read again by the broken-call state
                self.scanner.unread(len(marker))
            return True
        if marker is None:
            if final:
                self._finish_json(cut=True)
                self._state = _OUTSIDE
                return True
            return False
        if self._args.inside:
            if marker == START:
                self._args_piece(marker)
            else:
                self._end = [marker]
                self._state = _END_CHECK
            return True
        self._finish_json(cut=False)
        return self._after(marker)

    def _s_end_check(self, final: bool) -> bool:
        """An end token inside a JSON string: the call's end only before ``<|start|>`` or the end of the output."""
        scanner = self.scanner
        blank = scanner.skip_whitespace()
        if blank:
            self._end.append(blank)
        if scanner.at_end():
            if final:
                self._finish_json(cut=False)
                self._state = _OUTSIDE
                return True
            return False
        hit = scanner.match(_M_NEXT, final)
        if hit is PARTIAL:
            return False
        if hit is None:
            end, self._end = "".join(self._end), []
            self._state = _ARGS
            self._args_piece(end)
            return True
        self._end = []
        self._finish_json(cut=False)
        return self._after(START)

    def _s_code(self, final: bool) -> bool:
        text, marker = self.scanner.find(_M_BODY, final)
        return self._code_at(text, marker, final)

    def _code_at(self, text: str, marker: str | None, final: bool) -> bool:
        if text:
            self._emit_arguments(json_fragment(text))
        if marker is None:
            if final:
                self._abandon_call()
                self._state = _OUTSIDE
                return True
            return False
        self._emit_arguments('"}')
        self._end_call()
        return self._after(marker)
