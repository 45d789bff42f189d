"""A team's own workloads: ``module:function`` generators and ``file:PATH`` recorded model outputs.

Every command that takes ``--workload NAME`` (scale, gate, check, profile, ``callscale init``'s asv
suite, ``callscale.testing``) also takes:

- ``module.path:function``: a generator ``function(format, length, seed)`` (the current directory
  importable) returning the model output as text, a record (a dict as in a file, below), or a whole
  :class:`~callscale.workloads.case.Case` (used as it is);
- ``file:PATH``: recorded model outputs, one JSON object a line: ``{"text": ..., "deltas": [...],
  "tools": [...]}`` (``deltas`` and ``tools`` optional; ``deltas`` must join to ``text``), as an
  engine logs them. A file of one line is the workload ``file:PATH``; a file of several lines is the
  workloads ``file:PATH#1`` .. ``file:PATH#N`` (:func:`expand`; ``file:PATH#K`` names one).

A recorded text is scaled to each length (:func:`scale_record`) by growing its longest value (the
longest string among the calls' arguments, or the content when it is longer) with text of the same
kind: the value's own text as written in the output (escapes and all) repeated, and cut where no
escape is split, so the characters, escapes and line structure of the grown value are those the model
wrote. A record with deltas is streamed in those deltas, scaled the same way (the cuts inside the
value repeat with it), whatever ``--chunking`` says; ``check`` also splits its text under every
chunking and streams the recorded deltas as the case's own.

The expected result of a text that is not a whole ``Case`` is what the format's reference parser
(ours, :func:`callscale.parsers.get`) reads from it in one delta, so ``wrong output`` works: a parser
under test that reads it otherwise fails.

Errors: :class:`TeamWorkloadError` (a ``KeyError``), one line, for a spec that cannot be used.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .case import Case
from .render import Call
from .tools import MAX_DEPTH

__all__ = ["TeamCase", "TeamWorkloadError", "Record", "is_team", "workload", "expand", "load_file",
           "scale_record", "reference_case", "generate", "validate", "write_file", "FILE_PREFIX", "MAX_GROWTH",
           "GENERATOR_TIMEOUT", "MAX_DEPTH", "MAX_FILE_BYTES", "depth"]

FILE_PREFIX = "file:"


class TeamWorkloadError(KeyError):
    """A team workload spec that cannot be used; ``str()`` is the one-line reason."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class TeamCase(Case):
    """A :class:`Case` of a team workload: ``recorded`` holds the record's own deltas (scaled), streamed
    whatever the chunking; ``well_formed`` is ``False`` where the reference parser left a call unfinished
    (a cut output: a parser may abandon it)."""

    recorded: tuple[str, ...] | None = None
    well_formed: bool = True

    def deltas(self, chunking: Any = None) -> list[str]:
        """The recorded deltas when the record has them, else the text split by ``chunking``."""
        if self.recorded is not None:
            return list(self.recorded)
        return super().deltas(chunking) if chunking is not None else super().deltas()


@dataclass(frozen=True)
class Record:
    """One recorded output: ``text``, its ``deltas`` (or ``None``) and ``tools`` (or ``None``)."""

    text: str
    deltas: tuple[str, ...] | None = None
    tools: tuple[dict, ...] | None = None


def is_team(name: Any) -> bool:
    """Whether ``name`` is a team workload spec (``file:PATH`` or ``module:function``).

    A built-in workload with a delivery (``write_file+parts:16``) is not one: its
    ``:`` follows the ``+``.
    """
    return isinstance(name, str) and (name.startswith("file:") or ":" in name.partition("+")[0])


# ---------------------------------------------------------------------------------------------- records

def _record(value: Any, where: str) -> Record:
    if not isinstance(value, dict):
        raise TeamWorkloadError(f"{where}: a record is a JSON object with a \"text\" string, got {type(value).__name__}")
    text = value.get("text")
    if not isinstance(text, str) or not text:
        raise TeamWorkloadError(f"{where}: \"text\" must be a non-empty string")
    deltas = value.get("deltas")
    if deltas is not None:
        if not isinstance(deltas, list) or not all(isinstance(d, str) for d in deltas):
            raise TeamWorkloadError(f"{where}: \"deltas\" must be a list of strings")
        if "".join(deltas) != text:
            raise TeamWorkloadError(f"{where}: \"deltas\" do not join to \"text\"")
        deltas = tuple(d for d in deltas if d)
    tools = value.get("tools")
    if tools is not None:
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise TeamWorkloadError(f"{where}: \"tools\" must be a list of objects (OpenAI tool form)")
        tools = tuple(tools)
    return Record(text, deltas, tools)


@functools.lru_cache(maxsize=64)
def _load(path: str, mtime: float) -> tuple[Record, ...]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\r") for line in f.read().split("\n")]  # not splitlines: U+2028 is text
    except UnicodeDecodeError as exc:
        raise TeamWorkloadError(f"file:{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise TeamWorkloadError(f"file:{path}: cannot read it: {exc.strerror or exc}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise TeamWorkloadError(f"file:{path} line {number}: not JSON ({exc})") from None
        except RecursionError:
            raise TeamWorkloadError(f"file:{path} line {number}: nested deeper than a record may be "
                                    f"({depth(line)} deep; arguments up to {MAX_DEPTH})") from None
        records.append(_record(value, f"file:{path} line {number}"))
    if not records:
        raise TeamWorkloadError(f"file:{path}: no record (one JSON object a line, each with a \"text\")")
    return tuple(records)


def _split_file(name: str) -> tuple[str, int | None]:
    path = name[len(FILE_PREFIX):]
    number = None
    head, sep, tail = path.rpartition("#")
    if sep and tail.isdigit():
        path, number = head, int(tail)
    if not path:
        raise TeamWorkloadError(f"workload {name!r}: name the file, file:PATH")
    return os.path.abspath(os.path.expanduser(path)), number


#: The largest ``file:`` workload read (bytes): recorded outputs of a model, not a corpus.
MAX_FILE_BYTES = 64 * 1024 * 1024

# MAX_DEPTH (tools.py): the deepest nesting of a call's arguments a team workload may hold; deeper outputs
# are refused with one line.


def depth(text: str) -> int:
    """How deep the JSON ``text`` nests (objects and arrays; brackets inside strings not counted), read
    in one pass without recursion; ``0`` for a scalar."""
    deepest = level = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            level += 1
            deepest = max(deepest, level)
        elif ch in "]}":
            level -= 1
    return deepest


def load_file(path: str) -> tuple[Record, ...]:
    """The records of a JSON-lines file (cached while the file is unchanged); :class:`TeamWorkloadError`
    (also for a file over :data:`MAX_FILE_BYTES`)."""
    path = os.path.abspath(os.path.expanduser(path))
    try:
        info = os.stat(path)
    except OSError as exc:
        raise TeamWorkloadError(f"file:{path}: cannot read it: {exc.strerror or exc}") from None
    if info.st_size > MAX_FILE_BYTES:
        raise TeamWorkloadError(f"file:{path}: {info.st_size} bytes, more than the {MAX_FILE_BYTES} a file of "
                                "recorded outputs may hold")
    return _load(path, info.st_mtime)


def expand(name: str) -> list[str]:
    """The workload names a spec stands for: ``file:PATH`` with an absolute path (one record), or
    ``file:PATH#1`` .. ``#N`` (several); a ``module:function`` spec as it is. Loads the file or imports
    the function, so a bad spec raises :class:`TeamWorkloadError` here."""
    if name.startswith(FILE_PREFIX):
        path, number = _split_file(name)
        records = load_file(path)
        if number is not None:
            if not 1 <= number <= len(records):
                raise TeamWorkloadError(f"workload {name!r}: the file holds {len(records)} record(s)")
            return [f"{FILE_PREFIX}{path}#{number}"]
        if len(records) == 1:
            return [f"{FILE_PREFIX}{path}"]
        return [f"{FILE_PREFIX}{path}#{n}" for n in range(1, len(records) + 1)]
    _split_generator(name)  # imported and called only in its own child (:func:`generate`)
    return [name]


def _split_generator(name: str) -> tuple[str, str]:
    """``"module.path:function"`` -> its two parts; :class:`TeamWorkloadError` when it is not of that form."""
    module, _, attr = name.partition(":")
    if not module or not attr:
        raise TeamWorkloadError(f"workload {name!r}: expected module.path:function or file:PATH")
    return module, attr


def _generator(name: str) -> Callable[..., Any]:
    """The generator function of ``name``, imported in this process: only the generator's own child
    (:func:`_serve`) calls this; the harness never imports a generator's module."""
    module, attr = _split_generator(name)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        mod = importlib.import_module(module)
    except Exception as exc:
        raise TeamWorkloadError(f"workload {name!r}: cannot import {module}: {type(exc).__name__}: "
                                f"{' '.join(str(exc).split())}") from None
    fn: Any = mod
    for part in attr.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise TeamWorkloadError(f"workload {name!r}: {module} has no attribute {attr}")
    if not callable(fn):
        raise TeamWorkloadError(f"workload {name!r}: {attr} is not a function (format, length, seed) -> text")
    return fn


# ---------------------------------------------------------------------------------------------- scaling

def _reference(fmt: str, text: str, tools: Sequence[dict] | None) -> tuple[Any, list[dict]]:
    """What our parser of ``fmt`` reads from ``text`` in one delta, and the tools used (given, or typed by
    the calls read: a schema-typed format reads values by the tools). The last few are kept (the
    instruction meter's child makes each case under callgrind, where a parse costs fifty times more)."""
    key = json.dumps(tools, sort_keys=True) if tools is not None else None
    return _reference_cached(fmt, text, key)


@functools.lru_cache(maxsize=32)
def _reference_cached(fmt: str, text: str, key: str | None) -> tuple[Any, list[dict]]:
    tools = json.loads(key) if key is not None else None
    from callscale import parsers
    from callscale.outcome import stream

    from .tools import tools_for

    factory = parsers.get(fmt)
    if tools is None:
        first = stream(factory(), [text], [], strict=False)
        _shallow(first)
        tools = tools_for([Call(n, a) for n, a in first.complete_calls() if n])
    read = stream(factory(), [text], list(tools), strict=False)
    _shallow(read)
    return read, list(tools)


def _shallow(outcome: Any) -> None:
    """Refuse an output whose calls' arguments nest deeper than :data:`MAX_DEPTH` (one line)."""
    deepest = max((depth(c.arguments_text) for c in outcome.calls), default=0)
    if deepest > MAX_DEPTH:
        raise TeamWorkloadError(f"the calls' arguments nest {deepest} deep, more than the {MAX_DEPTH} callscale "
                                "compares")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _span(fmt: str, record: Record) -> tuple[int, int, list[dict]]:
    """``(start, end, tools)`` of the longest value as written in the record's text (see the module
    docstring); ``tools``: the record's, or those typed by the calls our parser reads."""
    outcome, tools = _reference(fmt, record.text, record.tools)
    values = [s for _, args in outcome.complete_calls() for s in _strings(args)] + [outcome.content.strip()]
    for value in sorted((v for v in values if v), key=len, reverse=True):
        written = [value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1], repr(value)[1:-1]]
        found = [(record.text.find(w), len(w)) for w in dict.fromkeys(written) if w]
        found = [(at, n) for at, n in found if at >= 0]
        if found:
            at, n = max(found, key=lambda f: f[1])
            return at, at + n, tools
    raise TeamWorkloadError(f"the {fmt} parser reads no value of this record that is written in its text "
                            "as it is, JSON-escaped or Python-escaped: nothing to grow")


def _safe_cut(text: str, at: int) -> int:
    """A cut at or a little before ``at`` that splits no escape (``\\x``, ``\\uXXXX``, ``&name;``)."""
    for cut in range(at, max(0, at - 16), -1):
        before = text[max(0, cut - 6):cut]
        amp = before.rfind("&")
        if "\\" not in before and (amp < 0 or ";" in before[amp:]) and not "\ud800" <= text[cut - 1:cut] <= "\udbff":
            return cut
    return at


def scale_record(record: Record, fmt: str, length: int) -> Record:
    """``record`` with its longest value grown (or cut) so its text is about ``length`` characters, and the
    tools of the record (or, without them, those typed by the calls our parser reads from the recorded text,
    so every length has the same tool list).

    Raises :class:`TeamWorkloadError` when nothing can be grown or the text around the value is longer
    than ``length``.
    """
    start, end, tools = _span(fmt, record)
    value = record.text[start:end]
    around = len(record.text) - len(value)
    want = length - around
    if want < 1:
        raise TeamWorkloadError(f"the text around its longest value is {around} characters, more than the "
                                f"length {length}: record a shorter output or measure longer lengths")
    grown = value * math.ceil(want / len(value))
    grown = grown[:_safe_cut(grown, want)] or value[:1]
    text = record.text[:start] + grown + record.text[end:]
    deltas = None
    if record.deltas is not None:
        cuts, at = [], 0
        for d in record.deltas:
            at += len(d)
            cuts.append(at)
        new: list[int] = [c for c in cuts if c <= start]
        inside = [c - start for c in cuts if start < c < end]
        for copy in range(0, len(grown), len(value)):
            new += [start + copy + c for c in [0] + inside if 0 < copy + c < len(grown)]
        new += [c - end + start + len(grown) for c in cuts if c >= end]
        bounds = sorted(set(c for c in new if 0 < c <= len(text)) | {len(text)})
        deltas, prev = [], 0
        for c in bounds:
            deltas.append(text[prev:c])
            prev = c
        deltas = tuple(d for d in deltas if d)
    return Record(text, deltas, tuple(tools))


def reference_case(fmt: str, workload: str, length: int, record: Record, seed: int = 0) -> TeamCase:
    """A :class:`TeamCase` of ``record``'s text, expected: what our ``fmt`` parser reads from it."""
    from . import render

    if len(record.text) > MAX_GROWTH * length:
        raise TeamWorkloadError(f"{len(record.text)} characters for {length} (more than {MAX_GROWTH}x the length "
                                "asked)")
    outcome, tools = _reference(fmt, record.text, record.tools)
    calls = tuple(Call(n or "", a) for n, a in outcome.complete_calls())
    return TeamCase(format=fmt, workload=workload, length=length, text=record.text, tools=tuple(tools),
                    content=outcome.content, calls=calls, special_tokens=tuple(render.get(fmt).special_tokens),
                    seed=seed, recorded=record.deltas, well_formed=len(calls) == len(outcome.calls))


def workload(name: str) -> Callable[[str, int, int], Case]:
    """The workload function ``(fmt, length, seed) -> Case`` of a team spec (see the module docstring)."""
    if name.startswith(FILE_PREFIX):
        path, number = _split_file(name)
        records = load_file(path)
        if number is None and len(records) > 1:
            raise TeamWorkloadError(f"workload {name!r}: the file holds {len(records)} records: name one as "
                                    f"{name}#1 .. #{len(records)}")
        if number is not None and not 1 <= number <= len(records):
            raise TeamWorkloadError(f"workload {name!r}: the file holds {len(records)} record(s)")
        mtime = os.stat(path).st_mtime

        def from_file(fmt: str, length: int, seed: int = 0) -> Case:
            return _scaled_case(fmt, name, length, seed, path, number or 1, mtime)

        return from_file
    _split_generator(name)

    def generated(fmt: str, length: int, seed: int = 0) -> Case:
        return generate(name, fmt, length, seed)

    return generated


# ---------------------------------------------------------------------------------------------- generators
#: How many times the asked length a generator's output may be (characters); a longer one is an error.
MAX_GROWTH = 4

#: Seconds a generator's child may take to import the generator and return one output, unless
#: :func:`validate` was given the run's ``--timeout``.
GENERATOR_TIMEOUT = 120.0

_timeout = GENERATOR_TIMEOUT


@functools.lru_cache(maxsize=256)
def generate(name: str, fmt: str, length: int, seed: int = 0) -> Case:
    """The case of the generator ``name`` (``module.path:function``) in ``fmt`` at ``length``.

    The generator runs in a child process of its own (``python -c`` calling :func:`_serve`, a new
    session, standard input closed, its output captured, never shown), so the harness never imports
    its module and nothing it does there reaches the run: a ``sys.exit``, a hang (stopped after the
    run's ``--timeout``, :data:`GENERATOR_TIMEOUT` by default, the child's process group killed), a
    crash, printing, patching callscale's modules. Its answer comes back as JSON data (text, a record,
    or a ``Case``'s fields). Raises :class:`TeamWorkloadError` (one line) for each of those, and for an
    output longer than :data:`MAX_GROWTH` times ``length`` characters.
    """
    import signal
    import subprocess
    import tempfile

    where = f"workload {name!r} on {fmt} at {length}"
    with tempfile.TemporaryDirectory(prefix="callscale-generator-") as folder:
        answer = os.path.join(folder, "answer.json")
        request = json.dumps({"name": name, "format": fmt, "length": length, "seed": seed, "answer": answer,
                              "path": [p or os.getcwd() for p in sys.path]})
        code = "import sys; from callscale.workloads.team import _serve; _serve(sys.argv[1])"
        proc = subprocess.Popen([sys.executable, "-c", code, request], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=os.getcwd())
        try:
            said, _ = proc.communicate(timeout=_timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.communicate()
            raise TeamWorkloadError(f"{where}: the generator did not return within {_timeout:g} s (--timeout)") \
                from None
        try:
            with open(answer, encoding="utf-8") as fh:
                kind, value = json.load(fh)
        except (OSError, ValueError):
            last = " ".join((said or b"").decode("utf-8", "replace").split()[-30:])
            how = f"exit status {proc.returncode}" if proc.returncode >= 0 else f"signal {-proc.returncode}"
            raise TeamWorkloadError(f"{where}: the generator's process ended ({how}) without returning an "
                                    f"output" + (f" (it printed: {last[-200:]})" if last else "")) from None
    if kind == "error":
        raise TeamWorkloadError(f"{where}: {value}")
    if kind == "raised":
        raise TeamWorkloadError(f"workload {name!r} raised on {fmt} at {length}: {value}")
    if kind == "case":
        value["calls"] = tuple(Call(n, a) for n, a in value["calls"])
        value["tools"] = tuple(value["tools"])
        value["special_tokens"] = tuple(value["special_tokens"])
        return Case(**{**value, "workload": name})
    try:
        return reference_case(fmt, name, length, _record(value, where), seed)
    except TeamWorkloadError as exc:
        raise TeamWorkloadError(f"{where}: {exc}") if not str(exc).startswith(where) else exc from None


def _serve(request: str) -> None:
    """The generator's child (:func:`generate`): import it, call it once, check its output, write the
    answer ``[kind, value]`` (``"text"``: a record dict; ``"case"``: a ``Case``'s fields; ``"error"``:
    the one-line reason) to the request's ``answer`` file."""
    spec = json.loads(request)
    for folder in reversed(spec["path"]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    length = int(spec["length"])

    def answer(kind: str, value: Any) -> None:
        with open(spec["answer"], "w", encoding="utf-8") as fh:
            json.dump([kind, value], fh, ensure_ascii=False)

    try:
        fn = _generator(spec["name"])
        out = fn(spec["format"], length, int(spec["seed"]))
    except SystemExit as exc:
        return answer("error", f"the generator called sys.exit({exc.code!r})")
    except TeamWorkloadError as exc:
        return answer("error", str(exc).partition(": ")[2] or str(exc))
    except BaseException as exc:
        return answer("raised", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    if isinstance(out, Case):
        value = {f.name: getattr(out, f.name) for f in dataclasses.fields(Case)}
        value["calls"] = [[c.name, c.arguments] for c in out.calls]
        kind, text = "case", out.text
    elif isinstance(out, str):
        kind, value, text = "text", {"text": out}, out
    elif isinstance(out, dict):
        kind, value, text = "text", out, out.get("text")
    else:
        kind, value, text = "text", out, None  # _record says why it is none
    if isinstance(text, str) and len(text) > MAX_GROWTH * length:
        return answer("error", f"the generator returned {len(text)} characters for {length} (more than "
                               f"{MAX_GROWTH}x the length asked)")
    try:
        answer(kind, value)
    except (TypeError, ValueError, RecursionError) as exc:
        answer("error", f"the generator's output is not JSON data: {type(exc).__name__}: {exc}")
    except BaseException:
        answer("error", f"the generator's output could not be sent (not JSON data: {type(value).__name__})")


@functools.lru_cache(maxsize=256)
def _scaled_case(fmt: str, name: str, length: int, seed: int, path: str, number: int, mtime: float) -> TeamCase:
    record = _load(path, mtime)[number - 1]
    try:
        return reference_case(fmt, name, length, scale_record(record, fmt, length), seed)
    except TeamWorkloadError as exc:
        raise TeamWorkloadError(f"workload {name!r} in {fmt} at {length}: {exc}") from None


def validate(names: Sequence[str], formats: Sequence[str], lengths: Sequence[int], seed: int = 0,
             timeout: float | None = None, plugins: Sequence[str] = ()) -> None:
    """Make each team workload of ``names`` in each format at the shortest and longest length, so a spec
    that cannot be used fails before measuring; raises :class:`TeamWorkloadError` (one line).
    ``timeout``: seconds a generator may take for one output in this process from now on (the run's
    ``--timeout``). ``plugins``: the modules of the ``module:Factory`` parsers under test; a generator
    in one of them is refused (making its cases would import the parser's module into the harness)."""
    global _timeout
    if timeout is not None:
        _timeout = float(timeout) if timeout > 0 else GENERATOR_TIMEOUT
    for name in names:
        if not is_team(name):
            continue
        if not name.startswith(FILE_PREFIX):
            module = _split_generator(name)[0]
            if any(module == m or module.startswith(m + ".") or m.startswith(module + ".") for m in plugins):
                raise TeamWorkloadError(f"workload {name!r}: the generator lives in the module of the parser under "
                                        f"test ({module}); put it in a module of its own, which imports no parser")
        for fmt in dict.fromkeys(f for f in formats if f):
            for length in sorted({min(lengths), max(lengths)}):
                try:
                    workload(name)(fmt, int(length), seed)
                except TeamWorkloadError:
                    raise
                except (KeyError, ValueError, TypeError) as exc:
                    raise TeamWorkloadError(f"workload {name!r} in {fmt} at {length}: "
                                            f"{' '.join(str(exc).split())}") from None


def write_file(path: str, records: Sequence[Record]) -> None:
    """Write ``records`` as a ``file:`` workload (one JSON object a line)."""
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            line: dict[str, Any] = {"text": r.text}
            if r.deltas is not None:
                line["deltas"] = list(r.deltas)
            if r.tools is not None:
                line["tools"] = list(r.tools)
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
