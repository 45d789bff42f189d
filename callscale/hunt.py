"""``callscale hunt``: search for the input that makes a parser's cost grow fastest.

A hill-climb over model outputs in the parser's format, with the growth exponent itself as the fitness
(PerfFuzz, Lemieux et al., ISSTA 2018, and SlowFuzz, Petsios et al., CCS 2017, maximise a cost; here the
cost's growth with length is maximised). An input is a record (:class:`callscale.workloads.team.Record`:
text and deltas) rendered by the format's renderer from a workload's calls with one long value, and
measured as a ``file:`` workload is (:mod:`callscale.workloads.team`): its longest value grown to
:data:`LENGTHS` (1k and 4k characters) by repeating its own text, so whatever it holds appears in
proportion to the length. Fitness: ``log(count at 4k / count at 1k) / log(4)`` from exact instruction
counts (callgrind, :mod:`callscale.instructions`): deterministic, so one measurement of a candidate is its
value and a hill-climb is sound.

The mutations (:func:`mutants`):

- the value's content: each content kind of :mod:`callscale.workloads.content` (where it exists);
- characters from every Unicode general category and from every 256-code-point range that holds an
  assigned character (a first survey covers them all, several classes a candidate), then more of a
  candidate's own inserted characters (denser), or half of them (to name the class that matters);
- fragments of the format's markers (its special tokens, opener and closing tags, and every prefix);
- the delivery: delta sizes (``tokens:K``, ``fixed:K``) and split points (``random:SEED:MAX``);
- a slice of the value repeated.

Each round measures a batch of candidates in one callgrind child; the best few are the parents of the
next. The search stops when the next batch would end past ``budget`` less the time kept for the last
step (so the whole run ends within the budget plus about one measurement); the last step measures the
steepest input found, as a ``file:`` workload, at the gate's instruction lengths with the gate's rules
(:func:`callscale.matrix.run`). Exit 1 when that row fails, 0 when it passes.
"""

from __future__ import annotations

import argparse
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

from .workloads import catalog, render
from .workloads.chunking import chunk
from .workloads.render import Call
from .workloads.team import Record, TeamWorkloadError, scale_record, write_file

__all__ = ["Candidate", "Hunt", "hunt", "mutants", "survey", "LENGTHS", "DEFAULT_BUDGET"]

#: The two lengths (characters) whose counts give a candidate's growth.
LENGTHS = (1024, 4096)
#: Seconds the search may take by default.
DEFAULT_BUDGET = 180.0
#: Characters of the long value in a seed candidate.
BASE = 768
#: Candidates measured in one callgrind child.
BATCH = 12
#: Parents kept from one round to the next.
PARENTS = 3
#: Seconds one candidate at one length may take under callgrind (more reads as the steepest growth).
CASE_TIMEOUT = 30.0
#: A growth this far below the best still counts as as steep (the simpler candidate wins the tie).
TIE = 0.01


@dataclass(frozen=True)
class Candidate:
    """One input: ``content`` and ``calls`` rendered by the format's renderer, the long value at
    ``calls[call][key]`` (``value``), delivered by the chunking ``delivery``; ``inserted``: characters
    the mutations put in the value (distinct); ``steps``: what was done to it, in words."""

    family: str
    content: str
    calls: tuple[Call, ...]
    call: int
    key: str
    value: str
    delivery: str = "tokens:4"
    inserted: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()

    def with_value(self, value: str, step: str, inserted: Sequence[str] = ()) -> "Candidate":
        chars = tuple(dict.fromkeys(self.inserted + tuple(inserted)))
        return dataclasses.replace(self, value=value, inserted=chars, steps=self.steps + (step,))

    def record(self, fmt: str) -> Record:
        r = render.get(fmt)
        calls = list(self.calls)
        target = calls[self.call]
        calls[self.call] = Call(target.name, {**target.arguments, self.key: self.value})
        text = r.render(calls, self.content)
        deltas = tuple(chunk(text, self.delivery, r.special_tokens, fmt))
        return Record(text, deltas, None)

    def describe(self) -> str:
        return f"{self.family}, {self.delivery}" + "".join(f"; {s}" for s in self.steps)


@dataclass
class Measured:
    candidate: Candidate
    growth: float | None  # exponent between LENGTHS; None when not measured
    counts: tuple[int | None, int | None] = (None, None)
    error: str | None = None


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


def survey(fmt: str, seed: int = 0) -> list[Candidate]:
    """The first round: every content kind, every Unicode category and 256-code-point range (a character of
    each, several classes a candidate: 9 categories, 128 ranges), the format's markers, and five deliveries, on ``write_file``."""
    rng = random.Random(f"survey:{seed}")
    base, tags = seeds(fmt)
    kinds = [base.with_value(_kind_text(kind, len(base.value), seed, fmt), f"content kind {kind}")
             for kind in _kinds()]
    out: list[Candidate] = []
    by_cat, by_range = _classes()
    cats = list(by_cat)
    for i in range(0, len(cats), 9):  # 9 categories a candidate, 4 characters of each
        group = cats[i:i + 9]
        chars = [rng.choice(by_cat[c]) for c in group for _ in range(4)]
        rng.shuffle(chars)
        out.append(base.with_value(_spread(base.value, chars, rng), f"characters of {', '.join(group)}", chars))
    ranges = list(by_range)
    per = 128
    for i in range(0, len(ranges), per):  # one character of each of 128 ranges a candidate
        group = ranges[i:i + per]
        chars = [rng.choice(by_range[r]) for r in group]
        out.append(base.with_value(_spread(base.value, chars, rng),
                                   f"a character of each range U+{group[0] << 8:04X}..U+{(group[-1] << 8) + 255:04X}",
                                   chars))
    markers = _markers(fmt)
    pieces = [m[:k] for m in markers for k in range(1, len(m) + 1)]
    if pieces:
        short = [m for m in pieces if len(m) <= 12] or pieces
        out.append(base.with_value(_spread(base.value, rng.sample(short, min(16, len(short))), rng),
                                   "fragments of the format's markers"))
    deliveries = [dataclasses.replace(base, delivery=d) for d in ("tokens:1", "tokens:64", "fixed:7", "random:0:64",
                                                                 "whole")]
    # the most classes a candidate first: a first round cut short by the budget still covers every character
    return [base, *out[len(cats[::9]):], *out[:len(cats[::9])], *kinds, *deliveries, tags]


def mutants(parent: Candidate, fmt: str, rng: random.Random, n: int, ways: int = 2) -> list[Candidate]:
    """``n`` mutants of ``parent`` (see the module docstring); the first split its inserted characters in
    ``ways`` parts (:func:`halves`)."""
    by_cat, by_range = _classes()
    markers = _markers(fmt)
    kinds = _kinds()
    out: list[Candidate] = []
    if len(parent.inserted) > 1:  # split its inserted characters, each part four times as dense
        out += halves(parent, rng, ways)
    while len(out) < n:
        op = rng.random()
        v = parent.value
        if parent.inserted and op < 0.30:  # more of its own characters: denser
            chars = [rng.choice(parent.inserted) for _ in range(rng.randint(4, 24))]
            out.append(parent.with_value(_spread(v, chars, rng), f"{len(chars)} more of its inserted characters"))
        elif op < 0.62:
            cat = rng.choice(list(by_cat))
            chars = [rng.choice(by_cat[cat]) for _ in range(rng.randint(2, 16))]
            out.append(parent.with_value(_spread(v, chars, rng), f"{len(chars)} characters of {cat}", chars))
        elif op < 0.72:
            block = rng.choice(list(by_range))
            chars = [rng.choice(by_range[block]) for _ in range(rng.randint(2, 16))]
            out.append(parent.with_value(_spread(v, chars, rng), f"{len(chars)} characters of "
                                         f"U+{block << 8:04X}..U+{(block << 8) + 255:04X}", chars))
        elif op < 0.80 and markers:
            m = rng.choice(markers)
            pieces = [m[: rng.randint(1, len(m))] for _ in range(rng.randint(1, 8))]
            out.append(parent.with_value(_spread(v, pieces, rng), f"{len(pieces)} fragments of {m!r}"))
        elif op < 0.88:
            spec = rng.choice(["tokens:1", "tokens:2", "tokens:8", "tokens:32", "tokens:256", "fixed:1",
                               "fixed:3", f"random:{rng.randrange(100)}:{rng.choice((4, 16, 128))}",
                               f"tokens-random:{rng.randrange(100)}:{rng.choice((8, 64))}"])
            out.append(dataclasses.replace(parent, delivery=spec, steps=parent.steps + (f"delivered {spec}",)))
        elif op < 0.94 and kinds:
            kind = rng.choice(kinds)
            piece = _kind_text(kind, rng.randint(16, 128), rng.randrange(1000), fmt)
            out.append(parent.with_value(_spread(v, [piece], rng), f"a stretch of content kind {kind}"))
        else:
            a = rng.randrange(len(v))
            b = min(len(v), a + rng.randint(8, 128))
            out.append(parent.with_value(v[:b] + v[a:b] * rng.randint(1, 4) + v[b:], "a slice repeated"))
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
                                                            "characters, four times as many"))
    return out


# ------------------------------------------------------------------------------------------ the search

@dataclass
class Hunt:
    """What a search found: every measured candidate (``measured``), the steepest (``worst``), the
    rounds, the seconds it took, and the confirming run (``confirm``: a :class:`callscale.matrix.Run`
    of the worst input at the gate's lengths, or ``None``)."""

    parser: str
    format: str
    measured: list[Measured] = field(default_factory=list)
    rounds: int = 0
    seconds: float = 0.0
    worst: Measured | None = None
    confirm: Any = None
    saved: Path | None = None

    @property
    def failed(self) -> bool:
        return self.confirm is not None and not self.confirm.passed


def _measure(spec_name: str, fmt: str, batch: list[Candidate], folder: Path, number: int,
             timeout: float, jobs: int | None) -> list[Measured]:
    from .instructions import count_parts

    path = folder / f"round{number:03d}.jsonl"
    records, usable = [], []
    for c in batch:
        try:
            record = c.record(fmt)
            scale_record(record, fmt, LENGTHS[0])  # the value can be found and grown
        except (TeamWorkloadError, ValueError, KeyError) as exc:
            usable.append(Measured(c, None, error=f"not usable: {exc}"))
            continue
        records.append(record)
        usable.append(Measured(c, None))
    write_file(str(path), records)
    items, k = [], 0
    index: dict[int, str] = {}
    for i, m in enumerate(usable):
        if m.error is None:
            k += 1
            index[i] = f"file:{path}#{k}"
            items += [(spec_name, fmt, index[i], n) for n in LENGTHS]
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


def hunt(spec: Any, budget: float = DEFAULT_BUDGET, seed: int = 0, save: str | Path | None = None,
         gate_lengths: Sequence[int] = (4096, 16384, 65536), threshold: float = 1.3,
         reference_length: int = 256 * 1024, projection_factor: float = 3.0, jobs: int | None = None,
         say: Callable[[str], None] = lambda line: None) -> Hunt:
    """Search for ``spec``'s steepest input within ``budget`` seconds (see the module docstring).

    ``spec``: a :class:`callscale.plugins.ParserSpec` (its name is what the metered child imports);
    ``save``: where to write the steepest input as a ``file:`` workload; ``gate_lengths`` and the rules:
    the confirming run's. ``say``: called with a line of progress per round. Raises
    :class:`callscale.instructions.MeterUnavailable` without valgrind.
    """
    from . import matrix

    start = time.monotonic()
    fmt = spec.format
    rng = random.Random(f"hunt:{seed}")
    result = Hunt(spec.name, fmt)
    reserve = min(60.0, max(10.0, budget / 4))  # kept for the confirming run
    pending = survey(fmt, seed)
    slowest = 0.0
    parents: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="callscale-hunt-") as tmp:
        folder = Path(tmp)
        while True:
            elapsed = time.monotonic() - start
            if result.rounds and elapsed + slowest > budget - reserve:
                break
            batch, pending = pending[:BATCH], pending[BATCH:]
            room = BATCH - len(batch)
            for rank, p in enumerate(parents):  # the steepest split eight ways, the others in halves
                if room <= 0:
                    break
                share = room if rank == len(parents) - 1 else max(8 if rank == 0 else 2, room // len(parents))
                made = mutants(p.candidate, fmt, rng, min(share, room), ways=8 if rank == 0 else 2)[:room]
                batch += made
                room -= len(made)
            if not batch:  # the survey spent and no input measured to mutate: nothing left to try
                break
            began = time.monotonic()
            timeout = max(5.0, min(CASE_TIMEOUT, budget - elapsed))
            done = _measure(spec.name, fmt, batch, folder, result.rounds, timeout, jobs)
            slowest = max(slowest, time.monotonic() - began)
            result.rounds += 1
            result.measured += done
            for m in done:
                if _better(m, result.worst):
                    result.worst = m
            ranked = sorted((m for m in result.measured if m.growth is not None), key=lambda m: -m.growth)
            parents = []
            for m in ranked:  # the steepest few, one a family-and-step, so the parents differ
                if all(m.candidate.steps[:1] != p.candidate.steps[:1] for p in parents):
                    parents.append(m)
                if len(parents) == PARENTS:
                    break
            if result.worst is not None and result.worst.growth is not None:
                say(f"round {result.rounds}: {len(done)} inputs, steepest so far {4 ** result.worst.growth:.2f}x "
                    f"per 4x (exponent {result.worst.growth:.3f}): {result.worst.candidate.describe()}")
        worst = result.worst
        if worst is not None:
            record = worst.candidate.record(fmt)
            path = Path(save) if save is not None else folder / "worst.jsonl"
            write_file(str(path), [record])
            if save is not None:
                result.saved = path
            timeout = max(10.0, budget - (time.monotonic() - start))  # a length that overruns it: timeout
            result.confirm = matrix.run([spec], [f"file:{path.resolve()}"], list(gate_lengths), meter="instructions",
                                        threshold=threshold, reference_length=reference_length,
                                        projection_factor=projection_factor, latency=False, memory=False,
                                        progress=False, timeout=timeout, jobs=jobs)
    result.seconds = time.monotonic() - start
    return result


def worst_characters(c: Candidate, limit: int = 16) -> str:
    """The inserted characters of ``c`` in words (code point, category, name), at most ``limit``."""
    if not c.inserted:
        return "none inserted"
    shown = "; ".join(_name(ch) for ch in sorted(c.inserted)[:limit])
    return shown + (f"; ... {len(c.inserted) - limit} more" if len(c.inserted) > limit else "")


# ------------------------------------------------------------------------------------------ the command

def add_arguments(p: Any) -> None:
    """``callscale hunt``'s options."""
    from .cli import _jobs, add_parser_options, add_verdict_rules

    add_parser_options(p, null=False)
    for action in p._actions:
        if action.dest == "parser":
            action.help = "the parser to hunt on: a registered parser or module.path:ClassOrFactory (with --workload-format)"
    p.add_argument("--budget", type=_budget, default=None, metavar="SECONDS",
                   help=f"seconds the search may take; it stops within the budget plus one measurement "
                        f"(default {DEFAULT_BUDGET:g})")
    p.add_argument("--save", metavar="PATH",
                   help="write the steepest input found as a file: workload (JSON lines) that gate and scale take")
    p.add_argument("--seed", type=int, default=0, help="seed of the search's choices (default 0)")
    p.add_argument("--lengths", metavar="SIZES",
                   help="the confirming run's lengths (default: instruction_lengths of [tool.callscale], 4k,16k,64k)")
    p.add_argument("--threshold", type=_threshold, metavar="X", help="largest step exponent that passes")
    add_verdict_rules(p)
    p.add_argument("--jobs", type=_jobs, metavar="N", help="callgrind children at once, 1-64 or auto")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a line per round on stderr (default: on; --no-progress: only the result)")


def _budget(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 86400 seconds, got {text}")
    return value


def _threshold(text: str) -> float:
    from .cli import _setting

    return _setting("threshold")(text)


def run(p: Any, args: Any) -> int:
    """``callscale hunt``: exit 1 when the steepest input found fails the gate's rules, 0 when not, 2 on a bad
    option."""
    import sys

    from . import config, report
    from .cli import _memory_limit, _settings, _specs, _split, _timeout, _verdict_rules
    from .instructions import MeterUnavailable, check_available

    settings = _settings(p)
    names = _split(args.parser)
    if len(names) != 1:
        p.error("name one parser: --parser NAME (a registered parser or module.path:ClassOrFactory with "
                "--workload-format)")
    try:
        check_available()
    except MeterUnavailable as exc:
        p.error(str(exc))
    try:
        lengths = (config.check_lengths(args.lengths, "instructions", "--lengths") if args.lengths is not None
                   else config.check_lengths(settings.instruction_lengths, "instructions",
                                             "the lengths of [tool.callscale]"))
    except config.ConfigError as exc:
        p.error(str(exc))
    reference, factor = _verdict_rules(p, args, settings)
    try:
        config.check_rules(lengths, reference, factor)
    except config.ConfigError as exc:
        p.error(str(exc))
    if args.save is not None:
        try:
            report.check_writable(Path(args.save).resolve().parent)
        except OSError as exc:
            p.error(f"--save: {exc}")
    spec = _specs(p, names, args, null=False, timeout=_timeout(args, settings),
                  memory_limit=_memory_limit(args, settings))[0]
    if spec.broken is not None:
        p.error(f"--parser {spec.name}: {spec.broken}")
    from .adapters import smg

    if smg.is_gateway(spec.factory):
        p.error(f"--parser {spec.name}: the hunt's deliveries (tokens:K, fixed:K, ...) are not the one DeepSeek token "
                f"a delta SMG's router gives its parsers; count them with callscale gate --meter instructions "
                f"--parser {spec.name} --workload W@KIND")
    budget = args.budget if args.budget is not None else DEFAULT_BUDGET
    threshold = args.threshold if args.threshold is not None else settings.threshold
    def say(line: str) -> None:  # a line per round, unless --no-progress
        if args.progress is not False:
            print(f"hunt: {line}", file=sys.stderr, flush=True)

    found = hunt(spec, budget, args.seed, args.save, lengths, threshold, reference, factor,
                 args.jobs if args.jobs is not None else settings.jobs, say)
    counted = [m for m in found.measured if m.growth is not None]
    families = sorted({m.candidate.steps[0].split(" of ")[0] if m.candidate.steps else m.candidate.family
                       for m in found.measured})
    print(f"hunted {spec.name} ({found.format}) for {found.seconds:.0f} s of a {budget:g} s budget: "
          f"{len(found.measured)} inputs in {found.rounds} rounds ({len(counted)} counted at "
          f"{LENGTHS[0]} and {LENGTHS[1]} characters)")
    print("tried: content kinds (" + (", ".join(_kinds()) or "none installed") + "), characters of every Unicode "
          f"category ({len(_classes()[0])}) and of every 256-code-point range holding one ({len(_classes()[1])}), "
          "fragments of the format's markers, deliveries (tokens:K, fixed:K, random and token-random splits, "
          "whole), repeated slices")
    failed = [m for m in found.measured if m.growth is None]
    if failed:
        print(f"not counted: {len(failed)} inputs (first: {failed[0].candidate.describe()}: "
              f"{' '.join(str(failed[0].error).split())[:300]})")
    worst = found.worst
    if worst is None or found.confirm is None:
        print("no input could be measured")
        return 1
    print(f"steepest input: {worst.candidate.describe()}")
    print(f"  growth {LENGTHS[0]} -> {LENGTHS[1]} characters: x{4 ** worst.growth:.2f} per 4x (exponent "
          f"{worst.growth:.3f}; instructions {worst.counts[0]} -> {worst.counts[1]})")
    print(f"  inserted characters: {worst_characters(worst.candidate)}")
    print("the gate's row for it (--meter instructions):")
    for line in report.table(found.confirm).splitlines():
        print("  " + line)
    for line in report.gate_lines(found.confirm):
        print(line)
    if found.saved is not None:
        print(f"wrote {found.saved} (as a workload: --workload file:{found.saved})")
    if found.failed:
        print(f"hunt: found an input on which {spec.name} fails the gate's rules")
        return 1
    print(f"hunt: no input found on which {spec.name} fails the gate's rules")
    return 0
