"""GLM-4.5 / GLM-4.6 and GLM-4.7 tool calls (``glm45``, ``glm47``).

The format and every reading rule: ``docs/formats.md``, "GLM-4.5 / GLM-4.7"
(the one place). This module holds the tokens, markers and ``_s_<state>``
steps; the shared mechanisms (driver, broken calls, bounded heads,
confirmed closers, typed values) are base.py's and schema.py's
(``callscale/parsers/README.md``).
"""

from __future__ import annotations

import re

from . import register
from .base import MAX_HEAD, ToolParser, json_fragment, json_text
from .jsonscan import strict_loads
from .schema import UNTYPED, json_string, TypedValue, is_new_parameter, typed_json
from .scanner import PARTIAL, markers

__all__ = [
    "TOOL_CALL", "TOOL_CALL_END", "ARG_KEY", "ARG_KEY_END", "ARG_VALUE", "ARG_VALUE_END",
    "LAYOUT_OPENER", "SPECIAL_TOKENS", "Glm45Parser", "Glm47Parser",
]

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
ARG_KEY = "<arg_key>"
ARG_KEY_END = "</arg_key>"
ARG_VALUE = "<arg_value>"
ARG_VALUE_END = "</arg_value>"
#: The GLM-4.5 template writes ``'\n<tool_call>' + name``: that newline is layout.
LAYOUT_OPENER = "\n" + TOOL_CALL
#: Single tokens of the GLM-4.5/4.7 vocabulary (added special tokens).
SPECIAL_TOKENS = (TOOL_CALL, TOOL_CALL_END, ARG_KEY, ARG_KEY_END, ARG_VALUE, ARG_VALUE_END)

_M_NAME = markers(LAYOUT_OPENER, TOOL_CALL, ARG_KEY, TOOL_CALL_END)
_M_KEY = markers(ARG_KEY_END, TOOL_CALL_END, TOOL_CALL)
_M_VALUE_OPEN = markers(ARG_VALUE)
# In a value: its closing tag, and the tags that end a value whose </arg_value> is missing
# (one newline before them is layout, as the 4.5 template writes one after </arg_value>).
_M_VALUE = markers(ARG_VALUE_END, "\n" + ARG_KEY, ARG_KEY, "\n" + TOOL_CALL_END, TOOL_CALL_END)
# A value whose <arg_value> is missing: only </arg_value> ends it; any other tag breaks the call.
_M_BARE_VALUE = markers(ARG_VALUE_END, LAYOUT_OPENER, TOOL_CALL, TOOL_CALL_END, ARG_KEY, ARG_KEY_END, ARG_VALUE)
_M_KEY_END = markers(ARG_KEY_END)
_KEY_CHARS = re.compile(r"[^<\n]*")
_M_AFTER_VALUE = markers(ARG_KEY, TOOL_CALL_END)
_M_OPENER = markers(TOOL_CALL)

_NAME_CHAR = re.compile(r"[\w\-.:/@]")
_NAME_RUN = re.compile(r"[\w\-.:/@]*")  # a run of name characters (none starts a marker of _M_NAME)
_KEY_RUN = re.compile(r"[^<]*")  # a run of key characters that start no marker of _M_KEY (all start with "<")
_SPACE = re.compile(r"\s*")  # (re's \s on str is str.isspace's test)
_NL_ARG_KEY = "\n" + ARG_KEY
# The value's one search (MarkerScanner.find's, written out in the value steps: their per-delta path)
_VALUE_SCAN = _M_VALUE.scan()
_VALUE_ENDS = _M_VALUE.item_set
assert _VALUE_SCAN, "the value markers must be searchable in one pattern"


def _auto_value(text: str) -> str:
    """The JSON text of a buffered value of an undeclared parameter: a JSON array or object, else the string."""
    try:
        value = strict_loads(text)
    except (ValueError, RecursionError):
        value = text
    else:
        if not isinstance(value, (list, dict)):
            value = text
    return json_text(value)


class _GlmParser(ToolParser):
    """The GLM state machine (states ``_s_<state>``, run by the base driver); the two differ in their layout."""

    broken_ends = (TOOL_CALL_END,)
    broken_restarts = (TOOL_CALL,)
    _content_markers = markers(TOOL_CALL)

    def __init__(self) -> None:
        super().__init__()
        self._name_phase = 0           # 0 leading whitespace, 1 in the name, 2 trailing whitespace
        self._name = ""
        self._key = ""
        self._kind = "string"          # current value: "string", "nullable" (string or null), "json" or "auto"
        self._gate: TypedValue | None = None  # types a "nullable" or "json" value as it streams
        self._typing = UNTYPED         # its schema typing (parsers.schema)
        self._bare = False             # its <arg_value> opener is missing
        self._keys: set[str] = set()   # keys of the current call
        self._cand = ""                # the tag of a recovery candidate in a value
        self._buf: list[str] = []      # buffered value text / pending whitespace

    # ------------------------------------------------------------------ helpers
    def _start_name(self, opener: str) -> None:
        self._state = "name"
        self._head_parts = [opener]  # _head_begin(opener), written out (the opener first: _s_name cuts it)
        self._head_len = 0
        self._name_phase = 0

    def _name_ok(self, text: str) -> bool:
        """Take a piece of name text; False once it cannot be a name."""
        phase = self._name_phase
        for ch in text:
            if ch.isspace():
                if phase == 1:
                    phase = 2
            elif phase == 2 or not _NAME_CHAR.match(ch):
                return False
            else:
                phase = 1
        self._name_phase = phase
        return True

    def _read_on(self, marker: str | None) -> bool:
        """Read on as content; an opener ``marker`` starts a block, another marker is content."""
        self._state = "content"
        if marker is not None and marker.endswith(TOOL_CALL):
            if marker != TOOL_CALL and not self.layout_before_call:
                self._emit_content(marker[:-len(TOOL_CALL)])  # not this format's layout: content
                marker = TOOL_CALL
            self._start_name(marker)
        elif marker is not None:
            self._emit_content(marker)
        return True

    def _not_a_call(self, marker: str | None, final: bool = False) -> bool:
        """The opener was text: pass it and the name text on as content, then ``marker`` as content reads it.

        ``final``: the end of the output decided it: the head of a cut call, dropped (DESIGN.md).
        """
        self._head_no_call(self._head_text(), final, _M_NAME)
        return self._read_on(marker)

    def _empty_opener(self, marker: str | None, final: bool = False) -> bool:
        """An opener with no name: dropped (a degenerate repeat, an empty block), ``marker`` read on."""
        self._head_parts = []
        if marker == TOOL_CALL:  # (the common case: an opener repeated)
            self._start_name(marker)
            return True
        if marker == TOOL_CALL_END:
            marker = None
        return self._read_on(marker)

    def _malformed(self, marker: str | None, held: str = "") -> bool:
        """The open call broke: its text (``held``, then ``marker`` and on) is the broken call's (base.py)."""
        if marker is not None:
            self.scanner.unread(len(marker))
        return self._broken(held)

    def _unclosed(self) -> bool:
        """The output ended inside a call."""
        self._abandon_call()
        self._state = "content"
        return True

    def _end_call_here(self) -> None:
        self._emit_arguments("}")
        self._end_call()
        self._state = "content"

    # ------------------------------------------------------------------ states
    def _open(self, marker: str, final: bool) -> bool:
        """An opener in content (base ``_s_content``): read the call's name."""
        self._state = "name"  # (_start_name, written out: once a call)
        self._head_parts = [marker]
        self._head_len = 0
        self._name_phase = 0
        return True

    def _s_name(self, final: bool) -> bool:
        """The name after ``<tool_call>``: its pieces of name characters, and the ``<arg_key>`` after it, read here.

        Each delta's run of name characters is taken by one match (none starts a
        marker); ``<arg_key>`` (or ``\\n<arg_key>``) right after a name begins the
        call, and an opener right after an opener (nothing read between) is the
        opener repeated. Anything else is :meth:`_name_text`'s (the whole rule).
        """
        sc = self.scanner
        buf, pos = sc._buf, sc._pos
        room = MAX_HEAD + 1 - self._head_len  # characters the head may still take (>= 1 in this state)
        end = _NAME_RUN.match(buf, pos, pos + room).end()
        if end > pos:
            if self._name_phase == 2 or end - pos == room:  # a name character after its whitespace, or too long
                return self._name_text(final)
            self._head_parts.append(buf[pos:end])
            self._head_len += end - pos
            self._name_phase = 1
            sc._pos = end
            if end == len(buf):
                return self._name_text(final) if final else False
            room -= end - pos
        if self._name_phase:  # a name was read: <arg_key> begins the call
            if buf.startswith(ARG_KEY, end):
                sc._pos = end + len(ARG_KEY)
            elif room > 1 and buf.startswith(_NL_ARG_KEY, end):  # (the 4.5 layout; the tag within the bound)
                sc._pos = end + len(_NL_ARG_KEY)
            elif not final and end + 1 == len(buf) and buf[end] == "\n":  # perhaps the start of a tag: wait
                return False
            else:
                return self._name_text(final)
            parts = self._head_parts
            parts[0] = ""  # (the opener)
            self._head_parts = []
            self._head_len = 0
            self._name = name = "".join(parts).strip()
            self._begin_call(name)
            self._keys = set()
            self._state = "key"
            return True
        if not self._head_len and buf.startswith(TOOL_CALL, end):  # an opener repeated: the first one is dropped
            sc._pos = end + len(TOOL_CALL)
            self._head_parts = [TOOL_CALL]  # (_empty_opener's common case, written out)
            return True
        return self._name_text(final)

    def _name_text(self, final: bool) -> bool:
        """The name's whole rule (docs/formats.md): a piece up to a marker, decided by it or the bound."""
        # _head_find, written out: a partial marker stays unread, even at the end
        limit = MAX_HEAD + 1 - self._head_len
        text, marker = self.scanner.find_within(_M_NAME, False, limit if limit > 0 else 0)
        if text:
            self._head_len += len(text)
            self._head_parts.append(text)
            if self._name_phase != 2 and _NAME_RUN.fullmatch(text):  # (the common piece)
                self._name_phase = 1
            elif not self._name_ok(text):
                return self._not_a_call(marker)
        if marker is None:
            if self._head_len > MAX_HEAD:  # too long for a name: text (_head_over, written out)
                return self._not_a_call(None)
            if not final:
                return False
            if not "".join(self._head_parts[1:]).strip():
                self.scanner.take_all()
                return self._empty_opener(None)
            return self._not_a_call(None, final)
        name = "".join(self._head_parts[1:]).strip() if self._head_len else ""
        if not name:
            return self._empty_opener(marker, final)
        if marker.endswith(TOOL_CALL):
            return self._not_a_call(marker)
        self._head_parts = []
        self._name = name
        self._begin_call(name)
        self._keys = set()
        if marker == ARG_KEY:
            self._state = "key"
            self._head_len = 0
        else:  # TOOL_CALL_END: the inline zero-argument form
            self._emit_arguments("{}")
            self._end_call()
            self._state = "content"
        return True

    def _s_key(self, final: bool) -> bool:
        """A key: each delta's run of characters that start no marker taken by one match, up to ``</arg_key>``.

        A ``<`` that begins anything else is :meth:`_key_text`'s (the whole rule).
        """
        sc = self.scanner
        buf, pos = sc._buf, sc._pos
        room = MAX_HEAD + 1 - self._head_len  # (>= 1 in this state)
        end = _KEY_RUN.match(buf, pos, pos + room).end()
        if end - pos == room:  # too long for a key, perhaps
            return self._key_text(final)
        if end > pos:
            self._head_parts.append(buf[pos:end])
            self._head_len += end - pos
            sc._pos = end
            if end == len(buf):
                return self._unclosed() if final else False
        if not buf.startswith(ARG_KEY_END, end):
            return self._key_text(final)
        sc._pos = end + len(ARG_KEY_END)
        self._key = "".join(self._head_parts).strip()  # (_head_text, written out)
        self._head_parts = []
        self._state = "key_done"
        return True

    def _key_text(self, final: bool) -> bool:
        """The key's whole rule: a piece up to a marker, decided by it, the bound or the end of the output."""
        limit = MAX_HEAD + 1 - self._head_len  # _head_find, written out
        text, marker = self.scanner.find_within(_M_KEY, final, limit if limit > 0 else 0)
        if text:
            self._head_len += len(text)
            self._head_parts.append(text)
        if marker is None:
            if self._head_len > MAX_HEAD:  # too long for a key (_head_over, written out)
                return self._malformed(None, self._head_text())
            return self._unclosed() if final else False
        if marker != ARG_KEY_END:
            self._head_parts = []
            return self._malformed(marker)
        self._key = self._head_text().strip()
        self._state = "key_done"
        return True

    def _s_key_done(self, final: bool) -> bool:
        """After ``</arg_key>``: ``<arg_value>`` (after layout whitespace) opens the value; without it the value is bare."""
        sc = self.scanner
        buf, pos = sc._buf, sc._pos
        if buf.startswith(ARG_VALUE, pos):  # (the common case, match written out)
            sc._pos = pos + len(ARG_VALUE)
            bare = False
        else:
            if pos < len(buf) and buf[pos].isspace():  # layout (skip_whitespace, written out: the 4.5 newline)
                pos = sc._pos = _SPACE.match(buf, pos).end()
                if pos == len(buf) and not final:
                    return False
            hit = sc.match(_M_VALUE_OPEN, final)  # (PARTIAL when nothing is unread and more may come)
            if hit is PARTIAL:
                return False
            if hit is None and sc.at_end():  # final
                return self._unclosed()
            bare = hit is None
        # the value starts (its key sent; its kind from the schema): written out, once a parameter
        key = self._key
        keys = self._keys
        head = ("{" if not keys else ", ") + json_string(key) + ": "
        keys.add(key)
        self._typing = typing = self._param_typing(self._name, key)
        self._buf = []
        self._gate = None
        self._bare = bare
        if not typing.declared:
            kind, state = "auto", "value_start"
        elif typing.string_or_null:  # (StringOrNull.wanted)
            kind, state = "nullable", "value_str"
        elif typing.is_string:
            kind, state = "string", "value_str"
            if not bare:
                head += '"'
        else:
            kind, state = "json", "value_buf"
        self._kind = kind
        self._emit_arguments(head)
        if bare:  # <arg_value> missing: the value runs to its </arg_value>, held back
            self._state = "value_bare"
            return True
        if kind == "nullable" or kind == "json":
            self._gate = TypedValue(typing)
        self._state = state
        return True

    def _s_value_bare(self, final: bool) -> bool:
        """A value after ``</arg_key>`` with no ``<arg_value>``: buffered up to ``</arg_value>``.

        Any other tag first means it was no value: the call is broken (its
        text held as the broken call's, base.py); the end of the output cuts it.
        """
        text, marker = self.scanner.find(_M_BARE_VALUE)
        if text:
            self._buf.append(text)
        if marker is None:
            if not final:
                return False
            held = "".join(self._buf)
            self._buf = []
            if not self.scanner.at_end():  # cut inside a tag (a marker's prefix): the cut call's markup
                self.scanner.take_all()
                return self._unclosed()
            return self._malformed(None, held)  # prose after a call left broken: content
        if marker != ARG_VALUE_END:
            held = "".join(self._buf)
            self._buf = []
            return self._malformed(marker, held)
        self._state = "value_close"
        self._confirm_ws.clear()
        return True

    def _s_value_start(self, final: bool) -> bool:
        """An undeclared parameter: a value opening with ``[`` or ``{`` is buffered, any other streams as a string."""
        scanner = self.scanner
        ws = scanner.skip_whitespace()
        if ws:
            self._buf.append(ws)
        if scanner.at_end():
            return self._unclosed() if final else False
        if scanner.peek(1) in ("[", "{"):
            self._state = "value_buf"
        else:
            self._emit_arguments('"' + json_fragment("".join(self._buf)))
            self._buf = []
            self._kind = "string"
            self._state = "value_str"
        return True

    def _s_value_str(self, final: bool) -> bool:
        """A value's text up to its end (states ``value_str`` and ``value_buf``).

        ``value_str``: a streamed value (a string, or a string-or-null through its gate), each piece
        sent as it comes; ``value_buf``: a held value (typed by its gate as it streams, or an
        undeclared one's buffered list or object).
        """
        sc = self.scanner
        buf, pos = sc._buf, sc._pos
        hit = _VALUE_SCAN.search(buf, pos)  # (MarkerScanner.find's one search, written out: once a delta)
        if hit is None:
            end = sc._pos = len(buf)
            marker = None
        else:
            end = hit.start()
            marker = hit.group()
            if marker in _VALUE_ENDS:
                sc._pos = hit.end()
            else:  # a tag's start ends the text: held back (with final: text)
                if final:
                    end = len(buf)
                sc._pos = end
                marker = None
        if end > pos:
            gate = self._gate
            text = buf[pos:end]
            if self._state == "value_str":  # (json_fragment written out)
                self._emit_arguments(json_string(text)[1:-1] if gate is None else gate.feed(text))
            elif gate is not None:
                gate.feed(text)  # typed as it streams; sent at the end
            else:
                self._buf.append(text)
        if marker is None:  # (_value_marker's common cases, written out)
            return self._unclosed() if final else False
        if marker == ARG_VALUE_END:
            self._state = "value_close"
            return True
        return self._value_marker(marker, final)

    _s_value_buf = _s_value_str

    def _value_text(self, text: str) -> None:
        """Text that turned out to be part of the value (a rejected closing tag or candidate)."""
        if not text:
            return
        if self._bare or (self._gate is None and self._kind not in ("string", "nullable")):
            self._buf.append(text)
        elif self._gate is not None:
            self._emit_arguments(self._gate.feed(text))
        else:
            self._emit_arguments(json_string(text)[1:-1])  # (json_fragment written out)

    def _back_to_value(self) -> bool:
        self._state = "value_bare" if self._bare else "value_str" if self._kind in ("string", "nullable") else "value_buf"
        return True

    def _value_marker(self, marker: str | None, final: bool) -> bool:
        """A tag found in a value: its closing tag, or a tag that ends a value missing it (to be confirmed)."""
        if marker is None:
            return self._unclosed() if final else False
        self._confirm_ws.clear()
        self._cand = marker
        if marker == ARG_VALUE_END:
            self._state = "value_close"
        elif marker.endswith(ARG_KEY):
            self._head_begin()
            self._state = "value_key"
        else:
            self._state = "value_call_end"
        return True

    def _s_value_key(self, final: bool) -> bool:
        """``<arg_key>`` in a value: it ends the value (``</arg_value>`` missing) when a new key and ``</arg_key>`` follow."""
        scanner = self.scanner
        _, decided = self._head_run(_KEY_CHARS, final)
        if not decided:
            return False
        key_text = self._head_text()
        key = key_text.strip()
        hit = scanner.match(_M_KEY_END, final) if not self._head_over() else None
        if hit is PARTIAL:
            self._head_parts = [key_text]
            return False
        if hit is None or not is_new_parameter(self.tools, self._name, key, self._keys):
            self._value_text(self._cand + key_text + (hit or ""))
            return self._back_to_value()
        self._end_value()
        self._key = key
        self._state = "key_done"
        return True

    def _s_value_call_end(self, final: bool) -> bool:
        """``</tool_call>`` in a value: it ends value and call (``</arg_value>`` missing) before the end of the output or a new call."""
        hit = self._confirm(_M_OPENER, final)
        if hit is PARTIAL:
            return False
        if hit is None:
            if final and self.scanner.at_end():
                self._confirm_ws.clear()
                self._end_value()
                self._end_call_here()
                return True
            self._value_text(self._cand + self._confirm_text())
            return self._back_to_value()
        self._confirm_ws.clear()  # (layout; value_close reads on with none held)
        self._end_value()
        self._end_call_here()
        self._start_name(hit)
        return True

    def _value_end(self) -> str:
        """The value's end (its JSON text to send): the closing quote of a streamed string, or the typed held value."""
        gate = self._gate
        if gate is not None:
            self._gate = None
            return gate.end()
        text = "".join(self._buf)
        self._buf = []
        bare, self._bare = self._bare, False
        if self._kind == "string":
            return '"' + json_fragment(text) + '"' if bare else '"'
        if self._kind in ("json", "nullable"):  # a bare value (its <arg_value> missing), held whole
            return typed_json(text, self._typing)
        return _auto_value(text)

    def _end_value(self) -> None:
        """Send the value's end (:meth:`_value_end`)."""
        self._emit_arguments(self._value_end())

    def _s_value_close(self, final: bool) -> bool:
        """After ``</arg_value>``: it closes the value only before ``<arg_key>`` or ``</tool_call>``.

        Whitespace before that tag is held (base ``_confirm``); the state is then
        ``value_close_ws`` (the same step), so the held whitespace is cleared when
        the tag decides it and a close right before its tag needs no clearing.
        """
        sc = self.scanner
        buf, pos = sc._buf, sc._pos
        if buf.startswith(ARG_KEY, pos):  # (the common cases, match written out)
            sc._pos = pos + len(ARG_KEY)
            hit = ARG_KEY
        elif buf.startswith(TOOL_CALL_END, pos):
            sc._pos = pos + len(TOOL_CALL_END)
            hit = TOOL_CALL_END
        else:
            hit = self._confirm(_M_AFTER_VALUE, final)
            if hit is PARTIAL:
                self._state = "value_close_ws"
                return False
            if hit is None:
                if final and sc.at_end():
                    return self._unclosed()
                self._value_text(ARG_VALUE_END + self._confirm_text())
                return self._back_to_value()
            self._state = "value_close_ws"
        if self._state == "value_close_ws":
            self._confirm_ws.clear()
        # the value's end (_value_end's common cases, written out: once a parameter)
        gate = self._gate
        if gate is not None:
            self._gate = None
            text = gate.end()
        elif self._kind == "string" and not self._bare:
            text = '"'
        else:
            text = self._value_end()
        if hit == ARG_KEY:
            self._emit_arguments(text)
            self._state = "key"
            self._head_parts = []  # (_head_begin, written out)
            self._head_len = 0
        else:  # the call's end
            self._emit_arguments(text + "}")
            self._end_call()
            self._state = "content"
        return True

    _s_value_close_ws = _s_value_close


@register("glm45")
class Glm45Parser(_GlmParser):
    """GLM-4.5 / GLM-4.6 tool calls (newline layout); reads the GLM-4.7 layout too. See the module docstring."""

    layout_before_call = "\n"
    broken_restarts = (LAYOUT_OPENER, TOOL_CALL)
    _content_markers = markers(LAYOUT_OPENER, TOOL_CALL)


@register("glm47")
class Glm47Parser(_GlmParser):
    """GLM-4.7 tool calls (no newlines); reads the GLM-4.5 layout too. See the module docstring."""
