"""Flame graphs of one parser streaming one workload, sampled by py-spy.

``callscale profile`` runs the case in a child Python process (streaming it
through fresh parsers again and again for a few seconds, so the parser's
own frames dominate) under ``py-spy record`` and writes a flame graph (SVG)
or a speedscope profile (JSON). Frames are by function (py-spy's
``--function``). The flame graph is drawn from py-spy's collapsed stacks by
:func:`callscale.flamediff.svg`: it starts at the streaming loop, the parser's
frames under it on the first screen, the start-up, imports and building of the
case folded into one grey frame; its title names the parser, workload, length
and chunking.

Errors: :class:`ProfilerUnavailable` when py-spy is missing or cannot attach
(ptrace not permitted); the message is one line that says how to fix it.
:class:`CaseFailed` when the parser raised on the case (no profile is kept)
or did not finish it within the child's watchdog (``2 * seconds + 5`` seconds
of the child's CPU time, or ten times that in wall seconds, see
:func:`callscale._child._watchdog`; the profile of where it was is kept).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["ProfilerUnavailable", "CaseFailed", "default_output", "profile", "FORMATS", "find_py_spy", "worktree",
           "BadRevision"]

#: py-spy output formats and the file suffix each is written with.
FORMATS = {"flamegraph": ".svg", "speedscope": ".speedscope.json", "raw": ".folded"}


class ProfilerUnavailable(RuntimeError):
    """py-spy cannot profile here; the message says how to fix it."""


class CaseFailed(RuntimeError):
    """The parser raised on the case, or did not finish it in time (the message says which)."""


def find_py_spy() -> str | None:
    """``py-spy`` on ``PATH``, else next to ``sys.executable`` (a virtualenv's bin/ that is not on PATH)."""
    found = shutil.which("py-spy")
    if found is None:
        beside = Path(sys.executable).parent / "py-spy"
        if beside.is_file() and os.access(beside, os.X_OK):
            found = str(beside)
    return found


def default_output(parser: str, workload: str, length: int, fmt: str = "flamegraph", root: Path | str = "results") -> Path:
    """``results/flame/<parser>-<workload>-<length>.svg`` (or ``.speedscope.json``)."""
    safe = parser.replace(":", "-").replace("/", "-")
    if ":" in workload:  # a team's own workload (module:function, file:PATH): its last name
        workload = workload.replace("#", "-").rstrip("/").rsplit("/", 1)[-1].replace(":", "-")
    return Path(root) / "flame" / f"{safe}-{workload}-{length}{FORMATS[fmt]}"


def profile(
    parser: str,
    workload: str,
    length: int,
    *,
    fmt: str | None = None,
    chunking: str = "tokens:4",
    output_format: str = "flamegraph",
    output: Path | str | None = None,
    seconds: float = 3.0,
    rate: int = 250,
    timeout: float | None = None,
    cwd: Path | str | None = None,
) -> Path:
    """Sample the streaming of one case with py-spy; return the written file's path.

    ``parser``: registered name or ``module.path:Factory``; ``fmt``: the
    format to render for it (``None``: its own name). ``length`` in
    characters, ``seconds`` of streaming to sample, ``rate`` samples a
    second; ``timeout``: wall seconds the whole py-spy run may take
    (``None``: no limit besides the child's own watchdog). Raises
    :class:`ProfilerUnavailable` (py-spy missing or not permitted to attach),
    :class:`CaseFailed` (the parser raised or hung) or ``RuntimeError``
    (py-spy or the child failed otherwise). ``cwd``: the folder the child runs in (first on its import
    path: a git worktree of another commit profiles that commit's modules; see :func:`worktree`).
    ``output_format`` ``raw``: collapsed stacks (:mod:`callscale.flamediff` reads them).
    """
    if output_format not in FORMATS:
        raise ValueError(f"unknown profile format {output_format!r}; known: {', '.join(FORMATS)}")
    pyspy = find_py_spy()
    if pyspy is None:
        raise ProfilerUnavailable("py-spy is not installed (a dependency of callscale: installed with --no-deps?): "
                                  "run `python -m pip install py-spy`")
    out = Path(output) if output is not None else default_output(parser, workload, length, output_format)
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    spec = {
        "kind": "profile", "parser": parser, "format": fmt, "workload": workload,
        "length": int(length), "chunking": chunking, "seconds": seconds,
    }
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # a flame graph: py-spy's collapsed stacks, drawn by flamediff (from the streaming loop on)
    sampled = out.with_name(f".{out.name}.folded") if output_format == "flamegraph" else out
    cmd = [
        pyspy, "record", "--format", "raw" if output_format == "flamegraph" else output_format,
        "--output", str(sampled), "--rate", str(rate),
        "--function", "--nonblocking", "--", sys.executable, "-m", "callscale._child", json.dumps(spec),
    ]
    try:
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            raise CaseFailed(f"py-spy and the case took more than --timeout {timeout:g} s; stopped") from None
        return _finish(proc, out, sampled, parser, workload, length, chunking)
    finally:
        if sampled != out:
            sampled.unlink(missing_ok=True)


def _finish(proc: subprocess.CompletedProcess, out: Path, sampled: Path, parser: str, workload: str, length: int,
            chunking: str) -> Path:
    """What py-spy's run left: the case's failure raised, or the flame graph drawn from ``sampled`` (when it
    is not ``out`` itself); returns ``out``."""
    from ._child import HUNG, RAISED

    text = proc.stdout + proc.stderr
    for line in text.splitlines():
        if line.startswith(RAISED):
            out.unlink(missing_ok=True)
            raise CaseFailed(f"{parser} raised on {workload} at {length} characters: {line[len(RAISED):]}")
        if line.startswith(HUNG):
            _draw(sampled, out, f"{parser} on {workload}, {length} characters ({chunking}), stopped unfinished")
            kept = f"; the samples so far are in {out}" if out.exists() else ""
            raise CaseFailed(f"{parser} did not finish {workload} at {length} characters within "
                             f"{line[len(HUNG):]} (a hang?){kept}")
    if proc.returncode != 0 or not sampled.exists():
        lowered = text.lower()
        if "permission denied" in lowered or "operation not permitted" in lowered or "ptrace" in lowered:
            raise ProfilerUnavailable(
                "py-spy cannot attach (ptrace not permitted): run as root, or set "
                "kernel.yama.ptrace_scope=0, or give the container CAP_SYS_PTRACE"
            )
        lines = [line for line in text.splitlines() if line.strip()]
        raise RuntimeError(f"py-spy failed (exit {proc.returncode}): {lines[-1] if lines else 'no output'}")
    _draw(sampled, out, f"{parser} on {workload}, {length} characters ({chunking})")
    return out


def _draw(sampled: Path, out: Path, what: str) -> None:
    """Draw the flame graph of the collapsed stacks ``sampled`` at ``out``, titled ``what``
    (:func:`callscale.flamediff.svg`, no base); nothing when ``sampled`` is ``out`` (raw, speedscope) or holds
    no stack."""
    from . import flamediff

    if sampled == out or not sampled.exists():
        return
    try:
        stacks = flamediff.read(sampled, keep_lines=True)  # by function: a frame's line is its function's first
    except ValueError:
        return
    flamediff.svg(None, stacks, out, f"{what}: frames by function, py-spy samples")


class BadRevision(ValueError):
    """``--against REV`` names no commit of the working directory's git repository (one-line message)."""


@contextlib.contextmanager
def worktree(rev: str, repo: Path | str = "."):
    """A detached git worktree of ``rev`` of the repository at ``repo``, in a temporary folder, removed on exit.
    Raises :class:`BadRevision` when ``repo`` is not a git repository or ``rev`` is no commit of it."""
    import tempfile

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)

    found = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found.returncode != 0:
        why = "not a git repository" if git("rev-parse", "--git-dir").returncode else f"no commit {rev!r} in it"
        raise BadRevision(f"--against {rev}: neither a collapsed-stack file nor a commit ({Path(repo).resolve()}: "
                          f"{why})")
    folder = Path(tempfile.mkdtemp(prefix="callscale-base-"))
    added = git("worktree", "add", "--detach", str(folder / "tree"), found.stdout.strip())
    if added.returncode != 0:
        raise BadRevision(f"--against {rev}: git worktree add failed: {' '.join(added.stderr.split())}")
    try:
        top = git("rev-parse", "--show-prefix").stdout.strip()  # the working directory inside the repository
        yield folder / "tree" / top
    finally:
        git("worktree", "remove", "--force", str(folder / "tree"))
        shutil.rmtree(folder, ignore_errors=True)
