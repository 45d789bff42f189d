"""Child process for the meters that watch a whole process: callgrind and py-spy.

Run as ``python -m callscale._child REQUEST`` where REQUEST is one JSON object (or
``@PATH``, a file holding it), ``{"kind": KIND, ...}``: every kind and its fields are in
:data:`REQUESTS`, every message the child answers with in :data:`MESSAGES` (the one place
both sides read; :func:`message` writes a line, :func:`callscale.instructions.count_items`
reads them, one short handler per kind).

- ``instructions``: ``items``, a folder of row files, each a list of ``[index, parser, format,
  workload, length]``. Run under ``valgrind --tool=callgrind --instr-atstart=no
  --collect-atstart=no``: the child imports what every fork needs uninstrumented, then
  forks once per row; a fork imports its parser and builds its cases, switches
  instrumentation on once (a client request), then per item streams the case once uncounted
  (first-use costs, and the outcome a client got), settles the collector
  (:func:`_settle_collector`), and streams it again with counting toggled on around nothing
  but the stream (a fresh parser, every ``parse_streaming_increment``, ``finish``; a factory
  with a ``callscale_collect`` toggle, a compiled engine's harness, counts only its own work
  with it instead), then
  dumps the counters labelled ``case INDEX``. The first dump, ``calibration``, holds the
  toggle pair's own cost. It reports on its standard output, one :data:`MESSAGES` line each
  step; an item's answer ``{"outcome", "error"}`` goes to the file ``done.INDEX``
  (``outcome``: content, reasoning and ``[name, arguments text]`` per call; ``error``: the
  parser's exception as ``Type: message``). Two forks run at a time: fork N+1 starts right
  after fork N, and fork N is waited for before fork N+2 starts, so a hung case does not
  hold the rows after it back; every line is shorter than ``PIPE_BUF``, so two forks' lines
  never interleave. What a parser prints goes to standard error.
  :mod:`callscale.instructions` reads this to bound each step in time and to
  name the item a crashed or hung child was on.
- ``profile``: ``parser``, ``format``, ``workload``, ``length``, ``seconds`` (how long to
  keep streaming, in CPU seconds, so the sampler collects enough samples).
  Streams the case through fresh parsers again and again for
  ``seconds``, so the profile is dominated by the parser's own frames. A
  parser that raises ends the child with exit status 3 and the line
  ``callscale-child: the parser raised: Type: message`` on stderr; one that does
  not finish (a hang) is ended by a watchdog (:func:`_watchdog`) after
  ``2 * seconds + 5`` seconds of the child's CPU time (the sampling budget is
  CPU time too, so a loaded machine stretches both alike), or
  :data:`WALL_FACTOR` times that in wall seconds (a hang that waits rather
  than spins), with exit status 4 and ``callscale-child: the case did not
  finish within ...``.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time

RAISED = "callscale-child: the parser raised: "
HUNG = "callscale-child: the case did not finish within "


# ----------------------------------------------------------------- the protocol
REQUESTS: dict[str, tuple[str, ...]] = {
    # every request also carries ``path`` (the caller's ``sys.path``) and may carry ``pth_imports``
    # (the ``import`` lines of its ``.pth`` files) and ``seed`` (the workloads', default 0)
    "instructions": ("count", "items", "chunking", "plugin_path", "format_modules", "require_valgrind"),
    "profile": ("parser", "format", "workload", "length", "chunking", "seconds"),
}
"""What the child is asked: ``{"kind": KIND, FIELD: value, ...}``, the fields of each kind (see the
module docstring for their meaning)."""

MESSAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "ready": (("cpu",), "the child imported what every fork needs (cpu: its CPU seconds, %012.3f)"),
    "row": (("number", "pid"), "a fork started row NUMBER (the file items/NUMBER) as process PID"),
    "case": (("index",), "the fork starts item INDEX's streams (a parser's own time starts)"),
    "done": (("index",), "item INDEX is settled: its answer {outcome, error} is in the file done.INDEX"),
    "ended": (("number", "status"), "the fork of row NUMBER (negative: a placeholder fork) was waited for; "
                                    "status: its exit status as os.waitstatus_to_exitcode gives it, +000"),
    "end": (("cpu",), "every row ended (cpu: the child's CPU seconds, %012.3f)"),
}
"""What an ``instructions`` child answers, one JSON object a line on its standard output:
``{"kind": KIND, FIELD: text, ...}``, each kind with its fields and meaning. Every value is text of
a fixed width (``%09d`` numbers): what a fork allocates to say it must not depend on its position,
its process id or how the fork before it ended, so every fork starts from the same heap."""


def message(kind: str, **fields: str) -> str:
    """One :data:`MESSAGES` line (no newline). Raises ``KeyError`` for an unknown kind, ``ValueError``
    when the fields are not the kind's."""
    if tuple(fields) != MESSAGES[kind][0]:
        raise ValueError(f"message {kind!r} takes {MESSAGES[kind][0]}, got {tuple(fields)}")
    return _dumps({"kind": kind, **fields})


_dumps = json.dumps  # taken at import: a plug-in imported in a fork may replace json's names


def _factory(name: str, fmt: str | None):
    from callscale.plugins import resolve

    chosen = resolve(name, fmt)
    return chosen.factory, fmt or chosen.format


def _case(workload: str, fmt: str, length: int, spec) -> tuple[list[str], list, str]:
    """The case's deltas, tools and the chunking that split it (its own delivery, else the run's)."""
    from callscale.workloads import make

    case = make(workload, fmt, length, spec.get("seed", 0))
    return case.deltas(spec["chunking"]), list(case.tools), case.chunking(spec["chunking"])


def _stream(factory, deltas, tools) -> None:
    parser = factory()
    feed = parser.parse_streaming_increment
    for delta in deltas:
        feed(delta, tools)
    parser.finish(tools)


# ----------------------------------------------------------------- instructions
#: Callgrind's client requests (valgrind/callgrind.h): VG_USERREQ_TOOL_BASE('C', 'T') + n.
_CT = (ord("C") << 24) | (ord("T") << 16)
DUMP_STATS_AT, TOGGLE_COLLECT, START_INSTRUMENTATION = _CT + 3, _CT + 2, _CT + 4
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

    ``collect()`` toggles counting (the child runs with
    ``--collect-atstart=no``), ``dump(label)`` writes the counters since the
    last dump to a file whose ``desc: Trigger: Client Request: label`` line
    names it, ``start()`` switches instrumentation on (``--instr-atstart=no``:
    start-up, imports and case building run uninstrumented, several times
    faster). Each request's argument block is built once, so a toggle costs
    the same instructions every time. Raises ``OSError`` where executable
    memory cannot be had or the machine is not x86-64.
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

    def collect(self) -> None:
        self._call(self._toggle, 0)

    def dump(self, label: str) -> None:
        text = self._ctypes.create_string_buffer(label.encode())
        self._blocks.append(text)
        self._call(self._block(DUMP_STATS_AT, self._ctypes.addressof(text)), 0)


def _stream_keeping(factory, deltas, tools, results: list) -> None:
    """Stream through a fresh parser, keeping each result (as a client does): the counted work."""
    parser = factory()
    feed, keep = parser.parse_streaming_increment, results.append
    for delta in deltas:
        keep(feed(delta, tools))
    keep(parser.finish(tools))


def _assembled(results: list) -> dict:
    """What a client got from ``results`` (:func:`callscale.check.assemble`, lax), as JSON-able lists."""
    from callscale.check import assemble

    got = assemble(results, strict=False)
    return {"content": got.content, "reasoning": got.reasoning,
            "calls": [[call.name, call.arguments_text] for call in got.calls]}


def _outcome(factory, deltas, tools) -> dict:
    """Stream once, keeping every result: what a client got (:func:`callscale.check.assemble`, lax)."""
    from callscale.check import assemble

    parser = factory()
    results = [parser.parse_streaming_increment(delta, tools) for delta in deltas]
    finish = getattr(parser, "finish", None)
    if finish is not None:
        results.append(finish(tools))
    got = assemble(results, strict=False)
    return {"content": got.content, "reasoning": got.reasoning,
            "calls": [[call.name, call.arguments_text] for call in got.calls]}


def _error(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def _settle_collector() -> None:
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


def _pristine(own_modules: bool = False) -> None:
    """Import and cache what every fork needs, whatever the selection: the harness and the workloads'
    corpus; every built-in parser and renderer too unless ``own_modules`` (then each fork imports its
    own format's, :func:`_import_own`)."""
    import callscale.check  # noqa: F401  (the outcome of a stream)
    import callscale.plugins  # noqa: F401
    from callscale import parsers
    from callscale.workloads import catalog, render

    if own_modules:
        # no format's module here: the size of one (a comment, a constant) would move the heap every
        # fork starts from, and so every format's counts (by up to 1%). The corpus (source texts,
        # prose) is read and cached without a renderer.
        from callscale.workloads import source

        source.source_code(1024)
        source.prose(1024)
        return
    parsers.names()  # imports every built-in parser module
    # every workload in every format once, small: the corpus (source texts, prose) is read and cached
    # here, once, not in each fork
    for workload in catalog.names():
        for fmt in render.names():
            try:
                catalog.make(workload, fmt, 1024)
            except Exception:  # a workload a format cannot render: its forks report it
                pass


def _skipped(index: int) -> bool:
    """The caller gave up on this item (its parser hung or crashed on a shorter case): a ``skip.INDEX`` file."""
    return os.path.exists(f"skip.{index:09d}")


def _import_own(modules: dict, parser: str, fmt: str) -> None:
    """In a fork: import the modules of format ``fmt`` and of the built-in ``parser`` alone.

    ``modules``: ``{registered name: module stem}`` (``callscale/parsers/STEM.py``,
    its renderer ``callscale/workloads/render/STEM.py``), from the caller
    (:func:`callscale.instructions.format_modules`), so this process reads
    no other format's file. The registries are then marked loaded with
    these alone (they would import every module on first use), so a count
    depends on its own format's modules and the harness, not on the others'
    (docs/exact.md). A name not in ``modules`` leaves the registries to
    load everything (their error lists the known names).
    """
    import importlib

    from callscale import parsers
    from callscale.workloads import render

    if fmt not in modules or not (parser in modules or parser == "null" or ":" in parser):
        return
    for stem in dict.fromkeys(modules[name] for name in (fmt, parser) if name in modules):
        importlib.import_module(f"callscale.parsers.{stem}")
        importlib.import_module(f"callscale.workloads.render.{stem}")
    if fmt in render._RENDERERS and (parser not in modules or parser in parsers._REGISTRY):
        parsers._loaded = render._loaded = True


def _count_row(spec, row, requests, say, answer) -> None:
    """In a fork: one parser x format x workload, its lengths ascending (see the module docstring).
    ``say(kind, **fields)``: a :data:`MESSAGES` line; ``answer(index, outcome=None, error=None)``: an
    item's answer and its ``done`` line."""
    parser, fmt, workload = row[0][1:4]
    if spec.get("format_modules"):
        try:
            _import_own(spec["format_modules"], parser, fmt)
        except Exception as exc:
            for index, *_ in row:
                answer(index, error=_error(exc))
            return
    if ":" in parser or ":" in workload.partition("+")[0]:
        # a plug-in, a team's generator: from the caller's folder or PYTHONPATH (only this fork lists them)
        sys.path.extend(spec.get("plugin_path", []))
    try:
        factory = _factory(parser, fmt)[0]
        if type(factory).__name__ == "LazyFactory":
            # a plug-in: import it and build one parser here, uninstrumented (an engine's imports and
            # tokenizer set-up took minutes under instrumentation in the first, uncounted stream)
            factory = factory.load()
            factory()
    except BaseException as exc:
        for index, *_ in row:
            answer(index, error=_error(exc))
        return
    from callscale.workloads.chunking import drive

    cases = {}
    for index, _, _, _, length in row:
        try:
            cases[index] = _case(workload, fmt, length, spec)
        except Exception as exc:
            cases[index] = f"workload {workload} for {fmt}: {_error(exc)}"
    requests.start()
    # a compiled engine's harness that counts its own work (callscale.adapters) gives its toggle
    collect, dump = getattr(factory, "callscale_collect", None) or requests.collect, requests.dump
    _settle_collector()
    collect()
    collect()
    dump("calibration")  # the toggle pair's own cost, subtracted from each count
    warm = False
    for index, *_ in row:
        if _skipped(index):
            continue
        case = cases[index]
        if isinstance(case, str):
            answer(index, error=case)
            continue
        deltas, tools, split = case
        driven = drive(factory, split)  # (detect: the non-streaming path, callscale.workloads.chunking.drive)
        say("case", index=f"{index:09d}")
        if not warm:
            # the row's first length once, uncounted: first-use costs (lazy
            # imports, regex compilation, specialised byte-code)
            try:
                _outcome(driven, deltas, tools)
            except Exception as exc:
                answer(index, error=_error(exc))
                continue
            warm = True
        _settle_collector()
        results: list = []
        error = None
        # The collector is off while counting: right after a freeze its long-lived total is 0, so
        # full collections would run often and traverse the results this harness keeps, a cost
        # that bends the counts of a parser returning many results (exponent 1.1 at 512-2k) and
        # that depends on the heap the stream runs in, not on the parser. The next
        # _settle_collector frees the stream's cycles, uncounted.
        gc.disable()
        collect()
        try:
            _stream_keeping(driven, deltas, tools, results)
        except Exception as exc:
            error = exc
        collect()
        gc.enable()
        dump(f"case {index:09d}")
        answer(index, outcome=_assembled(results) if error is None else None,
               error=None if error is None else _error(error))


def instructions(spec) -> None:
    """Count each item of the items file (``[parser, format, workload, length]``); see the module docstring.

    This process stays pristine: it imports what every fork needs and reads
    nothing of the selection but its size, so each fork starts from the same
    state whatever else the run measures; the fork reads its own item.
    """
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # a parser that prints writes to stderr, not into the protocol

    # taken now: a plug-in imported in a fork may replace open (or json's names) in its process
    dumps, line, open_file, write, close = json.dumps, message, os.open, os.write, os.close
    flags, folder = os.O_WRONLY | os.O_CREAT | os.O_TRUNC, os.getcwd()  # (or change directory)

    def say(kind: str, **fields: str) -> None:
        out.write(line(kind, **fields) + "\n")
        out.flush()

    def answer(index: int, outcome: dict | None = None, error: str | None = None) -> None:
        # the answer (an outcome is as long as the case) in a file: each line stays shorter than
        # PIPE_BUF, so the lines of two forks writing at once never interleave
        fd = open_file(f"{folder}/done.{index:09d}", flags, 0o600)
        try:
            view = memoryview(dumps({"outcome": outcome, "error": error}).encode("utf-8"))
            while view:
                view = view[write(fd, view):]
        finally:
            close(fd)
        say("done", index=f"{index:09d}")

    requests = ClientRequests()
    if spec.get("require_valgrind", True) and not requests.on_valgrind():
        raise SystemExit("callscale-child: the instructions mode runs under valgrind --tool=callgrind")
    _pristine(bool(spec.get("format_modules")))
    gc.collect()
    gc.freeze()
    # CPU seconds as fixed-width text: a float's repr has a varying length, and this process's heap
    # (which every fork starts from) must not depend on how long it took to get here
    say("ready", cpu=f"{time.process_time():012.3f}")
    fork, wait = os.fork, os.waitpid
    # Two forks at a time: fork N+1 starts as soon as fork N has, and fork N is waited for (in
    # order) before N+2 starts, so a hung case overlaps the next row. Every fork starts from the same
    # state, whatever its position, the timing and how the forks before it ended: before it, the
    # previous one was forked (for the first, a fork that ends at once), and the one before that
    # waited for and reported in a line of fixed length (``_ended``; no value of it is kept).
    first = fork()
    if first == 0:
        os._exit(0)
    previous = pid = fork()
    if pid == 0:
        os._exit(0)
    _ended(wait, first, -2, say)
    for number in range(spec["count"]):
        pid = fork()
        if pid == 0:  # the fork: one row, then gone
            code = 0
            # the collector's counters grew with this process's loop (a tuple per wait): start from zero
            gc.collect()
            try:
                with open(os.path.join(spec["items"], f"{number:06d}"), encoding="utf-8") as fh:
                    row = [[int(entry[0]), *entry[1:]] for entry in json.load(fh)]
                markers = os.path.join(spec["items"], f"{number:06d}.markers")
                if os.path.exists(markers):  # the format markers the caller read (@markup, @mixed)
                    from callscale.workloads import content

                    with open(markers, encoding="utf-8") as fh:
                        content.preset_markers(row[0][2], json.load(fh))
                # fixed-width numbers: what the fork allocates must not depend on its position or process id
                say("row", number=f"{number:09d}", pid=f"{os.getpid():09d}")
                if not _skipped(row[0][0]):
                    _count_row(spec, row, requests, say, answer)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        _ended(wait, previous, number - 1, say)
        previous = pid
    _ended(wait, previous, spec["count"] - 1, say)
    say("end", cpu=f"{time.process_time():012.3f}")


def _ended(wait, pid: int, number: int, say) -> None:
    """Wait for fork ``pid`` (row ``number``; negative: a placeholder fork) and say ``ended`` (its exit
    status signed, fixed width: the line is as long whatever the status, so the next fork starts from
    the same state)."""
    say("ended", number=f"{number:09d}", status=f"{os.waitstatus_to_exitcode(wait(pid, 0)[1]):+04d}")


#: The profile watchdog's wall-time ceiling, in multiples of its CPU-time limit (see :func:`_watchdog`).
WALL_FACTOR = 10.0


def _watchdog(cpu_limit: float, wall_limit: float | None = None, every: float = 0.1) -> threading.Thread:
    """End this process (exit status 4, the :data:`HUNG` line on stderr) once it has used ``cpu_limit``
    seconds of CPU time (``time.process_time``, every thread) or ``wall_limit`` wall seconds (default
    :data:`WALL_FACTOR` x ``cpu_limit``) from now, whichever comes first; checked every ``every`` s
    by a daemon thread.

    CPU time, not wall time, is the fair bound under load: on a machine with 15 runnable processes
    a 1.5 s sampling budget takes 10+ wall seconds, yet a parser that loops forever still spends
    CPU time at full rate and is stopped at ``cpu_limit``. A hang that waits (a lock, a sleep)
    spends none: the wall ceiling stops it.
    """
    wall = WALL_FACTOR * cpu_limit if wall_limit is None else wall_limit
    cpu_end, wall_end = time.process_time() + cpu_limit, time.monotonic() + wall

    def watch() -> None:
        while True:
            time.sleep(every)
            if time.process_time() >= cpu_end:
                what = f"{cpu_limit:g} s of CPU time"
            elif time.monotonic() >= wall_end:
                what = f"{wall:g} s of wall time"
            else:
                continue
            sys.stderr.write(f"{HUNG}{what}\n")
            sys.stderr.flush()
            os._exit(4)

    thread = threading.Thread(target=watch, name="callscale-watchdog", daemon=True)
    thread.start()
    return thread


def profile(spec) -> None:
    factory, fmt = _factory(spec["parser"], spec.get("format"))
    from callscale.workloads.chunking import drive

    deltas, tools, split = _case(spec["workload"], fmt, spec["length"], spec)
    factory = drive(factory, split)
    seconds = float(spec.get("seconds", 3.0))
    _watchdog(2 * seconds + 5)
    # CPU seconds, not wall seconds: on a busy machine the streaming still gets
    # its share of samples relative to start-up, which is CPU-bound too.
    deadline = time.process_time() + seconds
    while True:
        try:
            _stream(factory, deltas, tools)
        except Exception as exc:
            sys.stderr.write(RAISED + " ".join(f"{type(exc).__name__}: {exc}".split()) + "\n")
            sys.stderr.flush()
            os._exit(3)
        if time.process_time() >= deadline:
            break


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


def _use_caller_path(caller: list[str], pth_imports: list[str] | None = None) -> None:
    """Make the caller's import path (``spec["path"]``, its ``sys.path``) this process's (:func:`import_path`),
    and run the ``import`` lines of the ``.pth`` files in the caller's site-packages folders: ``pth_imports``
    when the caller read them (:func:`callscale.instructions.pth_imports`), else read here."""
    if not caller:
        return
    # not the working folder (``python -m`` puts it first): the metered child's holds its dump files
    own = [p for p in sys.path if p != os.getcwd()]
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


def main(argv: list[str]) -> int:
    text = argv[0]
    if text.startswith("@"):  # a spec too long for a command line, in a file
        with open(text[1:], encoding="utf-8") as fh:
            text = fh.read()
    spec = json.loads(text)
    _use_caller_path(spec.get("path", []), spec.get("pth_imports"))
    {"instructions": instructions, "profile": profile}[spec["kind"]](spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
