"""MiniMax M2 tool calls (``minimax_m2``).

The format (source: the MiniMax-M2 ``chat_template.jinja``) and every
reading rule: ``docs/formats.md``, "MiniMax M2" (the one place)::

    CONTENT
    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    </invoke>
    </minimax:tool_call>

This module holds the tokens, markers and ``_s_<state>`` steps; the shared
mechanisms (driver, broken calls, bounded heads, typed values) are base.py's
and schema.py's (``callscale/parsers/README.md``).
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (the states are the
# ``_s_<state>`` methods; "content", "think" and "broken" are base.ToolParser's; ``ws``: whitespace; "a / b": the
# one the reading decides; tests/parsers/test_transitions.py holds the states to the class's).
# MiniMaxBlocks' states (M2 and M3), with each format's own after an invoke's name (M2: "invoke", M3: "body"):
BLOCK_TRANSITIONS = {
    "content": {"text": "content", "[\\n]<block open>": "block"},
    "block": {"<block open> again (the block before carries no call: content)": "block",
              'ws <invoke name="': "name", "ws <block close>": "content",
              "anything else, or past MAX_HEAD (the block read so far is content)": "content"},
    "name": {'NAME ">': "invoke / body", "no name, or past MAX_HEAD (content)": "content"},
    "broken": {"<invoke close>": "block", "<block close>": "content",
               "<block open> (the broken call's text is content)": "content"},
}
MINIMAX_M2_TRANSITIONS = {
    **BLOCK_TRANSITIONS,
    "name": {'NAME ">': "invoke", "no name, or past MAX_HEAD (content)": "content"},
    "invoke": {'ws <parameter name="': "key", "ws </invoke>": "block", "anything else": "broken"},
    "key": {'KEY ">': "value", "a bad key, or past MAX_HEAD": "broken"},
    "value": {"text </parameter>": "close1", "the end of the output inside the call": "content"},
    "close1": {'ws <parameter name="': "key", "ws </invoke>": "close2",
               "anything else (the tag was value text)": "value"},
    "close2": {'ws <invoke name="': "name", "ws </minimax:tool_call>": "content", "ws <minimax:tool_call>": "block",
               "the end of the output": "block", "anything else (the tags were value text)": "value"},
}

import logging
import re

from . import register
from typing import ClassVar

from .base import ToolParser
from .schema import UNTYPED, TypedValue, is_tool_name

_NO_VALUE = TypedValue(UNTYPED)
from .scanner import Markers, OVER, PARTIAL, markers, value_state

log = logging.getLogger(__name__)

__all__ = [
    "MiniMaxM2Parser",
    "BLOCK_OPEN",
    "BLOCK_CLOSE",
    "INVOKE_OPEN",
    "INVOKE_CLOSE",
    "PARAM_OPEN",
    "PARAM_CLOSE",
    "TAG_END",
    "LAYOUT_NEWLINE",
    "SPECIAL_TOKENS",
]

#: The calls-block tags (special tokens of the MiniMax-M2 tokenizer).
BLOCK_OPEN = "<minimax:tool_call>"
BLOCK_CLOSE = "</minimax:tool_call>"
#: An invoke opens with ``INVOKE_OPEN + name + TAG_END``.
INVOKE_OPEN = '<invoke name="'
INVOKE_CLOSE = "</invoke>"
#: A parameter opens with ``PARAM_OPEN + key + TAG_END``.
PARAM_OPEN = '<parameter name="'
PARAM_CLOSE = "</parameter>"
TAG_END = '">'
#: The template writes this newline before the block (layout).
LAYOUT_NEWLINE = "\n"

SPECIAL_TOKENS = (BLOCK_OPEN, BLOCK_CLOSE)

_CONTENT = markers(LAYOUT_NEWLINE + BLOCK_OPEN, BLOCK_OPEN)
_TAG_END = markers(TAG_END)

_SPACE = re.compile(r"\s*")
_KEY = re.compile(r'[^<>"\n]+')

# States.
_S_CONTENT = "content"
_S_BLOCK = "block"  # inside a block, between elements
_S_NAME = "name"  # reading an invoke's name
_S_INVOKE = "invoke"  # inside an invoke, between elements
_S_KEY = "key"  # reading a parameter's name
_S_VALUE = "value"  # reading a parameter's value
_S_CLOSE1 = "close1"  # after </parameter>: is it the end of the value?
_S_CLOSE2 = "close2"  # after </parameter> ws </invoke>: is it the end of the call?


class MiniMaxBlocks(ToolParser):
    """The MiniMax block and invoke head, shared by M2 and M3 (``docs/formats.md``, "MiniMax M2").

    A subclass sets the tags of its spelling (``block_open``, ``block_close``,
    ``invoke_open``: up to the name, ``invoke_close``) and
    :meth:`_invoke_started` (the call is begun, its name sent: emit the
    arguments' opening and set the state). The broken-call rule follows from
    the tags (base.py's one state): a broken call's text ends at its
    ``invoke_close`` (read on in the block) or ``block_close`` (read on as
    content); a new ``block_open`` makes it content. States ``block`` (between
    invokes; the first invoke's head bounded by ``MAX_HEAD`` with the
    block's whitespace) and ``name`` (the invoke's name, up to ``">``).
    ``self._raw`` holds the block's text that is content if no call starts
    in it; whitespace after a call is kept there, so garbage after a call is
    content with the whitespace before it (DESIGN.md, "Layout").
    """

    block_open: ClassVar[str] = ""
    block_close: ClassVar[str] = ""
    invoke_open: ClassVar[str] = ""
    invoke_close: ClassVar[str] = ""
    #: A parameter's tags (M2's spelling and the formats that share its invoke body): ``param_open`` up to the key.
    param_open: ClassVar[str] = ""
    param_close: ClassVar[str] = ""
    #: Tokens outside the block that also end a broken call (read on as content), and openers outside it that
    #: restart (the broken call's text is content): a format whose block sits in a message (Muse Glimmer).
    message_ends: ClassVar[tuple[str, ...]] = ()
    message_restarts: ClassVar[tuple[str, ...]] = ()
    #: What may follow in a block (class creation): an invoke, the block's end, a new block.
    block_markers: ClassVar[Markers | None] = None
    #: What may follow in an invoke, after a parameter's closing tag (a parameter, the invoke's end), and after
    #: the invoke's closing tag (an invoke, the block's end, a new block); what ends a value (class creation).
    invoke_markers: ClassVar[Markers | None] = None
    after_invoke_markers: ClassVar[Markers | None] = None
    value_end_markers: ClassVar[Markers | None] = None

    def __init_subclass__(cls, **kwargs) -> None:
        if cls.block_open:
            cls.block_markers = markers(cls.invoke_open, cls.block_close, cls.block_open)
            cls.broken_resume = {cls.invoke_close: "block", cls.block_close: "content",
                                 **dict.fromkeys(cls.message_ends, "content")}
            cls.broken_restarts = (cls.block_open, *cls.message_restarts)
        if cls.param_open:
            cls.invoke_markers = markers(cls.param_open, cls.invoke_close)
            cls.after_invoke_markers = markers(cls.invoke_open, cls.block_close, cls.block_open)
            cls.value_end_markers = markers(cls.param_close)
        super().__init_subclass__(**kwargs)

    def __init__(self) -> None:
        super().__init__()
        #: Text of the current block that becomes content if no call starts in it.
        self._raw: list[str] = []
        self._block_has_call = False
        self._call_name = ""

    def _invoke_started(self) -> None:
        raise NotImplementedError

    def _open_block(self, opener: str) -> None:
        self._state = "block"
        self._raw = [opener]
        self._block_has_call = False

    # Every state only reads (the waiting rule: callscale/parsers/README.md).
    def _open(self, marker: str, final: bool) -> bool:
        """A block opener in content (base ``_s_content`` over ``_content_markers``)."""
        self._open_block(marker)
        return True

    def _not_a_call(self, *more: str) -> None:
        """What was read of the block (and ``more``) is content; read on as content."""
        self._emit_content("".join(self._raw) + "".join(more))
        self._raw = []
        self._state = "content"

    def _s_block(self, final: bool) -> bool:
        sc = self.scanner
        opener = self.block_open
        n = sc.skip_repeats(opener)
        if n:  # openers in a row: each but the last opens no call
            if not self._block_has_call:  # the block read so far carries no call: content
                self._emit_content("".join(self._raw) + opener * (n - 1))
            elif n > 1:
                self._emit_content(opener * (n - 1))
            self._open_block(opener)
            return True
        raw = self._raw
        if self._block_has_call:  # layout between calls
            ws = sc.skip_whitespace()
            if ws:
                raw.append(ws)
            marker = sc.match(self.block_markers, final)
        else:  # the head of the block's first call (its whitespace, the invoke opener, the name): bounded
            marker = sc.match(self.block_markers, final)
            if marker is None:  # (whitespace is read only where no tag starts)
                if len(raw) == 1:  # nothing read after the block's opener yet: the head starts here
                    self.scanner.head_begin()
                ws = self.scanner.head_run(_SPACE, final)[0]
                if ws:
                    raw.append(ws)
                    if self.scanner.head_over():
                        self._not_a_call()
                        return True
                    marker = sc.match(self.block_markers, final)
        if marker is PARTIAL:
            return False
        if marker == self.invoke_open:
            # the head counts the block's first whitespace and the opener (MAX_HEAD)
            self.scanner.head_begin("", 0 if self._block_has_call else len("".join(raw)) - len(raw[0]) + len(marker))
            raw.append(marker)
            self._state = "name"
            return True
        elif marker == self.block_close:
            if not self._block_has_call:  # an empty block carries no call: content
                self._emit_content("".join(self._raw) + marker)
            self._raw = []
            self._state = "content"
        elif marker == self.block_open:
            if not self._block_has_call:
                self._emit_content("".join(self._raw))
            self._open_block(marker)
            return True
        else:  # not a call: what was read of the block is content
            if sc.at_end() or self._cut_by_end(final, self.block_markers):
                return False  # final, nothing more: the output cut the block (no content)
            self._not_a_call()  # after a call: the garbage ends the block, its whitespace before it is content
        return True

    def _s_name(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_TAG_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:  # too long for a head: content
                self._not_a_call(self.scanner.head_text())
                return True
            return False
        name = self.scanner.head_text()
        if not is_tool_name(name):
            self._not_a_call(name, marker)
            return True
        self._raw = []
        self._block_has_call = True
        self._call_name = name
        self._begin_call(name)
        self._invoke_started()
        return True


@register("minimax_m2")
class MiniMaxM2Parser(MiniMaxBlocks):
    """Streaming parser of MiniMax M2 tool calls; rules: ``docs/formats.md``, "MiniMax M2"."""

    transitions = MINIMAX_M2_TRANSITIONS

    #: The whitespace its encoder writes before a call block (base.ToolParser.layout_before_call).
    layout_before_call = "\n"
    block_open = BLOCK_OPEN
    block_close = BLOCK_CLOSE
    invoke_open = INVOKE_OPEN
    invoke_close = INVOKE_CLOSE
    param_open = PARAM_OPEN
    param_close = PARAM_CLOSE
    _content_markers = _CONTENT

    def __init__(self) -> None:
        super().__init__()
        self._n_params = 0
        self._value_ends = self.value_end_markers  # (value_state's markers: an instance attribute, read a delta)
        self._tv = _NO_VALUE  # the current value's typed writer (parsers.schema.TypedValue)
        self._typing = UNTYPED  # the schema typing of a typed value (parsers.schema)

        self._pending: list[str] = []  # a closing tag (and whitespace) not yet decided

    # ------------------------------------------------------------------ end of output (states: _s_<state>, base driver)

    def _at_end(self) -> None:
        """The end of the output (base hook, after the driver)."""
        state = self._state
        if state in (_S_BLOCK, _S_NAME):
            pass  # the output cut the block's call head: its markup is no content (DESIGN.md)
        elif state in (_S_INVOKE, _S_KEY, _S_VALUE, _S_CLOSE1):
            log.debug("%s: call %r never closed; abandoned", self.name, self._call_name)
            self._abandon_call()
        self._raw = []
        self._state = _S_CONTENT

    # ------------------------------------------------------------------ states
    # Each returns True when it moved on (run again), False when it needs more text.
    # Content: base ``_s_content`` over ``_content_markers``, opening at MiniMaxBlocks._open.

    def _invoke_started(self) -> None:
        self._n_params = 0
        self._emit_arguments("{")
        self._state = _S_INVOKE

    def _s_invoke(self, final: bool) -> bool:
        in_invoke = self.invoke_markers
        marker = self.scanner.match_after_space(in_invoke, final)
        if marker == self.param_open:
            self.scanner.head_begin()
            self._state = _S_KEY
        elif marker == self.invoke_close:
            self._close_call()
            self._state = _S_BLOCK
        elif marker is PARTIAL or self._cut_by_end(final, in_invoke):
            return False  # a partial tag, or nothing unread; or the output cut the call
        else:
            self._fail("unexpected text inside <invoke>")
        return True

    def _s_key(self, final: bool) -> bool:
        _, marker = self.scanner.head_find(_TAG_END, final)
        if marker is None or marker is OVER:
            if marker is OVER:
                self._fail("a parameter name longer than MAX_HEAD")
                return True
            return False
        key = self.scanner.head_text()
        if _KEY.fullmatch(key) is None:
            self._fail(f"bad parameter name {key!r}")
            return True
        self._typing = typing = self._param_typing(self._call_name, key)
        self._begin_parameter(key, TypedValue(typing))
        self._state = _S_VALUE
        return True

    #: A value's text up to ``</parameter>``, through its typed writer, sent: the shared value state
    #: (``scanner.value_state``); at the tag, :meth:`_value_marker`.
    _s_value = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """``</parameter>`` after a value's text (``value_state``), or None: the output ended inside the value
        (the call is cut: ``_at_end``)."""
        if marker is None:
            return False
        self._pending = [self.param_close]
        self._confirm_ws.clear()
        self._state = _S_CLOSE1
        return True

    def _s_close1(self, final: bool) -> bool:
        marker = self.scanner.match(self.invoke_markers, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == self.param_open:
            self._confirm_ws.clear()
            self._end_value()
            self.scanner.head_begin()
            self._state = _S_KEY
        elif marker == self.invoke_close:
            self._pending = [self.param_close, self._confirm_text(), marker]
            self._state = _S_CLOSE2
        else:  # the closing tag was value text
            self._reject_close()
        return True

    def _s_close2(self, final: bool) -> bool:
        after = self.after_invoke_markers
        if final and self._cut_by_end(final, after):  # the end of the output (or a cut tag) follows </invoke>
            self._confirm_ws.clear()
            self._end_value()
            self._close_call()
            self._state = _S_BLOCK
            return False
        marker = self.scanner.match(after, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:
            self._reject_close()
            return True
        self._confirm_ws.clear()
        self._end_value()
        self._close_call()
        if marker == self.invoke_open:
            self._raw = [marker]
            self.scanner.head_begin()
            self._state = _S_NAME
        elif marker == self.block_close:
            self._state = _S_CONTENT
        else:
            self._open_block(marker)
        return True

    # ------------------------------------------------------------------ helpers
    def _reject_close(self) -> None:
        """The held-back closing tag(s) did not end the value: value text, with the whitespace
        :meth:`ToolParser._confirm_text` held after them; scan on after it."""
        self._emit_arguments(self._tv.feed("".join(self._pending) + self._confirm_text()))
        self._pending = []
        self._state = _S_VALUE

    def _end_value(self) -> None:
        self._pending = []
        tv, self._tv = self._tv, _NO_VALUE
        self._emit_arguments(tv.end())

    def _close_call(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._raw = []

    def _fail(self, why: str) -> None:
        log.debug("%s: call %r abandoned: %s", self.name, self._call_name, why)
        self._pending = []
        self._confirm_ws.clear()
        self._tv = _NO_VALUE
        self._raw = []  # resumed after the call's </invoke>: a block that has a call
        self._block_has_call = True
        self._broken()
