"""``callscale check --against SPEC``: did a rewrite change what a parser sends? Old versus new, stream by stream.

Two parsers of one format (the new one is ``--parser``, the old one SPEC)
are each run in a child process (:mod:`callscale._against_child`), fed the
very same deltas, and every result is compared: each increment's
``normal_text``, ``reasoning_text`` and call deltas ``(tool_index, name,
parameters)``, then ``finish()`` and a second ``finish()``; a parser that
raises is compared by where and what it raised. Nothing of either parser runs
in the comparing process, so neither can patch the harness.

SPEC, the old side (see :func:`parse_spec`):

- ``REF:TARGET``: ``TARGET`` (a registered name or ``module.path:Class``) as
  it is at the git commit ``REF`` of the repository in the current folder:
  ``git archive REF`` is unpacked into a temporary folder (removed after),
  from which the child imports it;
- ``DIR:TARGET``: from another checkout in the folder ``DIR``;
- ``REF`` or ``DIR`` alone: the ``--parser`` selection there;
- ``TARGET`` alone: another parser of the current checkout.

The corpus (:func:`corpus`), per format: the catalog's workloads (at
``--lengths``, default 1k), the shared fault cases (also under their own
deltas), and ``--outputs`` generated outputs (default 3000) for each seed of
``--seeds`` (default 0,1,2): well-formed outputs with text around one call,
several calls in one block, truncated outputs, and outputs mutated by
inserted or removed characters or special tokens. Each text is streamed under
every chunking of ``--chunkings`` (default :data:`DEFAULT_CHUNKINGS`, five,
none splitting a special token): 45,000 generated streams per parser by
default, as the hand-written comparison of the seed PR ran.

Each differing stream is one :class:`Difference` of a kind (:data:`KINDS`):
what differs at the first result where the two sides part. The report gives
per kind the number of streams and the smallest one (shortest text, then
fewest deltas) with the increment, the delta, both sides' values and how
the assembled outcomes differ (:func:`callscale.check.differences`).
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

__all__ = ["Side", "Item", "Difference", "Result", "KINDS", "DEFAULT_CHUNKINGS", "DEFAULT_OUTPUTS", "DEFAULT_SEEDS",
           "AgainstError", "parse_spec", "corpus", "generate", "compare", "report"]

#: Chunkings each text is streamed under (the first five of ``callscale check``'s).
DEFAULT_CHUNKINGS = ("whole", "tokens:1", "tokens:2", "tokens:3", "tokens:7")
#: Generated outputs per seed.
DEFAULT_OUTPUTS = 3000
DEFAULT_SEEDS = (0, 1, 2)
#: Texts per request to the children.
BATCH = 50

#: The kinds of difference, by what differs at the first result where the two sides part.
KINDS: dict[str, str] = {
    "exception": "one side raised (or raised another exception, or at another increment)",
    "timeout": "a side did not answer within --timeout seconds (its child was stopped)",
    "crash": "a side's child process died (the parser ended the process)",
    "content": "an increment's normal_text differs",
    "reasoning": "an increment's reasoning_text differs",
    "call delta": "an increment's call deltas (tool_index, name, parameters) differ",
    "finish": "finish() (or a second finish()) returns something else",
}


class AgainstError(ValueError):
    """An unusable SPEC or a side that cannot be started (one line)."""


@dataclass
class Side:
    """One parser to compare: ``label`` as shown, ``target`` (registered name or ``module:Class``,
    with an optional engine prefix), the ``folder`` its child runs in (imports first from there)
    and ``temporary`` when :func:`parse_spec` made that folder (removed by :meth:`close`)."""

    label: str
    target: str
    folder: Path
    temporary: bool = False

    def close(self) -> None:
        if self.temporary:
            shutil.rmtree(self.folder, ignore_errors=True)


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=300)


def _is_ref(ref: str) -> bool:
    if not ref or ref.startswith("-"):
        return False
    try:
        return _git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}").returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def materialise(ref: str) -> Path:
    """Unpack the tree of commit ``ref`` (of the repository in the current folder) into a new temporary
    folder, by ``git archive``; returns it, at the repository's top level. Raises :class:`AgainstError`."""
    top = _git("rev-parse", "--show-toplevel")
    prefix = _git("rev-parse", "--show-prefix")
    if top.returncode != 0:
        raise AgainstError(f"--against {ref}: not inside a git repository")
    folder = Path(tempfile.mkdtemp(prefix="callscale-against-"))
    proc = subprocess.run(["git", "archive", "--format=tar", ref], cwd=top.stdout.decode().strip(),
                          capture_output=True, timeout=600)
    if proc.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise AgainstError(f"--against {ref}: git archive failed: {proc.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+
            tar.extractall(folder, filter="data")
        else:
            tar.extractall(folder)
    # the child runs where the user is: the same subfolder of the old tree
    return folder / prefix.stdout.decode().strip()


def parse_spec(spec: str, new_target: str) -> Side:
    """The old side named by ``--against SPEC`` (forms in the module docstring); ``new_target`` is the
    ``--parser`` selection, used when SPEC names only a commit or a folder. A leading part that is a git
    commit wins over a folder of that name. Raises :class:`AgainstError`."""
    head, sep, rest = spec.partition(":")
    if _is_ref(head):
        target = rest or new_target
        return Side(f"{target}@{head}", target, materialise(head), temporary=True)
    if head and Path(head).is_dir() and (rest or not sep):
        target = rest or new_target
        return Side(f"{target}@{head}", target, Path(head).resolve())
    if not spec:
        raise AgainstError("--against needs a commit, a folder or a parser")
    if not _names_a_parser(spec):
        raise AgainstError(f"--against {spec}: no commit of the git repository at {Path.cwd()}, no folder, and no "
                           f"parser of that name (a registered one, see callscale parsers, or module.path:Class)")
    return Side(spec, spec, Path.cwd())


def _names_a_parser(spec: str) -> bool:
    """Whether ``spec`` can name a parser: ``module.path:Class`` (an engine's prefix too), a registered
    name or alias, ``null``, or an installed entry point."""
    from . import parsers, plugins

    return (plugins.is_plugin(spec) or spec in parsers.names() or spec in parsers.ALIASES
            or spec == plugins.NULL or spec in plugins.entry_points())


# ---------------------------------------------------------------------------------------- the corpus
@dataclass
class Item:
    """One text to stream: ``label``, ``text``, ``tools``, the format's ``special_tokens`` (kept whole
    by the ``tokens`` chunkings), for a fault case its ``own_deltas``, and the ``expected`` outcome
    (:class:`callscale.check.Outcome`, compared with ``strip_content`` as ``callscale check`` does) where
    there is one (a fault case, a workload; a generated text has none)."""

    label: str
    text: str
    tools: list = field(default_factory=list)
    special_tokens: tuple[str, ...] = ()
    own_deltas: list[str] | None = None
    expected: Any = None  # the expected outcome (callscale.check.Outcome) where the text has one
    strip_content: bool = True


_WORDS = ("the", "file", "Zürich", "東京", "naïve", "{", "}", "[", "]", '"quoted"', "back\\slash", "<tag>", "</tag>",
          "a,b", ":", "\n", "\n\n", "  ", "\t", "🙂", "null", "true", "42", "-3.5e2", "```json", "```", "'", "&amp;")
_TOOLS = {
    "get_weather": lambda r: {"city": _phrase(r, 1, 3), "unit": r.choice(["celsius", "fahrenheit"])},
    "write_file": lambda r: {"path": f"src/{_phrase(r, 1, 2).replace(' ', '_')}.py", "content": _phrase(r, 0, 40)},
    "run": lambda r: {"cmd": _phrase(r, 1, 6), "timeout": r.randint(0, 600),
                      "flags": [_phrase(r, 1, 1) for _ in range(r.randint(0, 3))]},
    "search": lambda r: {"query": _phrase(r, 1, 8), "limit": r.randint(1, 50), "exact": r.random() < 0.5,
                         "filters": {"lang": r.choice(["en", "de", "ja"]), "score": round(r.random(), 3)}},
}
#: Generated output kinds, each a share of the outputs.
GENERATED_KINDS = ("well-formed", "several calls", "truncated", "characters", "tokens", "content only")


def _phrase(r: random.Random, low: int, high: int) -> str:
    return " ".join(r.choice(_WORDS) for _ in range(r.randint(low, high)))


def _tools() -> list:
    from callscale.workloads import catalog, render

    r = random.Random(0)
    return catalog.tools_for([render.Call(name, make(r)) for name, make in _TOOLS.items()])


def generate(fmt: str, seed: int, count: int) -> list[Item]:
    """``count`` outputs of format ``fmt`` from ``random.Random(seed)``, kinds in turn
    (:data:`GENERATED_KINDS`): one call with text before and after, 2-4 calls in one block, a
    well-formed output cut at a random character, 1-3 characters inserted or removed, a special
    token inserted or removed, and content alone. Labels read ``gen:SEED:I:KIND``."""
    from callscale.workloads import render

    renderer = render.get(fmt)
    tokens = tuple(renderer.special_tokens) or (renderer.opener,)
    tools = _tools()
    r = random.Random(seed)
    items = []
    for i in range(count):
        kind = GENERATED_KINDS[i % len(GENERATED_KINDS)]
        calls = [] if kind == "content only" else [
            render.Call(name, _TOOLS[name](r))
            for name in r.choices(list(_TOOLS), k=r.randint(2, 4) if kind == "several calls" else 1)]
        text = renderer.render(calls, content=_phrase(r, 0, 12))
        if calls and r.random() < 0.3:
            text += _phrase(r, 1, 6)  # text after the calls block
        if kind == "truncated":
            text = text[:r.randint(0, len(text))]
        elif kind == "characters":
            for _ in range(r.randint(1, 3)):
                at = r.randint(0, len(text))
                text = text[:at] + r.choice(_WORDS)[:1] + text[at:] if r.random() < 0.5 else text[:at] + text[at + 1:]
        elif kind == "tokens":
            found = [t for t in tokens if t and t in text]
            if found and r.random() < 0.5:
                token = r.choice(found)
                starts = [j for j in range(len(text)) if text.startswith(token, j)]
                at = r.choice(starts)
                text = text[:at] + text[at + len(token):]
            else:
                at = r.randint(0, len(text))
                text = text[:at] + r.choice(tokens) + text[at:]
        items.append(Item(f"gen:{seed}:{i}:{kind}", text, tools, tuple(renderer.special_tokens)))
    return items


def corpus(fmt: str, outputs: int = DEFAULT_OUTPUTS, seeds: Sequence[int] = DEFAULT_SEEDS,
           workloads: Sequence[str] | None = None, lengths: Sequence[int] = (1024,), faults: bool = True) -> list[Item]:
    """The texts compared for format ``fmt``: the shared fault cases (``faults``), the catalog's
    ``workloads`` (default all) at ``lengths`` (characters, seed 0), then :func:`generate`'s
    ``outputs`` per seed."""
    from callscale.workloads import catalog

    from . import check

    items = []
    checks = (check.fault_items(fmt) if faults else []) + check.workload_items(
        fmt, list(workloads or catalog.names()), list(lengths), 0)
    for c in checks:
        items.append(Item(c.label, c.text, list(c.tools), tuple(c.special_tokens), c.own_deltas, c.expected,
                          c.strip_content))
    for seed in seeds:
        items += generate(fmt, seed, outputs)
    return items


# ---------------------------------------------------------------------------------------- the children
class _Child:
    """One side's child process, restarted after a timeout or a crash."""

    def __init__(self, side: Side, fmt: str) -> None:
        self.side, self.fmt = side, fmt
        self.proc: subprocess.Popen | None = None
        self.log = tempfile.TemporaryFile()

    def start(self) -> None:
        here = str(self.side.folder)
        paths = [here] + ([str(Path(here) / "src")] if (Path(here) / "src").is_dir() else [])
        paths += [p for p in sys.path if p and os.path.abspath(p) != os.getcwd()]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)), PYTHONHASHSEED="0")
        code = f"import runpy; runpy.run_path({str(Path(__file__).with_name('_against_child.py'))!r}, run_name='__main__')"
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=here, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, encoding="utf-8",
                                     errors="surrogatepass")
        answer = self.ask({"op": "init", "target": self.side.target, "format": self.fmt})
        if "error" in answer:
            self.close()
            raise AgainstError(f"{self.side.label}: cannot load the parser: {answer['error']}")

    def ask(self, msg: dict) -> dict:
        """Send one request, wait for its answer; ``{"crash": stderr tail}`` when the child died."""
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(msg, ensure_ascii=False) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError, ValueError):
            line = ""
        if not line:
            self.proc.wait()
            self.log.seek(0)
            tail = " | ".join(self.log.read().decode(errors="replace").strip().splitlines()[-3:])
            return {"crash": f"exit {self.proc.returncode}: {tail}"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Difference:
    """One differing stream: the text's ``label`` and ``text``, the ``chunking``, its number of
    ``deltas``, the ``kind`` (:data:`KINDS`), a ``detail`` sentence and ``agrees``: which side's
    outcome the expected one agrees with (``"old"``, ``"new"``, ``"both"``, ``"neither"``; ``None``: the
    text has no expected outcome, or a side raised, crashed or hung)."""

    label: str
    chunking: str
    text: str
    deltas: int
    kind: str
    detail: str
    agrees: str | None = None


@dataclass
class Result:
    """What :func:`compare` found: ``texts``, ``streams`` run per side, the ``differences``, the
    ``seconds`` it took (wall)."""

    old: str
    new: str
    texts: int = 0
    streams: int = 0
    differences: list[Difference] = field(default_factory=list)
    seconds: float = 0.0

    def by_kind(self) -> dict[str, tuple[int, Difference]]:
        """Per kind found (in :data:`KINDS` order): the number of streams and the smallest one."""
        found: dict[str, tuple[int, Difference]] = {}
        for d in self.differences:
            count, smallest = found.get(d.kind, (0, d))
            if (len(d.text), d.deltas) < (len(smallest.text), smallest.deltas):
                smallest = d
            found[d.kind] = (count + 1, smallest)
        return {k: found[k] for k in KINDS if k in found}


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:]


def _outcome(results: list) -> Any:
    """A side's results (one per increment and finish) assembled into a :class:`callscale.check.Outcome`."""
    from . import check

    items = [{"normal_text": r[0], "reasoning_text": r[1],
              "calls": [{"tool_index": c[0], "name": c[1], "parameters": c[2]} for c in r[2]]}
             for r in results if r and r[0] != "raised"]
    return check.assemble(items, strict=False)


def _kinds(got: Any, want: Any, strip_content: bool = False) -> list[str]:
    from . import check

    try:
        return sorted({d.kind for d in check.differences(got, want, strip_content)})
    except Exception:
        return []


def _first_difference(old: list, new: list, deltas: list[str], item: Item | None = None) -> tuple[str, str, str | None]:
    """``(kind, detail, agrees)`` at the first result where ``old`` and ``new`` part. The detail names
    the sides neutrally: what old gave, what new gave, how the assembled outcomes differ, and, where
    ``item`` has an expected outcome, which side it agrees with (``agrees``: see :class:`Difference`)."""
    n = len(deltas)
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else None
        b = new[i] if i < len(new) else None
        if a == b:
            continue
        where = (f"increment {i} of {n} (delta {_short(deltas[i], 60)})" if i < n
                 else "finish()" if i == n else "the second finish()")
        if (a and a[0] == "raised") or (b and b[0] == "raised"):
            show = lambda r: f"raised {r[1]}" if r and r[0] == "raised" else "returned" if r else "ended"
            return "exception", f"at {where}: old {show(a)}, new {show(b)}", None
        kind = "finish" if i >= n else "content" if a[0] != b[0] else "reasoning" if a[1] != b[1] else "call delta"
        field_ = {"content": 0, "reasoning": 1}.get(kind, 2)
        detail = f"at {where}: old gave {_short(a[field_] if kind != 'finish' else a)}, new gave " \
                 f"{_short(b[field_] if kind != 'finish' else b)}"
        got = {"old": _outcome(old), "new": _outcome(new)}
        kinds = _kinds(got["new"], got["old"])
        detail += f"; outcomes: {'new read against old: ' + ', '.join(kinds) if kinds else 'the same'}"
        agrees = None
        if item is not None and item.expected is not None:
            off = {side: _kinds(got[side], item.expected, item.strip_content) for side in got}
            agrees = ("both" if not off["old"] and not off["new"] else "new" if not off["new"]
                      else "old" if not off["old"] else "neither")
            detail += {"both": "; both agree with the expected outcome",
                       "new": f"; the expected outcome agrees with new (old against it: {', '.join(off['old'])})",
                       "old": f"; the expected outcome agrees with old (new against it: {', '.join(off['new'])})",
                       "neither": f"; neither agrees with the expected outcome (old: {', '.join(off['old'])}; "
                                  f"new: {', '.join(off['new'])})"}[agrees]
        else:
            detail += "; no expected outcome for this text"
        return kind, detail, agrees
    return "content", "the digests differ but the results are equal (a nondeterministic parser?)", None


def compare(old: Side, new: Side, fmt: str, items: Sequence[Item], chunkings: Sequence[str],
            timeout: float = 120.0, progress: bool | None = None) -> Result:
    """Stream every item under every chunking (and a fault case under its own deltas) through both
    sides, each in its own child process, and compare every result (see the module docstring).

    ``timeout``: seconds a side may take for one batch of :data:`BATCH` texts; a side that overruns
    or whose child dies has its child restarted, and the batch's streams count as ``timeout`` or
    ``crash`` differences. Raises :class:`AgainstError` when a side's parser cannot be loaded."""
    from tqdm import tqdm

    from callscale.workloads.chunking import chunk

    started = time.perf_counter()
    result = Result(old.label, new.label)
    children = {"old": _Child(old, fmt), "new": _Child(new, fmt)}
    try:
        for child in children.values():
            child.start()
        pool = ThreadPoolExecutor(max_workers=2)
        bar = tqdm(total=len(items), unit="text", leave=False, dynamic_ncols=True,
                   disable=None if progress is None else not progress)
        for start in range(0, len(items), BATCH):
            batch = items[start:start + BATCH]
            streams = []  # per item: [(chunking label, deltas)]
            for item in batch:
                splits = [(spec, chunk(item.text, spec, item.special_tokens)) for spec in chunkings]
                if item.own_deltas is not None:
                    splits.append(("own deltas", list(item.own_deltas)))
                streams.append(splits)
            msg = {"op": "digests", "jobs": [[item.tools, [d for _, d in splits]] for item, splits in zip(batch, streams)]}
            futures = {name: pool.submit(child.ask, msg) for name, child in children.items()}
            answers = {}
            for name, future in futures.items():
                try:
                    answers[name] = future.result(timeout=timeout)
                except FutureTimeout:
                    children[name].close()  # unblocks the reading thread
                    future.result()
                    answers[name] = {"timeout": f"{name} side took more than {timeout:g} s for texts "
                                                f"{batch[0].label} .. {batch[-1].label}"}
            result.texts += len(batch)
            result.streams += sum(len(s) for s in streams)
            broken = {name: a for name, a in answers.items() if "results" not in a}
            if broken:
                for name, answer in broken.items():
                    kind = "timeout" if "timeout" in answer else "crash"
                    for item, splits in zip(batch, streams):
                        for spec, deltas in splits:
                            result.differences.append(Difference(item.label, spec, item.text, len(deltas), kind,
                                                                 f"{name} side: {answer.get(kind, answer)}"))
                    children[name].close()
                    children[name].start()
                bar.update(len(batch))
                continue
            for i, (item, splits) in enumerate(zip(batch, streams)):
                for j, (spec, deltas) in enumerate(splits):
                    if answers["old"]["results"][i][j] != answers["new"]["results"][i][j]:
                        full = {name: child.ask({"op": "full", "job": [item.tools, [deltas]]})
                                for name, child in children.items()}
                        if all("results" in f for f in full.values()):
                            kind, detail, agrees = _first_difference(full["old"]["results"][0],
                                                                     full["new"]["results"][0], deltas, item)
                        else:
                            kind, agrees = "crash", None
                            detail = "; ".join(f"{n} side: {f.get('crash')}" for n, f in full.items()
                                                              if "results" not in f)
                            for name in [n for n, f in full.items() if "results" not in f]:
                                children[name].close()
                                children[name].start()
                        result.differences.append(Difference(item.label, spec, item.text, len(deltas), kind, detail,
                                                             agrees))
            bar.update(len(batch))
        bar.close()
        pool.shutdown(wait=False)
    finally:
        for child in children.values():
            child.close()
    result.seconds = time.perf_counter() - started
    return result


def report(result: Result, chunkings: Sequence[str], show: int = 20) -> list[str]:
    """The printed report: one line per differing stream (at most ``show``), per kind the count and
    the smallest case, and the summary (texts, streams per side, wall seconds)."""
    lines = []
    for d in result.differences[:show]:
        lines.append(f"DIFF {d.label} under {d.chunking}: {d.kind}: {d.detail}")
    if len(result.differences) > show:
        lines.append(f"... {len(result.differences) - show} more differing streams (--show N prints more)")
    kinds = result.by_kind()
    if kinds:
        lines.append("")
        lines.append("by kind, with the smallest differing case (text and chunking):")
    for kind, (count, d) in kinds.items():
        text = d.text if len(d.text) <= 300 else d.text[:150] + " ... " + d.text[-150:]
        sides = {}
        for other in result.differences:
            if other.kind == kind and other.agrees is not None:
                sides[other.agrees] = sides.get(other.agrees, 0) + 1
        judged = "" if not sides else " (the expected outcome agrees with " + ", ".join(
            f"{side} in {sides[side]}" for side in ("new", "old", "both", "neither") if side in sides) + ")"
        lines.append(f"{kind}: {count} differing stream{'s' if count != 1 else ''}{judged}; smallest: {d.label} "
                     f"under {d.chunking} ({len(d.text)} characters, {d.deltas} deltas): {text!r}; {d.detail}")
    lines.append("")
    verdict = "0 differences" if not result.differences else f"{len(result.differences)} differing streams"
    lines.append(f"compared {result.new} (new) against {result.old} (old): {result.texts} texts, {result.streams} "
                 f"streams per parser under {len(chunkings)} chunkings (+ the fault cases' own deltas), every "
                 f"increment and finish(): {verdict}; {result.seconds:.0f} s")
    return lines


# ---------------------------------------------------------------------------------------- the command
def add_arguments(p) -> None:
    """``callscale check``'s options of the old-versus-new comparison."""
    p.add_argument("--against", metavar="SPEC",
                   help="compare --parser (new) with SPEC (old), stream by stream, in child processes: "
                        "REF:TARGET (TARGET at a git commit), DIR:TARGET (another checkout), REF or DIR alone "
                        "(the --parser there), or another parser; see docs/workflows.md")
    p.add_argument("--outputs", type=int, default=DEFAULT_OUTPUTS, metavar="N",
                   help=f"with --against: generated outputs per seed (default {DEFAULT_OUTPUTS})")
    p.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)), metavar="LIST",
                   help="with --against: seeds of the generated outputs, comma-separated (default 0,1,2)")


def run(p, args, lengths: Sequence[int], chunkings: Sequence[str] | None, workloads: Sequence[str],
        timeout: float, formats: dict[str, str | None] | None = None) -> int:
    """``callscale check --parser NEW --against SPEC``: print the report; 0 when nothing differs, 1
    otherwise; ``p.error`` (exit 2) for unusable options or a side whose parser cannot be loaded.
    ``formats``: the ``--workload-format`` the command line pairs with each ``--parser`` name
    (:func:`callscale.commands.options.paired_formats`; a name missing: none given)."""
    from . import plugins
    from .adapters import known_format

    names = [n.strip() for value in args.parser or () for n in value.split(",") if n.strip()]
    if len(names) != 1:
        p.error("--against compares one parser: name it with --parser (the new one)")
    new_target = names[0]
    from .adapters import runs_elsewhere

    for target in (new_target, args.against):
        if runs_elsewhere(target):
            p.error(f"--against {args.against}: {runs_elsewhere(target)}, not as a parser object these "
                    f"children can drive increment by increment; check it alone with callscale check --parser "
                    f"{target}")
    if plugins.takes_format(new_target):
        fmt = (formats or {}).get(new_target) or known_format(new_target)
    else:
        fmt = new_target
    try:
        fmt = plugins.known_workload_format(fmt, new_target)
    except plugins.PluginError as exc:
        p.error(str(exc))
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        p.error(f"--seeds: expected whole numbers, comma-separated, got {args.seeds!r}")
    if args.outputs < 0 or (args.outputs and not seeds):
        p.error("--outputs must be >= 0, with at least one seed")
    try:
        old = parse_spec(args.against, new_target)
    except AgainstError as exc:
        p.error(str(exc))
    new = Side(new_target, new_target, Path.cwd())
    chunkings = list(chunkings or DEFAULT_CHUNKINGS)
    try:
        items = corpus(fmt, args.outputs, seeds, workloads, lengths, faults=not args.no_faults)
        try:
            result = compare(old, new, fmt, items, chunkings, timeout, args.progress)
        except AgainstError as exc:
            p.error(str(exc))
    finally:
        old.close()
    for line in report(result, chunkings, args.show):
        print(line)
    return 1 if result.differences else 0
