"""DeepSeek V3.2, V4 and V4.1 DSML tool calls (``deepseek_v32``, ``deepseek_v4``, ``deepseek_v41``).

One grammar, three spellings of the tag names (DeepSeek's ``encoding_dsv32.py``
and its V4 successors). A tag name starts with the special token ``｜DSML｜``.
V3.2 spelling (``docs/formats.md``, DSML section)::

    Checking.

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">杭州</｜DSML｜parameter>
    <｜DSML｜parameter name="count" string="false">42</｜DSML｜parameter>
    </｜DSML｜invoke>
    <｜DSML｜invoke name="submit"/>
    </｜DSML｜function_calls>

gives content ``Checking.`` and the calls ``get_weather {"city": "杭州",
"count": 42}`` and ``submit {}``.

The reading rules (layout, stray text, missing block opener, cut tags,
literal closing tags in values, typing, broken calls): ``docs/formats.md``,
"DeepSeek V3.2, V4, V4.1" (the one place). One state machine,
:class:`DsmlToolParser`, on base.py's driver; the three registered
subclasses differ only in their :class:`Spelling`.

The transition table (``DSML_TRANSITIONS``, below) opens the module.

A value's kind is :class:`schema.TypedValue`'s: ``string="true"`` a string,
``string="false"`` JSON as written (else the raw text), no attribute the schema
(docs/formats.md, "Schema typing").
"""

from __future__ import annotations

# The transition table, as h11 writes its rules: {state: {what it reads: next state}} (``B``, ``I``, ``P``:
# the spelling's block, invoke and parameter tag names; whitespace between elements is layout, ``EOS`` is
# dropped wherever it appears; "content" and "broken" are base.ToolParser's; tests/parsers/test_transitions.py
# holds it to the class's states and to the states real workloads enter).
DSML_TRANSITIONS = {
    "content": {"text": "content", "[\\n\\n]<B>": "block",
                "[\\n\\n]<I (the block opener missing: held)": "invoke_head"},
    "block": {"<I": "invoke_head", "</B> (confirms a held invoke outside a block)": "content",
              "<B> (a new block; the open one stays unclosed)": "block",
              "other text (content, layout around it dropped)": "block"},
    "invoke_head": {"attributes, then > (name=...)": "invoke",
                    "attributes, then /> (a call of no arguments)": "block",
                    "a tag without a name": "broken",
                    "another tag, past MAX_HEAD, a word glued to the name (the tag was text)": "block"},
    "invoke": {"<P": "param_head", "</I>": "block", "a block-level tag (the invoke never closed)": "block",
               "</P> with no <P (a stray closer: the call is broken)": "broken"},
    "param_head": {"attributes, then > (name=..., string=...)": "value", "a tag without a name": "broken",
                   "another tag, past MAX_HEAD, a word glued to the name (the tag was text)": "invoke"},
    "value": {"text, then </P>": "after_param", "the end of the output inside the call": "block"},
    "after_param": {"whitespace, then <P": "param_head", "whitespace, then </I>": "after_invoke",
                    "anything else (</P> was value text)": "value"},
    "after_invoke": {"whitespace, then <I, </B>, <B> or the end of the output": "block",
                     "anything else (</P> ... </I> was value text)": "value"},
    "broken": {"text up to </I>": "block", "<I, <B> or </B> (read again)": "block"},
}

import re
from dataclasses import dataclass
from typing import ClassVar

from . import register
from .base import MAX_HEAD, Layout, ToolParser
from .schema import UNTYPED, TypedValue, is_framed_name, json_string
from .deepseek import EOS
from .scanner import OVER, PARTIAL, markers, value_state

__all__ = [
    "DSML_TOKEN",
    "Spelling",
    "V32",
    "V4",
    "V41",
    "SPELLINGS",
    "SPECIAL_TOKENS",
    "MAX_HEAD",
    "DsmlToolParser",
    "DeepSeekV32Parser",
    "DeepSeekV4Parser",
    "DeepSeekV41Parser",
]

DSML_TOKEN = "｜DSML｜"


@dataclass(frozen=True)
class Spelling:
    """The three tag names of one DSML version (without ``<``, ``</`` and ``>``)."""

    block: str
    invoke: str
    parameter: str


V32 = Spelling(DSML_TOKEN + "function_calls", DSML_TOKEN + "invoke", DSML_TOKEN + "parameter")
V4 = Spelling(DSML_TOKEN + "tool_calls", DSML_TOKEN + "invoke", DSML_TOKEN + "parameter")
V41 = Spelling(DSML_TOKEN + " calls", DSML_TOKEN + " invoke", DSML_TOKEN + " parameter")

SPELLINGS = {"deepseek_v32": V32, "deepseek_v4": V4, "deepseek_v41": V41}


def block_names(spelling: Spelling) -> tuple[str, ...]:
    """The block tag names a parser of ``spelling`` reads: its own first, then those of the other spellings
    with the same invoke tag (V3.2's ``function_calls`` and V4's ``tool_calls``: a V4 model writes V3.2's
    block name, sglang #40236; docs/formats.md, "DSML")."""
    names = [spelling.block]
    for other in SPELLINGS.values():
        if other.invoke == spelling.invoke and other.block not in names:
            names.append(other.block)
    return tuple(names)
SPECIAL_TOKENS = (EOS, DSML_TOKEN)

_NEWLINES = "\r\n"
# The attribute text of an opening tag: ` name="x" string="true"`, optionally
# ending in `/` (a self-closing tag). Written so that a failed match backtracks
# linearly: `\s*(/?)\s*` tried every split of a whitespace run between its two
# `\s*` (quadratic in the head, 2 ms for a 1000-character head).
_HEAD = re.compile(r'((?:\s+[^\s="/>]+\s*=\s*"[^"]*")*)\s*(?:(/)\s*)?')
_ATTR = re.compile(r'([^\s="/>]+)\s*=\s*"([^"]*)"')

# States of the machine.
_CONTENT = "content"          # outside a block
_BLOCK = "block"              # inside a block, between invokes
_INVOKE_HEAD = "invoke_head"  # reading the attributes of an invoke opener
_INVOKE = "invoke"            # inside an invoke, between parameters
_PARAM_HEAD = "param_head"    # reading the attributes of a parameter opener
_VALUE = "value"              # inside a parameter value
_AFTER_PARAM = "after_param"  # after a candidate </P>: is it the real end?
_AFTER_INVOKE = "after_invoke"  # after a candidate </P> ... </I>: is it the real end?


#: Returned by ``_between_elements`` when the text it read ended an invoke outside a block.
_RETRY = object()

#: What ends the attribute text of an opening tag: its ``>``, an EOS to drop, or
#: the start of another DSML tag (then the tag was cut short: text).
_TAG_START = "<" + DSML_TOKEN
_TAG_END_START = "</" + DSML_TOKEN
_HEAD_STOPS = markers(">", EOS, _TAG_START, _TAG_END_START)
#: The longest prefix of ``EOS`` (all of it, or what the head's bound leaves: the scanner's ``head_run``).
_EOS_PREFIX = re.compile("".join("(?:" + re.escape(ch) for ch in EOS) + ")?" * len(EOS))


class DsmlToolParser(ToolParser):
    """Streaming parser of DSML tool calls; subclasses set ``spelling`` (see the module docstring).

    Held back at any time: a possible partial marker (fewer characters than
    the longest tag), the trailing newline run of content, the whitespace
    after stray text in a block, the attribute text of an opening tag being
    read (at most :data:`callscale.parsers.base.MAX_HEAD` characters), and candidate closing tags
    with the whitespace after them. No method raises on model output.
    """

    spelling: ClassVar[Spelling] = V32
    #: DeepSeek's encoder writes a blank line before the block (encoding_dsv32.py).
    transitions = DSML_TRANSITIONS
    layout_before_call = "\n\n"
    broken_resume = _BLOCK
    broken_restart_state = _BLOCK

    def __init_subclass__(cls, **kwargs) -> None:
        sp = cls.spelling
        # a broken invoke's text ends at its </I> (dropped); a new invoke or block opener, or the
        # block closer, makes it content (the marker is then read again, in the block state)
        cls.broken_ends = (f"</{sp.invoke}>",)
        blocks = block_names(sp)
        cls.broken_restarts = (f"<{sp.invoke}", *(f"<{b}>" for b in blocks), *(f"</{b}>" for b in blocks))
        super().__init_subclass__(**kwargs)

    def __init__(self) -> None:
        super().__init__()
        sp = self.spelling
        blocks = block_names(sp)
        self._block_opens = opens = tuple(f"<{b}>" for b in blocks)  # its own first
        self._block_closes = closes = tuple(f"</{b}>" for b in blocks)
        self._invoke_open = f"<{sp.invoke}"
        self._invoke_close = f"</{sp.invoke}>"
        self._param_open = f"<{sp.parameter}"
        self._param_close = f"</{sp.parameter}>"
        lay = self.layout_before_call
        self._content_markers = markers(*(lay + o for o in opens), *opens, lay + self._invoke_open,
                                          self._invoke_open, EOS)
        self._m_block = markers(self._invoke_open, *closes, *opens, EOS)
        self._m_invoke = markers(
            self._param_open, self._invoke_close, self._invoke_open, *closes, *opens, EOS, self._param_close
        )
        self._value_ends = markers(self._param_close, EOS)  # (value_state's markers)
        self._m_after_param = markers(self._param_open, self._invoke_close, EOS)
        self._m_after_invoke = markers(self._invoke_open, *closes, *opens, EOS)

        self._state = _CONTENT
        # the opener (with its layout) of an invoke outside a block
        self._orphan_opener = ""
        # stray text inside a block: whitespace after it, content if more stray text follows
        self._stray_open = False
        self._stray_ws = Layout()
        # text inside an invoke that is no element, held until the tag after it says what it is
        self._invoke_text: list[str] = []
        # an opening tag being read: its marker (the attribute text: base _head_*), nothing of it read yet
        self._head_marker = ""
        self._head_fresh = False
        # the current call and parameter
        self._call_name = ""
        self._first_param = True
        self._tv = TypedValue(UNTYPED)  # the current value's typed writer (schema.TypedValue decides its kind)
        # candidate closing tags and the whitespace after them, not yet decided: "</P>", then
        # after "</I>" the whitespace between them (self._held_ws, run lengths) and "</I>"
        self._held = ""
        self._held_ws = Layout()
        # an invoke outside a block (the block opener missing): its call events,
        # sent when the block closer confirms it (None: not in such an invoke)
        self._orphan: list[tuple[int, str]] | None = None

    # ------------------------------------------------------------------ driver
    def _at_end(self) -> None:
        """The end of the output: an invoke outside a block that never met its closer is text."""
        while self._orphan is not None:  # no block closer came: it was text
            self._orphan_failed("")
            self._advance(True)
        if self._invoke_text:  # text in an invoke the output ended in: content, as other stray text
            text, self._invoke_text = "".join(self._invoke_text), []
            self._stray(text)
        if self._state not in (_CONTENT, _BLOCK, "broken"):  # inside an invoke: it never closed
            self._abandon_call()
            self._state = _BLOCK
        self._stray_ws.clear()

    # ------------------------------------------------------------------ content (base ``_s_content``)
    def _open(self, marker: str, final: bool) -> bool:
        """A marker in content (base ``_s_content`` over ``_content_markers``)."""
        if marker.endswith(self._block_opens):  # the encoder's blank line before it: layout
            self._enter_block()
        elif marker.endswith(self._invoke_open):  # maybe a block whose opener is missing
            self._orphan_begin()
            self._orphan_opener = marker
            self.scanner.mark()
            self._enter_block()
            self._start_head(self._invoke_open, _INVOKE_HEAD)
        return True  # EOS: dropped

    # ------------------------------------------------------------------ a block whose opener is missing
    def _orphan_failed(self, marker: str) -> None:
        """The text read since an invoke opener outside a block is not such a block: it is content.

        ``marker`` (just read, possibly ``""``) is read again in the content state.
        """
        sc = self.scanner
        if marker:
            sc.unread(len(marker))
        kept = sc.kept()
        body = kept.rstrip()
        raw = self._orphan_opener + body
        sc.unmark()
        # its trailing whitespace is read again in content, where the layout before an opener is decided
        # (docs/formats.md): the same answer whether it came in this delta or the next
        sc.push_back(kept[len(body):])
        self._orphan_end()
        self._state = _CONTENT
        self._stray_open = False
        self._stray_ws.clear()
        self._held = ""
        self.scanner.head_begin()
        self._emit_content(raw.replace(EOS, ""))

    def _orphan_confirmed(self) -> None:
        """The block closer after complete invokes: they are calls; send what they held."""
        events = self._orphan
        self._orphan_end()
        self.scanner.unmark()
        for kind, value in events:
            if kind == 0:
                self._begin_call(value)
            elif kind == 1:
                self._emit_arguments(value)
            else:
                self._end_call()

    _HELD_EVENTS = ("_begin_call", "_emit_arguments", "_end_call", "_abandon_call")

    def _orphan_begin(self) -> None:
        """Hold call events until the block closer confirms the invoke (instance-level overrides:
        the base methods stay the per-delta path when no such invoke is open)."""
        self._orphan = []
        self._begin_call = self._held_begin_call
        self._emit_arguments = self._held_emit_arguments
        self._end_call = self._held_end_call
        self._abandon_call = self._held_abandon_call

    def _orphan_end(self) -> None:
        self._orphan = None
        for attr in self._HELD_EVENTS:
            self.__dict__.pop(attr, None)

    def _held_begin_call(self, name: str) -> int:
        self._orphan.append((0, name))
        return -1

    def _held_emit_arguments(self, text: str) -> None:
        if text:
            self._orphan.append((1, text))

    def _held_end_call(self) -> None:
        self._orphan.append((2, ""))

    def _held_abandon_call(self) -> None:
        """Only at the end of the output: _at_end passes the text on."""

    def _enter_block(self) -> None:
        self._state = _BLOCK
        self._stray_open = False
        self._stray_ws.clear()

    # ------------------------------------------------------------------ stray text in a block
    def _stray(self, text: str, marker: str = "") -> None:
        """Text inside a block that is no element: content, without the layout whitespace around it.

        In an invoke whose block opener is missing, it shows the invoke was
        text: everything from its opener is content, and ``marker`` (read
        right after ``text``) is read again as content would read it.
        """
        if self._orphan is not None and text.strip():
            self._orphan_failed(marker)
            return
        body = text.rstrip()
        if not body:
            if self._stray_open and not self._stray_ws.add(text):
                self._emit_content(self._stray_ws.text())  # past MAX_LAYOUT_RUNS: decided as content
                self._stray_ws.clear()
            return
        if self._stray_open:
            self._emit_content(self._stray_ws.text())
        self._emit_content(body)
        self._stray_ws.clear()
        if len(body) < len(text):
            self._stray_ws.add(text[len(body):])
        self._stray_open = True

    def _between_elements(self, m, final: bool):
        """Skip layout, then return the next marker of ``m``, passing text before it on as content.

        Returns the marker, or ``None`` when more text is needed (or the end is reached). Text inside
        an invoke (``m`` is the invoke's set) is held until the tag after it: before a parameter's
        closer with no opener (a misspelled opener, sglang #39435) it is the broken call's markup.
        """
        sc = self.scanner
        ws = sc.skip_whitespace()
        held = self._invoke_text
        if ws:
            if held:
                held.append(ws)
            elif self._stray_open and not self._stray_ws.add(ws):
                self._emit_content(self._stray_ws.text())
                self._stray_ws.clear()
        marker = sc.match(m, final)
        if marker is PARTIAL:
            return None
        text = ""
        if marker is None:
            if sc.at_end():
                return None
            text, marker = sc.find(m)  # a partial marker stays unread, even at the end
            if marker is None and final:  # the output ended in a tag: cut markup, not content
                sc.take_all()
            if marker is None and text and m is self._m_invoke and self._orphan is None:
                held.append(text)  # text in an invoke: decided by the tag after it
                return None
        if held:
            text = "".join(held) + text
            self._invoke_text = []
        if marker == self._param_close and self._orphan is None:  # a parameter closer with no opener: broken
            self._broken(text + marker)
            return _RETRY
        if text:
            self._stray(text, marker or "")
            if self._state == _CONTENT:  # it ended an invoke outside a block
                return _RETRY
        if marker is None:
            return None
        if marker != EOS:
            self._stray_open = False
            self._stray_ws.clear()
        return marker

    # ------------------------------------------------------------------ block level
    def _s_block(self, final: bool) -> bool:
        marker = self._between_elements(self._m_block, final)
        if marker is None:
            return False
        if marker is _RETRY:
            return True
        self._block_marker(marker)
        return True

    def _block_marker(self, marker: str) -> None:
        if marker == self._invoke_open:
            self._start_head(marker, _INVOKE_HEAD)
        elif marker in self._block_closes:
            self._state = _CONTENT
            if self._orphan is not None:
                self._orphan_confirmed()
        elif marker in self._block_opens:
            if self._orphan is not None:  # an invoke outside a block, then a block: it was text
                self._orphan_failed(marker)
                return
            self._enter_block()  # a new block; the previous one stays unclosed
        else:  # EOS: dropped
            self._state = _BLOCK

    # ------------------------------------------------------------------ invoke level
    def _s_invoke(self, final: bool) -> bool:
        marker = self._between_elements(self._m_invoke, final)
        if marker is None:
            return False
        if marker is _RETRY:
            return True
        if marker == self._param_open:
            self._start_head(marker, _PARAM_HEAD)
        elif marker == self._invoke_close:
            self._close_invoke()
        elif marker == EOS:
            pass
        elif self._orphan is not None:  # an invoke outside a block that never closed: text
            self._orphan_failed(marker)
        else:  # a block-level marker: this invoke never closed
            self._abandon_call()
            self._block_marker(marker)
        return True

    def _broken_is_content(self) -> None:
        """A broken invoke's held text is content without the block's layout whitespace around it."""
        held, self._broken_held = self._broken_held, None
        text = "".join(held).strip() if held else ""
        if text:
            self._emit_content(text)

    def _close_invoke(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._state = _BLOCK

    # ------------------------------------------------------------------ opening tags
    def _start_head(self, marker: str, state: str) -> None:
        self._head_marker = marker
        self.scanner.head_begin()
        self._head_fresh = True
        self._state = state

    def _tag_text(self) -> str:
        """The attribute text read (the scanner's ``head_text``) without the ``EOS`` tokens in it (dropped)."""
        return self.scanner.head_text().replace(EOS, "")

    def _s_invoke_head(self, final: bool) -> bool:
        return self._s_param_head(final)

    def _s_param_head(self, final: bool) -> bool:
        """Read attribute text up to ``>`` (at most :data:`MAX_HEAD` characters before it); ``EOS`` in it is dropped.

        The tag name must end at whitespace, ``>`` or ``/`` (``<｜DSML｜invokeOk`` is prose);
        another DSML tag before the ``>`` means the tag was cut short (it is text).
        """
        sc = self.scanner
        if self._head_fresh:  # nothing of the tag read yet: a name glued to a word is no tag
            first = sc.peek(1)
            if not first:
                if not final:
                    return False
            elif first.isalnum() or first in "_-":
                self._open_tag("", closed=False)
                return True
            self._head_fresh = False
        text, stop = sc.head_find(_HEAD_STOPS, final)
        over = stop is OVER
        if over:
            stop = None
        if stop is not None:
            if stop == ">":
                self._open_tag(self._tag_text(), closed=True)
                return True
            if stop == EOS:  # it ends in ">" too: dropped, its characters counted (as much as the bound takes)
                sc.unread(len(EOS))
                self.scanner.head_run(_EOS_PREFIX, final)
                if not sc.head_over():
                    return True
            else:  # another tag starts: this one was cut short (text); that tag is read next
                sc.unread(len(stop))
            self._open_tag(self._tag_text(), closed=False)
            return True
        if over:
            self._open_tag(self._tag_text(), closed=False)
            return True
        if final:  # the output ended inside the tag: a cut call's markup, not content
            if self._orphan is not None:
                return False  # _advance passes an invoke outside a block on as text
            self.scanner.head_begin()
            self._state = _BLOCK if self._state == _INVOKE_HEAD else _INVOKE
            if self._state == _INVOKE:
                self._abandon_call()
                self._state = _BLOCK
            return True
        return False

    def _open_tag(self, head: str, closed: bool) -> None:
        """An opening tag is read: start its element, or pass it on as text when malformed."""
        invoke = self._state == _INVOKE_HEAD
        parsed = _HEAD.fullmatch(head) if closed else None
        attrs = dict(_ATTR.findall(parsed.group(1))) if parsed else {}
        name = attrs.get("name", "")
        if name and not is_framed_name(name):  # no name any client dispatches: as a tag without one
            name = ""
        self_closing = bool(parsed and parsed.group(2))
        if closed and self._orphan is None and (not name or (self_closing and not invoke)):
            # a complete tag without what an element needs (a name): markup, never content; in an
            # invoke it breaks the call (held to its </I>, base.py)
            self._broken()  # an invoke without a name: no call; its text up to its </I> is dropped
            return
        if not name or (self_closing and not invoke):
            self._state = _BLOCK if invoke else _INVOKE
            self._stray(self._head_marker + head + (">" if closed else ""))
            return
        if invoke:
            self._call_name = name
            self._first_param = True
            self._begin_call(name)
            self._emit_arguments("{")
            if self_closing:
                self._close_invoke()
            else:
                self._state = _INVOKE
            return
        # a parameter: string="true" a string, string="false" JSON as written, else the schema says
        kind = attrs.get("string")
        if kind == "true":
            tv = TypedValue(UNTYPED)
        elif kind == "false":
            tv = TypedValue(UNTYPED, "json")
        else:
            tv = TypedValue(self._param_typing(self._call_name, name))
        self._tv = tv
        lead = "" if self._first_param else ", "
        self._first_param = False
        self._emit_arguments(lead + json_string(name) + ": " + tv.opening)
        self._state = _VALUE

    # ------------------------------------------------------------------ values
    def _value_text(self, text: str) -> None:
        """Text that turned out to be part of the value (rejected closing tags): through its typed writer."""
        out = self._tv.feed(text)
        if out:
            self._emit_arguments(out)

    def _close_value(self) -> None:
        self._emit_arguments(self._tv.end())
        self._held = ""

    #: A value's text up to its parameter's closing tag or EOS: the shared value state (``scanner.value_state``).
    _s_value = value_state

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """The tag that ended a value's text (``value_state``), or None: the stream ended inside the value."""
        if marker is None:
            self._abandon_call()
            self._state = _BLOCK
            return False
        if marker != EOS:
            self._held = marker
            self._confirm_ws.clear()
            self._state = _AFTER_PARAM
        return True

    def _s_after_param(self, final: bool) -> bool:
        """After ``</P>``: confirmed by a parameter opener, or by ``</I>`` and what may follow an invoke."""
        marker = self.scanner.match(self._m_after_param, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker == EOS:  # dropped; the continuation is still to come
            return True
        if marker is None:  # the closing tag was text
            self._value_text(self._held + self._confirm_text())
            self._held = ""
            self._state = _VALUE
        elif marker == self._param_open:
            self._close_value()
            self._start_head(marker, _PARAM_HEAD)
        else:  # </I>: real only if a valid continuation of an invoke follows
            self._held_ws, self._confirm_ws = self._confirm_ws, self._held_ws
            self._confirm_ws.clear()
            self._state = _AFTER_INVOKE
        return True

    def _s_after_invoke(self, final: bool) -> bool:
        if final and self.scanner.at_end():  # the end of the output
            self._close_value()
            self._close_invoke()
            return True
        marker = self.scanner.match(self._m_after_invoke, final, self._confirm_ws)
        if marker is PARTIAL:
            return False
        if marker is None:
            if final and self.scanner.at_end():
                self._close_value()
                self._close_invoke()
                return True
            # both closing tags were text
            self._value_text(self._held + self._held_ws.text() + self._invoke_close + self._confirm_text())
            self._held = ""
            self._held_ws.clear()
            self._state = _VALUE
            return True
        self._close_value()
        self._close_invoke()
        self._block_marker(marker)
        return True


@register("deepseek_v32")
class DeepSeekV32Parser(DsmlToolParser):
    """DeepSeek V3.2: ``<｜DSML｜function_calls>``, ``<｜DSML｜invoke>``, ``<｜DSML｜parameter>`` (``encoding_dsv32.py``)."""

    spelling = V32


@register("deepseek_v4")
class DeepSeekV4Parser(DsmlToolParser):
    """DeepSeek V4: ``<｜DSML｜tool_calls>``, ``<｜DSML｜invoke>``, ``<｜DSML｜parameter>``."""

    spelling = V4


@register("deepseek_v41")
class DeepSeekV41Parser(DsmlToolParser):
    """DeepSeek V4.1: ``<｜DSML｜ calls>``, ``<｜DSML｜ invoke>``, ``<｜DSML｜ parameter>`` (a space after the second bar)."""

    spelling = V41
