"""``callscale hunt``: search for the input that makes a parser's cost grow fastest.

A hill-climb over model outputs in the parser's format, with the growth exponent itself as the fitness
(PerfFuzz, Lemieux et al., ISSTA 2018, and SlowFuzz, Petsios et al., CCS 2017, maximise a cost; here the
cost's growth with length is maximised). An input (:class:`Candidate`) is grown to :data:`LENGTHS` (1k and
4k characters) along one **axis** (:data:`AXES`):

- ``value``: one long argument value (``write_file``'s ``content``), grown by repeating its own text as a
  ``file:`` workload is (:func:`callscale.workloads.team.scale_record`), so whatever it holds appears in
  proportion to the length;
- ``calls``, ``keys``, ``depth``, ``items``, ``between``: the structure of the output, written by the
  format's renderer from :class:`~callscale.workloads.render.Call` objects (:func:`structure`): the number
  of calls, of keys in one call's arguments, the nesting depth of an argument (up to :data:`DEEPEST` levels, then
  more such chains beside it), the items of an array, the
  calls with text between them; their short values are cut from the candidate's ``value`` (its *pool*),
  so the character mutations reach them too;
- ``tools``: the request: a tool offered per 64 characters of the text, beside a long value.

Fitness: ``log(count at 4k / count at 1k) / log(4)`` from exact instruction counts (callgrind,
:mod:`callscale.instructions`): deterministic, so one measurement of a candidate is its value and a
hill-climb is sound.

**The survey** (:func:`survey_parts`) is measured whole before any mutation: the base input, characters of
every 256-code-point range and every Unicode general category, bidirectional controls, combining marks and
decomposed text, every content kind of :mod:`callscale.workloads.content`, each structure axis, the
deliveries of :data:`SURVEY_DELIVERIES` (delta sizes, fixed-size bundles of 16..4096 characters,
alternating sizes, recorded patterns) and fragments of the format's markers, and ``literal_closing_tags``.

**The mutations** (:func:`mutants`) of the steepest few: their inserted characters split in parts (each four
times as dense), more of their own inserted characters, characters of a random category or range,
fragments of a marker, another delivery, a stretch of a content kind, a slice repeated, another axis.

**The budget**: each batch's cost is measured as the run goes (seconds = a fixed start-up plus a cost per
input, :class:`Pace`); a batch starts only when it would end, at that pace, before the budget less the
time kept for the last step, which measures the steepest input at the gate's instruction lengths with the
gate's rules (:func:`callscale.matrix.run`). Exit 1 when that row fails, 0 when it passes.
"""

from __future__ import annotations

import dataclasses
import math
import random
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

from .config import DEFAULTS
from .workloads import catalog, render
from .workloads.chunking import chunk
from .workloads.render import Call
from .workloads.team import MAX_DEPTH, Record, TeamWorkloadError, reference_case, scale_record, write_file
from .workloads.tools import tools_for

__all__ = ["Candidate", "Hunt", "Pace", "hunt", "mutants", "survey", "survey_parts", "structure", "deliver",
           "summary", "worst_characters", "AXES", "LENGTHS", "DEFAULT_BUDGET", "MIN_BUDGET", "SURVEY_DELIVERIES",
           "PATTERNS"]

#: The two lengths (characters) whose counts give a candidate's growth.
LENGTHS = (1024, 4096)
#: Seconds the search may take by default: the whole survey (40 inputs, four batches: 145 s), two rounds of
#: mutants (about 45 s each) and the gate's row on the steepest input (35 s), at the pace measured on a loaded
#: 2-core machine (docs/reference.md, ``callscale hunt``).
DEFAULT_BUDGET = 300.0
#: The smallest budget (seconds): a few inputs of the survey and the gate's row at twice the prior pace
#: (:data:`PRIOR_START`, :data:`PRIOR_PER_INPUT`; :class:`Pace`).
MIN_BUDGET = 90.0
#: Characters of the long value in a seed candidate (and of a structure candidate's pool).
BASE = 768
#: Candidates measured in one callgrind child.
BATCH = 12
#: Parents kept from one round to the next.
PARENTS = 3
#: Seconds one candidate at one length may take under callgrind (more reads as the steepest growth).
CASE_TIMEOUT = 30.0
#: A growth this far below the best still counts as as steep (the simpler candidate wins the tie).
TIE = 0.01
#: The axes an input grows along (module docstring).
AXES = ("value", "calls", "keys", "depth", "items", "between", "tools")
#: The deepest nesting the ``depth`` axis writes: arguments, an array, then this many objects, within
#: :data:`callscale.workloads.team.MAX_DEPTH` (what callscale compares).
DEEPEST = MAX_DEPTH - 3
#: Characters of text per tool offered on the ``tools`` axis.
TOOL_EVERY = 64
#: Recorded delta patterns (sizes in characters, repeated): ``speculative``, accepted draft tokens of a
#: speculative decoder (bursts of 1-8 tokens of about 4 characters); ``flush``, a server that holds single
#: characters back and flushes a long run now and then.
PATTERNS = {"speculative": (4, 4, 19, 4, 11, 4, 4, 27, 4, 8, 32, 4), "flush": (1,) * 24 + (380,)}
#: The deliveries of the survey: alternating sizes, fixed-size bundles of 16..4096 characters, delta sizes,
#: recorded patterns, split points, one delta (one of each kind first: a budget that cuts the survey cuts
#: the second of a kind).
SURVEY_DELIVERIES = ("alternating:1,50", "fixed:256", "tokens:1", "pattern:speculative", "random:0:64", "whole",
                     "fixed:16", "fixed:4096", "alternating:4,400", "fixed:64", "fixed:1024", "pattern:flush")
#: The bidirectional control characters (general category Cf).
BIDI = tuple("\u061c\u200e\u200f") + tuple(chr(c) for c in range(0x202A, 0x202F)) + tuple(
    chr(c) for c in range(0x2066, 0x206A))
#: Words written decomposed (NFD: a letter and its combining marks, category Mn).
DECOMPOSED = tuple(unicodedata.normalize("NFD", w) for w in ("café", "naïve", "Ångström", "über", "résumé",
                                                             "São Paulo", "Zürich", "Kraków", "Tiếng Việt"))


def deliver(text: str, delivery: str, special_tokens: Sequence[str] = (), fmt: str | None = None) -> list[str]:
    """``text`` split into deltas by ``delivery``: ``alternating:A,B,...`` (delta sizes in characters, in turn),
    ``pattern:NAME`` (:data:`PATTERNS`), or any chunking spec (:func:`callscale.workloads.chunking.chunk`).
    Raises ``ValueError`` for anything else."""
    kind, _, arg = delivery.partition(":")
    if kind == "alternating":
        sizes = tuple(int(x) for x in arg.split(","))
    elif kind == "pattern":
        sizes = PATTERNS[arg]
    else:
        return chunk(text, delivery, special_tokens, fmt)
    out, at, k = [], 0, 0
    while at < len(text):
        out.append(text[at:at + sizes[k % len(sizes)]])
        at += sizes[k % len(sizes)]
        k += 1
    return out


@dataclass(frozen=True)
class Candidate:
    """One input: ``content`` and ``calls`` rendered by the format's renderer, the long value at
    ``calls[call][key]`` (``value``), delivered by ``delivery`` (:func:`deliver`), grown along ``axis``
    (on a structure axis ``value`` is the pool its short values are cut from); ``inserted``: characters the
    mutations put in the value (distinct); ``steps``: what was done to it, in words; ``origin``: the kind
    of step that made it (the survey's part, or the mutation), for the report."""

    family: str
    content: str
    calls: tuple[Call, ...]
    call: int
    key: str
    value: str
    delivery: str = "tokens:4"
    inserted: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    axis: str = "value"
    origin: str = "survey: the base input"

    def with_value(self, value: str, step: str, inserted: Sequence[str] = (), origin: str | None = None) -> "Candidate":
        chars = tuple(dict.fromkeys(self.inserted + tuple(inserted)))
        return dataclasses.replace(self, value=value, inserted=chars, steps=self.steps + (step,),
                                   origin=origin or self.origin)

    def record(self, fmt: str) -> Record:
        """The ``value`` input as a record (text and deltas) to grow by repeating its value."""
        r = render.get(fmt)
        calls = list(self.calls)
        target = calls[self.call]
        calls[self.call] = Call(target.name, {**target.arguments, self.key: self.value})
        text = r.render(calls, self.content)
        return Record(text, tuple(deliver(text, self.delivery, r.special_tokens, fmt)), None)

    def case(self, fmt: str, length: int, name: str) -> Any:
        """The input at ``length`` characters as a case of workload ``name`` (expected: what our parser of
        ``fmt`` reads from it). Raises :class:`TeamWorkloadError` when it cannot be made."""
        if self.axis == "value":
            return reference_case(fmt, name, length, scale_record(self.record(fmt), fmt, length))
        r = render.get(fmt)
        text, tools = structure(self.axis, fmt, length, self.value)
        record = Record(text, tuple(deliver(text, self.delivery, r.special_tokens, fmt)), tuple(tools))
        return reference_case(fmt, name, length, record)

    def describe(self) -> str:
        where = self.family if self.axis == "value" else f"{self.axis} axis"
        return f"{where}, {self.delivery}" + "".join(f"; {s}" for s in self.steps)


@dataclass
class Measured:
    candidate: Candidate
    growth: float | None  # exponent between LENGTHS; None when not measured
    counts: tuple[int | None, int | None] = (None, None)
    error: str | None = None


# ------------------------------------------------------------------------------------------ the structure

def _pieces(pool: str) -> list[str]:
    """``pool`` cut into short values (6-20 characters, in turn), blank ones left out."""
    out, at, k = [], 0, 0
    while at < len(pool):
        n = 6 + (k * 7) % 15
        out.append(pool[at:at + n])
        at, k = at + n, k + 1
    return [p for p in out if p.strip()] or ["value"]


def _largest(build: Callable[[int], str], length: int, most: int = 1 << 20) -> int:
    """The largest ``m`` (at least 1) whose ``build(m)`` is at most ``length`` characters."""
    lo, hi = 1, 2
    while hi < most and len(build(hi)) <= length:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if len(build(mid)) <= length:
            lo = mid
        else:
            hi = mid
    return lo


def structure(axis: str, fmt: str, length: int, pool: str) -> tuple[str, list[dict]]:
    """The text (about ``length`` characters, never more but for one element) and the request's tools
    (typed by the calls, :func:`callscale.workloads.tools.tools_for`) of an input grown along ``axis`` (:data:`AXES`, not ``value``), its short values cut from ``pool``.

    ``calls``: ``read_file(path)`` calls; ``keys``: one ``configure`` call with a key per value; ``depth``:
    one call whose ``tree`` nests ``{"name", "note", "child"}`` objects (at most :data:`DEEPEST` deep, then
    more such chains in an array, ``more``); ``items``: one ``tag_items`` call whose ``items`` array holds ``{"id",
    "label"}`` objects; ``between``: ``read_file`` calls each after a sentence of text; ``tools``: a
    ``write_file`` call whose ``content`` is ``pool`` repeated, and a tool offered per :data:`TOOL_EVERY`
    characters. Raises ``KeyError`` for an unknown axis."""
    r = render.get(fmt)
    words = _pieces(pool)
    n = len(words)
    intro = catalog.intro(r, catalog.CALLS_INTRO)

    def calls_of(m: int) -> list[Call]:
        if axis in ("calls", "between"):
            return [Call("read_file", {"path": words[i % n]}) for i in range(m)]
        if axis == "keys":
            return [Call("configure", {f"option_{i}": words[i % n] for i in range(m)})]
        if axis == "items":
            return [Call("tag_items", {"items": [{"id": i, "label": words[i % n]} for i in range(m)]})]
        if axis == "depth":  # chains of `deepest` levels, the first as "tree", the others in "more"
            deepest = min(DEEPEST, (r.max_value_depth or MAX_DEPTH) - 1)  # as deep as the format reads
            trees: list[Any] = []
            for first in range(0, m, deepest):
                tree: Any = words[first % n]
                for i in range(first, min(m, first + deepest)):
                    tree = {"name": words[(2 * i + 1) % n], "note": words[(2 * i + 2) % n], "child": tree}
                trees.append(tree)
            args: dict[str, Any] = {"tree": trees[0]}
            if len(trees) > 1:
                args["more"] = trees[1:]
            return [Call("configure", args)]
        raise KeyError(f"unknown axis {axis!r}; known: {', '.join(AXES)}")

    if axis == "tools":
        head = r.render([Call("write_file", {"path": "notes.txt", "content": ""})], intro)
        content = (pool * (length // max(1, len(pool)) + 1))[:max(1, length - len(head))]
        call = Call("write_file", {"path": "notes.txt", "content": content})
        offered = [Call(f"lookup_{i}", {"query": words[i % n], "limit": i}) for i in range(length // TOOL_EVERY)]
        return r.render([call], intro), tools_for([call]) + tools_for(offered)
    if axis == "between":
        def text_of(m: int) -> str:
            return "".join(r.render([c], (intro + " " if i == 0 else "") + words[(i + 7) % n] + " ")
                           for i, c in enumerate(calls_of(m)))
        m = _largest(text_of, length)
        return text_of(m), tools_for(calls_of(m))
    m = _largest(lambda m: r.render(calls_of(m), intro), length)
    return r.render(calls_of(m), intro), tools_for(calls_of(m))


# ------------------------------------------------------------------------------------------ the classes

@lru_cache(maxsize=1)
def _classes() -> tuple[dict[str, tuple[str, ...]], dict[int, tuple[str, ...]]]:
    """Assigned characters by general category and by 256-code-point range (no surrogates, private use
    or unassigned code points: a detokenizer never gives those)."""
    by_cat: dict[str, list[str]] = {}
    by_range: dict[int, list[str]] = {}
    for cp in range(0x20, 0x110000):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if cat in ("Cn", "Cs", "Co"):
            continue
        by_cat.setdefault(cat, []).append(ch)
        by_range.setdefault(cp >> 8, []).append(ch)
    return ({k: tuple(v) for k, v in sorted(by_cat.items())}, {k: tuple(v) for k, v in sorted(by_range.items())})


def _name(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.category(ch)} {unicodedata.name(ch, '').lower() or '(unnamed)'}"


def _spread(value: str, pieces: Sequence[str], rng: random.Random) -> str:
    """``value`` with ``pieces`` inserted at evenly spread positions (a little jitter), never at its ends."""
    if not pieces:
        return value
    out, last = [], 0
    n = len(pieces)
    for i, piece in enumerate(pieces):
        at = max(1, min(len(value) - 1, (i + 1) * len(value) // (n + 1) + rng.randint(-3, 3)))
        at = max(at, last)
        out.append(value[last:at])
        out.append(piece)
        last = at
    out.append(value[last:])
    return "".join(out)


def _markers(fmt: str) -> list[str]:
    r = render.get(fmt)
    found = list(r.special_tokens) + [r.opener] + list(r.closing_tags)
    try:
        from .workloads import content  # the content kinds, where they exist

        found += list(content.format_markers(fmt))
    except Exception:
        pass
    return [m for m in dict.fromkeys(found) if m]


def _kinds() -> list[str]:
    try:
        from .workloads import content
    except ImportError:
        return []
    return [k for k in content.names() if k != getattr(content, "DEFAULT_KIND", "code")]


def _kind_text(kind: str, n: int, seed: int, fmt: str) -> str:
    from .workloads import content

    return content.text(kind, n, seed, fmt)


# ------------------------------------------------------------------------------------------ candidates

def seeds(fmt: str) -> list[Candidate]:
    """The starting inputs: ``write_file`` and ``literal_closing_tags`` (a long ``content`` value)."""
    out = []
    for workload in ("write_file", "literal_closing_tags"):
        case = catalog.make(workload, fmt, BASE)
        call = case.calls[0]
        out.append(Candidate(workload, case.content, tuple(case.calls), 0, "content", call.arguments["content"]))
    return out


def survey_parts(fmt: str, seed: int = 0) -> list[tuple[str, list[Candidate]]]:
    """The survey, in parts ``(what, candidates)``, in the order they are measured (a budget too small for
    all of it cuts the last parts): the base input (``write_file``, ``tokens:4``); a character of every
    256-code-point range holding an assigned one (128 ranges a candidate) and four of every general category
    (9 categories a candidate); the bidirectional controls (:data:`BIDI`, Cf), combining marks (Mn) and
    decomposed words (:data:`DECOMPOSED`); each structure axis (:data:`AXES`); each delivery of
    :data:`SURVEY_DELIVERIES`; each content kind; fragments of the format's markers; ``literal_closing_tags``."""
    rng = random.Random(f"survey:{seed}")
    base, tags = seeds(fmt)
    by_cat, by_range = _classes()

    def part(origin: str, made: list[Candidate]) -> tuple[str, list[Candidate]]:
        return origin, [dataclasses.replace(c, origin=f"survey: {origin}") for c in made]

    ranges, cats = [], []
    keys = list(by_range)
    for i in range(0, len(keys), 128):  # one character of each of 128 ranges a candidate
        group = keys[i:i + 128]
        chars = [rng.choice(by_range[r]) for r in group]
        ranges.append(base.with_value(_spread(base.value, chars, rng), f"a character of each range "
                                      f"U+{group[0] << 8:04X}..U+{(group[-1] << 8) + 255:04X}", chars))
    names = list(by_cat)
    for i in range(0, len(names), 9):  # 9 categories a candidate, 4 characters of each
        group = names[i:i + 9]
        chars = [rng.choice(by_cat[c]) for c in group for _ in range(4)]
        rng.shuffle(chars)
        cats.append(base.with_value(_spread(base.value, chars, rng), f"characters of {', '.join(group)}", chars))
    marks = [ch for ch in by_cat["Mn"] if ord(ch) < 0x370] + list(rng.sample(by_cat["Mn"], 16))
    special = [
        base.with_value(_spread(base.value, list(BIDI) * 3, rng), "the bidirectional controls (Cf)", BIDI),
        base.with_value(_spread(base.value, [rng.choice("aeiouns") + m for m in marks[::3]], rng),
                        "combining marks (Mn) after letters", marks[::3]),
        base.with_value(_spread(base.value, list(DECOMPOSED) * 3, rng), "decomposed (NFD) words",
                        sorted({ch for w in DECOMPOSED for ch in w if unicodedata.category(ch) == "Mn"})),
    ]
    axes = [dataclasses.replace(base, axis=axis, steps=(f"grown along {axis}",)) for axis in AXES[1:]]
    deliveries = [dataclasses.replace(base, delivery=d) for d in SURVEY_DELIVERIES]
    kinds = [base.with_value(_kind_text(kind, len(base.value), seed, fmt), f"content kind {kind}")
             for kind in _kinds()]
    markers = []
    pieces = [m[:k] for m in _markers(fmt) for k in range(1, len(m) + 1)]
    if pieces:
        short = [m for m in pieces if len(m) <= 12] or pieces
        markers.append(base.with_value(_spread(base.value, rng.sample(short, min(16, len(short))), rng),
                                       "fragments of the format's markers"))
    return [part("the base input", [base]), part("characters of every 256-code-point range", ranges),
            part("characters of every general category", cats),
            part("bidirectional controls, combining marks, decomposed text", special),
            part("structure axes (" + ", ".join(AXES[1:]) + ")", axes),
            part("deliveries (" + ", ".join(SURVEY_DELIVERIES) + ")", deliveries),
            part("content kinds (" + (", ".join(_kinds()) or "none installed") + ")", kinds),
            part("the format's markers", markers), part("literal closing tags", [tags])]


def survey(fmt: str, seed: int = 0) -> list[Candidate]:
    """Every candidate of :func:`survey_parts`, in order."""
    return [c for _, made in survey_parts(fmt, seed) for c in made]


def _deliveries(rng: random.Random) -> str:
    return rng.choice(["tokens:1", "tokens:2", "tokens:8", "tokens:32", "tokens:256", "fixed:1", "fixed:3",
                       f"fixed:{rng.choice((16, 32, 64, 128, 256, 512, 1024, 2048, 4096))}",
                       f"alternating:{rng.choice((1, 2, 4))},{rng.choice((10, 50, 100, 300, 1000))}",
                       f"pattern:{rng.choice(sorted(PATTERNS))}",
                       f"random:{rng.randrange(100)}:{rng.choice((4, 16, 128))}",
                       f"tokens-random:{rng.randrange(100)}:{rng.choice((8, 64))}"])


def mutants(parent: Candidate, fmt: str, rng: random.Random, n: int, ways: int = 2) -> list[Candidate]:
    """``n`` mutants of ``parent`` (see the module docstring); the first split its inserted characters in
    ``ways`` parts (:func:`halves`). Each mutant's ``origin`` names its kind of step (``mutant: ...``)."""
    by_cat, by_range = _classes()
    markers = _markers(fmt)
    kinds = _kinds()
    out: list[Candidate] = []
    if len(parent.inserted) > 1:  # split its inserted characters, each part four times as dense
        out += halves(parent, rng, ways)
    while len(out) < n:
        op = rng.random()
        v = parent.value
        if parent.inserted and op < 0.26:  # more of its own characters: denser
            chars = [rng.choice(parent.inserted) for _ in range(rng.randint(4, 24))]
            out.append(parent.with_value(_spread(v, chars, rng), f"{len(chars)} more of its inserted characters",
                                         origin="mutant: more of its characters"))
        elif op < 0.50:
            cat = rng.choice(list(by_cat))
            chars = [rng.choice(by_cat[cat]) for _ in range(rng.randint(2, 16))]
            out.append(parent.with_value(_spread(v, chars, rng), f"{len(chars)} characters of {cat}", chars,
                                         origin="mutant: characters of a category"))
        elif op < 0.58:
            block = rng.choice(list(by_range))
            chars = [rng.choice(by_range[block]) for _ in range(rng.randint(2, 16))]
            out.append(parent.with_value(_spread(v, chars, rng), f"{len(chars)} characters of "
                                         f"U+{block << 8:04X}..U+{(block << 8) + 255:04X}", chars,
                                         origin="mutant: characters of a range"))
        elif op < 0.65 and markers:
            m = rng.choice(markers)
            pieces = [m[: rng.randint(1, len(m))] for _ in range(rng.randint(1, 8))]
            out.append(parent.with_value(_spread(v, pieces, rng), f"{len(pieces)} fragments of {m!r}",
                                         origin="mutant: marker fragments"))
        elif op < 0.77:
            spec = _deliveries(rng)
            out.append(dataclasses.replace(parent, delivery=spec, steps=parent.steps + (f"delivered {spec}",),
                                           origin="mutant: another delivery"))
        elif op < 0.85:
            axis = rng.choice([a for a in AXES if a != parent.axis])
            out.append(dataclasses.replace(parent, axis=axis, steps=parent.steps + (f"grown along {axis}",),
                                           origin="mutant: another axis"))
        elif op < 0.93 and kinds:
            kind = rng.choice(kinds)
            piece = _kind_text(kind, rng.randint(16, 128), rng.randrange(1000), fmt)
            out.append(parent.with_value(_spread(v, [piece], rng), f"a stretch of content kind {kind}",
                                         origin="mutant: a stretch of a content kind"))
        else:
            a = rng.randrange(len(v))
            b = min(len(v), a + rng.randint(8, 128))
            out.append(parent.with_value(v[:b] + v[a:b] * rng.randint(1, 4) + v[b:], "a slice repeated",
                                         origin="mutant: a slice repeated"))
    return out


def halves(parent: Candidate, rng: random.Random, ways: int = 2) -> list[Candidate]:
    """``parent``'s inserted characters split in ``ways`` parts (two halves by default): in each, the other
    parts' characters removed from the value and four more copies of each kept one spread over it (so
    the class that matters is named in a few rounds, and its growth shows more)."""
    chars = list(parent.inserted)
    ways = max(2, min(ways, len(chars)))
    out = []
    for part in range(ways):
        keep = chars[part * len(chars) // ways:(part + 1) * len(chars) // ways]
        drop = set(chars) - set(keep)
        value = "".join(c for c in parent.value if c not in drop)
        extra = keep * 4
        rng.shuffle(extra)
        c = dataclasses.replace(parent, inserted=tuple(keep))
        out.append(c.with_value(_spread(value, extra, rng), f"kept {len(keep)} of its {len(chars)} inserted "
                                                            "characters, four times as many",
                                origin="mutant: part of its characters"))
    return out

# ------------------------------------------------------------------------------------------ the search

#: The pace assumed before the first batch is measured: a callgrind child's start-up (seconds) and the seconds
#: of one input (its two lengths and its warm-up case), as measured on a loaded 2-core machine.
PRIOR_START = 6.0
PRIOR_PER_INPUT = 3.0
#: How much steeper than the steepest input so far the search expects a batch's best may be, when it keeps time
#: for the gate's row (measured: a batch of mutants took 1.34 to 1.59, and the row took 161 s instead of 60 s).
STEEPER = 0.25
#: Characters one input costs: its two lengths and the warm-up case (:data:`callscale._metered.WARM_LENGTH`).
INPUT_CHARS = sum(LENGTHS) + 1024


@dataclass
class Pace:
    """Seconds a batch of ``k`` inputs takes, ``start + per_input * k``: twice :data:`PRIOR_PER_INPUT` until a
    batch is measured (``cautious``; so a machine slower than the prior's overruns no budget), then the
    larger of the mean and the latest batch's cost per input (:meth:`observe`)."""

    start: float = PRIOR_START
    per_input: float = PRIOR_PER_INPUT
    seen: list[float] = field(default_factory=list)
    cautious: bool = True

    @property
    def rate(self) -> float:
        return self.per_input * (2.0 if self.cautious and not self.seen else 1.0)

    def batch(self, k: int) -> float:
        return self.start + self.rate * k if k else 0.0

    def confirm(self, lengths: Sequence[int], growth: float | None = None) -> float:
        """Seconds of the gate's row at ``lengths`` (the parser's row; the floor's runs beside it) on an input
        whose count grew with exponent ``growth`` between :data:`LENGTHS`: for a linear one, an input's cost
        per character, 0.6 of it in one long row (measured: 35 s for 4k-64k at 3.75 s an input), 10% and 5 s
        kept; a steeper one's counts are projected with the exponent ``2 * growth - 1`` (at most 2: a
        quadratic term's steps steepen with the length; measured: 113 s for 6.7G instructions at 6.6 s an
        input, exponent 1.44), half of the linear row's seconds growing with them."""
        linear = 1.1 * (self.start + 0.6 * self.rate * (sum(lengths) + 1024) / INPUT_CHARS) + 5.0
        if growth is None or growth <= 1.0:
            return linear
        steeper = min(2.0, 2.0 * growth - 1.0)
        ratio = sum((n / LENGTHS[1]) ** steeper for n in lengths) / sum(n / LENGTHS[1] for n in lengths)
        return linear * (1.0 + 0.5 * (ratio - 1.0))

    def observe(self, k: int, seconds: float) -> None:
        self.seen.append(max(0.05, (seconds - self.start) / max(1, k)))
        self.per_input = max(sum(self.seen) / len(self.seen), self.seen[-1])


@dataclass
class Hunt:
    """What a search found: every measured candidate (``measured``), the steepest (``worst``), the
    batches (``rounds``; ``survey_rounds`` of them the survey's), the seconds it took (``seconds``; of which
    ``survey_seconds``, ``mutant_seconds``, ``confirm_seconds``), the survey's size and the parts it cut
    (``cut``: ``(part, inputs not measured)``), and the confirming run (``confirm``: a
    :class:`callscale.matrix.Run` of the worst input at the gate's lengths, or ``None``)."""

    parser: str
    format: str
    measured: list[Measured] = field(default_factory=list)
    rounds: int = 0
    survey_rounds: int = 0
    seconds: float = 0.0
    survey_size: int = 0
    survey_seconds: float = 0.0
    mutant_seconds: float = 0.0
    confirm_seconds: float = 0.0
    cut: list[tuple[str, int]] = field(default_factory=list)
    worst: Measured | None = None
    confirm: Any = None
    confirm_workload: str | None = None
    saved: Path | None = None

    @property
    def failed(self) -> bool:
        return self.confirm is not None and not self.confirm.passed


def _workload(c: Candidate, name: str) -> Callable[..., Any]:
    cases: dict[tuple[str, int], Any] = {}

    def make(fmt: str, length: int, seed: int = 0) -> Any:
        if (fmt, length) not in cases:
            cases[(fmt, length)] = c.case(fmt, length, name)
        return cases[(fmt, length)]

    return make


def _measure(spec_name: str, fmt: str, batch: list[Candidate], folder: Path, number: int,
             timeout: float, jobs: int | None) -> list[Measured]:
    from .instructions import count_parts

    usable: list[Measured] = []
    made: dict[str, Callable[..., Any]] = {}
    index: dict[int, str] = {}
    for i, c in enumerate(batch):
        name = f"hunt_{number:03d}_{i:02d}"
        make = _workload(c, name)
        try:
            for n in LENGTHS:
                make(fmt, n)
        except (TeamWorkloadError, ValueError, KeyError) as exc:
            usable.append(Measured(c, None, error=f"not usable: {' '.join(str(exc).split())}"))
            continue
        made[name] = make
        index[i] = name
        usable.append(Measured(c, None))
    items = [(spec_name, fmt, name, n) for name in made for n in LENGTHS]
    with catalog.registered(made):
        counted = count_parts(items, "tokens:4", 0, timeout, jobs=jobs) if items else {}
    for i, m in enumerate(usable):
        if i not in index:
            continue
        got = [counted.get((spec_name, fmt, index[i], n)) for n in LENGTHS]
        small, large = (g.instructions if g is not None else None for g in got)
        errors = [g.error for g in got if g is not None and g.error]
        m.counts = (small, large)
        if small and large:
            m.growth = math.log(large / small) / math.log(LENGTHS[1] / LENGTHS[0])
        elif small and errors and any("timeout" in e for e in errors):
            m.growth, m.error = 3.0, f"timeout at {LENGTHS[1]}: {errors[0]}"  # steeper than anything counted
        else:
            m.error = errors[0] if errors else "not counted"
    return usable


def _better(a: Measured, b: Measured | None) -> bool:
    if b is None or b.growth is None:
        return a.growth is not None
    if a.growth is None:
        return False
    if a.growth > b.growth + TIE:
        return True
    return abs(a.growth - b.growth) <= TIE and len(a.candidate.inserted) < len(b.candidate.inserted)


def _fits(pace: Pace, k: int, left: float) -> int:
    """The most inputs, at most ``k``, whose batch ends within ``left`` seconds at ``pace``."""
    while k and pace.batch(k) > left:
        k -= 1
    return k


def planned_cut(fmt: str, budget: float, gate_lengths: Sequence[int] = DEFAULTS.instruction_lengths,
                seed: int = 0) -> tuple[int, list[str]]:
    """``(inputs of the survey the budget holds at the prior pace, the parts it cuts)`` (:class:`Pace`)."""
    pace = Pace(cautious=False)
    parts = survey_parts(fmt, seed)
    left = budget - pace.confirm(gate_lengths)
    held = 0
    total = sum(len(made) for _, made in parts)
    while held < total:
        k = _fits(pace, min(BATCH, total - held), left)
        if not k:
            break
        held, left = held + k, left - pace.batch(k)
    cut, seen = [], 0
    for what, made in parts:
        if seen + len(made) > held and made:
            cut.append(what if seen >= held else f"{what} ({seen + len(made) - held} of {len(made)})")
        seen += len(made)
    return held, cut


def hunt(spec: Any, budget: float = DEFAULT_BUDGET, seed: int = 0, save: str | Path | None = None,
         gate_lengths: Sequence[int] = DEFAULTS.instruction_lengths, threshold: float = DEFAULTS.threshold,
         reference_length: int = DEFAULTS.reference_length, projection_factor: float = DEFAULTS.projection_factor,
         jobs: int | None = None,
         say: Callable[[str], None] = lambda line: None, request_factor: float = DEFAULTS.request_factor) -> Hunt:
    """Search for ``spec``'s steepest input within ``budget`` seconds (see the module docstring).

    ``spec``: a :class:`callscale.plugins.ParserSpec` (its name is what the metered child imports);
    ``save``: where to write the steepest input (a ``value`` input as a ``file:`` workload; a structure
    input as one record a gate length); ``gate_lengths`` and the rules: the confirming run's. ``say``:
    called with a line of progress per batch. Raises :class:`callscale.instructions.MeterUnavailable`
    without valgrind.
    """
    start = time.monotonic()
    fmt = spec.format
    rng = random.Random(f"hunt:{seed}")
    result = Hunt(spec.name, fmt)
    pending = survey(fmt, seed)
    result.survey_size = len(pending)
    pace = Pace()
    parents: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="callscale-hunt-") as tmp:
        folder = Path(tmp)
        while True:
            elapsed = time.monotonic() - start
            # the row's time for an input as steep as the steepest so far, plus STEEPER once that one grows faster
            # than a linear parser's per-delta cost makes it (1.1): a batch may find a steeper one
            steepest = result.worst.growth if result.worst is not None and result.worst.growth is not None else None
            left = budget - elapsed - pace.confirm(gate_lengths, steepest + STEEPER if steepest and steepest > 1.1
                                                   else steepest)
            surveying = bool(pending)
            if surveying:
                batch = pending[:BATCH]
            else:
                batch = []
                room = BATCH
                for rank, p in enumerate(parents):  # the steepest split eight ways, the others in halves
                    if room <= 0:
                        break
                    share = room if rank == len(parents) - 1 else max(8 if rank == 0 else 2, room // len(parents))
                    made = mutants(p.candidate, fmt, rng, min(share, room), ways=8 if rank == 0 else 2)[:room]
                    batch += made
                    room -= len(made)
            if not batch:  # the survey spent and no input measured to mutate: nothing left to try
                break
            k = _fits(pace, len(batch), left)
            if k == 0 or (not surveying and k < min(4, len(batch))):
                break
            batch = batch[:k]
            if surveying:
                pending = pending[k:]
            began = time.monotonic()
            timeout = max(5.0, min(CASE_TIMEOUT, left))
            done = _measure(spec.name, fmt, batch, folder, result.rounds, timeout, jobs)
            took = time.monotonic() - began
            pace.observe(len(batch), took)
            result.rounds += 1
            if surveying:
                result.survey_rounds += 1
                result.survey_seconds += took
            else:
                result.mutant_seconds += took
            result.measured += done
            for m in done:
                if _better(m, result.worst):
                    result.worst = m
            if not pending:  # the parents of the next batch's mutants (none while the survey lasts)
                ranked = sorted((m for m in result.measured if m.growth is not None), key=lambda m: -m.growth)
                parents = []
                for m in ranked:  # the steepest few, one an axis-and-first-step, so the parents differ
                    if all((m.candidate.axis, m.candidate.steps[:1]) != (p.candidate.axis, p.candidate.steps[:1])
                           for p in parents):
                        parents.append(m)
                    if len(parents) == PARENTS:
                        break
            if result.worst is not None and result.worst.growth is not None:
                say(f"{'survey' if surveying else 'mutants'} batch {result.rounds}: {len(done)} inputs in "
                    f"{took:.0f} s, steepest so far {4 ** result.worst.growth:.2f}x per 4x (exponent "
                    f"{result.worst.growth:.3f}): {result.worst.candidate.describe()}")
        cut: dict[str, int] = {}
        for c in pending:
            part = c.origin.removeprefix("survey: ")
            cut[part] = cut.get(part, 0) + 1
        result.cut = list(cut.items())
        if result.worst is not None:
            began = time.monotonic()
            _confirm(result, spec, folder, save, budget - (began - start), gate_lengths, threshold,
                     reference_length, projection_factor, jobs, request_factor)
            result.confirm_seconds = time.monotonic() - began
    result.seconds = time.monotonic() - start
    return result


def _confirm(result: Hunt, spec: Any, folder: Path, save: str | Path | None, left: float,
             gate_lengths: Sequence[int], threshold: float, reference_length: int, projection_factor: float,
             jobs: int | None, request_factor: float = DEFAULTS.request_factor) -> None:
    """The gate's row on the steepest input: a ``value`` input as a ``file:`` workload (saved to ``save``),
    a structure input as a workload of its own, grown along its axis at each length."""
    from . import matrix

    c = result.worst.candidate
    growth = result.worst.growth or 1.0  # a steep input's longest length may overrun: it then reads timeout, a FAIL
    fmt = result.format
    path = Path(save) if save is not None else folder / "worst.jsonl"
    made: dict[str, Callable[..., Any]] = {}
    if c.axis == "value":
        write_file(str(path), [c.record(fmt)])
        workload = f"file:{path.resolve()}"
    else:
        workload = f"hunted_{c.axis}"
        made[workload] = _workload(c, workload)
        try:
            cases = [made[workload](fmt, int(n)) for n in gate_lengths]
        except (TeamWorkloadError, ValueError, KeyError) as exc:
            result.worst.error = f"not usable at the gate's lengths: {' '.join(str(exc).split())}"
            return
        write_file(str(path), [Record(x.text, x.recorded, x.tools) for x in cases])
    if save is not None:
        result.saved = path
    result.confirm_workload = workload
    with catalog.registered(made):
        result.confirm = matrix.run([spec], [workload], list(gate_lengths), meter="instructions",
                                    threshold=threshold, reference_length=reference_length,
                                    projection_factor=projection_factor, request_factor=request_factor,
                                    latency=False, memory=False,
                                    progress=False, timeout=max(10.0, left if growth < 1.2 else 0.8 * left), jobs=jobs)


def summary(found: Hunt) -> list[str]:
    """What the search tried and measured, in lines: the survey (inputs, seconds, what it cut), the rounds of
    mutants, the gate's row, then the inputs and steepest exponent per axis and the inputs per kind of step."""
    survey_n = sum(1 for m in found.measured if m.candidate.origin.startswith("survey: "))
    lines = [f"survey: {survey_n} of {found.survey_size} inputs in {found.survey_rounds} batches, "
             f"{found.survey_seconds:.0f} s" + ("; cut for the budget: " + ", ".join(
                 f"{what} ({n})" for what, n in found.cut) if found.cut else "; whole")]
    mutants_n = len(found.measured) - survey_n
    lines.append(f"mutants: {mutants_n} inputs in {found.rounds - found.survey_rounds} batches, "
                 f"{found.mutant_seconds:.0f} s; the gate's row: {found.confirm_seconds:.0f} s")
    by_axis: dict[str, list[Measured]] = {}
    by_origin: dict[str, int] = {}
    for m in found.measured:
        by_axis.setdefault(m.candidate.axis, []).append(m)
        by_origin[m.candidate.origin] = by_origin.get(m.candidate.origin, 0) + 1
    cells = []
    for axis in sorted(by_axis, key=AXES.index):
        grown = [m.growth for m in by_axis[axis] if m.growth is not None]
        cells.append(f"{axis} {len(by_axis[axis])}" + (f" ({max(grown):.3f})" if grown else " (none counted)"))
    lines.append("tried by axis (inputs, steepest exponent): " + ", ".join(cells))
    deliveries: dict[str, int] = {}
    for m in found.measured:
        kind = m.candidate.delivery.partition(":")[0]
        deliveries[kind] = deliveries.get(kind, 0) + 1
    lines.append("tried by step (inputs): " + ", ".join(f"{what} {n}" for what, n in by_origin.items()))
    lines.append("tried by delivery (inputs): " + ", ".join(f"{what} {n}" for what, n in sorted(deliveries.items())))
    return lines


def worst_characters(c: Candidate, limit: int = 16) -> str:
    """The inserted characters of ``c`` in words (code point, category, name), at most ``limit``."""
    if not c.inserted:
        return "none inserted"
    shown = "; ".join(_name(ch) for ch in sorted(c.inserted)[:limit])
    return shown + (f"; ... {len(c.inserted) - limit} more" if len(c.inserted) > limit else "")
