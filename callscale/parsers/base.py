"""The parser contract shared by every callscale parser, and the base class.

The protocol is the one TensorRT-LLM and SGLang tool parsers speak, so a
user's parser plugs into the suite without glue:

    detect_and_parse(text, tools) -> StreamingParseResult    # whole output
    parse_streaming_increment(delta, tools) -> StreamingParseResult
    finish(tools) -> StreamingParseResult                     # once, at the end

``result.normal_text`` is content (a ``str``); ``result.calls`` is a list of
:class:`ToolCallItem` ``(tool_index, name, parameters)``; ``result.reasoning_text``
is reasoning (a ``str``, empty for formats without it). A client assembles a
streamed call per ``tool_index``: the name arrives once, the ``parameters``
pieces concatenate into the arguments JSON text.

:class:`ToolParser` implements all three methods on top of one streaming
state machine. A format writes its states as methods ``_s_<state>(final)``;
the class collects them into one table (``_states``) and one loop
(:meth:`ToolParser._advance`) runs them (``callscale/parsers/README.md``
describes the protocol; a format may still override ``_advance``). The state
machine reads its input from ``self.scanner`` (a
:class:`callscale.parsers.scanner.MarkerScanner`) and reports what it finds through
``_emit_content``, ``_begin_call``, ``_emit_arguments``, ``_end_call`` and
``_abandon_call``. ``detect_and_parse`` runs the same machine over the whole
text in one step, so the whole-text and streamed answers come from one piece
of code.

Malformed output: a call whose arguments turn out not to be a JSON object, or
that never closes, is *abandoned*. Streaming may already have sent its name
and part of its arguments (they cannot be taken back) and sends nothing more
for it; ``detect_and_parse`` leaves it out and numbers the remaining calls
0, 1, 2, ... No method raises on model output.
"""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar, Mapping, Sequence

from .results import StreamingParseResult, ToolCallItem  # (re-exported: the contract's shapes)
from .results import new_result as _new_result
from .scanner import MAX_HEAD as _MAX_HEAD
from .scanner import PARTIAL, Markers, MarkerScanner, markers
# the tool look-ups moved to parsers/schema.py (schema typing); re-exported here
from .schema import json_fragment, json_string, json_text, parameter_type, tool_list, tool_name, tool_parameter_schema
from .schema import parameter_typing as parameter_typing_

log = logging.getLogger(__name__)

__all__ = [
    "ToolCallItem",
    "StreamingParseResult",
    "ToolParser",
    "json_fragment",
    "json_text",
    "tool_name",
    "tool_parameter_schema",
    "parameter_type",
    "MAX_HEAD",
    "MAX_LAYOUT_RUNS",
    "Layout",
]

#: Longest call head, in characters, that a parser holds back before deciding
#: it is not a call head. A head is the text a parser must read after an
#: opener before it knows whether a call (or a tag) starts there: a function
#: name, a call id, the attributes of a tag, a parameter key, with the fixed
#: text and whitespace between them, up to (not including) the marker that
#: ends it. A head that runs past ``MAX_HEAD`` characters without that marker
#: is not one: it is cut after ``MAX_HEAD + 1`` characters, the first
#: that prove it too long; its raw text is passed on as the format's rule
#: for a head that is no call says (content, for a head outside a started
#: call; a started call whose parameter key runs on is malformed), and
#: reading goes on right after the cut, as after a head that ended and
#: turned out not to be a call (nothing is read twice).
#: This keeps DESIGN.md's invariant 3 (hold back only a possible partial
#: marker) for stray openers: text after one reaches the client at most
#: ``MAX_HEAD`` characters late. :meth:`callscale.parsers.scanner.MarkerScanner.find`
#: takes the bound as ``limit`` and decides it the same for every split of
#: the text. Real heads are far shorter (OpenAI limits a function name to 64
#: characters).
#: (The value is :data:`callscale.parsers.scanner.MAX_HEAD`: the scanner holds a head's count.)
MAX_HEAD = _MAX_HEAD

#: Most runs (maximal stretches of one whitespace character) that held
#: layout whitespace keeps (:class:`Layout`). Held whitespace is stored as
#: run lengths, so ``"\n" * 10**6`` is one run: memory does not grow with
#: the text. Whitespace of more runs than this is decided at the run that
#: passes the bound, by the same rule whatever the split: the caller passes it
#: on as content (the model's text, never lost).
MAX_LAYOUT_RUNS = 64

_WS_RUN = re.compile(r"(\s)\1*")


class Layout:
    """Whitespace held back, as run lengths (``[[char, count], ...]``): memory bounded by :data:`MAX_LAYOUT_RUNS`.

    :meth:`add` takes a whitespace-only piece and returns False once the
    held text has more than :data:`MAX_LAYOUT_RUNS` runs (the caller then
    decides it: :meth:`text` and :meth:`clear`). Runs merge across pieces,
    so the decision does not depend on how the text was split.
    """

    __slots__ = ("runs",)

    def __init__(self) -> None:
        self.runs: list[list] = []

    def add(self, text: str) -> bool:
        runs = self.runs
        if len(text) == 1 or text.count(text[0]) == len(text):
            if runs and runs[-1][0] == text[0]:
                runs[-1][1] += len(text)
            else:
                runs.append([text[0], len(text)])
        else:
            for m in _WS_RUN.finditer(text):
                ch, n = m.group(1), m.end() - m.start()
                if runs and runs[-1][0] == ch:
                    runs[-1][1] += n
                else:
                    runs.append([ch, n])
        return len(runs) <= MAX_LAYOUT_RUNS

    def text(self) -> str:
        return "".join(ch * n for ch, n in self.runs)

    def clear(self) -> None:
        self.runs = []

    def __bool__(self) -> bool:
        return bool(self.runs)




class _Advanced(dict):
    """The state table of a format that overrides ``ToolParser._advance``: whatever the state, a delta runs
    ``_advance(False)`` once (:meth:`callscale.parsers.scanner.MarkerScanner.run` reads a table, not a method)."""

    def __missing__(self, state: str) -> Any:
        return _advance_once


def _advance_once(machine: "ToolParser", final: bool) -> bool:
    machine._advance(final)
    return False


_ADVANCED = _Advanced()


class ToolParser:
    """Base class: one streaming state machine serves all three methods.

    Subclasses set ``name`` (the registry name) and implement ``_advance(final)``: consume as much of ``self.scanner`` as can
    be decided now, emitting through the ``_emit_*`` helpers. ``final`` is
    true when no more text will come (``finish``), so nothing may be held
    back. A parser class must be constructible with no arguments.

    ``self.tools`` holds the tool list of the current call (schema look-ups).
    """

    name: ClassVar[str] = ""

    # ---- behaviour flags (one place per format; renderers and tests read them)
    #: The whitespace the format's encoder writes before a call block
    #: (``"\n"`` for GLM-4.5). Only this layout, right before the block's
    #: opener, is dropped; other whitespace the model wrote there is content.
    layout_before_call: ClassVar[str] = ""
    #: Whether the format marks reasoning (``reasoning_text`` may be non-empty).
    writes_reasoning: ClassVar[bool] = False
    #: The marker that closes a reasoning element read by state ``"think"`` (:meth:`_s_think`).
    reasoning_end: ClassVar[Markers | None] = None

    #: The format's transition table, as h11 writes its rules: {state: {what it reads: next state}} (a next
    #: state ``"a / b"``: either). It opens the format's module; tests/parsers/test_transitions.py holds it to the
    #: class's ``_s_<state>`` steps and to the states a parser enters on real workloads.
    transitions: ClassVar[dict[str, dict[str, str]]] = {}

    # ---- the broken-call mechanism (see _break_call and _s_broken)
    #: Tokens that end a broken call: its held text is dropped, then the state ``broken_resume`` gives.
    broken_ends: ClassVar[tuple[str, ...]] = ()
    #: Openers of a new call: the broken call's held text is content, the
    #: opener is read again in state ``broken_restart_state``.
    broken_restarts: ClassVar[tuple[str, ...]] = ()
    #: The state after a broken call's end token: one state for every end
    #: token, or a mapping ``{end token: state}`` (then its keys are the
    #: end tokens and ``broken_ends`` may be left unset), for a format whose
    #: call end and block end resume in different states (Kimi K3:
    #: ``<|close|>call<|sep|>`` in ``tools``, ``<|close|>tools<|sep|>`` in ``content``).
    broken_resume: ClassVar[str | Mapping[str, str]] = "content"
    #: The state that reads a restart opener again (a block-level token: the block's state).
    broken_restart_state: ClassVar[str] = "content"

    # ---- the empty envelope (see _s_envelope)
    #: The tag that closes an envelope (``<tool_call>`` ... ``</tool_call>``): an envelope that holds
    #: nothing a call needs (only whitespace) is markup, dropped, when whitespace and this tag follow.
    envelope_close: ClassVar[Markers | None] = None
    #: The state after an empty envelope's closing tag.
    envelope_resume: ClassVar[str] = "content"

    #: The state table: ``{"content": ToolParser._s_content, ...}``,
    #: collected from the ``_s_<state>`` methods of the class and its bases.
    _states: ClassVar[dict[str, Any]] = {}
    _broken_markers: ClassVar[Markers | None] = None
    #: ``{end token: state}`` from ``broken_ends`` and ``broken_resume`` (class creation).
    _broken_resume_at: ClassVar[dict[str, str]] = {}
    _driven: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                if attr.startswith("_s_") and callable(fn):
                    table[attr[3:]] = fn
        cls._states = table
        # formats run by the base driver (not overriding _advance): a delta runs the loop in the scanner's feed
        cls._driven = cls._advance is ToolParser._advance
        resume = cls.broken_resume
        if isinstance(resume, Mapping):
            if "broken_ends" not in vars(cls):
                cls.broken_ends = tuple(resume)
            if set(cls.broken_ends) != set(resume):
                raise TypeError(f"{cls.__name__}: broken_resume names {sorted(resume)}, "
                                f"broken_ends {sorted(cls.broken_ends)}")
            cls._broken_resume_at = dict(resume)
        else:
            cls._broken_resume_at = dict.fromkeys(cls.broken_ends, resume)
        ends = tuple(cls.broken_ends) + tuple(cls.broken_restarts)
        cls._broken_markers = markers(*ends) if ends else None

    def __init__(self) -> None:
        # the class's state table when the base driver runs it (else None), kept per instance: it is read a
        # delta, and CPython 3.11 specialises an instance attribute's read, not a class attribute's. (One
        # attribute: an instance of more than 30 attributes keeps them in a dict of its own, read slower.)
        # (None once the output ended: finish)
        self._driver = type(self)._states if type(self)._driven else _ADVANCED
        self.scanner = MarkerScanner()
        self.tools: Sequence[Any] = ()
        self._out_text: list[str] = []
        self._out_reasoning: list[str] = []
        self._out_calls: list[ToolCallItem] = []
        # argument pieces of the last item of _out_calls, joined once per increment (and in finish)
        # (appending to a str per piece is quadratic when one delta holds many)
        self._out_args: list[str] = []
        self._next_index = 0
        self._current: int | None = None
        self._abandoned: set[int] = set()
        self._finished = False
        # whitespace-only content since the last call started: layout unless other text follows
        self._after_call = False
        self._layout = Layout()
        # text of a broken call from where it broke, not yet decided (DESIGN.md "Content and markup")
        self._broken_held: list[str] | None = None
        #: the current state (a key of ``_states``), for formats run by the base driver
        self._state = "content"
        # whitespace read after a closing tag, before what confirms it (see _confirm_text)
        self._confirm_ws = Layout()
        # schema typings looked up for self.tools (see _param_typing)
        self._typings: tuple[Any, dict[tuple[str, str], Any]] = (None, {})  # (the tools list, its typings)

    # ----------------------------------------------------------------- protocol
    def parse_streaming_increment(self, delta: str, tools: Sequence[Any] | None = None) -> StreamingParseResult:
        """Feed one delta (characters); return the content and call pieces it decides.

        ``tools``: the request's tool list (read again only when it is another object than the last
        one). Text that may be the start of a marker is held back (a bounded number of characters)
        until the next delta or :meth:`finish` decides it. Never raises on model output: a parser bug
        is logged and the unread text passed on as content (:meth:`_failed`).

        The scanner's :meth:`~callscale.parsers.scanner.MarkerScanner.run` appends the delta and runs
        the states as the base driver does (the waiting rule, ``callscale/parsers/README.md``); a format
        that overrides :meth:`_advance` has the delta fed and that called instead. Then the increment's
        output is taken from the parser.
        """
        states = self._driver
        if states is None or not delta:  # (None: the output ended, finish)
            return StreamingParseResult()
        if tools is not self.tools:  # (the request's list read again only when it is another object)
            self._take_tools(tools)
        try:
            self.scanner.run(delta, states, self)
        except Exception:
            self._failed()
        calls = self._out_calls
        if calls:  # (the result's own list: the parser's fills again)
            self._out_calls = []
            args = self._out_args  # (pieces only of the last item of calls: _flush_arguments, without its frame)
            if args:
                calls[-1].parameters += "".join(args)
                self._out_args = []
        else:
            calls = []
        out = self._out_text
        if out:
            self._out_text = []
            text = "".join(out)  # (one piece: the piece itself)
        else:
            text = ""
        if not self._out_reasoning:  # most formats never write reasoning: no per-increment cost
            # StreamingParseResult(text, calls) without the generated __init__'s frame (the same fields)
            result = _new_result(StreamingParseResult)
            result.normal_text = text
            result.calls = calls
            result.reasoning_text = ""
            return result
        reasoning = "".join(self._out_reasoning)
        self._out_reasoning = []
        return StreamingParseResult(text, calls, reasoning)

    def finish(self, tools: Sequence[Any] | None = None) -> StreamingParseResult:
        """End of generation: report everything still held back; a second call returns nothing."""
        if self._finished:
            return StreamingParseResult()
        self.tools = tool_list(tools) or self.tools
        try:
            self._advance(True)
            self._at_end()
        except Exception:  # a parser bug must not take down the server's stream
            self._failed()
        self._broken_is_content()
        self._layout.clear()  # whitespace after the last call: layout
        if self._out_args:
            self._flush_arguments()
        text = "".join(self._out_text)
        calls = self._out_calls
        self._out_text = []
        self._out_calls = []
        self._finished = True
        self._driver = None
        if not self._out_reasoning:  # most formats never write reasoning
            return StreamingParseResult(text, calls)
        reasoning = "".join(self._out_reasoning)
        self._out_reasoning = []
        return StreamingParseResult(text, calls, reasoning)

    def detect_and_parse(self, text: str, tools: Sequence[Any] | None = None) -> StreamingParseResult:
        """Parse a whole output: content plus complete calls, arguments as one JSON text each.

        Runs a fresh parser of the same class over ``text`` in one delta and
        assembles the pieces; abandoned (malformed) calls are left out and the
        rest numbered 0, 1, 2, ...
        """
        parser = type(self)()
        first = parser.parse_streaming_increment(text, tools)
        last = parser.finish(tools)
        names: dict[int, str] = {}
        args: dict[int, list[str]] = {}
        reasoning = first.reasoning_text + last.reasoning_text
        for item in first.calls + last.calls:
            if item.name is not None:
                names[item.tool_index] = item.name
            args.setdefault(item.tool_index, []).append(item.parameters)
        calls = []
        for index in sorted(names):
            if index in parser._abandoned:
                continue
            calls.append(ToolCallItem(len(calls), names[index], "".join(args.get(index, ()))))
        return StreamingParseResult(first.normal_text + last.normal_text, calls, reasoning)

    # ----------------------------------------------------------------- for subclasses
    def _advance(self, final: bool) -> None:
        """The driver: run the current state's ``_s_<state>(final)`` while it returns True.

        A state method consumes what it can decide, sets ``self._state`` to
        the next state and returns True to go on, or returns False when it
        needs more text (or, with ``final``, when everything is decided).
        """
        states = self._states
        while states[self._state](self, final):
            pass

    def _emit_content(self, text: str) -> None:
        """Send content (characters). After a call, whitespace-only text is held as layout (DESIGN.md).

        Once a call has started, content that is only whitespace is held: it
        is sent before the next other content (the model's text, whole), and
        dropped when another call starts or the output ends. So whitespace
        between or after calls never reaches the client as content, in every
        format, however the text is split.
        """
        if not text:
            return
        if self._after_call:
            layout = self._layout
            if text.isspace():
                if layout.add(text):
                    return
                text = ""  # past MAX_LAYOUT_RUNS: decided as content
            self._after_call = False
            if layout:
                self._out_text.append(layout.text())
                layout.clear()
            if not text:
                return
        self._out_text.append(text)

    def _emit_reasoning(self, text: str) -> None:
        if text:
            self._out_reasoning.append(text)

    def _begin_arguments(self, name: str) -> None:
        """Start call ``name`` whose arguments the format writes one parameter at a time (:meth:`_begin_parameter`):
        its name sent, then ``{``; the name kept as ``_call_name`` (its parameters' schema)."""
        self._call_name = name
        self._n_params = 0
        self._begin_call(name)
        self._emit_arguments("{")

    def _begin_parameter(self, key: str, tv: Any) -> None:
        """A parameter of the current call (key and value written by name, the value typed by the schema): ``, ``
        after the first, the key as a JSON string, ``: `` and the opening of ``tv`` (its
        :class:`~callscale.parsers.schema.TypedValue`, kept as ``_tv`` for the value's text)."""
        self._tv = tv
        self._emit_arguments((", " if self._n_params else "") + json_string(key) + ": " + tv.opening)
        self._n_params += 1

    def _begin_call(self, name: str) -> int:
        """Start call number ``tool_index`` (returned) and send its name."""
        index = self._next_index
        self._next_index += 1
        self._current = index
        self._after_call = True
        layout = self._layout
        if layout.runs:  # (Layout.clear, when it holds something)
            layout.runs = []
        if self._out_args:
            self._flush_arguments()
        item = _new_result(ToolCallItem)  # ToolCallItem(index, name, ""), without the __init__ frame
        item.tool_index = index
        item.name = name
        item.parameters = ""
        self._out_calls.append(item)
        return index

    def _emit_arguments(self, text: str) -> None:
        """Send a piece of the current call's arguments JSON text."""
        index = self._current
        if index is None or not text:  # (an abandoned call is never current again: _abandon_call)
            return
        calls = self._out_calls
        if calls:  # (pieces are held only while calls holds an item: none to flush when it is empty)
            if calls[-1].tool_index == index:
                self._out_args.append(text)
                return
            if self._out_args:
                self._flush_arguments()
        # the first piece of this call in this increment: a new item holds it
        item = _new_result(ToolCallItem)  # ToolCallItem(index, None, text), without the __init__ frame
        item.tool_index = index
        item.name = None
        item.parameters = text
        calls.append(item)

    def _flush_arguments(self) -> None:
        if self._out_args:
            self._out_calls[-1].parameters += "".join(self._out_args)
            self._out_args = []

    def _end_call(self) -> None:
        self._current = None

    def _abandon_call(self) -> None:
        """The current call turned out malformed: send nothing more for it."""
        if self._current is not None:
            self._abandoned.add(self._current)
        self._current = None

    # ----------------------------------------------------------------- cut and broken calls (DESIGN.md)
    def _head_no_call(self, text: str, final: bool, expected: Markers | None = None) -> None:
        """The text of a call head (opener included) that turned out to be no call.

        It is content, unless the end of the output decided it (``final`` and
        nothing unread, or only a proper prefix of one of the ``expected``
        markers): then it is the markup of a call that the output cut short
        (max tokens) and is dropped with that prefix (DESIGN.md, "Content and
        markup").
        """
        if not final or not self._cut_by_end(final, expected):
            self._emit_content(text)

    def _cut_by_end(self, final: bool, expected: Markers | None = None) -> bool:
        """Whether the end of the output cuts the call here; its unread rest (a marker's prefix) is then dropped.

        True when ``final`` and nothing is unread, or only a proper prefix of
        one of the ``expected`` markers (``<`` of ``<parameter=``).
        """
        sc = self.scanner
        if final and (sc.at_end() or (expected is not None and sc.match(expected) is PARTIAL)):
            sc.take_all()
            return True
        return False

    def _break_call(self, rest: str = "") -> None:
        """The current call broke (its text stops being a call): abandon it and hold its text from here.

        ``rest``: text of the call already read past where it broke. The
        format then passes the text that follows to :meth:`_hold_broken` until
        it decides: :meth:`_broken_call_ended` at the call's end token (the
        held text was the broken call's: dropped), :meth:`_broken_is_content`
        when another call starts first; at the end of the output the held
        text is content (prose the model wrote after a call it left broken).
        """
        self._abandon_call()
        self._broken_held = [rest] if rest else []

    def _s_think(self, final: bool) -> bool:
        """Reasoning up to :attr:`reasoning_end`, sent as ``reasoning_text``; then state ``"content"``."""
        text, marker = self.scanner.find(self.reasoning_end, final)
        self._emit_reasoning(text)
        if marker is None:
            return False
        self._state = "content"
        return True

    def _s_broken(self, final: bool) -> bool:
        """The one broken-call state: hold text up to one of ``broken_ends`` or ``broken_restarts``.

        At an end token the held text (the broken call's) is dropped and
        reading goes on in the state ``broken_resume`` gives for that token; at a restart opener the
        held text is content and the opener is read again in state
        ``broken_restart_state``; at the end of the output the held text is content
        (:meth:`finish`). A format enters it with ``_break_call(rest)`` and
        ``self._state = "broken"``. Each character is read once.
        """
        text, marker = self.scanner.find(self._broken_markers, final)
        if text:
            self._hold_broken(text)
        if marker is None:
            return False
        resume = self._broken_resume_at.get(marker)
        if resume is not None:
            self._broken_call_ended()
            self._state = resume
        else:
            self._broken_is_content()
            self.scanner.unread(len(marker))
            self._state = self.broken_restart_state
        return True

    def _s_envelope(self, final: bool) -> bool:
        """The one empty-envelope state: an opener read (held as a head: the scanner's ``head_begin``) with nothing a
        call needs after it. Whitespace, then :attr:`envelope_close`: the whole is markup, dropped (then
        state :attr:`envelope_resume`); anything else: the head and the whitespace are content (the rule of a
        head that is no call, :meth:`_head_no_call`), read on in state ``"content"``. The whitespace is held
        as :class:`Layout` (bounded).
        """
        hit = self.scanner.match(self.envelope_close, final, self._confirm_ws)
        if hit is PARTIAL:
            return False
        if hit is None and not (final and self.scanner.at_end()):
            self._head_no_call(self.scanner.head_text() + self._confirm_text(), final, self.envelope_close)
            self._state = "content"
        else:  # the closing tag, or the end of the output (a cut call): markup
            self._confirm_ws.clear()
            self.scanner.head_text()  # (released)
            self._state = self.envelope_resume if hit else "content"
        return True

    # ----------------------------------------------------------------- the content state
    #: The markers that end content (a block's or call's opener, reasoning, ...), found by :meth:`_s_content`.
    _content_markers: ClassVar[Markers | None] = None

    def _s_content(self, final: bool) -> bool:
        """The one content state: the text before the leftmost of ``_content_markers`` is content.

        At a marker (consumed) :meth:`_open` goes on and its answer is this
        state's. A possible partial marker at the end is held back (unless
        ``final``). A format sets ``_content_markers`` and ``_open``.
        """
        text, marker = self.scanner.find(self._content_markers, final)
        if text:
            self._emit_content(text)
        if marker is None:
            return False
        return self._open(marker, final)

    def _open(self, marker: str, final: bool) -> bool:
        """Hook: ``marker`` of ``_content_markers`` was read in content: set the next state.

        Returns True to run it (the driver runs it only when text is unread
        or the output ended: the waiting rule, callscale/parsers/README.md).
        """
        raise NotImplementedError(f"{type(self).__name__} reads content markers but has no _open")

    def _broken(self, rest: str = "") -> bool:
        """Break the current call (:meth:`_break_call`) and read on in state ``"broken"``; returns True."""
        self._break_call(rest)
        self._state = "broken"
        return True

    # ----------------------------------------------------------------- schema look-ups
    def _param_typing(self, tool: str, param: str):
        """:func:`callscale.parsers.schema.parameter_typing` for ``self.tools``, cached while the
        same tool list (the same object) is passed: a call of many parameters, or many short
        calls, looks each up once."""
        tools = self.tools
        seen, typings = self._typings
        if tools is not seen:
            typings = {}
            self._typings = (tools, typings)
        key = (tool, param)
        typing = typings.get(key)
        if typing is None:
            typing = typings[key] = parameter_typing_(tools, tool, param)
        return typing

    # ----------------------------------------------------------------- confirmed closers (bounded heads: the scanner's head_*)
    # After a closing tag that may be text of the element, a format reads what confirms it with
    # ``self.scanner.match(follow, final, self._confirm_ws)``: whitespace held in ``_confirm_ws`` (a Layout,
    # bounded: past MAX_LAYOUT_RUNS runs the tag is not confirmed), then a marker of ``follow`` (confirmed,
    # consumed), None (the tag and _confirm_text() are element text) or PARTIAL (wait). The caller clears
    # ``_confirm_ws`` when it reads the closing tag.
    def _confirm_text(self) -> str:
        """The whitespace held while confirming a closing tag (``scanner.match(follow, final, self._confirm_ws)``), released."""
        text = self._confirm_ws.text()
        self._confirm_ws.clear()
        return text

    def _hold_broken(self, text: str) -> None:
        """Text of a broken call, not yet decided (see :meth:`_break_call`)."""
        if text and self._broken_held is not None:
            self._broken_held.append(text)

    def _broken_call_ended(self) -> None:
        """The broken call's end token came: its held text is dropped."""
        self._broken_held = None

    def _broken_is_content(self) -> None:
        """Another call or the end of the output came before the broken call's end: its held text is content."""
        held, self._broken_held = self._broken_held, None
        if held:
            self._emit_content("".join(held))

    def _hold_broken_json(self, tracker: Any, openers: tuple[str, ...], final: bool,
                          ends: tuple[str, ...] = (), keep: bool = False) -> str | None:
        """For a format whose call ends at the bracket that closes its JSON: hold a broken call's text up to there.

        ``tracker``: a :class:`callscale.parsers.jsonscan.JsonTracker` at the state of
        the call's JSON where it broke (string, depth), fed only new text.
        Returns ``"}"`` when the broken call's object closed (its text, held
        up to and including that bracket, is dropped); the opener (consumed)
        when one of the format's ``openers`` came first outside a JSON
        string (the held text is content); ``""`` to be called again; ``None``
        when more text is needed (at the end of the output the held text is
        content, see :meth:`finish`). A possible partial opener at the end is
        held back; each character is read once. ``ends``: tokens that end the
        broken call before its object closes (outside a JSON string: the held
        text is dropped, the token consumed and returned), as openers are read.
        ``keep``: the held text is content also when the object closes (an
        element that is no call, not a call's text: Mistral's array form).
        """
        sc = self.scanner
        chunk = sc.rest()
        k, opener = len(chunk), ""
        if ends:
            openers = openers + ends
        for o in openers:
            j = chunk.find(o, 0, k + len(o) - 1)
            if 0 <= j < k:
                k, opener = j, o
        limit = k
        if not opener and not final:
            for o in openers:
                for j in range(min(len(o) - 1, len(chunk)), 0, -1):
                    if o.startswith(chunk[-j:]):
                        limit = min(limit, len(chunk) - j)
                        break
        at = tracker.feed(chunk[:limit])
        if at >= 0:
            sc.take(at + 1)
            if keep:
                self._hold_broken(chunk[:at + 1])
                self._broken_is_content()
            else:
                self._broken_call_ended()
            return "}"
        sc.take(limit)
        self._hold_broken(chunk[:limit])
        if not opener:
            return None
        sc.take(len(opener))
        if tracker.inside:  # the opener's text inside a string of the broken call
            tracker.feed(opener)
            self._hold_broken(opener)
            return ""
        if opener in ends:
            self._broken_call_ended()
        else:
            self._broken_is_content()
        return opener

    def _at_end(self) -> None:
        """Hook: called once, after the driver, when the output ended (``final``); nothing by default."""

    def _failed(self) -> None:
        """A parser bug (an exception in a state): keep the contract (never raise). Log it loudly, abandon
        the open call and pass whatever is unread on as content."""
        log.exception("%s parser failed; unread text passed on as content", self.name)
        self._abandon_call()
        self._emit_content(self.scanner.take_all())

    def _take_tools(self, tools: Sequence[Any] | None) -> None:
        """The request's tool list, another object than the last one: read (a list or tuple of tools, else
        none: :func:`callscale.parsers.schema.tool_list`), the same at every split."""
        self.tools = tool_list(tools)
