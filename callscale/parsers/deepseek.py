"""DeepSeek V3 and V3.1 tool calls (``deepseek_v3``, ``deepseek_v31``).

The format (source: the ``chat_template`` of DeepSeek-V3 and DeepSeek-V3.1
in their ``tokenizer_config.json``) and the reading rules are in
``docs/formats.md``, "DeepSeek V3" and "DeepSeek V3.1". Token strings are the
tokenizer's special tokens (full-width bars U+FF5C, ``▁`` U+2581). The
arguments stream through :class:`callscale.parsers.jsonscan.RawArguments`.
Nothing here raises on model output; lengths are in characters.
"""

from __future__ import annotations

# The transition tables, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "broken" is base.ToolParser's; "content" also reads the calls block, between calls;
# ``ws``: whitespace; "a / b": the one the reading decides).
DEEPSEEK_V3_TRANSITIONS = {
    "content": {"text": "content", "CALLS_BEGIN (then the block), EOS (dropped), CALLS_END": "content",
                "CALL_BEGIN (in the block)": "kind"},
    "kind": {"function SEP": "name", "another word, a block token, past MAX_HEAD (text of the block)": "content",
             "an empty head's SEP": "skip"},
    "name": {"NAME \\n": "fence", "a block token, past MAX_HEAD (text of the block)": "content"},
    "fence": {"```json\\n": "args", "anything else": "broken", "the end": "skip"},
    "args": {"the arguments (streamed)": "args", "\\n```": "after_fence", "text that is no JSON": "broken",
             "the end": "skip"},
    "after_fence": {"ws CALL_END": "content", "anything else": "broken", "the end": "skip"},
    "skip": {"text up to CALL_END or a block token (dropped)": "content / kind"},
    "broken": {"CALL_END (the text dropped)": "content", "a block token (the text is content)": "content"},
}
DEEPSEEK_V31_TRANSITIONS = {
    "content": {"text": "content", "CALLS_BEGIN (then the block), EOS (dropped), CALLS_END": "content",
                "CALL_BEGIN (in the block)": "name"},
    "name": {"NAME SEP": "args", "a block token, past MAX_HEAD (text of the block)": "content",
             "an empty head's SEP": "skip"},
    "args": {"the arguments (streamed)": "args", "CALL_END": "content", "text that is no JSON": "broken",
             "the end": "skip"},
    "skip": {"text up to CALL_END or a block token (dropped)": "content / name"},
    "broken": {"CALL_END (the text dropped)": "content", "a block token (the text is content)": "content"},
}


from . import register
from .base import Layout, ToolParser
from .jsonscan import RawArguments
from .schema import is_framed_name
from .scanner import OVER, PARTIAL, markers

#: End-of-sequence token of every DeepSeek model; dropped wherever it appears.
EOS = "<｜end▁of▁sentence｜>"
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
#: V3 only: the word before the separator, and the fence around the arguments.
V3_KIND = "function"
V3_FENCE_OPEN = "```json\n"
V3_FENCE_CLOSE = "\n```"

SPECIAL_TOKENS = (EOS, CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP)

__all__ = [
    "EOS", "CALLS_BEGIN", "CALLS_END", "CALL_BEGIN", "CALL_END", "SEP",
    "V3_KIND", "V3_FENCE_OPEN", "V3_FENCE_CLOSE", "SPECIAL_TOKENS",
    "DeepSeekV3Parser", "DeepSeekV31Parser",
]

# Marker sets per state (compiled once).
_CONTENT = markers(CALLS_BEGIN, EOS)
_BLOCK = markers(CALL_BEGIN, CALLS_END, CALLS_BEGIN, EOS)
_SKIP = markers(CALL_END, CALL_BEGIN, CALLS_END, EOS)
#: Tokens that interrupt a call head before its name is complete.
_HEAD_STOPS = (CALL_END, CALL_BEGIN, CALLS_END, CALLS_BEGIN, EOS)
_V3_KIND_END = markers(SEP, *_HEAD_STOPS)
_V3_NAME_END = markers("\n", *_HEAD_STOPS)
_V3_FENCE = markers(V3_FENCE_OPEN, EOS)
_V3_ARGS = markers(V3_FENCE_CLOSE, EOS)
_V3_AFTER_FENCE = markers(CALL_END, EOS)
_V31_NAME_END = markers(SEP, *_HEAD_STOPS)
_V31_ARGS = markers(CALL_END, EOS)


class _DeepSeekCalls(ToolParser):
    """What V3 and V3.1 share: content, the calls block, arguments, the end of a call.

    Each state is a method ``_s_<state>(final) -> bool`` (run by the base driver): it consumes what it
    can decide and returns True to run again (state changed or more to read),
    False when it needs more text (or, with ``final``, is done).
    """

    #: State a call-begin token leads to (set by the subclass).
    _head_state = ""
    #: Markers that end the arguments: the end marker and EOS (V3: its closing fence).
    _args_markers = _V31_ARGS
    # a broken call's text (the base's broken state): dropped up to its end token; content when another
    # call or block token (read again in the block) or the end of the output comes first
    broken_ends = (CALL_END,)
    broken_restarts = (CALL_BEGIN, CALLS_END, CALLS_BEGIN, EOS)

    def __init__(self) -> None:
        super().__init__()
        self._in_block = False      # state "content" reads the calls block (the base's broken state resumes there)
        self._gap_text = False      # the current stretch in the block holds text: it is content
        self._gap_ws = Layout()  # whitespace of the current stretch, not yet decided (run lengths: bounded)
        self._name: list[str] = []    # the name pieces of a call head whose name is not yet sent (the head: the scanner's)
        self._args = RawArguments()  # the arguments, validated and streamed as they arrive (no text kept)
        self._m_args = self._args_markers  # (an instance attribute: read once a delta)

    # ------------------------------------------------------------------ content
    def _s_content(self, final: bool) -> bool:
        if self._in_block:
            return self._block(final)
        text, marker = self.scanner.find(_CONTENT, final)
        self._emit_content(text)
        if marker is None:
            return False
        if marker == CALLS_BEGIN:
            self._enter_block()
        return True  # EOS: dropped

    # ------------------------------------------------------------------ block
    def _enter_block(self) -> None:
        self._in_block = True
        self._state = "content"
        self._gap_text = False
        self._gap_ws.clear()

    def _block(self, final: bool) -> bool:
        sc = self.scanner
        while True:
            text, marker = sc.find(_BLOCK, final)
            if text:
                self._gap(text)
            if marker is None:
                if final:
                    self._gap_ws.clear()  # trailing layout
                return False
            if marker != CALLS_BEGIN and marker != EOS:
                return self._block_token(marker)
            # (EOS, a repeated block opener: dropped, as _block_token does; read on here)

    def _gap(self, text: str) -> None:
        """A piece of the text between two tokens in the block: layout or content."""
        if not text:
            return
        if self._gap_text:
            self._emit_content(text)
        elif text.isspace() and self._gap_ws.add(text):
            return
        else:  # text, or whitespace past MAX_LAYOUT_RUNS (decided as content, base.Layout's rule)
            held = self._gap_ws.text()
            self._gap_ws.clear()
            self._emit_content(held if text.isspace() else held + text)
            self._gap_text = True

    def _block_token(self, marker: str) -> bool:
        """Read a token met in the block (or handed on by an interrupted call)."""
        if marker == CALL_BEGIN:
            self._enter_block()
            self.scanner.head_begin(CALL_BEGIN)
            self._name = []
            self._state = self._head_state
        elif marker == CALLS_END:
            self._enter_block()
            self._in_block = False
        elif marker == CALL_END or marker == SEP:  # a stray token that ends a head: text of the block
            self._gap(marker)
        # EOS and a repeated block opener: dropped, the stretch goes on.
        return True

    # ------------------------------------------------------------------ call head
    def _head_failed(self, marker: str | None) -> bool:
        """The head never became a call: its raw text is content; ``marker`` is read in the block.

        A head that holds nothing but its tokens, whitespace and (V3) the kind
        word holds nothing a call needs: it is markup, dropped (docs/formats.md).
        """
        sc = self.scanner
        words = sc.head_peek(1).replace(SEP, "").strip()  # (a separator split over deltas is one too)
        raw = sc.head_text()
        self._name = []
        if not words or (words == V3_KIND and self._head_state == "kind"):
            if marker is None:  # (at the separator) what follows up to the call's end is its markup too
                self._enter_block()
                self._state = "skip"
                return True
            if marker == CALL_END:  # the empty call's end
                marker = None
            raw = ""
        return self._block_text(raw, marker, True)

    def _block_text(self, text: str, marker: str | None, more: bool) -> bool:
        """Back in the block: ``text`` is text of the block, then ``marker`` is read there (``more`` without one)."""
        self._enter_block()
        self._gap(text)
        if marker is None:
            return more
        return self._block_token(marker)

    def _head_cut(self) -> bool:
        """The output ended inside a call head: the cut call's markup is dropped (not content)."""
        self.scanner.head_text()
        self._name = []
        self._enter_block()
        return False

    def _find_in_head(self, m, final: bool, name: bool) -> tuple[str, str | None, bool]:
        """The scanner's bounded head read (``head_find``; ``name``: its text also kept as the name); the flag is
        true when the head ran past the bound (no marker then)."""
        text, marker = self.scanner.head_find(m, final)
        if text and name:
            self._name.append(text)
        if marker is OVER:
            return text, None, True
        return text, marker, False

    def _start_call(self, next_state: str) -> bool:
        """The name is complete: send it (or give up the head if it is empty)."""
        name = "".join(self._name).strip()
        if not is_framed_name(name):  # none, or no name any client dispatches (docs/formats.md, "Tool names")
            return self._head_failed(None)
        self.scanner.head_text()
        self._name = []
        self._args = RawArguments()
        self._begin_call(name)
        self._state = next_state
        return True

    # ------------------------------------------------------------------ arguments
    def _s_args(self, final: bool) -> bool:
        """Stream argument text up to the arguments' end marker (``self._m_args``); an EOS in them is dropped.

        At the first character that cannot continue the arguments (see
        :meth:`callscale.parsers.jsonscan.RawArguments.feed`) the call is broken:
        that character, the rest of the piece and the marker are read again
        by the base's broken state (so a token in the same delta is never swallowed).
        The end marker is handed to :meth:`_args_end`.
        """
        sc = self.scanner
        text, marker = sc.find(self._m_args)  # (a partial closing marker stays unread, even at the end)
        if text:
            args = self._args
            j, event = args.scan(text, 0)  # (RawArguments' per-piece path: event 0 sends the piece as it is)
            if not event:
                self._emit_arguments(text)
            else:
                send, used = args.scanned(text, j, event)
                if send:
                    self._emit_arguments(send)
                if used < len(text):
                    sc.unread(len(text) - used + len(marker or ""))
                    self._break()
                    return True
        if marker is None:
            if final:  # the output ended inside the arguments (or their closing marker): a cut call
                self.scanner.take_all()
                self._abandon("skip")
            return False
        if marker != EOS:
            self._args_end()
        return True

    def _break(self) -> None:
        """The current call broke (its arguments cannot be JSON, or a V3 fence is wrong): its text from here is held."""
        self._broken()

    def _abandon(self, next_state: str) -> None:
        self._abandon_call()
        self._state = next_state

    def _close_call(self) -> None:
        """The call's end token: complete the call when its arguments are one JSON object (or empty), else abandon it."""
        held = self._args.close()
        if held is None:
            self._abandon_call()
        else:
            self._emit_arguments(held)
            self._end_call()
        self._enter_block()

    def _s_skip(self, final: bool) -> bool:
        """After an abandoned call: drop its text up to its end (or the next call or block token)."""
        _, marker = self.scanner.find(_SKIP, final)
        if marker is None or marker == EOS:
            return marker is not None
        self._enter_block()
        if marker == CALL_END:
            return True
        return self._block_token(marker)


@register("deepseek_v3")
class DeepSeekV3Parser(_DeepSeekCalls):
    """DeepSeek V3 (and R1) tool calls: kind ``function``, name, fenced JSON arguments.

    See the module docstring for the grammar and the handling of malformed
    output. Construct with no arguments; methods as :class:`ToolParser`.
    """

    transitions = DEEPSEEK_V3_TRANSITIONS

    _head_state = "kind"
    _args_markers = _V3_ARGS

    def _s_kind(self, final: bool) -> bool:
        _, marker, over = self._find_in_head(_V3_KIND_END, final, False)
        if marker is None:
            if over:  # too long for a head: content, read on after it
                return self._head_failed(None)
            if final:  # the output ended inside the head: a cut call, no content
                return self._head_cut()
            return False
        if marker == EOS:
            return True
        if marker != SEP:
            return self._head_failed(marker)
        kind = self.scanner.head_peek(1).strip()
        self.scanner.head_keep(SEP)
        if kind != V3_KIND:
            return self._head_failed(None)
        self._state = "name"
        return True

    def _s_name(self, final: bool) -> bool:
        _, marker, over = self._find_in_head(_V3_NAME_END, final, True)
        if marker is None:
            if over:  # too long for a head: content, read on after it
                return self._head_failed(None)
            if final:  # the output ended inside the head: a cut call, no content
                return self._head_cut()
            return False
        if marker == EOS:
            return True
        if marker != "\n":
            return self._head_failed(marker)
        return self._start_call("fence")

    def _s_fence(self, final: bool) -> bool:
        marker = self.scanner.match(_V3_FENCE, final)
        if marker is PARTIAL:
            return False
        if marker == V3_FENCE_OPEN:
            self._state = "args"
        elif marker is None:
            if final:  # the output ended after the name: a cut call
                self._abandon("skip")
            else:  # no fence: a broken call
                self._break()
        return True  # EOS: dropped

    def _args_end(self) -> None:
        self._state = "after_fence"  # the closing fence: the call's end token follows

    def _s_after_fence(self, final: bool) -> bool:
        self.scanner.skip_whitespace()
        marker = self.scanner.match(_V3_AFTER_FENCE, final)
        if marker is PARTIAL:
            return False
        if marker == CALL_END:
            self._close_call()
        elif marker is None:
            if final:  # the output ended after the closing fence: a cut call
                self._abandon("skip")
            else:  # text between the fence and the end token: a broken call
                self._break()
        return True


@register("deepseek_v31")
class DeepSeekV31Parser(_DeepSeekCalls):
    """DeepSeek V3.1 tool calls: name, separator, raw JSON arguments, end token.

    See the module docstring for the grammar and the handling of malformed
    output. Construct with no arguments; methods as :class:`ToolParser`.
    """

    transitions = DEEPSEEK_V31_TRANSITIONS

    _head_state = "name"
    _args_markers = _V31_ARGS

    def _s_name(self, final: bool) -> bool:
        _, marker, over = self._find_in_head(_V31_NAME_END, final, True)
        if marker is None:
            if over:  # too long for a head: content, read on after it
                return self._head_failed(None)
            if final:  # the output ended inside the head: a cut call, no content
                return self._head_cut()
            return False
        if marker == EOS:
            return True
        if marker != SEP:
            return self._head_failed(marker)
        return self._start_call("args")

    def _args_end(self) -> None:
        self._close_call()
