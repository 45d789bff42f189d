"""Named workloads: model output in a format, sized in characters, with the result a correct parser gives.

A workload is a function ``(fmt, length, seed) -> Case``: ``fmt`` is a format
(the parser registry name, which is also its renderer's name), ``length`` the
size in characters, ``seed`` picks the text (same seed, same text).

    >>> from workloads import catalog
    >>> case = catalog.make("write_file", "deepseek_v32", 65536)
    >>> len(case.calls[0].arguments["content"])
    65536

| workload | the output |
|---|---|
| ``write_file`` | a short sentence, then one ``write_file(path, content)`` call whose ``content`` is ``length`` characters of real Python source (quotes, backslashes, indentation, non-ASCII) |
| ``many_short_calls`` | a short sentence, then back-to-back short calls of five tools with string, integer, number, boolean, array and object arguments, until the text reaches ``length`` |
| ``repeated_opener`` | the format's calls-block opener repeated to about ``length`` characters, as a degenerate model does; expected: no call, and no content or the text itself (but the last opener, a cut call) as the renderer's ``stray_openers_are_content`` says |
| ``long_content`` | ``length`` characters of plain prose and no call; expected content: the text |
| ``unclosed_call`` | a short sentence, then a ``write_file`` call with a ``length``-character ``content`` cut off just after the value, before any closing markup; expected: the sentence, no call |
| ``literal_closing_tags`` | a ``write_file`` call whose ``length``-character ``content`` (parser code being edited) holds the format's own closing tags as text many times (plain source when the format declares none, see below) |
| ``parallel_calls`` | a short sentence, then ``read_file(path)`` calls in one calls block until the text reaches ``length`` |
| ``many_tiny_calls`` | a short sentence, then ``ls()`` calls (no arguments: the smallest call a format writes) in one calls block until the text reaches ``length``: the most calls a length holds |
| ``many_keys`` | one ``configure`` call whose arguments are keys ``opt_0000`` ... (a short string, an integer, a boolean in turn) to ``length`` |
| ``deep_value`` | one ``save_tree`` call whose ``trees`` nest one level per 30-odd characters, in chains as deep as the limit (:data:`MAX_DEPTH` for the arguments, ``Renderer.max_value_depth`` where the format's parser reads less) |
| ``long_array`` | one ``tag_items`` call whose ``ids`` array holds integers to ``length`` |
| ``text_between`` | ``read_file`` calls each after a sentence of 60-200 characters (each call a calls block of its own, ``Renderer.render_segments``); expected content: the sentences |
| ``many_tools`` | a request of one tool per 64 characters of ``length``; the output calls the last one with a ``length``-character ``content`` |
| ``structure`` | every structure axis in one output: a call with many keys, a deep value, a long array (each a share of ``length``, :data:`STRUCTURE_SHARES`), then blocks of two tiny calls each after a sentence; the request offers one tool per 64 characters besides |

:data:`AXES` names the workload that grows each axis a parser's cost can grow on besides one value's
length (docs/gate.md, "The axes").

Where a format's models open their output with the call (the renderer's
``call_first``: Llama 3 JSON and Llama 4 pythonic, docs/formats.md), the
workloads that have a short sentence before their calls write none: the
text starts with the call and the expected content is ``""``
(:func:`intro`); engines' parsers for those formats take a call only there.

``len(case.text)`` is close to ``length``, not equal: the call markup and
the escaping of values (JSON formats) add a few percent; calls are whole, so
``many_short_calls`` and ``parallel_calls`` overshoot by less than one call.

Deliveries: a workload name may end in ``+CHUNKING`` (``write_file@mixed+parts:16``,
``many_short_calls+char``): the case is then always split by that chunking
(:attr:`Case.delivery`), whatever chunking the run asks for, so a run can
judge one workload under several deliveries, each its own row. Any chunking
spec of :mod:`callscale.workloads.chunking` is a delivery; the ones that
show a cost per delta growing with the delta's size are those whose deltas
grow with the text: ``whole`` and ``parts:N``.

Content kinds (:mod:`callscale.workloads.content`): a workload that carries
argument text (:data:`KIND_WORKLOADS`) takes a kind after ``@`` in its name,
``write_file@cjk``, ``many_short_calls@mixed``: its argument values are then
text of that kind (``write_file``'s ``content``; each short call's string
arguments; ``parallel_calls``' paths), written by the format's own renderer.
Without ``@KIND`` the text is ``code``, as before; ``WORKLOAD@code`` makes the
same case as ``WORKLOAD`` (under its own name).

``literal_closing_tags`` takes the closing strings from the renderer's
``closing_tags``. A format whose values cannot contain them (they are special
tokens of the vocabulary, or the format gives a parser no way to tell a
literal tag from the real one) declares none, and for it the workload gives
the ``write_file`` output unchanged (same text, same expected call), under
its own workload name, so a measurement matrix over all formats stays whole.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
from typing import Callable, Iterator, Sequence

from . import content as kinds
from . import render
from .case import Case
from .render import Call, Renderer
from .source import SOURCE_FILES, prose, source_code
from .tools import MAX_DEPTH, tools_for  # re-exported: the catalog's cases declare their tools with it

__all__ = ["AXES", "registered", "HEADLINE", "KIND_WORKLOADS", "Workload", "names", "get", "make", "text_lengths", "check_name", "tools_for",
           "formats", "intro"]

Workload = Callable[[str, int, int], Case]
"""``(fmt, length, seed) -> Case``; ``length`` in characters."""

#: The workloads a scaling run measures by default.
HEADLINE = ("write_file", "many_short_calls", "repeated_opener")

_WORKLOADS: dict[str, Workload] = {}

#: The workloads that carry argument text, and so take a content kind (``NAME@KIND``).
KIND_WORKLOADS: list[str] = []

@contextlib.contextmanager
def registered(made: dict[str, Workload]) -> Iterator[None]:
    """``made``'s workloads known by name (:func:`make`, :func:`get`) while the block runs, then forgotten:
    inputs made elsewhere (``callscale hunt``'s candidates) counted by a meter that makes each case by name."""
    _WORKLOADS.update(made)
    try:
        yield
    finally:
        for name in made:
            _WORKLOADS.pop(name, None)


def _workload(name: str, kinds: bool = False) -> Callable[[Workload], Workload]:
    def wrap(fn: Workload) -> Workload:
        _WORKLOADS[name] = fn
        if kinds:
            KIND_WORKLOADS.append(name)
        return fn

    return wrap


#: The separator between a workload (and its kind) and its delivery in a workload name.
DELIVERY_SEPARATOR = "+"


def split_delivery(name: str) -> tuple[str, str | None]:
    """``"write_file@cjk+parts:16"`` -> ``("write_file@cjk", "parts:16")``; without ``+``, ``(name, None)``."""
    head, sep, delivery = name.partition(DELIVERY_SEPARATOR)
    return (head, delivery) if sep else (name, None)


def base_name(name: str) -> str:
    """The catalog workload a name is made of: ``"unclosed_call@cjk+whole"`` -> ``"unclosed_call"``."""
    return kinds.split_name(split_delivery(name)[0])[0]


def check_name(name: str) -> tuple[str, str | None]:
    """``(workload, kind)`` of a workload name (``"write_file@cjk"`` -> ``("write_file", "cjk")``;
    a ``+DELIVERY`` suffix is checked and left out).

    Raises ``KeyError`` with a one-line message for an unknown workload, an
    unknown kind (listing the known ones), a kind given to a workload that
    carries no argument text, or a delivery that is no chunking spec.
    """
    if not isinstance(name, str):
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(_WORKLOADS)}")
    name, delivery = split_delivery(name)
    if delivery is not None:
        from .chunking import parse_chunking

        try:
            parse_chunking(delivery)
        except ValueError as exc:
            raise KeyError(f"workload {name}+{delivery}: {exc}") from None
    base, kind = kinds.split_name(name)
    if base not in _WORKLOADS:
        raise KeyError(f"unknown workload {base!r}; known: {', '.join(_WORKLOADS)}")
    if kind is not None:
        if kind not in kinds.KINDS:
            raise KeyError(f"unknown content kind {kind!r} in workload {name!r}; known: {', '.join(kinds.KINDS)}")
        if base not in KIND_WORKLOADS:
            raise KeyError(f"workload {base!r} carries no argument text to fill with {kind!r}; "
                           f"workloads that take a kind: {', '.join(KIND_WORKLOADS)}")
    return base, kind


def names() -> list[str]:
    """The workload names, the headline ones first (catalog order, not sorted)."""
    return list(_WORKLOADS)


def get(name: str) -> Workload:
    """The workload function called ``name`` (``NAME@KIND`` too: the case is then filled with text of
    that kind and named ``NAME@KIND``); ``KeyError`` (one line, :func:`check_name`) if none.

    A team's own workload (``module.path:function`` or ``file:PATH``, :mod:`callscale.workloads.team`)
    is loaded here; one that cannot be used raises :class:`~callscale.workloads.team.TeamWorkloadError`
    (a ``KeyError``) saying why.
    """
    from . import team

    if team.is_team(name):
        return team.workload(name)
    base, kind = check_name(name)
    delivery = split_delivery(name)[1]
    fn = _WORKLOADS[base]
    if kind is None and delivery is None:
        return fn

    def named(fmt: str, length: int, seed: int = 0) -> Case:
        case = fn(fmt, length, seed) if kind is None else fn(fmt, length, seed, kind=kind)
        return dataclasses.replace(case, workload=name, delivery=delivery)

    return named


def formats() -> list[str]:
    """The formats a workload can be made in: those with a registered renderer, sorted."""
    return render.names()


def make(workload: str, fmt: str, length: int, seed: int = 0) -> Case:
    """The case of ``workload`` in format ``fmt`` at ``length`` characters.

    ``workload`` may name a content kind: ``write_file@cjk`` (module docstring).
    Raises ``KeyError`` (listing the known names) for an unknown workload,
    content kind or format, ``ValueError`` for a ``length`` below 1, ``TypeError`` for a
    ``length`` that is not an integer.
    """
    fn = get(workload)
    _renderer(fmt)
    if isinstance(length, bool) or not isinstance(length, int):
        raise TypeError(f"length must be an int (characters), got {length!r}")
    if length < 1:
        raise ValueError(f"length must be at least 1 character, got {length}")
    return dataclasses.replace(fn(fmt, length, seed), seed=seed)


def text_lengths(workload: str, fmt: str, lengths: Sequence[int], seed: int = 0) -> list[int]:
    """The length in characters of each case's text (``len(make(workload, fmt, n, seed).text)``): the
    x of every scaling exponent (:func:`callscale.fit.exponent`; ``gate`` fits on it, and so do ``callscale
    history`` and asv's ``track_scaling_exponent``), close to the requested ``lengths``. Raises as
    :func:`make` does."""
    return [len(make(workload, fmt, int(n), seed).text) for n in lengths]


def _renderer(fmt: str) -> Renderer:
    known = render.names()
    if fmt not in known:
        listed = ", ".join(known) if known else "none registered yet"
        raise KeyError(f"unknown format {fmt!r}; known: {listed}")
    return render.get(fmt)


# ----------------------------------------------------------------- helpers

#: The content before the calls of the workloads that have one.
WRITE_INTRO = "I'll write the file."
CALLS_INTRO = "I'll run these."
READ_INTRO = "I'll read the files."

def intro(r: Renderer, sentence: str) -> str:
    """The content before a workload's calls: ``sentence``, or ``""`` for a format whose models write the
    call first (``r.call_first``, see the module docstring)."""
    return "" if getattr(r, "call_first", False) else sentence


#: Tools a request of the no-call workloads offers (what the model could have called).
_OFFERED = (Call("write_file", {"path": "", "content": ""}), Call("read_file", {"path": ""}))


def _case(r: Renderer, workload: str, length: int, text: str, content: str,
          calls: Sequence[Call], offered: Sequence[Call] | None = None) -> Case:
    return Case(
        format=r.name,
        workload=workload,
        length=length,
        text=text,
        tools=tuple(tools_for(offered if offered is not None else calls)),
        content=content,
        calls=tuple(calls),
        special_tokens=tuple(r.special_tokens),
    )


def _path(seed: int) -> str:
    rng = random.Random(f"path:{seed}")
    return "src/" + rng.choice(SOURCE_FILES)


def _write_call(length: int, seed: int, content: str | None = None, kind: str = kinds.DEFAULT_KIND,
                fmt: str = "") -> Call:
    if content is None:
        content = source_code(length, seed) if kind == kinds.DEFAULT_KIND else kinds.text(kind, length, seed, fmt)
    return Call("write_file", {"path": _path(seed), "content": content})


def _fill(r: Renderer, length: int, content: str, next_call: Callable[[], Call]) -> tuple[str, list[Call]]:
    """Render calls from ``next_call`` after ``content`` until the text reaches ``length`` characters.

    At least one call. Each call's share of the text is measured by
    rendering it alone (minus the block's share, found by rendering the
    first call once and twice), so the text exceeds ``length`` by about one
    call; the whole list is rendered once, plus once more per top-up when a
    format's layout is not additive (numbered call ids).
    """
    first = next_call()
    one = len(r.render([first], content))
    shared = 2 * one - len(r.render([first, first], content))  # content, block opener and closer
    calls = [first]
    total = one
    while total < length:
        call = next_call()
        calls.append(call)
        total += len(r.render([call], content)) - shared
    text = r.render(calls, content)
    while len(text) < length:
        per_call = max(1.0, (len(text) - shared) / len(calls))
        calls.extend(next_call() for _ in range(max(1, math.ceil((length - len(text)) / per_call))))
        text = r.render(calls, content)
    return text, calls


def _common_prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over slice comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ----------------------------------------------------------------- the workloads

@_workload("write_file", kinds=True)
def write_file(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """One ``write_file(path, content)`` call; ``content`` is exactly ``length`` characters of ``kind``
    (stdlib source by default)."""
    r = _renderer(fmt)
    call = _write_call(length, seed, kind=kind, fmt=fmt)
    content = intro(r, WRITE_INTRO)
    return _case(r, "write_file", length, r.render([call], content), content, [call])


_CITIES = ("Paris", "Zürich", "São Paulo", "東京", "Reykjavík", "New York", "Kraków")
_QUERIES = (
    'café "best" near me',
    "O'Brien's law",
    "C:\\Users\\ana\\notes.txt",
    "python 3.11 what's new",
    "μ and σ of a normal distribution",
    "line one\nline two",
)
_LABELS = ("tea", "0042", "stand-up", "pasta al dente", "naïve timer")


def _short_call(rng: random.Random, kind: str = kinds.DEFAULT_KIND, fmt: str = "") -> Call:
    """One short call; with a ``kind`` other than ``code``, its free-text strings (city, query, label,
    path) are short values of that kind."""
    tool = rng.randrange(5)
    text = None if kind == kinds.DEFAULT_KIND else (lambda: kinds.piece(kind, rng, fmt))
    if tool == 0:
        return Call("get_weather", {"city": text() if text else rng.choice(_CITIES),
                                    "unit": rng.choice(("celsius", "fahrenheit"))})
    if tool == 1:
        return Call("read_file", {"path": "src/" + (text() if text else rng.choice(SOURCE_FILES))})
    if tool == 2:
        return Call("search", {"query": text() if text else rng.choice(_QUERIES), "limit": rng.randint(1, 50)})
    if tool == 3:
        return Call("set_timer", {"minutes": rng.choice((0.5, 1.5, 2.25, 12.75)),
                                  "label": text() if text else rng.choice(_LABELS),
                                  "repeat": rng.random() < 0.5})
    ids = [rng.randint(1, 999) for _ in range(rng.randint(1, 4))]
    return Call("tag_items", {"ids": ids, "labels": {"priority": rng.choice(("low", "high")),
                                                     "owner": rng.choice(("ana", "bo", "chloé")),
                                                     "weight": rng.randint(0, 9)}})


@_workload("many_short_calls", kinds=True)
def many_short_calls(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """Short calls of five tools (every JSON type among the arguments) in one block, to about ``length`` characters."""
    r = _renderer(fmt)
    rng = random.Random(f"many:{seed}")
    content = intro(r, CALLS_INTRO)
    text, calls = _fill(r, length, content, lambda: _short_call(rng, kind, fmt))
    return _case(r, "many_short_calls", length, text, content, calls)


@_workload("repeated_opener")
def repeated_opener(fmt: str, length: int, seed: int = 0) -> Case:
    """The calls-block opener repeated (whole) to about ``length`` characters; expected: no call.

    Expected content: ``""`` where the format's parser drops openers that
    start no call, the text itself where it keeps them as content
    (``Renderer.stray_openers_are_content``), except the last opener: the
    output ends inside the call it opens, and a cut call's markup is no
    content (DESIGN.md, "Content and markup").

    ``seed`` is unused (the text is fixed by the format). Raises
    ``ValueError`` when the renderer declares no opener.
    """
    r = _renderer(fmt)
    if not r.opener:
        raise ValueError(f"format {fmt!r} declares no calls-block opener")
    count = max(1, round(length / len(r.opener)))
    text = r.opener * count
    content = r.opener * (count - 1) if r.stray_openers_are_content else ""
    return _case(r, "repeated_opener", length, text, content, [], offered=_OFFERED)


@_workload("long_content")
def long_content(fmt: str, length: int, seed: int = 0) -> Case:
    """``length`` characters of plain prose and no call; expected content: the text."""
    r = _renderer(fmt)
    text = prose(length, seed)
    return _case(r, "long_content", length, r.render([], text), text, [], offered=_OFFERED)


@_workload("unclosed_call", kinds=True)
def unclosed_call(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """A ``write_file`` call (``length``-character content) cut off just after the value; expected: the intro only.

    The cut point is where the rendering of the call and of the same call
    with one more character in ``content`` part: right after the (escaped)
    value, before whatever closes the value, the call and the block.
    """
    r = _renderer(fmt)
    call = _write_call(length, seed, kind=kind, fmt=fmt)
    content = intro(r, WRITE_INTRO)
    full = r.render([call], content)
    longer = Call(call.name, {**call.arguments, "content": call.arguments["content"] + "#"})
    cut = _common_prefix_length(full, r.render([longer], content))
    if cut >= len(full):  # pragma: no cover - a renderer that writes nothing after a value
        raise ValueError(f"format {fmt!r}: nothing follows the value to cut off")
    return _case(r, "unclosed_call", length, full[:cut], content, [], offered=[call])


_TAG_LINES = (
    "{indent}end = buffer.find({lit}, start)\n",
    "{indent}if text.endswith({lit}):\n",
    "{indent}# a value may hold {tag} as text: do not stop at the first one\n",
    "{indent}CLOSING = {lit}  # the closing tag\n",
    "{indent}parts = chunk.split({lit}, 1)\n",
)


def _literal(tag: str) -> str:
    """A Python string literal holding ``tag`` as raw text (triple quotes when ``repr`` would escape it)."""
    plain = repr(tag)
    if plain[1:-1] == tag:
        return plain
    quote = '"""' if '"""' not in tag and not tag.endswith('"') else "'''"
    return quote + tag + quote


def _with_closing_tags(length: int, seed: int, tags: Sequence[str], kind: str = kinds.DEFAULT_KIND,
                       fmt: str = "") -> str:
    """Exactly ``length`` characters of source with a line quoting one of ``tags`` after every 5 lines.

    Each tag appears verbatim (raw text, not an escape). The tags sit inside lines (a string literal or a comment follows them),
    and the last ``min(64, length // 4)`` or more characters are plain
    source, so the value never ends in a tag.
    """
    def fill(n: int, s: int) -> str:
        return source_code(n, s) if kind == kinds.DEFAULT_KIND else kinds.text(kind, n, s, fmt)

    if kind == kinds.DEFAULT_KIND:
        lines = fill(length, seed).splitlines(keepends=True)
    else:  # a kind's text in lines of 72 characters, so the tag lines fall between them
        whole = fill(length, seed)
        lines = [whole[i:i + 72] + "\n" for i in range(0, len(whole), 72)]
    budget = length - min(64, length // 4)
    out: list[str] = []
    size = used = 0
    for i, line in enumerate(lines):
        if i % 5 == 4:
            tag = tags[used % len(tags)]
            indent = line[: len(line) - len(line.lstrip(" "))]
            extra = _TAG_LINES[used % len(_TAG_LINES)].format(indent=indent, lit=_literal(tag), tag=tag)
            if size + len(extra) > budget:
                break
            out.append(extra)
            size += len(extra)
            used += 1
        if size + len(line) > budget or not line.endswith("\n"):
            break
        out.append(line)
        size += len(line)
    head = "".join(out)
    return head + fill(length - len(head), seed + 1)


@_workload("literal_closing_tags", kinds=True)
def literal_closing_tags(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """A ``write_file`` call whose ``length``-character content quotes the format's closing tags many times.

    The tags are the renderer's ``closing_tags``; with none declared, the
    content is plain source and the case is the ``write_file`` case under
    this workload's name (see the module docstring).
    """
    r = _renderer(fmt)
    tags = tuple(t for t in r.closing_tags if t)
    content = _with_closing_tags(length, seed, tags, kind, fmt) if tags else None
    call = _write_call(length, seed, content, kind, fmt)
    before = intro(r, WRITE_INTRO)
    return _case(r, "literal_closing_tags", length, r.render([call], before), before, [call])


@_workload("parallel_calls", kinds=True)
def parallel_calls(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """``read_file(path)`` calls (distinct paths) in one calls block, to about ``length`` characters.

    A read_file call renders to 50-120 characters, so that is about
    ``length / 80`` calls.
    """
    r = _renderer(fmt)
    rng = random.Random(f"parallel:{seed}")
    counter = iter(range(1 << 62))

    def next_call() -> Call:
        i = next(counter)
        stem = rng.choice(SOURCE_FILES)[:-3] if kind == kinds.DEFAULT_KIND else kinds.piece(kind, rng, fmt, 4, 24)
        return Call("read_file", {"path": f"src/{stem}_{i}.py"})

    content = intro(r, READ_INTRO)
    text, calls = _fill(r, length, content, next_call)
    return _case(r, "parallel_calls", length, text, content, calls)


# ----------------------------------------------------------------- the structure axes

def _grown(length: int, build: Callable[[int], str], first: int = 8) -> int:
    """The count ``k`` whose ``build(k)`` (a text) reaches about ``length`` characters (at least 1): ``build``
    at ``first``, then at the count scaled by ``length / len(text)`` until within 2% above (at most 4 tries)."""
    k = max(1, first)
    for _ in range(4):
        size = len(build(k))
        if length <= size <= length * 1.02 or (size >= length and k == 1):
            break
        k = max(1, math.ceil(k * length / max(1, size)))
    while len(build(k)) < length:
        k += max(1, k // 64)
    return k


#: The words of a short ``code`` value (:func:`_value_text`): the short calls' own values.
_WORDS = _CITIES + _LABELS


def _value_text(kind: str, rng: random.Random, fmt: str, low: int = 8, high: int = 24) -> str:
    """A short string value of ``low``..``high`` characters: of ``kind``; for ``code``, a few of the short
    calls' cities and labels (a sentence of prose from 40 characters)."""
    if kind != kinds.DEFAULT_KIND:
        return kinds.piece(kind, rng, fmt, low, high)
    size = rng.randint(low, high)
    if high >= 40:
        return prose(size, rng.randrange(1 << 30)).strip() or "x"
    words = rng.choice(_WORDS)
    while len(words) < size:
        words += " " + rng.choice(_WORDS)
    return words[:size].strip()


#: The smallest call: a tool with no arguments.
TINY_CALL = Call("ls", {})


def _tiny_calls(r: Renderer, length: int, content: str) -> list[Call]:
    return _fill(r, length, content, lambda: TINY_CALL)[1]


def _keys(length: int, seed: int, kind: str, fmt: str, r: Renderer) -> Call:
    """A ``configure`` call whose arguments are keys ``opt_0000``, ``opt_0001`` ... (a string, an integer, a
    boolean in turn) to about ``length`` characters."""
    def call(k: int) -> Call:
        rng = random.Random(f"keys:{seed}")
        args: dict[str, object] = {}
        for i in range(k):
            args[f"opt_{i:04d}"] = (_value_text(kind, rng, fmt, 4, 12), rng.randint(0, 999), rng.random() < 0.5)[i % 3]
        return Call("configure", args)

    return call(_grown(length, lambda k: r.render([call(k)]), 16))


def _deep(length: int, seed: int, kind: str, fmt: str, r: Renderer) -> Call:
    """A ``save_tree`` call whose ``trees`` is a list of chains ``{"label": TEXT, "child": {...}}``, each as
    deep as the limit but the last, one level per 30-odd characters (labels of 4-12 characters) to about
    ``length``: the nesting grows with the length up to the limit, the nesting changes (opening brackets)
    with the length at any size. The limit: the arguments nest :data:`MAX_DEPTH` deep (the list of chains
    and the arguments' object are two levels), or the value as deep as the format reads
    (``Renderer.max_value_depth``)."""
    deepest = min(MAX_DEPTH - 2, (r.max_value_depth or MAX_DEPTH) - 1)

    def call(levels: int) -> Call:
        rng = random.Random(f"deep:{seed}")
        trees: list[dict[str, object]] = []
        while levels > 0:
            depth = min(deepest, levels)
            levels -= depth
            tree: dict[str, object] = {"label": "leaf"}
            for _ in range(depth - 1):  # built inside out, no recursion
                tree = {"label": _value_text(kind, rng, fmt, 4, 12), "child": tree}
            trees.append(tree)
        return Call("save_tree", {"trees": trees})

    return call(_grown(length, lambda n: r.render([call(n)]), 16))


def _items(length: int, seed: int, r: Renderer) -> Call:
    """A ``tag_items`` call whose ``ids`` array holds integers (the smallest items: 3-6 characters each) to
    about ``length``."""
    def call(k: int) -> Call:
        rng = random.Random(f"items:{seed}")
        return Call("tag_items", {"ids": [rng.randint(0, 9999) for _ in range(k)]})

    return call(_grown(length, lambda k: r.render([call(k)]), 16))


def _between_text(kind: str, rng: random.Random, fmt: str, low: int = 60, high: int = 200) -> str:
    """The text a model writes between two calls: a sentence of ``low``-``high`` characters, after a space."""
    return " " + _value_text(kind, rng, fmt, low, high)


def _segments_case(r: Renderer, workload: str, length: int, segments: list[tuple[str, list[Call]]],
                   offered: Sequence[Call] | None = None) -> Case:
    calls = [c for _, segment in segments for c in segment]
    text = r.render_segments(segments)
    tools = tools_for(calls) + (tools_for(offered) if offered else [])
    return Case(format=r.name, workload=workload, length=length, text=text, tools=tuple(tools),
                content="".join(content for content, _ in segments), calls=tuple(calls),
                special_tokens=tuple(r.special_tokens))


@_workload("many_tiny_calls")
def many_tiny_calls(fmt: str, length: int, seed: int = 0) -> Case:
    """Calls of ``ls()`` (no arguments: the smallest call a format writes) in one block, to about ``length``
    characters: the most calls a length holds, so a term in the number of calls shows at moderate lengths.
    ``seed`` is unused."""
    r = _renderer(fmt)
    content = intro(r, CALLS_INTRO)
    calls = _tiny_calls(r, length, content)
    return _case(r, "many_tiny_calls", length, r.render(calls, content), content, calls)


@_workload("many_keys", kinds=True)
def many_keys(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """One ``configure`` call whose arguments are ``length / 20`` or so keys (``opt_0000`` ...: a short
    string, an integer, a boolean in turn)."""
    r = _renderer(fmt)
    call = _keys(length, seed, kind, fmt, r)
    content = intro(r, CALLS_INTRO)
    return _case(r, "many_keys", length, r.render([call], content), content, [call])


@_workload("deep_value", kinds=True)
def deep_value(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """One ``save_tree`` call whose ``trees`` nest one level per 30-odd characters of ``length`` (each level an
    object with a short ``label`` of text and a ``child``), a chain up to :data:`MAX_DEPTH` levels deep,
    then the next chain: the nesting grows with the length up to the limit, and so do the opening brackets."""
    r = _renderer(fmt)
    call = _deep(length, seed, kind, fmt, r)
    content = intro(r, CALLS_INTRO)
    return _case(r, "deep_value", length, r.render([call], content), content, [call])


@_workload("long_array")
def long_array(fmt: str, length: int, seed: int = 0) -> Case:
    """One ``tag_items`` call whose ``ids`` array holds about ``length / 6`` integers."""
    r = _renderer(fmt)
    call = _items(length, seed, r)
    content = intro(r, CALLS_INTRO)
    return _case(r, "long_array", length, r.render([call], content), content, [call])


@_workload("text_between", kinds=True)
def text_between(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """Short ``read_file`` calls, each after a sentence of 60-200 characters, to about ``length`` characters:
    text between calls (each call a calls block of its own, :meth:`Renderer.render_segments`); expected
    content: the sentences."""
    r = _renderer(fmt)
    rng = random.Random(f"between:{seed}")
    segments: list[tuple[str, list[Call]]] = []
    size = 0
    while size < length:
        text = _between_text(kind, rng, fmt) if segments else intro(r, READ_INTRO)
        segment = (text, [Call("read_file", {"path": _path(len(segments) + seed)})])
        segments.append(segment)
        size += len(r.render(segment[1], segment[0]))
    return _segments_case(r, "text_between", length, segments)


#: Characters of output per tool of the request in ``many_tools`` and ``structure``.
CHARACTERS_PER_TOOL = 64


def _offered_tools(length: int) -> list[Call]:
    """``length / 64`` tools ``tool_0000`` ... (at least 1), each taking ``path`` and ``content``."""
    return [Call(f"tool_{i:04d}", {"path": "", "content": ""}) for i in range(max(1, length // CHARACTERS_PER_TOOL))]


@_workload("many_tools", kinds=True)
def many_tools(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """A request of one tool per 64 characters of ``length`` (``tool_0000`` ...): the request grows with
    the length; the output calls the last tool with a ``content`` of ``length`` characters of ``kind``."""
    r = _renderer(fmt)
    offered = _offered_tools(length)
    written = _write_call(length, seed, kind=kind, fmt=fmt)
    call = Call(offered[-1].name, dict(written.arguments))
    content = intro(r, WRITE_INTRO)
    return _case(r, "many_tools", length, r.render([call], content), content, [call], offered=offered)


#: Each part's share of a ``structure`` case's length.
STRUCTURE_SHARES = {"keys": 0.2, "depth": 0.25, "items": 0.2, "calls": 0.35}  # (the calls: the rest)
#: ``structure``'s tiny calls: a block of this many, then a sentence, in turn.
CALLS_PER_BLOCK = 2


@_workload("structure", kinds=True)
def structure(fmt: str, length: int, seed: int = 0, kind: str = kinds.DEFAULT_KIND) -> Case:
    """Every structure axis in one output, each part a share of ``length`` (:data:`STRUCTURE_SHARES`): a call
    with many keys (``many_keys``), then, each after a sentence of text, a deeply nested value
    (``deep_value``) and a long array (``long_array``), then blocks of two tiny calls (``many_tiny_calls``)
    each after a sentence (``text_between``); the request offers one tool per 64 characters besides
    (``many_tools``). Values and sentences are text of ``kind``. The calls with long arguments come first, so
    every tiny call follows them (a cost per call that grows with the calls before it)."""
    r = _renderer(fmt)
    rng = random.Random(f"structure:{seed}")
    share = {axis: max(1, int(length * part)) for axis, part in STRUCTURE_SHARES.items()}
    segments: list[tuple[str, list[Call]]] = [
        (intro(r, CALLS_INTRO), [_keys(share["keys"], seed, kind, fmt, r)]),
        (_between_text(kind, rng, fmt), [_deep(share["depth"], seed, kind, fmt, r)]),
        (_between_text(kind, rng, fmt), [_items(share["items"], seed, r)]),
    ]
    size = len(r.render_segments(segments))  # the tiny calls fill the rest of the length
    while size < length:
        segment = (_between_text(kind, rng, fmt, 20, 80), [TINY_CALL] * CALLS_PER_BLOCK)
        segments.append(segment)
        size += len(r.render(segment[1], segment[0]))
    return _segments_case(r, "structure", length, segments, offered=_offered_tools(length))


#: The workload that grows each axis a parser's cost can grow on besides the length of one value
#: (docs/gate.md, "The axes"): ``value`` one argument's length, ``calls`` the number of calls, ``keys`` of
#: arguments in a call, ``depth`` the nesting of a value, ``items`` of an array, ``between`` the text between
#: calls, ``tools`` the request's tools.
AXES = {"value": "write_file", "calls": "many_tiny_calls", "keys": "many_keys", "depth": "deep_value",
        "items": "long_array", "between": "text_between", "tools": "many_tools"}
