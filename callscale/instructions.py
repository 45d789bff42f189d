"""The instruction meter: count the machine instructions of streaming, under callgrind.

Wall-clock time on a shared CI runner is noisy; an instruction count is not.
This meter runs the streaming of one parser over one workload at several
lengths in a child Python process under ``valgrind --tool=callgrind`` and
reads, per length, the instructions executed by the streaming work alone
(every ``parse_streaming_increment`` and the ``finish``), not interpreter
start-up, imports or workload generation.

How the streaming work is isolated: the child calls a marker function right
before the first increment and right after ``finish`` (``sys.getswitchinterval``,
which nothing else in the child calls), and callgrind is told to dump its
counters on entry to that function's C implementation
(``--dump-before=sys_getswitchinterval``). Each dump holds the instructions
since the previous one, so the dump between the two markers of a length is
that length's streaming count. A last pair of back-to-back markers measures
the marker's own cost, which is subtracted. This is the same subtraction as
running the case twice (once stopping before the first increment) but takes
one child process per format (for all its parsers, workloads and lengths)
instead of two per case.

Counts repeat exactly for the same interpreter binary, code, inputs and
directory: ``PYTHONHASHSEED=0`` fixes string hashing, valgrind loads
programs at fixed addresses, and the child's environment is fixed (its size
alone moves counts by ~0.1%; see :func:`child_environment`). The child
imports what the caller can: it gets the caller's ``sys.path`` (a
virtualenv's site-packages included, see :func:`caller_path`) in its
argument, not in its environment.

Errors: :class:`MeterUnavailable` when valgrind is missing or the interpreter
is not a traceable ELF binary (message says how to fix it);
:class:`MeterError` when the child fails (its stderr is in the message).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

__all__ = ["MeterUnavailable", "MeterError", "interpreter", "count_instructions", "check_available",
           "InstructionMeter", "MARKER_SYMBOL"]

#: The C function callgrind dumps its counters on (CPython's ``sys.getswitchinterval``).
MARKER_SYMBOL = "sys_getswitchinterval"

INSTALL_HINT = "valgrind is not installed: install the Debian package with `apt-get install valgrind`"


class MeterUnavailable(RuntimeError):
    """The instruction meter cannot run on this machine (the message says why and how to fix it)."""


class MeterError(RuntimeError):
    """A metered child process failed."""


def interpreter() -> str:
    """The real interpreter binary to run under valgrind.

    ``sys.executable`` can be a shell shim (pyenv) or a venv symlink; valgrind
    must start the ELF binary itself, so resolve ``sys._base_executable``
    (or ``sys.executable``) through links and check the ELF magic. Raises
    :class:`MeterUnavailable` when the result is not an ELF file.
    """
    for candidate in (getattr(sys, "_base_executable", None), sys.executable):
        if not candidate:
            continue
        path = os.path.realpath(candidate)
        try:
            with open(path, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    return path
        except OSError:
            continue
    raise MeterUnavailable(
        f"cannot find the interpreter's ELF binary (sys.executable={sys.executable!r}); "
        "the instruction meter needs a CPython binary valgrind can trace"
    )


def _valgrind() -> str:
    path = shutil.which("valgrind")
    if path is None:
        raise MeterUnavailable(INSTALL_HINT)
    return path


def check_available() -> None:
    """Raise :class:`MeterUnavailable` (one-line message) unless valgrind and a traceable interpreter exist."""
    _valgrind()
    interpreter()


#: The only variables the metered child sees besides PYTHONPATH (see :func:`child_environment`).
_FIXED_ENV = {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1"}


def child_environment() -> dict[str, str]:
    """The metered child's whole environment: fixed, so counts do not move with the caller's.

    The size of the environment block shifts where the child's stack and heap
    lie, which moves instruction counts by ~0.1% (string copies run a
    different number of instructions at another alignment). So the child gets
    only :data:`_FIXED_ENV` and a ``PYTHONPATH`` of this project's root, the
    current directory (for ``module:Factory`` parsers) and the caller's
    ``PYTHONPATH``. Byte-code of this project is compiled here first, so
    every child loads the same ``.pyc`` files instead of the first one
    compiling them; children write no byte-code (``PYTHONDONTWRITEBYTECODE``),
    so a plug-in module without a ``.pyc`` is compiled in memory alike on
    every run instead of differently on the first.
    """
    root = str(Path(__file__).resolve().parent.parent)
    paths = [root, os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    _compile_project(root)
    return dict(_FIXED_ENV, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)))


def caller_path() -> list[str]:
    """This process's import path (``sys.path`` less ``""``), for the metered child to append to its own.

    valgrind runs the base interpreter binary (:func:`interpreter`), which
    does not know a virtualenv: without these entries a plug-in importing a
    package installed only in the caller's virtualenv (pydantic, an engine)
    fails in the child. The list is passed in the child's argument, so the
    environment stays fixed; the same interpreter and folder give the same
    list, so counts still repeat.
    """
    return [p for p in sys.path if p]


def _compile_project(root: str) -> None:
    import compileall

    for package in ("parsers", "workloads", "callscale"):
        try:
            compileall.compile_dir(os.path.join(root, package), quiet=2)
        except OSError:  # a read-only checkout: children compile in memory, alike each time
            pass


_TOTAL = re.compile(r"^(?:summary|totals):\s*(\d+)", re.MULTILINE)


def _dump_total(path: Path) -> int:
    hit = _TOTAL.search(path.read_text(errors="replace"))
    if hit is None:
        raise MeterError(f"no instruction total in callgrind output {path}")
    return int(hit.group(1))


def count_matrix(
    parsers: Sequence[str],
    fmt: str,
    workloads: Sequence[str],
    lengths: Sequence[int],
    chunking: str,
    seed: int = 0,
    timeout: float = 3600.0,
) -> dict[tuple[str, str, int], int]:
    """Instructions to stream each workload x length of format ``fmt`` through each parser.

    One child process under callgrind does them all (start-up is paid once).
    ``parsers``: registered names, ``null`` (the harness's floor parser) or
    ``module.path:Factory``; ``lengths`` in characters. Returns
    ``{(parser, workload, length): instructions}`` (exact, repeatable).
    Raises :class:`MeterUnavailable` or :class:`MeterError`.
    """
    valgrind = _valgrind()
    python = interpreter()
    spec = {
        "mode": "instructions",
        "parsers": list(parsers),
        "format": fmt,
        "workloads": list(workloads),
        "lengths": [int(n) for n in lengths],
        "chunking": chunking,
        "seed": seed,
        "path": caller_path(),
    }
    order = [(p, w, n) for w in spec["workloads"] for n in spec["lengths"] for p in spec["parsers"]]
    env = child_environment()
    with tempfile.TemporaryDirectory(prefix="callscale-callgrind-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = [
            valgrind, "--tool=callgrind", f"--dump-before={MARKER_SYMBOL}",
            f"--callgrind-out-file={out}", "--dump-instr=no", "--compress-strings=no",
            python, "-m", "callscale._child", json.dumps(spec),
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            tail = " | ".join([line for line in proc.stderr.splitlines() if not line.startswith("==")][-5:])
            raise MeterError(f"metered child failed (exit {proc.returncode}) for {fmt}: {tail}")
        dumps = sorted(Path(tmp).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        # dump 1: start-up and warm-up until the first marker; then per
        # (parser, workload, length) a (set-up, streaming) pair; then the gap
        # before the calibration pair and the empty calibration segment itself.
        expected = 1 + 2 * len(order) + 2
        if len(dumps) != expected:
            raise MeterError(
                f"callgrind wrote {len(dumps)} dumps, expected {expected}: the interpreter "
                f"{python} may lack the symbol {MARKER_SYMBOL} (a stripped build?)"
            )
        totals = [_dump_total(p) for p in dumps]
    marker_cost = totals[-1]
    return {key: totals[2 + 2 * i] - marker_cost for i, key in enumerate(order)}


def count_instructions(parser: str, fmt: str, workload: str, lengths: Sequence[int], chunking: str,
                       seed: int = 0) -> dict[int, int]:
    """Instructions to stream one workload through one parser, ``{length: instructions}``.

    See :func:`count_matrix` for the arguments and errors.
    """
    counts = count_matrix([parser], fmt, [workload], lengths, chunking, seed)
    return {n: counts[(parser, workload, n)] for n in lengths}


Job = tuple[str, str, str, tuple[int, ...], str, int]
"""One measurement group: ``(parser, format, workload, lengths, chunking, seed)``."""


class InstructionMeter:
    """The ``instructions`` meter of :data:`callscale.measure.METERS`.

    Figures are instruction counts (exact, repeatable), not seconds; ``repeats``
    does not apply. :meth:`prefetch` counts many parsers x workloads in
    parallel child processes (one per core), one child per format for all
    its parsers, workloads and lengths; :meth:`total` answers from those
    counts, or runs a child for the one case it is asked about.
    """

    name = "instructions"
    unit = "instructions"

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str, str, int], int | Exception] = {}

    def prefetch(self, jobs: Iterable[Job], workers: int | None = None, progress: Any = None) -> None:
        """Count every job, grouped into one child per format, ``workers`` children at a time
        (default: the number of cores).

        A child that fails stores its exception for each of its cases, which
        :meth:`total` raises for that case (so it becomes that measurement's
        error, and the run goes on). ``progress``: an object with
        ``update(n)`` (a tqdm bar), called with the number of jobs a child did.
        """
        groups: dict[tuple[str, tuple[int, ...], str, int], list[Job]] = {}
        for job in jobs:
            if not all(self._key(job, n) in self._counts for n in job[3]):
                groups.setdefault((job[1], tuple(job[3]), job[4], job[5]), []).append(job)
        if not groups:
            return
        check_available()

        def one(group_key, group):
            fmt, lengths, chunking, seed = group_key
            parsers = list(dict.fromkeys(j[0] for j in group))
            workloads = list(dict.fromkeys(j[2] for j in group))
            return count_matrix(parsers, fmt, workloads, lengths, chunking, seed)

        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            futures = [(group, pool.submit(one, key, group)) for key, group in groups.items()]
            for group, future in futures:
                try:
                    counts: dict[tuple[str, str, int], int] | None = future.result()
                    error = None
                except Exception as exc:  # recorded per case
                    counts, error = None, exc
                for job in group:
                    for n in job[3]:
                        value = error if counts is None else counts[(job[0], job[2], n)]
                        self._counts[self._key(job, n)] = value
                if progress is not None:
                    progress.update(len(group))

    @staticmethod
    def _key(job: Job, length: int) -> tuple[str, str, str, str, int]:
        parser, fmt, workload, _, chunking, seed = job
        return (parser, fmt, workload, f"{chunking}@{seed}", length)

    def total(self, factory: Any, case: Any, deltas: Sequence[str], tools: list, repeats: int, *,
              parser_name: str, chunking: str) -> float:
        """Instructions to stream ``case`` through ``parser_name`` (a fresh child if not prefetched)."""
        job: Job = (parser_name, case.format, case.workload, (case.length,), chunking, getattr(case, "seed", 0))
        key = self._key(job, case.length)
        if key not in self._counts:
            self.prefetch([job], workers=1)
        value = self._counts[key]
        if isinstance(value, Exception):
            raise value
        return float(value)
