"""Cut a run into parts and put their results back together: shards, ``--changed-since``, merging CSVs.

- :func:`parse_shard` / :func:`shard`: ``--shard I/N`` keeps every N-th
  parser of the selection, starting at the I-th (1-based), in selection
  order; the N shards together hold every parser once. A shard measures the
  ``null`` floor of each format it holds (shards that share a format measure
  the same floor; under the instruction meter the counts are identical, see
  ``docs/exact.md``).
- :func:`merge`: the ``scaling.csv`` files of several shards (``gate --from
  CSV ...``) read back into one :class:`callscale.matrix.Run`, fitted by the
  same rules, so the merged verdict is the verdict of the unsharded run.
- :func:`changed_formats`: which parsers' figures a change can move
  (``--changed-since REF``); the mapping is documented in ``docs/exact.md``.
"""

from __future__ import annotations

import ast
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any, Sequence

__all__ = ["ShardError", "parse_shard", "shard", "merge", "changed_files", "changed_formats"]


class ShardError(ValueError):
    """A shard, a merge or a change set that cannot be used (one-line message)."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N``; raises :class:`ShardError` otherwise."""
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--shard expects I/N (e.g. 2/4), got {text!r}") from None
    if not 1 <= i <= n:
        raise ShardError(f"--shard I/N needs 1 <= I <= N, got {text!r}")
    return i, n


def shard(items: Sequence[Any], which: tuple[int, int]) -> list[Any]:
    """The items of shard ``which = (I, N)``: ``items[I-1::N]`` (round robin, selection order kept)."""
    i, n = which
    return list(items)[i - 1::n]


def merge(paths: Sequence[Path | str], threshold: float, reference_length: float, projection_factor: float,
          request_factor: float | None = None):
    """One :class:`callscale.matrix.Run` from the ``scaling.csv`` of each shard; the rows fitted again
    (and the per-request rule under ``request_factor``, default :data:`callscale.config.DEFAULTS`'s).

    Each file's rows must pass :func:`callscale.compare.check_rows` (a positive finite figure in every
    row without an error, no row twice), and the files must share one meter, chunking and set of lengths
    (else :class:`ShardError`). A parser x workload present in two files is an
    error; the ``null`` floor of a format, measured by every shard holding
    that format, is taken once (the smallest figure where they differ, as the
    time meter's second look does).
    """
    from . import compare
    from . import config
    from .matrix import Run, fit_row, judge_request
    from .measure import NULL, Measurement

    frames = []
    for path in paths:
        try:
            frames.append(compare.load(path))
            compare.check_rows(frames[-1], failed_ok=True)  # the figures every verdict's input passes
        except compare.CompareError as exc:
            raise ShardError(str(exc)) from None
    if not frames:
        raise ShardError("--from needs at least one scaling.csv")
    meters = {str(df["meter"].iloc[0]) for df in frames if len(df)}
    chunkings = {str(c) for df in frames for c in df["chunking"].unique()}
    lengths = {tuple(sorted({int(n) for n in df["length"]})) for df in frames if len(df)}
    for what, found in (("meter", meters), ("chunking", chunkings), ("lengths", lengths)):
        if len(found) > 1:
            raise ShardError(f"the files were measured with different {what}: "
                             f"{', '.join(map(str, sorted(found)))}")
    run = Run(tuple(sorted(lengths.pop())) if lengths else (), (), chunkings.pop() if chunkings else "", 0,
              threshold, meters.pop() if meters else "")
    seen: dict[tuple[str, str], str] = {}
    by_pair: dict[tuple[str, str, str], list[Measurement]] = {}
    workloads: list[str] = []
    for path, df in zip(paths, frames):
        here: set[tuple[str, str]] = set()
        for record in df.to_dict("records"):
            m = Measurement(**{k: _value(record.get(k)) for k in (
                "parser", "format", "workload", "length", "chars", "chunking", "deltas", "repeats", "meter",
                "seconds", "max_increment_ms", "peak_bytes", "error", "tokenizer", "request")})
            m.length, m.chars, m.deltas, m.repeats = int(m.length), int(m.chars), int(m.deltas), int(m.repeats)
            if m.workload not in workloads:
                workloads.append(m.workload)
            run.repeats = max(run.repeats, m.repeats)
            if m.parser == NULL or record.get("floor") in (True, "True", "true"):
                m.parser = NULL
                key = (m.format, m.workload, m.length)
                old = run.floors.get(key)
                if old is None or (m.seconds is not None and (old.seconds is None or m.seconds < old.seconds)):
                    run.floors[key] = m
                continue
            pair = (m.parser, m.workload)
            if pair in seen and seen[pair] != str(path):
                raise ShardError(f"{m.parser} on {m.workload} is in both {seen[pair]} and {path}")
            seen[pair] = str(path)
            here.add(pair)
            by_pair.setdefault((m.parser, m.format, m.workload), []).append(m)
    run.workloads = tuple(workloads)
    run.measurements = list(run.floors.values()) + [m for ms in by_pair.values() for m in ms]
    rules = {"reference_length": reference_length, "projection_factor": projection_factor}
    formats = sorted({f for f, _, _ in run.floors})
    for workload in workloads:
        floor_ms = []
        for length in run.lengths:
            found = [run.floors[(f, workload, length)] for f in formats
                     if (f, workload, length) in run.floors and run.floors[(f, workload, length)].ok]
            if found:
                median = statistics.median_low([m.seconds for m in found])
                floor_ms.append(next(m for m in found if m.seconds == median))
        if floor_ms:
            run.floor_rows.append(fit_row(NULL, None, workload, floor_ms, threshold, floor=True, **rules))
    for (parser, fmt, workload), ms in by_pair.items():
        run.rows.append(judge_request(fit_row(parser, fmt, workload, ms, threshold, **rules), run.floors,
                                      config.DEFAULTS.request_factor if request_factor is None else request_factor))
    return run


def _value(value: Any) -> Any:
    """A CSV cell as the measurement holds it: ``None`` for a missing figure (NaN or empty)."""
    if value is None or value == "":
        return None
    if isinstance(value, float) and value != value:
        return None
    return value


# ----------------------------------------------------------------------- --changed-since
#: The shared parser modules: a change in one moves every parser that imports it (found by reading imports).
PARSERS_DIR = Path(__file__).resolve().parent / "parsers"
RENDER_DIR = Path(__file__).resolve().parent / "workloads" / "render"


def changed_files(ref: str, root: Path | None = None) -> list[str]:
    """Files (paths from the repository root) that differ from ``ref``: committed since, staged, unstaged,
    and untracked. Raises :class:`ShardError` when git cannot tell (not a repository, unknown ref)."""
    root = root or Path(__file__).resolve().parent.parent

    def git(*args: str) -> list[str]:
        try:
            proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ShardError(f"--changed-since: git failed: {exc}") from None
        if proc.returncode != 0:
            raise ShardError(f"--changed-since {ref}: {' '.join(proc.stderr.split()) or 'git failed'}")
        return [line for line in proc.stdout.splitlines() if line.strip()]

    return sorted(set(git("diff", "--name-only", ref, "--") + git("ls-files", "--others", "--exclude-standard")))


def _sibling_imports(path: Path) -> set[str]:
    """Names of the modules of ``path``'s package that ``path`` imports (``from .x import``, ``from . import x``,
    ``import callscale.parsers.x``)."""
    package = f"callscale.{path.parent.name}" if path.parent.name == "parsers" else None
    found: set[str] = set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found.update(alias.name for alias in node.names)
            elif package and node.module and node.module.startswith(package + "."):
                found.add(node.module[len(package) + 1:].split(".")[0])
        elif isinstance(node, ast.Import) and package:
            for alias in node.names:
                if alias.name.startswith(package + "."):
                    found.add(alias.name[len(package) + 1:].split(".")[0])
    return found


def _closure(module: str, graph: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(graph.get(name, ()))
    return seen


def _in_folder(folder: Path, name: str) -> bool:
    """Whether the repository-relative file ``name`` lies in ``folder`` (absolute): a leading part of
    ``name`` is a trailing part of ``folder``."""
    parts, where = Path(name).parts, folder.as_posix()
    return any(where.endswith("/" + "/".join(parts[:k])) for k in range(1, len(parts)))


def plugin_file(factory: Any) -> Path | None:
    """The file of a plug-in factory's module (resolved), without importing it; ``None`` if not found.

    A :class:`callscale.plugins.LazyFactory` names its module in ``target``
    (``module.path:Attribute``): the module is looked for, not imported, as
    ``module/path.py`` or ``module/path/__init__.py`` in each folder of
    ``sys.path`` and the current directory (where the child imports plug-ins
    from). A loaded factory gives its module's ``__file__``.
    """
    import sys

    target = getattr(factory, "target", None) if type(factory).__name__ == "LazyFactory" else None
    if target is None:
        file = getattr(sys.modules.get(getattr(factory, "__module__", "") or ""), "__file__", None)
        return Path(file).resolve() if file else None
    parts = target.partition(":")[0].split(".")
    for folder in dict.fromkeys([os.getcwd()] + [p or os.getcwd() for p in sys.path]):
        for candidate in (Path(folder, *parts[:-1], parts[-1] + ".py"), Path(folder, *parts, "__init__.py")):
            if candidate.is_file():
                return candidate.resolve()
    return None


def changed_formats(files: Sequence[str], specs: Sequence[Any]) -> tuple[list[Any], str]:
    """The parser specs whose figures ``files`` can move, and a one-line account of why.

    The mapping (documented in ``docs/exact.md``): ``callscale/parsers/M.py``
    -> every built-in parser whose module is ``M`` or imports ``M``, directly
    or through another parser module (``base``, ``scanner``, ``jsonscan``,
    ``schema`` reach every format that uses them);
    ``callscale/workloads/render/M.py`` -> the parsers of ``callscale/parsers/M.py``
    (a renderer is named after its parser module); any other file under
    ``callscale/`` (the harness, the workloads, the meters) -> every parser;
    a plug-in (``module:Factory``, loaded or behind a ``LazyFactory``) -> itself when its module's file
    (found by :func:`plugin_file`; for a package, any file in its folder) changed;
    files outside ``callscale/`` (docs, tests, benchmarks) -> none.
    """
    graph = {p.stem: _sibling_imports(p) for p in PARSERS_DIR.glob("*.py")}
    changed_parser_modules: set[str] = set()
    everything = None
    for name in files:
        path = Path(name)
        if path.parts[:2] == ("callscale", "parsers") and path.suffix == ".py":
            changed_parser_modules.add(path.stem)
        elif path.parts[:3] == ("callscale", "workloads", "render") and path.suffix == ".py":
            changed_parser_modules.add(path.stem)
        elif path.parts[:1] == ("callscale",) and path.suffix == ".py":
            everything = everything or name
    if everything is not None:
        return list(specs), f"{everything} is part of the harness: every parser"
    chosen = []
    for spec in specs:
        module = getattr(spec.factory, "__module__", "") or ""
        if getattr(spec, "plugin", False):
            file = plugin_file(spec.factory)
            if file is not None:
                package = file.name == "__init__.py"  # a package: any file in its folder
                for f in files:
                    if file.as_posix().endswith("/" + f) or (package and _in_folder(file.parent, f)):
                        chosen.append(spec)
                        break
            continue
        if module.startswith("callscale.parsers."):
            stem = module.rsplit(".", 1)[1]
            if _closure(stem, graph) & changed_parser_modules:
                chosen.append(spec)
    plugins = [spec.name for spec in chosen if getattr(spec, "plugin", False)]
    modules = ", ".join(sorted(changed_parser_modules) + [f"plug-in {name}" for name in plugins]) \
        or "no parser or renderer module"
    return chosen, f"changed: {modules}; measuring {len(chosen)} of {len(specs)} parsers"
