"""The instruction meter: count the machine instructions of streaming, under callgrind.

Wall-clock time on a shared CI runner is noisy; an instruction count is not.
This meter runs the streaming of one parser over one workload at several
lengths in a child Python process under ``valgrind --tool=callgrind`` and
reads, per length, the instructions executed by the streaming work alone
(every ``parse_streaming_increment`` and the ``finish``), not interpreter
start-up, imports or workload generation.

How: the cases are made here and written to files; one callgrind child
(:mod:`callscale._metered`, started by a clean exec with a fixed environment:
:func:`child_environment`) forks once per row and once per length, and counts
one stream with callgrind's counting toggled on around it alone (a client
request); a calibration pair of toggles is subtracted. A count depends on the
parser's modules and the case, not on the caller (docs/exact.md, "Why the
counts repeat").

Errors: :class:`MeterUnavailable` when valgrind is missing or the interpreter
is not a traceable ELF binary (message says how to fix it);
:class:`MeterError` when the child fails (its stderr is in the message).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from . import _metered
from .adapters.protocol import counted_elsewhere
from .bounded import terminate_as_interrupt

__all__ = ["MeterUnavailable", "MeterError", "interpreter", "count_instructions", "check_available",
           "InstructionMeter", "MARKER_SYMBOL", "count_parts", "split_rows", "auto_jobs"]

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


def child_environment(links: Sequence[str] = ()) -> dict[str, str]:
    """The metered child's whole environment: fixed, so counts do not move with the caller's.

    The size of the environment block shifts where the child's stack and heap lie, which moves
    instruction counts by ~0.1%. So the child gets only :data:`_FIXED_ENV` and a ``PYTHONPATH``
    (``links``: see :func:`path_links`; else this project's root, the current directory and the
    caller's ``PYTHONPATH``). Children write no byte-code (``PYTHONDONTWRITEBYTECODE``): what they load
    was compiled by :func:`compile_for_child`, and a module without it is compiled in memory alike on
    every run.
    """
    paths = list(links) or [str(Path(__file__).resolve().parent.parent)] + _last_paths()
    return dict(_FIXED_ENV, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)))


#: The folder name compiled into the child's byte-code (its code objects' file name), never the one it is
#: loaded from: the import system then renames every code object's file at load, alike in every run
#: (a ``.pyc`` written by another run's compiler, under that run's folder name, is loaded alike).
_COMPILED_AS = "/callscale-checkout/callscale"

#: Compiles each file named in its arguments in a fork of its own (so a file's byte-code does not
#: depend on the files compiled before it), then the rest of the package in one go. argv: the package
#: as the child imports its modules (``p/pk``), the folder the child starts from (``p/00/callscale``),
#: the files.
_COMPILER = """import sys
del sys.path[0]
import compileall, os, py_compile
linked, own = sys.argv[1], sys.argv[2]
for path in sys.argv[3:]:
    pid = os.fork()
    if pid == 0:
        try:
            name = os.path.relpath(path, linked if path.startswith(linked + os.sep) else own)
            py_compile.compile(path, dfile=os.path.join(%r, name), doraise=True)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
compileall.compile_dir(linked, quiet=2, ddir=%r)
""" % (_COMPILED_AS, _COMPILED_AS)


def compile_for_child(package: str, links: Sequence[str]) -> None:
    """Compile the byte-code the metered child loads (into the package's ``__pycache__`` folders), by a
    fresh interpreter with the child's fixed environment.

    ``package``: this package as the child imports it (``p/00/callscale``, so each code object's file name
    is the one it is loaded from); ``links``: the child's ``PYTHONPATH`` (:func:`path_links`): the
    compiler runs with the child's environment, in the child's folder, with no working folder on its path. Byte-code records whether each string constant was interned when it
    was compiled, which depends on what the compiling process did before (a 1-character string is one
    object for the whole process): the same file compiled by a caller that had run asv's suite and by
    one that had not differed, and moved a count by 2 instructions. So the modules a metered fork
    imports before it counts (:mod:`callscale._metered` says which) are compiled each from the same
    fresh state, every run. Failures (a read-only checkout) are left to the child, which then compiles
    in memory, alike on every run.
    """
    linked = os.path.join(os.path.dirname(os.path.dirname(package)), "pk")  # p/pk (see path_links)
    files = [os.path.join(package, name) for name in ("__init__.py", "_metered.py")]
    files += [os.path.join(linked, "streaming.py")] + sorted(str(p) for p in Path(linked, "parsers").glob("*.py"))
    try:
        subprocess.run([interpreter(), "-S", "-c", _COMPILER, linked, package, *files], env=child_environment(links),
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(package))), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    except (OSError, subprocess.SubprocessError):
        pass


CHILD_FOLDER_PARENT = "/tmp"
"""Where the metered child's folder is made, whatever ``TMPDIR`` says (see :func:`child_folder_parent`)."""


def child_folder_parent() -> str | None:
    """The folder the metered child's own folder is made in: ``CALLSCALE_CHILD_TMPDIR`` when set, else
    ``/tmp`` where it is a writable folder, else ``None`` (``tempfile``'s default, from ``TMPDIR``).

    The child's import path names links in its folder (:func:`path_links`), so the length of that
    folder's path moves counts as a checkout path would: a runner whose ``TMPDIR`` is
    ``/home/runner/work/_temp`` would count otherwise than one with ``/tmp`` (a 140-character
    ``TMPDIR`` moved a 1k count by 0.09%). ``CALLSCALE_CHILD_TMPDIR`` gives a run its own folder
    (the tests that check nothing is left behind use it); counts then depend on its length.
    """
    chosen = os.environ.get("CALLSCALE_CHILD_TMPDIR")
    if chosen:
        return chosen
    parent = CHILD_FOLDER_PARENT
    return parent if os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK) else None


def path_links(folder: Path) -> tuple[list[str], list[str], list[str]]:
    """Fixed-length names for the child's import path: ``(first, caller, plug-ins)``, links in ``folder/p``.

    Where this checkout and the virtualenv lie, and what else lies in them,
    must not move counts: the lengths of the path strings (``sys.path``,
    every module's ``__file__``) and the directory listings the import
    system caches decide which allocator blocks the child's set-up takes,
    and so where the objects of the streams land (an empty untracked file
    in the checkout moved counts by 0.1%). So this project is imported from
    ``p/00``, a folder holding nothing but a link to its ``callscale``
    package; each other entry of the caller's path becomes a link named by
    its position (``03``, ``05.site-packages`` for a site folder, whose
    ``.pth`` import lines the child still runs), less the checkout itself;
    and the caller's current directory and ``PYTHONPATH`` (for
    ``module:Factory`` parsers) are added only by the forks that import a
    plug-in, so no other import ever lists them (an import that fails
    somewhere in the interpreter reads every folder on the path). Two clones in
    different folders, with their own virtualenvs of the same interpreter
    and packages, so give the child the same paths, of the same lengths.
    """
    base = folder / "p"
    base.mkdir(exist_ok=True)
    own = base / "00"
    own.mkdir()
    package = Path(__file__).resolve().parent
    # the child's first import path holds the two files it starts from; every other module of the package
    # it loads by name from the link p/pk (_metered.PackageFinder), listing no folder of the checkout
    (own / "callscale").mkdir()
    for name in ("__init__.py", "_metered.py"):
        os.symlink(package / name, own / "callscale" / name)
    os.symlink(package, base / "pk")
    last = _last_paths()
    entries = [p for p in dict.fromkeys(caller_path() + last) if p]
    names = {}
    for i, entry in enumerate(entries, start=1):
        name = f"{i:02d}" + (".site-packages" if entry.rstrip("/").endswith(("site-packages", "dist-packages"))
                             else "")
        os.symlink(entry, base / name)
        names[entry] = str(base / name)
    root = str(package.parent)
    # the checkout is left out (p/00 holds its package); a site-packages folder that holds an
    # installed callscale (a wheel) stays: the plug-ins' own installed packages are there too
    caller = [names[p] for p in entries
              if p not in last and (os.path.realpath(p) != root or names[p].endswith(".site-packages"))]
    return [str(own)], caller, [names[p] for p in last]


def pth_imports(folders: Sequence[str]) -> list[str]:
    """The ``import`` lines of the ``.pth`` files in the caller's site-packages ``folders``, for the child to run.

    Read here, not in the child: their path lines (which the caller's
    ``sys.path`` holds already) have the checkout's folder name in them, and
    reading text of another length in the child moves its counts. This
    project's own editable-install finder is left out (the child imports the
    project from the front of its path, and the finder holds the folder name).
    """
    lines = []
    for folder in folders:
        if not folder.rstrip("/").endswith(("site-packages", "dist-packages")):
            continue
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                text = Path(folder, name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            lines += [line for line in text.splitlines()
                      if line.startswith(("import ", "import\t")) and "__editable___callscale_" not in line]
    return lines


def _last_paths() -> list[str]:
    """The caller's current directory and ``PYTHONPATH`` entries (plug-ins are imported from there)."""
    return list(dict.fromkeys([os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


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


_TOTAL = re.compile(r"^(?:summary|totals):\s*(\d+)", re.MULTILINE)
_EOF = object()
_TRIGGER = re.compile(r"^desc: Trigger: Client Request: (.+)$", re.MULTILINE)

#: Wall seconds the child may take to start, import this project and build every case (steps that
#: run no parser code); a parser's own steps are bounded by the ``timeout`` of :func:`count_items`.
SETUP_SECONDS = 600.0

Item = tuple[str, str, str, int]
"""One count: ``(parser, format, workload, length)``."""


@dataclass
class Counted:
    """What the metered child gave for one :data:`Item`.

    ``instructions``: the streaming's count (``None`` when it failed);
    ``error``: why not, in words (the parser's exception ``Type: message``,
    ``timeout: ...``, or how the child ended); ``outcome``: what a client got
    from the stream, ``{"content", "reasoning", "calls": [[name, arguments
    text], ...]}``, where the count was asked for it (``outcomes`` of
    :func:`count_items`; else, and when the stream did not finish, ``None``).
    """

    instructions: int | None = None
    error: str | None = None
    outcome: dict | None = None
    request: int | None = None
    """The instructions of one request at this length (``None`` where not counted): a fresh parser made
    and given the case's first delta, after the count (:mod:`callscale._metered`; the first length of a
    row only)."""


def _dump(path: Path) -> tuple[str, int]:
    """``(label, total)`` of one callgrind dump file (its client-request label and instruction total)."""
    text = path.read_text(errors="replace")
    hit, label = _TOTAL.search(text), _TRIGGER.search(text)
    if hit is None:
        raise MeterError(f"no instruction total in callgrind output {path}")
    return (label.group(1).strip() if label else ""), int(hit.group(1))


def ended_in_words(code: int | None) -> str:
    """How a process ended, in words: ``exit 3``, ``killed by SIGSEGV`` (the isolated
    gate's ``callscale.bounded.exit_words`` where it exists, the same words otherwise)."""
    try:
        from .bounded import exit_words  # type: ignore[attr-defined]
    except ImportError:
        exit_words = None
    if exit_words is not None:
        return exit_words(code)
    if code is None:
        return "ended without a status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def timeout_in_words(seconds: float) -> str:
    """``timeout after 5 s`` (``callscale.bounded.timeout_words`` where it exists)."""
    try:
        from .bounded import timeout_words  # type: ignore[attr-defined]
    except ImportError:
        return f"timeout after {seconds:g} s"
    return timeout_words(seconds)


#: The callgrind children running now (any thread's), for :func:`_kill_live`.
_LIVE: set = set()


def _kill_live() -> None:
    """Kill every running callgrind child's process group (their threads then read the end of output)."""
    for child in list(_LIVE):
        try:
            os.killpg(child.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _row_stems(parser: str) -> list[str]:
    """The module stems a row's fork imports for ``parser``: a built-in parser's module
    (``callscale/parsers/STEM.py``) alone; ``[]`` for ``null`` and for plug-ins (imported through
    :mod:`callscale.plugins` in the fork)."""
    from callscale import parsers

    if parser == "null" or ":" in parser:
        return []
    try:
        module = parsers.get(parser).__module__
    except KeyError:
        return []
    return [module.rsplit(".", 1)[-1]] if module.startswith("callscale.parsers.") else []


def _case_file(index: int, workload: str, fmt: str, length: int, chunking: str, seed: int) -> tuple[dict, bool]:
    """One case, made here (natively, not under valgrind) for the metered fork: ``({"index", "length",
    "deltas", "tools"} or ``{..., "error"}``, whether the chunking is ``detect``)``. A team workload's
    generator runs in a process of its own (:func:`callscale.workloads.team.generate`), not in this one."""
    from callscale.workloads import make
    from callscale.workloads.chunking import DETECT, Chunking, parse_chunking

    entry = {"index": f"{index:09d}", "length": length}
    try:
        case = make(workload, fmt, length, seed)
        entry.update(deltas=case.deltas(chunking), tools=list(case.tools))
        split = case.chunking(chunking)
        return entry, (split if isinstance(split, Chunking) else parse_chunking(str(split))).kind == DETECT
    except Exception as exc:
        entry["error"] = f"workload {workload} for {fmt}: {' '.join(f'{type(exc).__name__}: {exc}'.split())}"
        return entry, False


def _cache_environment() -> dict[str, str]:
    """The caller's variables that say where engines' builds and downloads are cached (``CALLSCALE_CACHE``,
    ``XDG_CACHE_HOME``, ``HOME``), for a plug-in row's fork (a compiled engine's harness in :mod:`callscale.adapters` reads them);
    a built-in parser's fork never sees them."""
    return {name: os.environ[name] for name in CACHE_VARIABLES if name in os.environ}


#: The caller's environment variables a plug-in row's fork gets (see :func:`_cache_environment`).
CACHE_VARIABLES = ("CALLSCALE_CACHE", "XDG_CACHE_HOME", "HOME")


#: Cases are made natively, in the thread that starts each child (``count_parts`` runs two at a time); making
#: them in two threads at once raced in CPython 3.11's AST constructor ("SystemError: AST constructor recursion
#: depth mismatch", a process-wide counter), so one child's cases are made at a time.
_MAKING = threading.Lock()


class _Child:
    """One callgrind child over a list of items: write its files, start it, read its protocol lines, stop it."""

    def __init__(self, items: Sequence[Item], chunking: str, seed: int, folder: Path, outcomes: bool = False) -> None:
        self.items = list(items)
        self.folder = folder
        (folder / "items").mkdir()
        if outcomes:  # the forks write what each parser returned (see callscale._metered)
            (folder / "outcomes").touch()
        rows: dict[tuple[str, str, str], list] = {}
        for index, item in enumerate(self.items):
            rows.setdefault(item[:3], []).append([index, *item])
        self.rows = list(rows.values())
        # one file per row, per length and for the row's warm-up case: a fork reads its own, and nothing
        # of the selection (how many lengths, which others) reaches the state a count starts from
        with _MAKING:  # (one child's cases at a time: see _MAKING)
            self._write_cases(folder, chunking, seed)

    def _write_cases(self, folder: Path, chunking: str, seed: int) -> None:
        made: dict[tuple[str, str, int], tuple[dict, bool]] = {}  # each case made once (a parser's and its floor's rows)

        def case_file(index: int, workload: str, fmt: str, length: int) -> tuple[str, bool]:
            if (workload, fmt, length) not in made:
                made[(workload, fmt, length)] = _case_file(0, workload, fmt, length, chunking, seed)
            entry, detect = made[(workload, fmt, length)]
            return json.dumps(dict(entry, index=f"{index:09d}")), detect

        for number, row in enumerate(self.rows):
            parser, fmt, workload = row[0][1:4]
            name = folder / "items" / f"{number:06d}"
            warm, detect = case_file(0, workload, fmt, _metered.WARM_LENGTH)
            (folder / "items" / f"{number:06d}.warm").write_text(warm, encoding="utf-8")
            for k, (index, *_, length) in enumerate(row):
                entry = case_file(index, workload, fmt, length)[0]
                (folder / "items" / f"{number:06d}.{k:03d}").write_text(entry, encoding="utf-8")
            (folder / "items" / f"{number:06d}.indexes").write_text(json.dumps([f"{e[0]:09d}" for e in row]))
            header = {"parser": parser, "format": fmt, "workload": workload, "chunking": chunking, "seed": seed,
                      "stems": _row_stems(parser), "detect": detect, "first": f"{row[0][0]:09d}",
                      "lengths": f"{len(row):09d}"}
            name.write_text(json.dumps(header), encoding="utf-8")
        first, caller, plugins = path_links(folder)
        compile_for_child(os.path.join(first[0], "callscale"), first)
        plugin = {"path": caller, "plugin_path": plugins, "pth_imports": pth_imports(caller_path()),
                  "environ": _cache_environment()}
        (folder / "plugin.json").write_text(json.dumps(plugin), encoding="utf-8")
        spec_file = "spec.json"
        (folder / spec_file).write_text(json.dumps({"count": len(self.rows), "require_valgrind": True}),
                                        encoding="utf-8")
        self.out = "cg.%p.out"  # one file per fork (%p: its process id), in the child's folder
        self.err_path = folder / "stderr.txt"
        cmd = [_valgrind(), "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
               f"--callgrind-out-file={self.out}", "--dump-instr=no", "--compress-strings=no",
               "--compress-pos=no", interpreter(), "-S", "-c", _metered.START_CODE, f"@{spec_file}"]
        self.err = open(self.err_path, "wb")
        # its own process group (session), so a stop kills valgrind and anything it started
        self.proc = subprocess.Popen(cmd, env=child_environment(first), cwd=folder, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self.err, start_new_session=True,
                                     preexec_fn=_no_address_randomisation)
        _LIVE.add(self)  # so a Ctrl-C in the main thread can stop a child another thread runs
        self._reaper = _start_reaper(self.proc.pid, folder)
        self._buffer = b""
        self._read: dict[Path, tuple[str, int]] = {}

    def lines(self, deadline: float):
        """Yield protocol lines (dicts) until the end of output; ``None`` each time ``deadline`` (monotonic; a new
        one comes with each ``send``) passed first."""
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                deadline = yield message
            left = deadline - time.monotonic()
            if left <= 0:
                deadline = yield None  # the caller decides (it may stop a fork and wait on)
                continue
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                self._buffer += chunk

    def stop(self) -> None:
        """Kill the child's whole process group (valgrind, the interpreter it runs and its forks, also when
        the first already ended) and reap it; then tell the reaper (:func:`_start_reaper`) all is done."""
        _LIVE.discard(self)
        if self.proc.poll() is None or _group_alive(self.proc.pid):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.proc.stdout.close()
        self.err.close()
        reaper, self._reaper = self._reaper, None
        _stop_reaper(reaper)

    def stderr_tail(self, n: int = 5) -> str:
        try:
            text = self.err_path.read_text(errors="replace")
        except OSError:
            return ""
        return " | ".join([line for line in text.splitlines() if line.strip() and not line.startswith("==")][-n:])

    def answer(self, index: int) -> dict:
        """What a fork answered for item ``index``: ``{"outcome", "error"}``, the outcome assembled here from
        the results it wrote (``done.INDEX``: ``{"results", "error"}``, :func:`callscale.streaming.plain`)."""
        from .check import assemble
        from .streaming import from_plain

        try:
            answer = json.loads((self.folder / f"done.{index:09d}").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return {"error": f"the metered child's answer cannot be read: {exc}"}
        if answer.get("results") is None:
            return {"outcome": None, "error": answer.get("error")}
        got = assemble([from_plain(result) for result in answer["results"]], strict=False)
        return {"outcome": {"content": got.content, "reasoning": got.reasoning,
                            "calls": [[call.name, call.arguments_text] for call in got.calls]}, "error": None}

    def dumps(self, pid: int | None) -> dict[str, int]:
        """``{label: instructions}`` of the dumps one fork (process id) wrote so far."""
        found = {}
        for path in self.folder.glob(f"cg.{pid}.out.*"):
            if path not in self._read:
                try:
                    self._read[path] = _dump(path)
                except MeterError:  # still being written (the fork went on to its next length)
                    continue
            label, total = self._read[path]
            found[label] = total
        return found


#: The reaper's program (:func:`_start_reaper`): argv ``[group, folder]``, the word ``done`` on its stdin.
_REAPER = ("import os, shutil, signal, sys\n"
           "if sys.stdin.buffer.read() != b'done':\n"
           "    try:\n"
           "        os.killpg(int(sys.argv[1]), signal.SIGKILL)\n"
           "    except OSError:\n"
           "        pass\n"
           "    shutil.rmtree(sys.argv[2], ignore_errors=True)\n")


def _start_reaper(group: int, folder: Path) -> tuple[subprocess.Popen, int] | None:
    """A tiny process that outlives this one: when this process ends without calling
    :func:`_stop_reaper` (killed by SIGKILL, as ``timeout -s KILL`` in CI does), it kills the metered
    child's process ``group`` (a fork spinning in a hung parser included) and removes its ``folder``.

    It waits on a pipe whose only writer is this process (and the workers forked from it, which die
    with it), in a session of its own (a kill of this process's group spares it); it costs one bare
    interpreter start (``-S -E``). ``None`` when it cannot be started (then a SIGKILL leaves the child
    to end when it next writes to its closed pipe).
    """
    read, write = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-S", "-E", "-c", _REAPER, str(group), str(folder)], stdin=read,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        os.close(write)
        return None
    finally:
        os.close(read)
    return proc, write


def _stop_reaper(reaper: tuple[subprocess.Popen, int] | None) -> None:
    """Tell the reaper of :func:`_start_reaper` that this process cleaned up itself, and reap it."""
    if reaper is None:
        return
    proc, write = reaper
    try:
        os.write(write, b"done")
    except OSError:
        pass
    finally:
        os.close(write)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()


_ADDR_NO_RANDOMIZE = 0x0040000  # <linux/personality.h>


def _no_address_randomisation() -> None:
    """In the child before exec: switch off address-space layout randomisation (``setarch -R``).

    The kernel places valgrind's own mappings (the vDSO, its stack) at random
    addresses, which moves where valgrind can put the client's memory, hence
    the addresses of Python's objects: method-cache slots (keyed by the
    address of an attribute name) and dict or set order by identity then
    collide differently, and counts moved by up to 0.2% from run to run.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(0xFFFFFFFF)
        if current != -1:
            libc.personality(current | _ADDR_NO_RANDOMIZE)
    except (OSError, AttributeError):  # not Linux: counts may then move a little between runs
        pass


def _group_alive(group: int) -> bool:
    """Whether any process is in process ``group`` (from /proc; ``True`` where there is no /proc). While one
    is, the group's number cannot go to another process, so killing the group hits only what is left of it."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return True
    for entry in entries:
        try:
            fields = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(group):
            return True
    return False


def _kill_fork(pid: int, parent: int) -> None:
    """SIGKILL the metered child's fork ``pid`` if it is still one (its parent is ``parent``, the child):
    a fork that ended and was waited for may have left its number to another process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if int(stat.rsplit(")", 1)[1].split()[1]) != parent:
            return
    except (OSError, ValueError, IndexError):
        if os.path.isdir("/proc/self"):  # gone
            return
    try:  # (without /proc: as before, unchecked)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@dataclass
class _Fork:
    """One running fork of the metered child (see :func:`count_items`)."""

    pid: int  # the row's fork
    index: int  # the item it is on (its row's first until it starts a case)
    streaming: bool  # streaming a case (else importing its parser or making its cases)
    deadline: float  # monotonic seconds
    started: float = 0.0  # monotonic seconds when its case started
    cpu_start: float | None = None  # its CPU seconds then (:func:`callscale.bounded.cpu_seconds`)
    streamer: int | None = None  # the length fork streaming the case (the row fork's child)


def count_items(items: Sequence[Item], chunking: str, seed: int = 0, timeout: float | None = None,
                on_done: Callable[[Item, Counted], None] | None = None, outcomes: bool = False) -> dict[Item, Counted]:
    """Count every item in one callgrind child (the whole run pays start-up once).

    ``items``: ``(parser, format, workload, length)``; a parser is a
    registered name, ``null`` or ``module.path:Factory`` (importable from the
    caller's ``sys.path`` or the current directory). An item's lengths are
    counted in ascending order, in one fork of the child per parser x format
    x workload, two forks at a time (a row and the next, so a hung case's
    budget overlaps the rows after it; each fork starts from the same state,
    so the counts do not depend on it). ``timeout``: wall seconds one length may take under callgrind
    (its uncounted and its counted stream; ``None``: no limit); a fork's
    import of its parser and making of its cases get ``max(timeout, 60)``.
    An item whose parser raises gets that error; one that overruns gets
    ``timeout after S s`` and its parser's other lengths and workloads
    ``timeout: not run (timed out on W at N)``; one whose parser ends or
    crashes its process gets :func:`ended_in_words` (``exit 3``, ``killed by
    SIGSEGV``), its longer lengths on that workload ``crashed: not run (...)``. The other items are counted as
    if it were not there (each fork starts from the same state, see the
    module docstring). ``on_done(item, counted)`` is called as each item is
    settled. ``outcomes``: each fork also writes what its parser returned, for
    :attr:`Counted.outcome` (after the count, so the count is the same; off, a
    fork ends right after its count: the gate checks a parser's output natively,
    :func:`callscale.verify.verify_stream`). Raises :class:`MeterUnavailable`, :class:`MeterError` (the child
    failed outside any parser's code), and ``KeyboardInterrupt`` on Ctrl-C
    or SIGTERM, after killing the child and its forks and removing its
    folder; the exception's ``item`` is the item the child was on (or would
    run next; ``None`` while it starts), and every item settled before
    it has had its ``on_done`` (so a caller keeps the counts so far).
    A subject that counts its own items (:func:`callscale.adapters.protocol.counted_elsewhere`: a router an adapter drives)
    gives them through :meth:`callscale.adapters.protocol.Subject.count_items`, the same :class:`Counted`.
    """
    check_available()
    if any(counted_elsewhere(i[0]) for i in items):  # subjects that count their own items (a router an adapter drives)
        # the others first: a metered child started after the gateway's gRPC aborts (count_parts says why)
        rest = [i for i in items if not counted_elsewhere(i[0])]
        results = count_items(rest, chunking, seed, timeout, on_done, outcomes) if rest else {}
        own: dict[str, list] = {}
        for i in items:
            if counted_elsewhere(i[0]):
                own.setdefault(str(i[0]), []).append(i)
        for name, theirs in own.items():
            results.update(counted_elsewhere(name).count_items(theirs, chunking, seed, timeout, on_done))
        return {tuple(i): results[tuple(i)] for i in items}
    items = sorted(dict.fromkeys(tuple(i) for i in items), key=lambda i: i[3])  # stable: groups keep their order
    group_of: dict[tuple[str, str, str], list[Item]] = {}
    for item in items:
        group_of.setdefault(item[:3], []).append(item)
    items = [item for group in group_of.values() for item in group]  # a row's lengths ascending, in a row
    # SIGTERM raises bounded.Terminated, as Ctrl-C does: the children are killed on the way out
    with tempfile.TemporaryDirectory(prefix="callscale-callgrind-", dir=child_folder_parent()) as tmp, \
            terminate_as_interrupt():
        child = _Child(items, chunking, seed, Path(tmp), outcomes)
        counting = _Counting(items, child, timeout, on_done)
        try:
            counting.read()
            if not counting.timed_out:
                child.proc.wait(timeout=SETUP_SECONDS)
        except KeyboardInterrupt as exc:  # say which item the child was on (the finally kills it)
            exc.item = counting.running()  # type: ignore[attr-defined]
            raise
        finally:
            child.stop()
        if not counting.ended or child.proc.returncode != 0:
            why = f"no answer in {SETUP_SECONDS:g} s" if counting.timed_out else ended_in_words(child.proc.returncode)
            raise MeterError(f"metered child failed ({why}) outside any parser's code: {child.stderr_tail()}")
        for item in items:  # anything the child skipped without a word
            counting.settle(item, Counted(error="the metered child did not count it"))
    return {item: counting.results[item] for item in items}


_NO_LIMIT = 1e9


class _Counting:
    """The parent's side of one callgrind child (:func:`count_items`): what it settled, the forks
    running (two at a time, see :mod:`callscale._metered`) by row number, and one short handler per
    message kind of :data:`callscale._metered.MESSAGES` (``on_KIND``), plus :meth:`on_deadline`."""

    def __init__(self, items: list[Item], child: _Child, timeout: float | None,
                 on_done: Callable[[Item, Counted], None] | None) -> None:
        self.items, self.child, self.timeout, self.settled = items, child, timeout, on_done
        self.slow_setup = max(timeout, 60.0) if timeout is not None else _NO_LIMIT
        self.results: dict[Item, Counted] = {}
        self.number_of = {entry[0]: number for number, row in enumerate(child.rows) for entry in row}
        self.forks: dict[int, _Fork] = {}
        self.killed: set[int] = set()
        self.ended = self.timed_out = False
        self.debug = bool(os.environ.get("CALLSCALE_DEBUG_CHILD"))
        self.handlers: dict[str, Callable[[dict, float], None]] = {
            kind: getattr(self, f"on_{kind}") for kind in _metered.MESSAGES}

    def read(self) -> None:
        """Read the child's messages until it closes its output, dispatching each by its kind."""
        lines = self.child.lines(time.monotonic() + SETUP_SECONDS)
        message = next(lines, _EOF)
        while message is not _EOF:
            now = time.monotonic()
            if message is None:  # a deadline passed
                if not self.on_deadline(now):
                    return
            elif message.get("kind") in self.handlers:
                self.handlers[message["kind"]](message, now)
            live = [fork.deadline for fork in self.forks.values() if fork.pid not in self.killed]
            try:
                message = lines.send(min(live) if live else time.monotonic() + SETUP_SECONDS)
            except StopIteration:  # the child closed its output: ended or died
                return

    def settle(self, item: Item, counted: Counted) -> None:
        if item not in self.results:
            self.results[item] = counted
            if self.settled is not None:
                self.settled(item, counted)

    def give_up(self, item: Item, kind: str, words: str, error: str, every_workload: bool = False) -> None:
        """The item fails with ``error``; its parser's longer lengths on its workload (on every workload,
        with ``every_workload``) are not run: the child skips them."""
        from .config import format_size

        self.settle(item, Counted(error=error))
        for index, other in enumerate(self.items):
            same = other[:2] == item[:2] if every_workload else other[:3] == item[:3]
            if same and other not in self.results and (every_workload or other[3] > item[3]):
                where = f"{item[2]} at {format_size(item[3])}" if every_workload else format_size(item[3])
                (self.child.folder / f"skip.{index:09d}").touch()
                self.settle(other, Counted(error=f"{kind}: not run ({words} on {where})" if every_workload
                                           else f"{kind}: not run ({words} at {where})"))

    def kill(self, fork: _Fork) -> None:
        """Stop a fork and the length fork it waits for (the child then reports it ``ended``)."""
        if fork.streamer is not None:
            _kill_fork(fork.streamer, fork.pid)
        _kill_fork(fork.pid, self.child.proc.pid)
        self.killed.add(fork.pid)

    def running(self) -> Item | None:
        """The item the child is on (or would count next; ``None`` while it starts)."""
        on = next((self.items[fork.index] for _, fork in sorted(self.forks.items())
                   if self.items[fork.index] not in self.results), None)
        if on is None and self.results:  # between rows: the next item the child would count
            on = next((item for item in self.items if item not in self.results), None)
        return on

    # ------------------------------------------------------------------ one handler per kind
    def on_deadline(self, now: float) -> bool:
        """A deadline passed: stop each fork past its own; ``False`` (give up reading) when no fork
        runs (the child itself is past :data:`SETUP_SECONDS`)."""
        if not self.forks:
            self.timed_out = True
            return False
        for fork in self.forks.values():
            if fork.deadline <= now and fork.pid not in self.killed:
                more = self.cpu_left(fork, now)
                if more > 0:  # the wall time passed, not the CPU time: a loaded machine, not a slow parser
                    fork.deadline = now + more
                    continue
                self.kill(fork)
        return True

    def cpu_left(self, fork: _Fork, now: float) -> float:
        """Seconds to wait longer for a streaming fork past its wall deadline: ``--timeout`` counts its CPU
        time, up to :data:`callscale.bounded.WALL_CEILING` times the timeout of wall time (0: stop it now)."""
        from .bounded import WALL_CEILING, cpu_seconds  # here: the metered child imports this module

        if not fork.streaming or self.timeout is None or fork.cpu_start is None:
            return 0.0
        used = cpu_seconds(fork.streamer)
        if used is None:
            return 0.0
        left = self.timeout - (used - fork.cpu_start)
        ceiling = fork.started + WALL_CEILING * self.timeout - now
        return max(0.0, min(max(left, 0.25) if left > 0 else 0.0, ceiling))

    def on_ready(self, message: dict, now: float) -> None:
        if self.debug:
            print(f"callscale-child: ready at {float(message['cpu']):.1f} s CPU", file=sys.stderr)

    def on_row(self, message: dict, now: float) -> None:
        number = int(message["number"])
        self.forks[number] = _Fork(int(message["pid"]), self.child.rows[number][0][0], False, now + self.slow_setup)

    def on_case(self, message: dict, now: float) -> None:
        index = int(message["index"])
        fork = self.forks[self.number_of[index]]
        fork.index, fork.streaming, fork.streamer = index, True, int(message["pid"])
        fork.deadline = now + (self.timeout if self.timeout is not None else _NO_LIMIT)
        from .bounded import cpu_seconds

        fork.started, fork.cpu_start = now, cpu_seconds(fork.streamer)

    def on_done(self, message: dict, now: float) -> None:
        index = int(message["index"])
        fork = self.forks[self.number_of[index]]
        item, answer = self.items[index], self.child.answer(index)
        if answer.get("error") is not None:
            self.settle(item, Counted(error=answer["error"], outcome=answer.get("outcome")))
        else:
            dumps = self.child.dumps(fork.streamer)
            total, calibration = dumps.get(f"case {index:09d}"), dumps.get("calibration")
            request = dumps.get(f"request {index:09d}")
            if total is None or calibration is None:
                self.settle(item, Counted(error=f"callgrind wrote no count for it ({len(dumps)} dumps)"))
            else:
                self.settle(item, Counted(instructions=total - calibration, outcome=answer.get("outcome"),
                                          request=None if request is None else max(0, request - calibration)))
        fork.streaming = False
        fork.deadline = now + self.slow_setup

    def on_ended(self, message: dict, now: float) -> None:
        number, status = int(message["number"]), int(message["status"])
        fork = self.forks.pop(number, None)
        if number < 0 or status == 0:  # a row done (negative: a placeholder fork)
            return
        # a row's fork died: stopped past its deadline, or by itself
        item = self.items[fork.index if fork is not None else self.child.rows[number][0][0]]
        streaming = fork is not None and fork.streaming
        if fork is not None and fork.pid in self.killed and streaming:
            self.give_up(item, "timeout", "timed out", timeout_in_words(self.timeout), True)
        elif fork is not None and fork.pid in self.killed:
            self.give_up(item, "timeout", "timed out", f"{timeout_in_words(self.slow_setup)} (importing "
                                                       f"{item[0]} or making the case)", True)
        else:
            words = ended_in_words(status)
            self.give_up(item, "crashed", words, words + ("" if streaming else f" (importing {item[0]} or making the case)"))
        for other in self.forks.values():  # a fork streaming a case given up meanwhile: stop it
            if other.streaming and other.pid not in self.killed and self.items[other.index] in self.results:
                self.kill(other)

    def on_end(self, message: dict, now: float) -> None:
        self.ended = True
        if self.debug:
            print(f"callscale-child: end at {float(message['cpu']):.1f} s CPU", file=sys.stderr)


#: Most children :func:`auto_jobs` picks (each holds a few hundred MB under valgrind).
MAX_AUTO_JOBS = 4


def auto_jobs() -> int:
    """How many callgrind children to run at once when not told (``--jobs`` / ``jobs`` unset).

    The cores this process may run on (``os.sched_getaffinity``, else
    ``os.cpu_count``) less the 1-minute load average, rounded to the nearest
    whole core: one child per idle core, at least 1, at most
    :data:`MAX_AUTO_JOBS`. On the 2-core machine of docs/exact.md two
    children took 0.55x the wall time of one when both cores were idle; on
    a busy machine the load average keeps it to one.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return max(1, min(MAX_AUTO_JOBS, cores, int(cores - load + 0.5)))


def split_rows(items: Sequence[Item], parts: int) -> list[list[Item]]:
    """``items`` cut into at most ``parts`` lists, each parser x format x workload (a fork's row) whole.

    Rows go, longest total length first, to the list with the least total
    length so far (ties: the first), so the children's work is balanced by
    characters streamed. Each list keeps the items' order. A count does not
    depend on which list its row is in (each fork starts from the child's
    pristine state: see :mod:`callscale._metered`).
    """
    rows: dict[tuple[str, str, str], list[Item]] = {}
    for item in items:
        rows.setdefault(tuple(item[:3]), []).append(tuple(item))
    parts = max(1, min(parts, len(rows)))
    loads = [0] * parts
    where: dict[tuple[str, str, str], int] = {}
    for key in sorted(rows, key=lambda k: -sum(i[3] for i in rows[k])):  # stable: equal rows in order
        part = loads.index(min(loads))
        where[key] = part
        loads[part] += sum(i[3] for i in rows[key])
    out: list[list[Item]] = [[] for _ in range(parts)]
    for item in items:
        out[where[tuple(item[:3])]].append(tuple(item))
    return [part for part in out if part]


def count_parts(items: Sequence[Item], chunking: str, seed: int = 0, timeout: float | None = None,
                on_done: Callable[[Item, Counted], None] | None = None,
                jobs: int | None = None, outcomes: bool = False) -> dict[Item, Counted]:
    """:func:`count_items` over ``jobs`` callgrind children at once (``None``: :func:`auto_jobs`).

    The items are cut by :func:`split_rows`; each part is counted by
    :func:`count_items` in its own thread (its own child), and the results
    merged: the counts are the same as from one child. A part whose child
    fails outside any parser's code (:class:`MeterError`) or cannot start
    (:class:`MeterUnavailable`) gives each of its items that error as a
    :class:`Counted`; the other parts' counts stand. ``on_done`` is called
    from the parts' threads, one call at a time. Ctrl-C or SIGTERM kills
    every child and raises ``KeyboardInterrupt`` (``bounded.Terminated``).
    """
    import threading

    jobs = auto_jobs() if jobs is None else jobs
    # the subjects that count their own items (a router an adapter drives) in a part of their own, counted after the others,
    # which are split as rows: a gateway adapter's stand-in worker may start gRPC in this process, and a metered child started
    # after that runs gRPC's fork handlers before its exec and aborts (SIGABRT)
    gateway = [tuple(i) for i in items if counted_elsewhere(i[0])]
    parts = split_rows([i for i in items if not counted_elsewhere(i[0])], jobs)
    lock = threading.Lock()
    results: dict[Item, Counted] = {}

    def settled(item: Item, counted: Counted) -> None:
        with lock:
            results[item] = counted
            if on_done is not None:
                on_done(item, counted)

    failures: list[BaseException] = []

    def work(part: list[Item]) -> None:
        try:
            count_items(part, chunking, seed, timeout, on_done=settled, outcomes=outcomes)
        except (MeterUnavailable, MeterError) as exc:
            for item in part:
                if item not in results:
                    settled(item, Counted(error=str(exc)))
        except Exception as exc:  # a bug: raised in the caller's thread below
            failures.append(exc)

    if len(parts) == 1:
        work(parts[0])
    elif parts:
        threads = [threading.Thread(target=work, args=(part,), name=f"callgrind-{n}", daemon=True)
                   for n, part in enumerate(parts)]
        with terminate_as_interrupt():
            try:
                for thread in threads:
                    thread.start()
                for thread in threads:
                    while thread.is_alive():
                        thread.join(0.5)
            except KeyboardInterrupt:
                _kill_live()
                for thread in threads:
                    thread.join(30)
                raise
    if gateway:
        work(gateway)
    if failures:
        raise failures[0]
    return {tuple(item): results[tuple(item)] for item in items if tuple(item) in results}


def count_matrix(
    parsers: Sequence[str],
    fmt: str,
    workloads: Sequence[str],
    lengths: Sequence[int],
    chunking: str,
    seed: int = 0,
    timeout: float | None = None,
) -> dict[tuple[str, str, int], int]:
    """Instructions to stream each workload x length of format ``fmt`` through each parser.

    One child does them all (:func:`count_items`). ``parsers``: registered
    names, ``null`` (the harness's floor parser) or ``module.path:Factory``;
    ``lengths`` in characters. Returns ``{(parser, workload, length):
    instructions}`` (exact, repeatable). Raises :class:`MeterUnavailable`, or
    :class:`MeterError` naming the first case that failed.
    """
    items = [(p, fmt, w, int(n)) for w in workloads for n in sorted(lengths) for p in parsers]
    counted = count_items(items, chunking, seed, timeout)
    for item in items:
        if counted[item].instructions is None:
            raise MeterError(f"metered child failed for {item[0]} on {item[2]} at {item[3]} ({fmt}): "
                             f"{counted[item].error}")
    return {(p, w, n): counted[(p, fmt, w, n)].instructions for p, _, w, n in items}


def count_instructions(parser: str, fmt: str, workload: str, lengths: Sequence[int], chunking: str,
                       seed: int = 0, timeout: float | None = None) -> dict[int, int]:
    """Instructions to stream one workload through one parser, ``{length: instructions}``.

    ``parser`` may be an importable ``module.path:qualname`` (as
    ``callscale.testing`` passes it). See :func:`count_matrix` for the
    arguments and errors.
    """
    counts = count_matrix([parser], fmt, [workload], lengths, chunking, seed, timeout)
    return {n: counts[(parser, workload, n)] for n in lengths}


Job = tuple[str, str, str, tuple[int, ...], str, int]
"""One measurement group: ``(parser, format, workload, lengths, chunking, seed)``."""


class InstructionMeter:
    """The ``instructions`` meter of :data:`callscale.measure.METERS`.

    Figures are instruction counts (exact, repeatable), not seconds; ``repeats``
    does not apply. :meth:`prefetch` counts many parsers x workloads x
    lengths in one callgrind child (:func:`count_items`); :meth:`total`
    answers from those counts, or runs a child for the one case it is asked
    about. :meth:`outcome` gives what a client got from a counted stream.
    """

    name = "instructions"
    unit = "instructions"

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str, str, int], Counted] = {}

    def prefetch(self, jobs: Iterable[Job], workers: int | None = None, progress: Any = None,
                 timeout: float | None = None, on_count: Callable[[Job, int, Counted], None] | None = None
                 ) -> None:
        """Count every job: per chunking and seed (normally one of each), ``workers`` callgrind children at
        once (:func:`count_parts`; ``None``: :func:`auto_jobs`).

        A case that fails stores its error, which :meth:`total` raises for
        that case (so it becomes that measurement's error, and the run goes
        on). ``progress``: an object with ``update(n)`` (a tqdm bar), called
        once per job when its last length is counted. ``timeout``: see
        :func:`count_items`. ``on_count(job, length, counted)``: called as each
        length of a job is settled (a caller keeps what was counted when a
        signal stops the run: the ``KeyboardInterrupt`` goes through, its
        ``item`` naming the running case, see :func:`count_items`).
        """
        groups: dict[tuple[str, int], list[Item]] = {}
        pending: dict[tuple[str, str, str, str, int], int] = {}
        job_of: dict[tuple[str, str, str, str, int], Job] = {}
        for job in jobs:
            parser, fmt, workload, lengths, chunking, seed = job
            job_of[(parser, fmt, workload, chunking, seed)] = job
            todo = [n for n in sorted(lengths) if self._key(job, n) not in self._counts]
            if not todo:
                continue
            pending[(parser, fmt, workload, chunking, seed)] = len(todo)
            groups.setdefault((chunking, seed), []).extend((parser, fmt, workload, n) for n in todo)
        for (chunking, seed), items in groups.items():
            items.sort(key=lambda i: (i[2], i[1], i[3]))  # workload, format, length; parsers in job order

            def done(item: Item, counted: Counted, chunking=chunking, seed=seed) -> None:
                self._counts[(item[0], item[1], item[2], f"{chunking}@{seed}", item[3])] = counted
                key = (item[0], item[1], item[2], chunking, seed)
                if on_count is not None:
                    on_count(job_of[key], item[3], counted)
                pending[key] -= 1
                if pending[key] == 0 and progress is not None:
                    progress.update(1)

            for item, counted in count_parts(items, chunking, seed, timeout, done, workers).items():
                self._counts.setdefault((item[0], item[1], item[2], f"{chunking}@{seed}", item[3]), counted)

    @staticmethod
    def _key(job: Job, length: int) -> tuple[str, str, str, str, int]:
        parser, fmt, workload, _, chunking, seed = job
        return (parser, fmt, workload, f"{chunking}@{seed}", length)

    def counted(self, parser_name: str, case: Any, chunking: str) -> Counted:
        """The :class:`Counted` of one case (a fresh child if it was not prefetched)."""
        job: Job = (parser_name, case.format, case.workload, (case.length,), chunking, getattr(case, "seed", 0))
        key = self._key(job, case.length)
        if key not in self._counts:
            self.prefetch([job])
        return self._counts[key]

    def request(self, factory: Any, case: Any, deltas: Sequence[str], tools: list, repeats: int, *,
                parser_name: str, chunking: str) -> float | None:
        """Instructions of one request (a fresh parser and its first increment) on ``case``, as the
        callgrind child counted it after the case's stream (:attr:`Counted.request`); ``None`` where it was
        not counted (a length other than a row's first, a failed stream)."""
        got = self.counted(parser_name, case, chunking).request
        return None if got is None else float(got)

    def outcome(self, parser_name: str, case: Any, chunking: str) -> dict | None:
        """What a client got from the counted stream (see :class:`Counted`): a subject that counts its own
        items gives it (:mod:`callscale.adapters.protocol`); the callgrind child is not asked for it
        (``None``: the gate checks a parser's output natively)."""
        return self.counted(parser_name, case, chunking).outcome

    def total(self, factory: Any, case: Any, deltas: Sequence[str], tools: list, repeats: int, *,
              parser_name: str, chunking: str) -> float:
        """Instructions to stream ``case`` through ``parser_name``; raises :class:`MeterError` if it failed."""
        counted = self.counted(parser_name, case, chunking)
        if counted.instructions is None:
            raise MeterError(counted.error or "not counted")
        return float(counted.instructions)
