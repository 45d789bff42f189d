"""The instruction meter's metered child: the program callgrind runs (see :mod:`callscale.instructions`).

Started by a clean exec, ``valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no ...
PYTHON -S -c CODE @spec.json`` (:data:`START_CODE`: it takes the working folder off the import path
before any import, then calls :func:`main`), in a folder of its own, with a fixed environment and
argument list (:func:`callscale.instructions.child_environment`): nothing of the caller reaches it
but the files it is given. Its import path is this package (through one fixed-length link) and the
interpreter's standard library; ``-S``: no site-packages, no ``.pth`` files.

What a count depends on is what runs in this process before the counted stream: this module (standard
library only), ``callscale/__init__.py``, the parsers' shared layer (:data:`SHARED`), :mod:`callscale.streaming`,
the parser's own modules (``callscale/parsers/`` for a built-in one) and the case. Not the harness (the caller makes the cases,
natively, and writes them to files), not the selection (every row and every length reads its own file,
and every number in a message is fixed-width text), not the caller's folder, path, environment or
registry, not the other lengths of the row.

Steps:

1. **pristine**: imports nothing of the project but this module and the parsers' shared layer
   (:data:`SHARED`), freezes the collector, says
   ``ready``, then forks once per row (one parser x format x workload; two forks at a time: fork N+1
   starts as soon as fork N has, and N is waited for before N+2 starts, so a hung case overlaps the
   next row), each from the same state.
2. **row fork**: reads its row header (``items/NNNNNN``), imports its parser (a built-in one: its
   format's module alone, ``callscale.parsers.STEM``; a plug-in: through :mod:`callscale.plugins`,
   with the caller's import path, ``.pth`` import lines and cache variables from ``plugin.json``),
   builds one parser uninstrumented, switches instrumentation on and streams the warm-up case (the
   row's workload at :data:`WARM_LENGTH`, ``items/NNNNNN.warm``) once, uncounted: first-use costs
   (lazy imports, regex compilation, specialised byte-code).
3. **length fork** (one per length, waited for in turn, so each starts from the row fork's state
   after the warm-up, whatever other lengths the row has): reads its case (``items/NNNNNN.K``), says
   ``case`` with its process id, settles the collector (:func:`settle_collector`), counts a toggle
   pair (dump ``calibration``), then the stream alone (a fresh parser, every
   ``parse_streaming_increment``, ``finish``; dump ``case INDEX``); at a row's first length, one request
   after it (a fresh parser and the case's first delta, dump ``request INDEX``: the per-request cost,
   counted after the stream so the stream's count is as before); writes its answer to ``done.INDEX``
   and says ``done``: the parser's error if it raised; where the caller asked for results (a file
   ``outcomes`` in the child's folder), instrumentation is switched off first and the answer holds what
   the parser returned (:func:`callscale.streaming.plain`, each result's text and calls; the caller
   assembles what a client got). A length fork that dies (a parser's ``os._exit``, a segfault, a kill on timeout) ends
   its row fork the same way, and the row's longer lengths are not run.

A parser that prints writes to standard error, not into the protocol (:data:`MESSAGES`, one JSON
line each, every line shorter than ``PIPE_BUF`` so two forks' lines never interleave).
"""

from __future__ import annotations

import gc
import json
import os
import sys

#: The program valgrind starts (``python -S -c START_CODE @spec.json``).
START_CODE = "import sys; del sys.path[0]; from callscale._metered import main; raise SystemExit(main(sys.argv[1:]))"

#: The parsers' shared layer (with what it imports: ``results``, ``scanner``, ``schema``, ``logging``, ``re``),
#: imported once by the pristine process: every built-in parser's row fork imported it anew under valgrind,
#: about 7% of a built-in parser's gate CPU. A change to it is a change to every built-in parser's counts, so
#: a count depends on it either way.
SHARED = ("callscale.parsers.base", "callscale.parsers.jsonscan", "callscale.parsers.pyliteral")

#: The warm-up case's length in characters (the row's workload, format and chunking).
WARM_LENGTH = 1024

MESSAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "ready": (("cpu",), "the child is started (cpu: its CPU seconds, %012.3f)"),
    "row": (("number", "pid"), "a fork started row NUMBER (the file items/NUMBER) as process PID"),
    "case": (("index", "pid"), "item INDEX's length fork (process PID) starts its streams (a parser's own time "
                               "starts)"),
    "done": (("index",), "item INDEX is settled: its answer {results, error} is in the file done.INDEX"),
    "ended": (("number", "status"), "the fork of row NUMBER (negative: a placeholder fork) was waited for; "
                                    "status: its exit status as os.waitstatus_to_exitcode gives it, +000"),
    "end": (("cpu",), "every row ended (cpu: the child's CPU seconds, %012.3f)"),
}
"""What the metered child answers, one JSON object a line on its standard output: ``{"kind": KIND,
FIELD: text, ...}``, each kind with its fields and meaning. Every value is text of a fixed width
(``%09d`` numbers): what a fork allocates to say it must not depend on its position, its process id or
how the fork before it ended, so every fork starts from the same heap."""

_dumps = json.dumps  # taken at import: a plug-in imported in a fork may replace json's names


def message(kind: str, **fields: str) -> str:
    """One :data:`MESSAGES` line (no newline). Raises ``KeyError`` for an unknown kind, ``ValueError``
    when the fields are not the kind's."""
    if tuple(fields) != MESSAGES[kind][0]:
        raise ValueError(f"message {kind!r} takes {MESSAGES[kind][0]}, got {tuple(fields)}")
    return _dumps({"kind": kind, **fields})


# ----------------------------------------------------------------- callgrind's client requests
#: Callgrind's client requests (valgrind/callgrind.h): VG_USERREQ_TOOL_BASE('C', 'T') + n.
_CT = (ord("C") << 24) | (ord("T") << 16)
DUMP_STATS_AT, TOGGLE_COLLECT, START_INSTRUMENTATION, STOP_INSTRUMENTATION = _CT + 3, _CT + 2, _CT + 4, _CT + 5
RUNNING_ON_VALGRIND = 0x1001

#: x86-64 code of valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR as a function
#: ``long request(unsigned long args[6], long default)``: rax = args, rdx =
#: default, the "special instruction preamble" (four rotations of rdi by 128
#: bits in all, a no-op natively), ``xchg rbx, rbx``; the answer is in rdx.
#: Natively it returns ``default``; under valgrind the tool answers.
_REQUEST_CODE = bytes([
    0x48, 0x89, 0xF8,              # mov rax, rdi
    0x48, 0x89, 0xF2,              # mov rdx, rsi
    0x48, 0xC1, 0xC7, 0x03,        # rol rdi, 3
    0x48, 0xC1, 0xC7, 0x0D,        # rol rdi, 13
    0x48, 0xC1, 0xC7, 0x3D,        # rol rdi, 61
    0x48, 0xC1, 0xC7, 0x33,        # rol rdi, 51
    0x48, 0x87, 0xDB,              # xchg rbx, rbx
    0x48, 0x89, 0xD0,              # mov rax, rdx
    0xC3,                          # ret
])


class ClientRequests:
    """Valgrind client requests from Python (x86-64 Linux): the few callgrind needs here.

    ``collect()`` toggles counting (the child runs with ``--collect-atstart=no``), ``dump(label)``
    writes the counters since the last dump to a file whose ``desc: Trigger: Client Request: label``
    line names it, ``start()`` / ``stop()`` switch instrumentation on and off (``--instr-atstart=no``:
    start-up, imports and what follows a count run uninstrumented, several times faster). Each
    request's argument block is built once, so a toggle costs the same instructions every time.
    Raises ``OSError`` where executable memory cannot be had or the machine is not x86-64.
    """

    def __init__(self) -> None:
        import ctypes
        import mmap
        import platform

        if platform.machine() not in ("x86_64", "AMD64"):
            raise OSError(f"valgrind client requests are written for x86-64, not {platform.machine()}")
        self._page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self._page.write(_REQUEST_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.c_long)(address)
        self._ctypes = ctypes
        self._blocks: list = []
        self._toggle = self._block(TOGGLE_COLLECT)

    def _block(self, code: int, arg=0) -> int:
        block = (self._ctypes.c_ulong * 6)(code, arg, 0, 0, 0, 0)
        self._blocks.append(block)
        return self._ctypes.addressof(block)

    def on_valgrind(self) -> bool:
        return self._call(self._block(RUNNING_ON_VALGRIND), 0) > 0

    def start(self) -> None:
        self._call(self._block(START_INSTRUMENTATION), 0)

    def stop(self) -> None:
        self._call(self._block(STOP_INSTRUMENTATION), 0)

    def collect(self) -> None:
        self._call(self._toggle, 0)

    def dump_block(self, label: str) -> int:
        """The argument block of a dump labelled ``label``, for :meth:`dump_at`: made before instrumentation
        is switched on, the label's buffer is not made by code callgrind translates anew in every fork
        (the first dump of a fork cost ten times the next)."""
        text = self._ctypes.create_string_buffer(label.encode())
        self._blocks.append(text)
        return self._block(DUMP_STATS_AT, self._ctypes.addressof(text))

    def dump_at(self, block: int) -> None:
        self._call(block, 0)

    def dump(self, label: str) -> None:
        self.dump_at(self.dump_block(label))


# ----------------------------------------------------------------- import path (plug-ins, profile child)
def _site_dir(path: str) -> bool:
    return path.rstrip("/").endswith(("site-packages", "dist-packages"))


def import_path(own: list[str], caller: list[str], pythonpath: list[str]) -> list[str]:
    """The child's ``sys.path``: its ``PYTHONPATH`` entries, then the caller's path in the caller's order,
    then the rest of its own except site-packages folders the caller does not have.

    The base interpreter's own site-packages would otherwise shadow a
    virtualenv's newer copy of a package (the caller never sees it).
    """
    first = [p for p in pythonpath if p]
    rest = [p for p in own if p and not _site_dir(p)]
    return list(dict.fromkeys(first + [p for p in caller if p] + rest))


def use_caller_path(caller: list[str], pth_imports: list[str] | None = None) -> None:
    """Make the caller's import path (its ``sys.path``) this process's (:func:`import_path`), and run
    the ``import`` lines of the ``.pth`` files in the caller's site-packages folders: ``pth_imports``
    when the caller read them (:func:`callscale.instructions.pth_imports`), else read here."""
    if not caller:
        return
    own = [p for p in sys.path if p != os.getcwd()]  # not the working folder (``python -m`` puts it first)
    sys.path[:] = import_path(own, caller, os.environ.get("PYTHONPATH", "").split(os.pathsep))
    if pth_imports is None:
        import site

        for path in caller:
            if _site_dir(path):
                site.addsitedir(path)
        return
    for line in pth_imports:
        try:
            exec(line)
        except Exception:  # as site does: a broken .pth line is skipped
            pass


# ----------------------------------------------------------------- the metered child
def settle_collector() -> None:
    """Every stream starts the collector from one state: all earlier objects frozen, generations empty.

    ``collect`` frees the previous stream's cycles, ``freeze`` moves the
    survivors out of the collector's reach, and the second ``collect`` (of
    empty generations) sets its counters (gen0 count, long-lived totals) to 0,
    so whether a collection runs during the stream, and what it traverses,
    depends only on the stream, not on what ran before it in this child.
    """
    gc.collect()
    gc.freeze()
    gc.collect()


def _read(path: str, _open=os.open, _read_fd=os.read, _close=os.close, _loads=json.loads, _fstat=os.fstat):
    """A file of the caller's, as JSON; the functions are taken at import (a plug-in imported in a fork may
    replace ``open`` or json's names in its own process)."""
    fd = _open(path, os.O_RDONLY)
    try:
        size = _fstat(fd).st_size
        data = b""
        while len(data) < size:
            chunk = _read_fd(fd, size - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        _close(fd)
    return _loads(data.decode("utf-8"))


def _error(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def _factory(row: dict):
    """The row's parser factory: a built-in parser from its own format's module alone, ``null``, or a
    plug-in through :mod:`callscale.plugins` (the caller's path and cache variables from ``plugin.json``)."""
    name, fmt = row["parser"], row["format"]
    if name == "null":
        from callscale.streaming import NullParser

        return NullParser
    if row["stems"]:
        import importlib

        from callscale import parsers

        for stem in row["stems"]:
            importlib.import_module(f"callscale.parsers.{stem}")
        parsers.only_imported()  # the registry holds this format's parsers alone; no other module is read
        return parsers.get(name)
    plugin = _read("plugin.json")
    use_caller_path(plugin["path"], plugin["pth_imports"])
    sys.path.extend(plugin["plugin_path"])  # the caller's folder and PYTHONPATH, for module:Factory
    os.environ.update(plugin["environ"])  # where an engine's build and downloads are cached
    from callscale.plugins import resolve

    factory = resolve(name, fmt).factory
    if type(factory).__name__ == "LazyFactory":
        # import it and build one parser here, uninstrumented (an engine's imports and tokenizer set-up
        # took minutes under instrumentation)
        factory = factory.load()
        factory()
    return factory


class _Run:
    """The pristine process's means of answering, taken before any fork (a plug-in imported in a fork may
    replace ``open`` or json's names in its own process)."""

    def __init__(self) -> None:
        self.out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)  # a parser that prints writes to stderr, not into the protocol
        self.line, self.dumps, self.open, self.write, self.close = message, json.dumps, os.open, os.write, os.close
        self.flags, self.folder = os.O_WRONLY | os.O_CREAT | os.O_TRUNC, os.getcwd()
        self.requests = ClientRequests()

    def say(self, kind: str, **fields: str) -> None:
        self.out.write(self.line(kind, **fields) + "\n")
        self.out.flush()

    def prepare(self, index: str, results: list | None = None, error: str | None = None) -> tuple[str, bytes, str]:
        """An answer for :meth:`send`: its file, its bytes and its line (made ahead of a count, so no code of it
        runs under instrumentation but the writing)."""
        return (f"{self.folder}/done.{index}", self.dumps({"results": results, "error": error}).encode("utf-8"),
                self.line("done", index=index) + "\n")

    def send(self, answer: tuple[str, bytes, str]) -> None:
        # the answer (the results are as long as the case) in a file: each line stays shorter than PIPE_BUF
        path, data, line = answer
        fd = self.open(path, self.flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[self.write(fd, view):]
        finally:
            self.close(fd)
        self.out.write(line)
        self.out.flush()

    def answer(self, index: str, results: list | None = None, error: str | None = None) -> None:
        self.send(self.prepare(index, results, error))


def _skipped(index: str) -> bool:
    """The caller gave up on this item (its parser hung or crashed on a shorter case): a ``skip.INDEX`` file."""
    return os.path.exists(f"skip.{index}")


def _answer_all(run: _Run, name: str, error: str) -> None:
    for index in _read(f"{name}.indexes"):
        run.answer(index, error=error)


def _stream_keeping(factory, deltas, tools, results: list) -> None:
    """Stream through a fresh parser, keeping each result (as a client does): the counted work."""
    parser = factory()
    feed, keep = parser.parse_streaming_increment, results.append
    for delta in deltas:
        keep(feed(delta, tools))
    keep(parser.finish(tools))


def _row(run: _Run, name: str) -> None:
    """In a row fork: the row of file ``name`` (see the module docstring)."""
    row = _read(name)
    if _skipped(row["first"]):
        return
    try:
        factory = _factory(row)
    except BaseException as exc:
        _answer_all(run, name, _error(exc))
        return
    if row["detect"]:
        from callscale.streaming import DetectAndParse

        plain = factory

        def factory():
            return DetectAndParse(plain())

    warm = _read(f"{name}.warm")
    requests = run.requests
    # a compiled engine's harness that counts its own work (callscale.adapters) gives its toggle
    collect = getattr(factory, "callscale_collect", None) or requests.collect
    if warm.get("error") is None:
        # a parser's own time starts (the caller's timeout; a crash here is the row's first item's)
        run.say("case", index=row["first"], pid=f"{os.getpid():09d}")
        try:
            _stream_keeping(factory, warm["deltas"], warm["tools"], [])
        except Exception as exc:
            _answer_all(run, name, _error(exc))
            return
    warm = None
    # a placeholder length fork first: every length's fork then starts after the same fork-and-wait
    # (its process id and status objects allocated and freed), the first as the third
    _length_fork(run, row, name, -1, factory, collect)
    for k in range(int(row["lengths"])):
        status = _length_fork(run, row, name, k, factory, collect)
        if status < 0:  # killed (a timeout) or crashed: the row fork ends the same way
            import signal

            signal.signal(-status, signal.SIG_DFL)
            os.kill(os.getpid(), -status)
        if status != 0:
            os._exit(status)


def _length_fork(run: _Run, row: dict, name: str, k: int, factory, collect) -> int:
    """Fork, count length ``k`` of the row in the fork (``-1``: a placeholder that ends at once), wait for
    it; its exit status (:func:`os.waitstatus_to_exitcode`). Every object this allocates is freed when it
    returns, so each call leaves the row fork as the one before it did."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            if k >= 0:
                _length(run, row, f"{name}.{k:03d}", factory, collect)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _length(run: _Run, row: dict, path: str, factory, collect) -> None:
    """In a length fork: count one item (see the module docstring)."""
    requests = run.requests
    case = _read(path)
    index = case["index"]
    if _skipped(index):
        return
    if case.get("error") is not None:
        run.answer(index, error=case["error"])
        return
    deltas, tools = case["deltas"], case["tools"]
    case = None
    # what runs after the count, made before it (under instrumentation, code is translated anew in every fork)
    calibration, counted = requests.dump_block("calibration"), requests.dump_block(f"case {index}")
    # every length makes the request's block, used at a row's first length only: a block made at one length
    # and not at the others would put the stream's objects elsewhere in the heap there, and move its count
    request = requests.dump_block(f"request {index}")
    first = path.endswith(".000")
    done = run.prepare(index)  # the answer of a stream that did not raise
    run.say("case", index=index, pid=f"{os.getpid():09d}")
    settle_collector()
    requests.start()  # instrumentation on for the count alone (what ran before ran uninstrumented, faster)
    results: list = []
    error = None
    # The collector is off while counting: right after a freeze its long-lived total is 0, so full
    # collections would run often and traverse the results this harness keeps, a cost that bends the
    # counts of a parser returning many results and that depends on the heap the stream runs in.
    gc.disable()
    collect()
    collect()
    requests.dump_at(calibration)  # the toggle pair's own cost, subtracted from the count
    collect()
    try:
        _stream_keeping(factory, deltas, tools, results)
    except Exception as exc:
        error = exc
    collect()
    requests.dump_at(counted)
    if error is None and first:  # one request, after the count
        _request(factory, deltas[:1], tools, collect)
        requests.dump_at(request)
    if error is not None or not os.path.exists("outcomes"):
        # no results asked for: a short answer, left instrumented (a stop discards every translation, and the
        # answer's code would be translated again)
        gc.enable()
        if error is None:
            run.send(done)
        else:
            run.answer(index, error=_error(error))
        return
    requests.stop()  # what follows is not counted: run it uninstrumented
    gc.enable()
    from callscale.streaming import plain

    run.answer(index, results=[plain(result) for result in results])


def _request(factory, first: list, tools, collect) -> None:
    """Count one request (a fresh parser made and given the case's first delta) between two toggles; a
    parser that raises here already streamed the case, so its error is not this count's."""
    collect()
    try:
        parser = factory()
        for delta in first:
            parser.parse_streaming_increment(delta, tools)
    except Exception:
        pass
    collect()


def _ended(run: _Run, wait, pid: int, number: int) -> None:
    """Wait for fork ``pid`` (row ``number``; negative: a placeholder fork) and say ``ended`` (its exit
    status signed, fixed width: the line is as long whatever the status, so the next fork starts from
    the same state)."""
    run.say("ended", number=f"{number:09d}", status=f"{os.waitstatus_to_exitcode(wait(pid, 0)[1]):+04d}")


def metered(spec: dict) -> None:
    """The pristine process: fork once per row of ``spec["count"]`` (see the module docstring)."""
    import time

    run = _Run()
    if spec.get("require_valgrind", True) and not run.requests.on_valgrind():
        raise SystemExit("callscale-metered: this child runs under valgrind --tool=callgrind")
    import importlib

    for name in SHARED:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()
    # CPU seconds as fixed-width text: a float's repr has a varying length, and this process's heap
    # (which every fork starts from) must not depend on how long it took to get here
    run.say("ready", cpu=f"{time.process_time():012.3f}")
    fork, wait = os.fork, os.waitpid
    # Every fork starts from the same state, whatever its position, the timing and how the forks before
    # it ended: before it, the previous one was forked (for the first, a fork that ends at once), and
    # the one before that waited for and reported in a line of fixed length (no value of it is kept).
    first = fork()
    if first == 0:
        os._exit(0)
    previous = pid = fork()
    if pid == 0:
        os._exit(0)
    _ended(run, wait, first, -2)
    for number in range(spec["count"]):
        pid = fork()
        if pid == 0:  # the fork: one row, then gone
            code = 0
            name = f"items/{number:06d}"
            number = None  # noqa: F841  (no int of its position stays alive in the fork)
            gc.collect()  # the collector's counters grew with this process's loop (a tuple per wait)
            try:
                run.say("row", number=f"{int(name[-6:]):09d}", pid=f"{os.getpid():09d}")
                _row(run, name)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        _ended(run, wait, previous, number - 1)
        previous = pid
    _ended(run, wait, previous, spec["count"] - 1)
    run.say("end", cpu=f"{time.process_time():012.3f}")


class PackageFinder:
    """Finds this package's modules by name in one folder (``p/pk``, a link to the package) without
    listing it: the import system caches a folder's listing, so what else lies in the checkout (a
    ``__pycache__`` folder or not, an untracked file, another format's new module) would move counts
    (a ``__pycache__`` folder present or not: 1,636,157 vs 1,636,588)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("callscale."):
            return None
        import importlib.util

        base = os.path.join(self.folder, *name.split(".")[1:])
        if os.path.isfile(base + ".py"):
            return importlib.util.spec_from_file_location(name, base + ".py")
        if os.path.isfile(os.path.join(base, "__init__.py")):
            return importlib.util.spec_from_file_location(name, os.path.join(base, "__init__.py"),
                                                          submodule_search_locations=[base])
        return None


def main(argv: list[str]) -> int:
    """``@PATH``: the spec file, ``{"count": rows, "require_valgrind": bool}``."""
    import callscale

    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "pk")
    callscale.__path__[:] = [folder]
    sys.meta_path.insert(0, PackageFinder(folder))
    metered(_read(argv[0][1:]))
    return 0
