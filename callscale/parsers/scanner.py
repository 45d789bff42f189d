"""An incremental scanner for literal markers in streamed text.

Every format in ``parsers/`` is a short state machine over literal markers
(special tokens, tags). This module is the one place that finds them, and it
keeps streaming linear in the length of the output:

- text is searched once: the scanner keeps the position up to which its
  buffer has been decided (as h11's receive buffer does) and a search starts
  there, never at the start of the output;
- at the end of the buffer it holds back only a possible partial marker (at
  most ``longest marker - 1`` characters), which the next delta decides;
- decided text is dropped from the buffer when the next delta arrives, so the
  buffer holds the undecided tail only.

A state machine passes the marker set of its current state to each call
(a :class:`Markers`, compiled once and cached), so one scanner serves states
that look for different markers.
"""

from __future__ import annotations

import re
from functools import lru_cache
from json.encoder import encode_basestring as _encode_string  # json.dumps(str, ensure_ascii=False)
from typing import Any, Callable, Iterable

__all__ = ["Markers", "MarkerScanner", "value_state", "markers", "lazy_markers", "PARTIAL", "OVER", "MAX_HEAD"]

#: Whitespace as ``str.isspace`` tells it (re's ``\s`` on ``str`` is the same test, ``Py_UNICODE_ISSPACE``).
_SPACE = re.compile(r"\s*")

#: Returned by :meth:`MarkerScanner.match` when the buffer ends inside what
#: may still become one of the markers: wait for more text.
PARTIAL = object()

#: Longest call head, in characters (the rule: :data:`callscale.parsers.base.MAX_HEAD`, re-exported there);
#: the scanner holds a head's count (:meth:`MarkerScanner.head_find`).
MAX_HEAD = 1024

#: Returned by :meth:`MarkerScanner.head_find` in place of a marker when the head ran past :data:`MAX_HEAD`
#: characters without one (decided, whatever the split: it is no head).
OVER = object()


class Markers:
    """A set of literal markers (strings of one or more characters), ready to search for.

    ``items``: the markers; ``ordered``: the same, longest first;
    ``prefixes``: every proper prefix of every marker (for hold-back), and
    ``held`` those with no marker at their start (text ending in one is
    :data:`PARTIAL` for :meth:`MarkerScanner.match`);
    ``longest``: the longest marker's length in characters.

    :meth:`scan` finds, in one search, the leftmost marker (the longest at a
    position) or else a proper prefix of one that ends the text (what a
    non-final :meth:`MarkerScanner.find` holds back: a match not in
    ``items``); it is None when a marker occurs inside a proper prefix of
    another past its first character, and then :attr:`regex` (the leftmost
    marker alone) and the hold-back are searched apart. ``compile``: build
    that pattern now (the default: module-level sets pay it at import), or
    never (:func:`lazy_markers`: sets a format makes while streaming, per key
    name, search with :attr:`regex`, a plain pattern, ~10x cheaper to
    compile, made on first use; :meth:`MarkerScanner.match` on up to 3
    markers compiles nothing).
    """

    __slots__ = ("items", "item_set", "ordered", "prefixes", "held", "first_chars", "longest",
                 "_scan", "_regex")

    def __init__(self, items: Iterable[str], compile: bool = True):
        items = tuple(dict.fromkeys(m for m in items if m))
        if not items:
            raise ValueError("a marker set needs at least one non-empty marker")
        self.items = items
        self.item_set = frozenset(items)
        self.ordered = tuple(sorted(items, key=len, reverse=True))
        self.prefixes = frozenset(m[:k] for m in items for k in range(1, len(m)))
        self.held = frozenset(p for p in self.prefixes if not any(p.startswith(m) for m in items))
        self.first_chars = frozenset(m[0] for m in items)
        self.longest = max(len(m) for m in items)
        nested = any(m in p[1:] for p in self.prefixes for m in items)
        self._scan: Any = None if nested else False  # False: not compiled (a lazy set keeps it so)
        self._regex: Any = None
        if compile:
            self.scan()

    def scan(self) -> "re.Pattern[str] | None":
        """The one-search pattern (see the class), compiled here; None for a nested set."""
        if self._scan is False:
            body = "|".join(_trie(list(self.items), accept=True))
            if self.prefixes:  # the proper prefixes, as a trie, at the end of the text
                body += "|" + "|".join(t + r"\Z" for t in _trie([m[:-1] for m in self.items if len(m) > 1]))
            self._scan = re.compile(body)
        return self._scan

    def cut_start(self, text: str, start: int = 0) -> int:
        """Where the longest suffix of ``text[start:]`` that is a proper prefix of a marker starts
        (``len(text)`` when none): what a non-final read holds back (:meth:`MarkerScanner.find`), and at the
        end of the output a marker the end cut, which is markup (docs/DESIGN.md, "Output cut inside a call").

        Looks only at the occurrences of the markers' first characters in the last ``longest - 1``
        characters (``str.find``, not a loop per character).
        """
        n = len(text)
        start = max(start, n - self.longest + 1)
        prefixes = self.prefixes
        best = n
        for ch in self.first_chars:
            i = text.find(ch, start, best)
            while i >= 0:
                if text[i:] in prefixes:
                    best = i
                    break
                i = text.find(ch, i + 1, best)
        return best

    @property
    def regex(self) -> "re.Pattern[str]":
        """The leftmost marker, the longest at a position (compiled on first use)."""
        if self._regex is None:
            self._regex = re.compile("|".join(re.escape(m) for m in self.ordered))
        return self._regex

    def __repr__(self) -> str:
        return f"Markers({list(self.items)!r})"


def _trie(words: list[str], accept: bool = False) -> list[str]:
    """Patterns, one per first character, for ``words`` as a trie (one try per character, not per word).

    ``accept``: each matches a whole word, the longest first; else a non-empty prefix of one (the longest first).
    """
    first: dict[str, list[str]] = {}
    for w in words:
        first.setdefault(w[0], []).append(w[1:])
    out = []
    for ch, rests in first.items():
        longer = [r for r in rests if r]
        alts = _trie(longer, accept) if longer else []
        if longer and (not accept or len(longer) < len(rests)):
            alts.append("")  # a word ends here (accept), or any prefix may (not accept)
        out.append(re.escape(ch) + ("(?:" + "|".join(alts) + ")" if alts else ""))
    return out


@lru_cache(maxsize=None)
def markers(*items: str) -> Markers:
    """The compiled :class:`Markers` for these literal strings (cached)."""
    return Markers(items)


@lru_cache(maxsize=4096)
def lazy_markers(*items: str) -> Markers:
    """:class:`Markers` for these literal strings without the one-search pattern (cached): for sets made while
    streaming (per key name), where its compiling would cost more than it saves (see :class:`Markers`)."""
    return Markers(items, compile=False)


class _ReadsNothing:
    """The machine :meth:`MarkerScanner.feed` runs: its one state reads nothing (a feed alone)."""

    _state = ""


_READ_NOTHING = {"": lambda machine, final: False}


class MarkerScanner:
    """The undecided text of a stream, and the position up to which it was read.

    ``feed(text)`` appends a delta. The reading methods consume from the
    current position and never look at text before it again. All lengths
    are in characters (Python ``str``).
    """

    __slots__ = ("_buf", "_pos", "_mark", "_kept", "_head", "_head_len")

    def __init__(self) -> None:
        self._buf = ""
        self._pos = 0
        self._mark: int | None = None  # see mark()
        self._kept: list[str] = []
        self._head: list[str] = []  # the bounded head being read (head_begin), in parts
        self._head_len = 0  # its characters that count toward MAX_HEAD

    def feed(self, text: str) -> None:
        """Append a delta, dropping the text already consumed (kept aside when marked)."""
        self.run(text, _READ_NOTHING, _ReadsNothing)

    def run(self, delta: str, states: Any, machine: Any) -> None:
        """The per-delta primitive: :meth:`feed` ``delta``, then run ``machine``'s states while text is unread.

        ``states`` is the machine's state table (``{name: step}``, a step ``(machine, final) -> bool``) and
        ``machine._state`` names the current state (a :class:`callscale.parsers.base.ToolParser`: its
        ``_driver`` and ``_state``); ``states[machine._state](machine, False)`` runs while it returns True
        and text is unread (the waiting rule, ``callscale/parsers/README.md``); :meth:`feed` passes a machine
        whose one state reads nothing. ``ToolParser.parse_streaming_increment`` calls it once a delta: one Python call for
        the feed and the state loop, in the module that reads the buffer.
        """
        pos = self._pos
        if not pos:
            self._buf += delta
        elif self._mark is None:
            self._buf = self._buf[pos:] + delta if pos < len(self._buf) else delta  # (all read: the delta alone)
            self._pos = 0
        else:  # a marked stretch: the consumed text kept aside (mark)
            self._kept.append(self._buf[self._mark:pos])
            self._mark = 0
            self._buf = self._buf[pos:] + delta
            self._pos = 0
        while states[machine._state](machine, False) and self._pos < len(self._buf):
            pass

    # ------------------------------------------------------------------ keeping consumed text
    def mark(self) -> None:
        """Keep the text consumed from the current position on, until :meth:`unmark`.

        For a parser that may have to pass a stretch it already read on as
        text (a DSML invoke whose block opener is missing). Kept text is
        stored once, in pieces (linear); memory grows with it until unmarked.
        """
        self._mark = self._pos
        self._kept = []

    def kept(self) -> str:
        """The text consumed since :meth:`mark` (``""`` when not marked)."""
        if self._mark is None:
            return ""
        return "".join(self._kept) + self._buf[self._mark:self._pos]

    def unmark(self) -> None:
        """Stop keeping consumed text; drop what was kept."""
        self._mark = None
        self._kept = []

    def push_back(self, text: str) -> None:
        """Put ``text`` (characters just consumed) back in front of the unread text, to be read again.

        For text one state read that another state must read by its own rules
        (DSML: the whitespace that ends a failed invoke outside a block goes
        back to the content state, whose layout rule decides it whatever the
        split). Not while marked; each character is pushed back at most once.
        """
        if text:
            self._buf = text + self._buf[self._pos:]
            self._pos = 0

    def unread(self, n: int) -> None:
        """Step back over the last ``n`` characters consumed since the last :meth:`feed`, to read them again.

        Only for a marker just read, which a parser hands to another state, or the
        unused end of a slice just taken (:meth:`take`, :meth:`take_all`: what a
        reader did not use goes back): each such character is read at most twice,
        so reading stays linear.
        Raises ``ValueError`` when fewer than ``n`` characters were consumed
        since the last feed (or since the mark).
        """
        low = self._mark if self._mark is not None else 0
        if n < 0 or self._pos - n < low:
            raise ValueError("unread() beyond the text consumed since the last feed")
        self._pos -= n

    # ------------------------------------------------------------------ queries
    def pending(self) -> int:
        """Characters received but not yet consumed."""
        return len(self._buf) - self._pos

    def at_end(self) -> bool:
        """True when every received character has been consumed."""
        return self._pos >= len(self._buf)

    def peek(self, n: int = 1) -> str:
        """Up to ``n`` unconsumed characters, without consuming them."""
        return self._buf[self._pos:self._pos + n]

    def rest(self) -> str:
        """Every unconsumed character, without consuming them (``peek(pending())`` in one call)."""
        pos = self._pos
        return self._buf[pos:] if pos else self._buf  # (the buffer itself: no slice's cost)

    # ------------------------------------------------------------------ reading
    def next_mark(self) -> int:
        """Skip whitespace (:meth:`skip_whitespace`); the buffer index of the next unread character, -1 if none.

        The opening of a step that reads one-character marks on the buffer (gemma4's
        punctuation between values): with -1 it waits for more text.
        """
        buf, pos = self._buf, self._pos
        if pos < len(buf) and buf[pos].isspace():
            self.skip_whitespace()
            pos = self._pos
        return pos if pos < len(buf) else -1

    def until(self, search: Callable[[str, int], "re.Match[str] | None"], size: int,
              final: bool = False) -> tuple[str, bool]:
        """:meth:`find` of one marker, the per-delta step of a value's text: ``(text, found)``.

        ``search`` is the one-marker set's compiled search (``markers(marker).scan().search``:
        the marker, or a proper prefix of it ending the text) and ``size`` the marker's length
        (characters). ``found``: the marker was read after ``text``. Else a proper prefix of it
        that ends the buffer is held back (with ``final``, read as text), as :meth:`find` does.
        """
        buf, pos = self._buf, self._pos
        hit = search(buf, pos)
        if hit is None:
            self._pos = len(buf)
            return buf[pos:], False
        at = hit.start()
        if hit.end() - at == size:
            self._pos = at + size
            return buf[pos:at], True
        if final:
            self._pos = len(buf)
            return buf[pos:], False
        self._pos = at
        return buf[pos:at], False

    def find(self, m: Markers, final: bool = False, limit: int | None = None) -> tuple[str, str | None]:
        """Read up to and including the leftmost marker of ``m``.

        Returns ``(text, marker)``: the text before the marker and the marker,
        both consumed. When no marker is in the buffer returns ``(text,
        None)``: ``text`` is everything that cannot be the start of a marker
        (consumed); a possible partial marker at the end stays unconsumed
        unless ``final``, when everything is returned.

        ``limit`` (characters, >= 0) bounds a search whose text a caller holds
        back (a call head, see :data:`callscale.parsers.base.MAX_HEAD`): only a marker
        that starts within the first ``limit`` characters counts, and at most
        ``limit`` characters are returned. Exactly ``limit`` characters come
        back with ``None`` only when no marker can start there any more
        (decided whatever text follows); the decision does not depend on how
        the text was split into deltas.
        """
        buf, pos = self._buf, self._pos
        if limit is not None:
            return self.find_within(m, final, limit if limit > 0 else 0)
        scan = m._scan
        if scan:  # one search: the marker, or the partial one held back (else: a lazy or nested set)
            hit = scan.search(buf, pos)
            if hit is None:
                self._pos = len(buf)
                return buf[pos:], None
            start = hit.start()
            marker = hit[0]
            if marker in m.item_set:
                self._pos = hit.end()
                return buf[pos:start], marker
            if final:
                self._pos = len(buf)
                return buf[pos:], None
            self._pos = start
            return buf[pos:start], None
        hit = m.regex.search(buf, pos)
        if hit is not None:
            self._pos = hit.end()
            return buf[pos:hit.start()], hit[0]
        end = len(buf) if final else self._holdback_start(m)
        self._pos = end
        return buf[pos:end], None

    def find_within(self, m: Markers, final: bool, limit: int) -> tuple[str, str | None]:
        """:meth:`find` with a ``limit`` (characters, >= 0), called directly: :meth:`head_find`'s read of a head
        that has ``limit`` characters left (the head being read, if any, kept aside meanwhile)."""
        head, size = self._head, self._head_len
        self._head, self._head_len = [], MAX_HEAD + 1 - limit
        try:
            text, marker = self.head_find(m, final)
        finally:
            self._head, self._head_len = head, size
        return text, (None if marker is OVER else marker)

    def _holdback_start(self, m: Markers) -> int:
        """Start of the longest suffix of the unread buffer that is a proper prefix of a marker
        (:meth:`Markers.cut_start`)."""
        return m.cut_start(self._buf, self._pos)

    def match(self, m: Markers, final: bool = False, layout: Any = None):
        """Which marker of ``m`` starts exactly at the current position.

        Returns the marker (consumed), ``PARTIAL`` when the unconsumed text is
        a proper prefix of a marker and more text may come (nothing consumed),
        or ``None`` when no marker starts here (nothing consumed).

        ``layout``: whitespace first, held there (a :class:`callscale.parsers.base.Layout`: its ``add``,
        which answers False past its bound: then None, nothing read after the whitespace); one call for
        a closing tag confirmed by what follows it (base ``_confirm_ws``).
        """
        buf, pos = self._buf, self._pos
        if layout is not None and pos < len(buf) and buf[pos].isspace():
            end = self._pos = _SPACE.match(buf, pos).end()
            if not layout.add(buf[pos:end]):
                return None
            pos = end
        if pos >= len(buf):
            return None if final else PARTIAL
        if len(buf) - pos < m.longest and buf[pos:] in m.held:
            return None if final else PARTIAL
        scan = m._scan
        if scan is False and len(m.ordered) <= 3:  # a lazy set of a few markers: compare (no pattern)
            for marker in m.ordered:
                end = pos + len(marker)
                if buf[pos:end] == marker:  # (a slice and a comparison, not str.startswith: match_literal)
                    self._pos = end
                    return marker
            return None
        if scan:  # the marker here, or a partial one ending the text
            hit = scan.match(buf, pos)
            if hit is None:
                return None
            marker = hit[0]
            if marker in m.item_set:
                self._pos = hit.end()
                return marker
            return None if final else PARTIAL
        hit = m.regex.match(buf, pos)
        if hit is not None:
            self._pos = hit.end()
            return hit[0]
        if not final and len(buf) - pos < m.longest and buf[pos:] in m.prefixes:
            return PARTIAL
        return None

    def skip_whitespace(self, limit: int | None = None) -> str:
        """Consume and return the whitespace at the current position (at most ``limit`` characters)."""
        buf, pos = self._buf, self._pos
        if pos >= len(buf) or not buf[pos].isspace():  # (the common answer: none)
            return ""
        if limit is None:
            end = _SPACE.match(buf, pos).end()
        else:
            end = _SPACE.match(buf, pos, pos + limit if limit > 0 else pos).end()
        self._pos = end
        return buf[pos:end]

    def take_run(self, run: "re.Pattern[str]", limit: int) -> tuple[str, bool]:
        """Consume the characters at the current position that ``run`` matches, at most ``limit``.

        ``run`` is a compiled pattern of a character class repeated (``[^<>\\n]*``).
        Returns ``(text, decided)``: ``decided`` is true when a character
        ``run`` does not match follows the text (not consumed) or ``limit``
        characters were taken; false when the buffer ended inside the run
        (more text may extend it). Reads only unread text: linear overall.
        """
        buf, pos = self._buf, self._pos
        end = run.match(buf, pos, pos + limit if limit > 0 else pos).end()  # (the bound as endpos: no slice)
        self._pos = end
        return buf[pos:end], end < len(buf) or end - pos >= limit

    def take(self, n: int) -> str:
        """Consume and return up to ``n`` characters."""
        pos = self._pos
        text = self._buf[pos:pos + n]
        self._pos = pos + len(text)
        return text

    def take_all(self) -> str:
        """Consume and return everything received and not yet consumed."""
        buf, pos = self._buf, self._pos
        self._pos = len(buf)
        return buf[pos:] if pos else buf  # (the buffer itself: no slice's cost)

    # --- coarse primitives
    def skip_repeats(self, literal: str, head_start: bool = False) -> int:
        """Consume the copies of ``literal`` (non-empty) that follow one another at the current position: how many.

        Openers in a row (``<|tool_call><|tool_call>``): each but the last opens no call. 0 when
        ``literal`` does not start here (nothing consumed); a partial copy at the end is not consumed.
        ``head_start``: only at the start of a head (nothing read since :meth:`head_begin`, :meth:`head_size`
        0), else 0: the opener again right after the opener (GLM's ``<tool_call>``), one call.
        """
        buf, pos = self._buf, self._pos
        size = len(literal)
        end = pos + size
        if buf[pos:end] != literal or (head_start and self._head_len):  # (a slice and a comparison: match_literal)
            return 0
        stop = len(buf)  # (at the end no copy follows: no comparison)
        while end < stop and buf[end:end + size] == literal:
            end += size
        self._pos = end
        return (end - pos) // size

    def match_literal(self, literal: str, final: bool = False):
        """:meth:`match` of one literal string (non-empty), by comparison: no marker set, no pattern.

        Returns True (consumed), :data:`PARTIAL` when the unread text is a proper prefix of
        ``literal`` or nothing is unread, and more text may come (nothing consumed), else False
        (nothing consumed).
        """
        buf, pos = self._buf, self._pos
        size = len(literal)
        head = buf[pos:pos + size]  # (a slice and a comparison: str.startswith parses its arguments, about 1k)
        if head == literal:
            self._pos = pos + size
            return True
        if not final and len(head) < size and literal.startswith(head):
            return PARTIAL
        return False

    def match_after_space(self, m: Markers, final: bool = False):
        """Skip whitespace (:meth:`skip_whitespace`), then :meth:`match` ``m``, by comparison: one call.

        For a few short markers (punctuation, tags) read between elements: each is compared at the
        cursor (the longest first), no pattern runs. Returns the marker (consumed), :data:`PARTIAL`
        when the unread text is a proper prefix of one or nothing is unread, and more text may come,
        else None (the whitespace consumed, nothing more).
        """
        buf, pos = self._buf, self._pos
        n = len(buf)
        if pos < n and buf[pos].isspace():
            pos = self._pos = _SPACE.match(buf, pos).end()
        if pos >= n:
            return None if final else PARTIAL
        ch = buf[pos]
        if ch in m.first_chars:
            if ch in m.item_set and ch not in m.prefixes:  # a one-character marker, no longer one from here
                self._pos = pos + 1
                return ch
            for marker in m.ordered:
                end = pos + len(marker)
                if buf[pos:end] == marker:  # (a slice and a comparison, not str.startswith: match_literal)
                    self._pos = end
                    return marker
            if not final and n - pos < m.longest and buf[pos:] in m.prefixes:
                return PARTIAL
        return None

    def until_value(self, search: Callable[[str, int], "re.Match[str] | None"], literal: str, value: Any,
                    final: bool = False) -> tuple[str, bool]:
        """``value_state``'s reading up to a literal not compiled into a marker set (one made while streaming): one call.

        ``search`` is the compiled search of a prefix ``p`` that every such literal starts with
        (``markers(p).scan().search``: ``p``, or a proper prefix of it ending the text), compiled
        once; each of its hits is compared with ``literal`` (MiniMax M3: ``]<]minimax[>[</`` for an
        element's own closing tag). Returns ``(json, found)``: ``json`` is ``value.feed(text)`` of
        the text read (escaped here for a streamed string, as ``value_state`` does); ``found``:
        ``literal`` was read after the text (consumed). Else a proper prefix of it that ends the
        buffer is held back (with ``final``, read as text), as :meth:`find` does.
        """
        buf, pos = self._buf, self._pos
        hit = search(buf, pos)
        if hit is None:  # (the common answer: a piece of the value, no tag in it)
            self._pos = len(buf)
            text = buf[pos:]
            found = False
        else:
            at = hit.start()
            while True:
                found = buf.startswith(literal, at)
                if found:
                    self._pos = at + len(literal)
                    break
                if literal.startswith(buf[at:]):  # a proper prefix of it ends the text: held back (read, with final)
                    if final:
                        at = len(buf)
                    self._pos = at
                    break
                hit = search(buf, at + 1)  # another literal of the prefix: text
                at = self._pos = len(buf) if hit is None else hit.start()
                if hit is None:
                    break
            text = buf[pos:at]
        if not text:
            return "", found
        if value.mode == "string":
            return _encode_string(text)[1:-1], found
        return value.feed(text), found

    # --- the bounded call head (one call a step; the rule is base.MAX_HEAD's)
    def head_begin(self, prefix: str = "", counted: int = 0) -> None:
        """Start reading a call head; ``prefix`` (the opener) is kept with its text, not counted.

        ``counted``: how many of ``prefix``'s last characters were read as head already and count toward
        :data:`MAX_HEAD` (gemma4's ``call:`` after its opener); 0 by default.
        """
        self._head = [prefix] if prefix else []
        self._head_len = counted

    def head_find(self, m: Markers, final: bool = False):
        """Head text up to a marker of ``m`` within the head's bound: ``(text, answer)``, one call a step.

        The text is also kept (:meth:`head_text`). ``answer``: the marker (consumed), which must start
        within the ``MAX_HEAD + 1 - size`` characters the head has left (``size``: :meth:`head_size`), at
        most that many are read; :data:`OVER` once the head holds more than :data:`MAX_HEAD` characters
        with no marker (decided whatever the split: no marker can start there any more); else None (more
        text is needed, or, with ``final``, the output ended inside the head). A possible partial marker
        at the end is held back unless ``final``, as :meth:`find` does (:meth:`find_within` is this read
        for any bound; ``tests/parsers/test_head_bound.py`` holds it to :meth:`find`).
        """
        buf, pos = self._buf, self._pos
        limit = MAX_HEAD + 1 - self._head_len
        if limit < 0:
            limit = 0
        stop = pos + limit  # a marker must start before this
        scan = m._scan
        if scan:  # one search, as in find, within the bound
            hit = scan.search(buf, pos, stop - 1 + m.longest)
            end = len(buf)
            if hit is not None:
                marker = hit[0]
                if marker in m.item_set:
                    if hit.start() < stop:
                        self._pos = hit.end()
                        end = hit.start()
                        if end > pos:
                            self._head_len += end - pos
                            text = buf[pos:end]
                            self._head.append(text)
                            return text, marker
                        return "", marker
                elif not final and hit.end() == end:  # (a partial one at the bound's end is cut by it: no marker)
                    end = hit.start()
        else:  # a lazy or nested set
            hit = m.regex.search(buf, pos, stop - 1 + m.longest) if limit else None
            if hit is not None and hit.start() < stop:
                self._pos = hit.end()
                end = hit.start()
                text = buf[pos:end]
                if text:
                    self._head_len += end - pos
                    self._head.append(text)
                return text, hit[0]
            end = len(buf) if final else self._holdback_start(m)
        if end > stop:
            end = stop
        self._pos = end
        if end > pos:
            text = buf[pos:end]
            self._head.append(text)
            self._head_len += end - pos
            if self._head_len > MAX_HEAD:
                return text, OVER
            return text, None
        return "", (OVER if self._head_len > MAX_HEAD else None)

    def head_again(self, literal: str) -> str | None:
        """The head's opener again at the cursor: ``literal`` consumed, the head read so far returned (its text,
        the opener included: no head) and a new head begun with ``literal`` as its prefix; one call. None
        (nothing consumed) when ``literal`` does not start at the cursor (a partial one included: the head's
        other reads decide it). Openers in a row (``<tool_call><tool_call>``): each but the last opens no call.
        """
        pos = self._pos
        end = pos + len(literal)
        if self._buf[pos:end] != literal:  # (a slice and a comparison: match_literal)
            return None
        self._pos = end
        text = "".join(self._head)
        self._head = [literal]
        self._head_len = 0
        return text

    def head_run(self, run: "re.Pattern[str]", final: bool = False) -> tuple[str, bool]:
        """Head characters that ``run`` matches (:meth:`take_run`) within the head's bound: ``(text, decided)``.

        The text is also kept (:meth:`head_text`); ``decided`` is :meth:`take_run`'s, or ``final``.
        """
        text, decided = self.take_run(run, MAX_HEAD + 1 - self._head_len)
        if text:
            self._head_len += len(text)
            self._head.append(text)
        return text, decided or final

    def head_keep(self, text: str, join: bool = False) -> None:
        """Add ``text`` (read by another method: a marker) to the head, counted; ``join``: the head so far and
        ``text`` become its one first part (its fixed text: :meth:`head_peek` ``(1)`` is what follows it)."""
        self._head_len += len(text)
        if join:
            self._head = ["".join(self._head) + text]
        else:
            self._head.append(text)

    def head_over(self) -> bool:
        """Whether the head read so far holds more than :data:`MAX_HEAD` characters (so it is no head)."""
        return self._head_len > MAX_HEAD

    def head_size(self) -> int:
        """The head's characters that count toward :data:`MAX_HEAD` (0: none read since :meth:`head_begin`)."""
        return self._head_len

    def head_peek(self, start: int = 0) -> str:
        """The head's text from its part ``start`` on (1: past its prefix or fixed text), kept."""
        return "".join(self._head[start:])

    def head_text(self) -> str:
        """The head read since :meth:`head_begin` (with its prefix); the parts are released."""
        text = "".join(self._head)
        self._head = []
        return text


# --------------------------------------------------------------------------- the shared value state
def value_state(self: Any, final: bool) -> bool:
    """A format's value state, written once (``_s_value = value_state``): a value's text up to a marker.

    ``self`` (a :class:`callscale.parsers.base.ToolParser`) holds ``_value_ends`` (the :class:`Markers`
    that may end the value), ``_tv`` (the value's :class:`callscale.parsers.schema.TypedValue`) and the
    format's step at a marker, ``_value_marker(marker, final) -> bool`` (the state's answer). The text up
    to the first marker (:meth:`MarkerScanner.find`'s reading: a possible partial marker at the end held
    back unless ``final``) goes through ``_tv`` (a streamed string's piece, ``mode == "string"``, escaped
    here: ``json.encoder.encode_basestring`` less the quotes, as ``TypedValue.feed`` does) and what it
    answers is sent (``_emit_arguments``; a held value answers ``""`` until it ends). Then, at a marker
    (consumed), ``_value_marker(marker, final)``; with none found, False (more text needed), or at the end
    of the output ``_value_marker(None, True)``. One Python frame a value's delta: the state reads the
    buffer itself; ``tests/parsers/test_scanner_primitives.py`` holds it to ``find`` then ``feed``.
    """
    sc = self.scanner
    m = self._value_ends
    buf, pos = sc._buf, sc._pos
    scan = m._scan
    if scan:  # find's one search (the marker, or a partial one held back)
        hit = scan.search(buf, pos)
        if hit is None:
            sc._pos = len(buf)
            marker = None
            text = buf[pos:] if pos else buf  # (the buffer itself: no slice's cost)
        else:
            end = hit.start()
            marker = hit[0]
            if marker in m.item_set:
                sc._pos = hit.end()
            else:
                marker = None
                if final:
                    end = len(buf)
                sc._pos = end
            text = buf[pos:end]
    else:  # a lazy or nested set
        text, marker = sc.find(m, final)
    if text:
        value = self._tv
        if value.mode != "string":
            out = value.feed(text)
        elif text.isprintable() and '"' not in text and "\\" not in text:  # (its JSON text: itself)
            out = text
        else:
            out = _encode_string(text)[1:-1]
        if out:  # (a held value sends nothing until it ends)
            self._emit_arguments(out)
    if marker is None:
        return self._value_marker(None, True) if final else False
    return self._value_marker(marker, final)
