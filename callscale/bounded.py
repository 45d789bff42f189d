"""Run a parser's cases in a child process of its own, under a time and a memory budget.

Nothing a parser does reaches the harness: every parser under test is
imported, built and streamed in a :class:`Worker`, a forked child that
serves case after case (no start-up cost per case). The parent keeps its own
clock, files, working directory and output; what a parser does to its own
process (patching, ``os._exit``, ``sys.exit``, a signal, running out of
memory, changing directory) ends or spoils only its own worker, and the
caller gets the reason in words (:func:`exit_words`): ``exit 3``,
``killed by SIGSEGV``, ``timeout after 5 s``, ``out of memory``.

Each worker

- runs in a process group of its own, so stopping it (:meth:`Worker.stop`)
  kills whatever the parser started too;
- dies with its parent: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (Linux), and it
  ends when the pipe to the parent closes, so a parent killed by SIGKILL (as
  ``timeout -s KILL`` in CI does) leaves no worker spinning;
- has its address space limited to ``memory_limit`` bytes
  (``resource.RLIMIT_AS``, :func:`limit_memory`): a parser that allocates
  more gets ``MemoryError`` (reported as ``out of memory``) instead of
  taking the machine;
- cannot leave a process behind: the caller is the subreaper of its
  descendants (:func:`own_descendants`), so a process a parser starts in a
  new session (``setsid``) comes back to it when its parent ends, and is
  killed when the run ends, before the results are written;
- ignores SIGINT (Ctrl-C goes to the parent, who stops the worker) and
  freezes the objects it inherited (``gc.freeze()``), so the collections the
  meters run between streams only walk the parser's own objects.

The worker is forked (``multiprocessing`` "fork" context), so it inherits the
caller's handler as it is, closures included; only each job and its result
cross the pipe (they must pickle).

    >>> with Worker(handler, timeout=120) as worker:
    ...     result = worker.call(job)      # handler(job), run in the worker

:func:`terminate_as_interrupt` makes SIGTERM stop a run as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
from dataclasses import dataclass
from typing import Any, Callable, Iterator

__all__ = ["Worker", "Workers", "Answer", "CaseTimeout", "WorkerFailed", "exit_words", "timeout_words", "limit_memory",
           "die_with_parent", "WALL_CEILING", "cpu_seconds", "become_subreaper", "descendants", "stop_descendants", "own_descendants", "stop_new", "OUT_OF_MEMORY", "DEFAULT_MEMORY_LIMIT", "terminate_as_interrupt", "Terminated"]

OUT_OF_MEMORY = "out of memory"
"""The reason of a case that ran out of its memory budget."""

DEFAULT_MEMORY_LIMIT = 4 * 1024 ** 3
"""Bytes of address space a worker may take unless told otherwise (``--memory-limit``, 4 GiB)."""


WALL_CEILING = 10.0
"""The wall-clock ceiling of one case, in multiples of ``timeout``: the timeout counts the case's CPU time (a
loaded machine only slows it), up to this many times the timeout in wall time (a case asleep or blocked)."""


def cpu_seconds(pid: int) -> float | None:
    """The CPU seconds (user + system) process ``pid`` has used (Linux ``/proc/PID/stat``), or ``None``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class CaseTimeout(Exception):
    """A job ran longer than the worker's ``timeout`` (seconds); the worker was stopped.
    The message is :func:`timeout_words`."""


class WorkerFailed(RuntimeError):
    """The worker process ended without answering; the message is :func:`exit_words` of its status."""


def timeout_words(seconds: float) -> str:
    """``timeout after 5 s``: the reason of a case stopped after ``seconds``."""
    return f"timeout after {seconds:g} s"


def exit_words(status: int | None) -> str:
    """A process's end in words, from its exit status as ``multiprocessing`` and ``subprocess`` give it
    (negative: killed by that signal).

    ``0`` -> ``exit 0``; ``3`` -> ``exit 3``; ``-11`` -> ``killed by SIGSEGV``;
    ``-9`` -> ``killed by SIGKILL``; ``None`` (still running, or unknown) -> ``ended without a status``.
    A shell's ``128 + N`` is not decoded (it is an exit status like any other).
    """
    if status is None:
        return "ended without a status"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}"
    return f"exit {status}"


def limit_memory(nbytes: int | None) -> None:
    """Limit this process's address space to ``nbytes`` (``resource.RLIMIT_AS``; ``None``: no limit).

    Call it in the child (a forked worker, or a ``subprocess`` ``preexec_fn``),
    never in the harness. Allocations past the limit fail: Python raises
    ``MemoryError``, which the workers report as :data:`OUT_OF_MEMORY`. A
    limit below the hard limit only; a failure to set it is ignored.
    """
    if nbytes is None:
        return
    import resource

    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            nbytes = min(nbytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, hard))
    except (ValueError, OSError):
        pass


def die_with_parent(parent_pid: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux ``PR_SET_PDEATHSIG``, via
    ctypes; a no-op elsewhere). When ``parent_pid`` is given and the parent is already gone, exit now."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``, via ctypes): a
    process a parser starts in a new session (``setsid``, a daemon's double fork) is re-parented here, not
    to init, when its parent ends, so :func:`stop_descendants` finds it. False where it is not supported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER = 36
    except (OSError, AttributeError):
        return False


def descendants(pid: int | None = None) -> list[int]:
    """The process ids below ``pid`` (default this process), children before their children (Linux
    ``/proc/PID/task/*/children``; empty where that is not readable)."""
    pid = os.getpid() if pid is None else pid
    found: list[int] = []
    todo = [pid]
    while todo:
        here = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{here}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{here}/task/{task}/children", encoding="ascii") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except (OSError, ValueError):
                continue
            for kid in kids:
                if kid not in found:
                    found.append(kid)
                    todo.append(kid)
    return found


def stop_descendants(keep: Any = (), rounds: int = 5) -> list[int]:
    """SIGKILL every descendant of this process not in ``keep`` (ids that were there before), and reap the
    direct children among them; repeated while new ones appear (a killed process's orphans are re-parented
    here, under :func:`become_subreaper`). Returns the ids stopped."""
    stopped: list[int] = []
    for _ in range(rounds):
        found = [pid for pid in descendants() if pid not in keep and pid not in stopped]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        stopped += found
        for pid in found:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # not our child (a grandchild): its parent reaps it, or it comes here
                pass
            except OSError:
                pass
    return stopped


_BEFORE: list[set[int]] = []


@contextlib.contextmanager
def own_descendants() -> Iterator[None]:
    """Within the block, this process is its descendants' subreaper; on leaving it, every process started in
    the block that still runs (a parser's detached process included) is killed (:func:`stop_descendants`).
    Processes that ran before the block are left alone. :func:`stop_new` does the same inside the block
    (the command line calls it when measuring ends, before any result is written)."""
    become_subreaper()
    _BEFORE.append(set(descendants()))
    try:
        yield
    finally:
        stop_descendants(keep=_BEFORE.pop())


def stop_new() -> list[int]:
    """Inside :func:`own_descendants`: kill the descendants started since it began (else nothing)."""
    return stop_descendants(keep=_BEFORE[-1]) if _BEFORE else []


def _serve(conn: Any, handler: Callable[[Any], Any], parent_pid: int, memory_limit: int | None) -> None:
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    die_with_parent(parent_pid)
    # Ctrl-C reaches the foreground group: the caller decides what it means and stops this worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    limit_memory(memory_limit)
    gc.collect()
    gc.freeze()  # what was inherited is not the parser's: collections skip it
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            answer: tuple[str, Any] = ("ok", handler(job))
        except MemoryError:
            answer = ("raised", OUT_OF_MEMORY)
        except BaseException as exc:  # reported to the caller, who goes on (SystemExit included)
            answer = ("raised", f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        try:
            conn.send(answer)
        except MemoryError:
            conn.send(("raised", OUT_OF_MEMORY))
        except Exception as exc:  # the result does not pickle
            conn.send(("raised", f"result cannot be sent back: {type(exc).__name__}: {exc}"))


class Worker:
    """A forked process that runs ``handler(job)`` for each :meth:`call`, ``timeout`` seconds at most.

    ``timeout``: wall seconds per job (``None``: no limit); ``memory_limit``:
    bytes of address space (``None``: no limit). :meth:`call` returns the
    handler's result; raises :class:`CaseTimeout` when the job overran (the
    worker's process group is killed; the next call starts a new worker),
    :class:`WorkerFailed` when the worker died (its status in words), and
    ``RuntimeError`` with the text ``"Type: message"`` (or ``out of
    memory``) when the handler raised.
    """

    def __init__(self, handler: Callable[[Any], Any], timeout: float | None,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> None:
        self.handler = handler
        self.timeout = timeout
        self.memory_limit = memory_limit
        self._proc: Any = None
        self._conn: Any = None

    @property
    def pid(self) -> int | None:
        """The worker's process id (also its process group's), or ``None`` when none runs."""
        return self._proc.pid if self._proc is not None else None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self.handler, os.getpid(), self.memory_limit),
                                 daemon=True, name="callscale-worker")
        self._proc.start()
        try:
            os.setpgid(self._proc.pid, self._proc.pid)  # both sides set it: no race with stop()
        except OSError:
            pass
        child.close()
        self._conn = parent

    def call(self, job: Any) -> Any:
        if self._proc is None or not self._proc.is_alive():
            self.stop()
            self._start()
        try:
            self._conn.send(job)
            ready = self._wait()
        except (BrokenPipeError, ConnectionResetError):
            ready = True  # it died: recv below says how
        except BaseException:  # an interrupt while waiting: do not leave the case running
            self.stop()
            raise
        if not ready:
            self.stop()
            raise CaseTimeout(timeout_words(self.timeout))
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            proc = self._proc
            proc.join(timeout=5)
            code = proc.exitcode
            self.stop()
            raise WorkerFailed(exit_words(code)) from None
        if kind == "raised":
            raise RuntimeError(value)
        return value

    def _wait(self) -> bool:
        """Wait for the answer: ``timeout`` seconds of the worker's CPU time, up to :data:`WALL_CEILING` times
        ``timeout`` of wall time (load only slows a case: it does not make it a timeout). True when it came."""
        if self.timeout is None:
            return self._conn.poll(None)
        import time

        start, cpu_start = time.monotonic(), cpu_seconds(self._proc.pid)
        wait = self.timeout
        while True:
            if self._conn.poll(wait):
                return True
            used = cpu_seconds(self._proc.pid)
            if used is None or cpu_start is None:  # no CPU clock here: wall time it is
                return False
            left = self.timeout - (used - cpu_start)
            ceiling = start + WALL_CEILING * self.timeout - time.monotonic()
            if left <= 0 or ceiling <= 0:
                return False
            wait = min(max(left, 0.05), ceiling)

    def stop(self) -> None:
        """Kill the worker's process group (if any) and wait for it; the next :meth:`call` starts a new one."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:
                if self._proc.is_alive():
                    self._proc.kill()
            self._proc.join()
            self._proc = None

    def close(self) -> None:
        """Ask the worker to end, then make sure it has (and whatever it started)."""
        if self._conn is not None and self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(None)
                self._proc.join(timeout=2)
            except (OSError, BrokenPipeError):
                pass
        self.stop()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class Answer:
    """What one job of a :class:`Workers` pool gave: the handler's ``value``, or ``error`` in words
    (``timeout after N s``, ``exit 3``, ``killed by SIGSEGV``, ``out of memory``, ``Type: message``);
    ``timed_out`` when the job overran its budget (its worker was stopped)."""

    value: Any = None
    error: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


class Workers:
    """One :class:`Worker` per key (a parser), each started at its key's first job: the one
    worker-with-timeout loop of the gate (:func:`callscale.matrix.run`) and of ``check``
    (:func:`callscale.check.run_bounded`).

    ``handler_for(key)``: the handler of that key's worker (called once per worker, in this
    process; the worker is forked, so closures do). :meth:`call` never raises for what a job does
    (it answers with the reason); on Ctrl-C it stops the job's worker and lets the interrupt
    through. Used as a context manager, it ends every worker on the way out: gracefully
    (:meth:`Worker.close`), or killed (:meth:`Worker.stop`) when an interrupt passes.

        >>> with Workers(lambda name: handlers[name], timeout=120) as pool:
        ...     answer = pool.call("deepseek_v31", job)    # answer.value, or answer.error
    """

    def __init__(self, handler_for: Callable[[Any], Callable[[Any], Any]], timeout: float | None,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> None:
        self.handler_for = handler_for
        self.timeout = timeout
        self.memory_limit = memory_limit
        self._workers: dict[Any, Worker] = {}

    def call(self, key: Any, job: Any) -> Answer:
        """Run ``job`` in ``key``'s worker (started if none runs): its value, or why there is none."""
        worker = self._workers.get(key)
        if worker is None:
            worker = self._workers[key] = Worker(self.handler_for(key), self.timeout, self.memory_limit)
        try:
            return Answer(worker.call(job))
        except CaseTimeout as exc:
            return Answer(error=str(exc), timed_out=True)
        except Exception as exc:  # the worker died, or the handler raised there
            return Answer(error=str(exc))

    def retire(self, key: Any) -> None:
        """End ``key``'s worker (if any): its next job starts a fresh one."""
        worker = self._workers.pop(key, None)
        if worker is not None:
            worker.close()

    def stop(self) -> None:
        """Kill every worker (and whatever each started)."""
        for worker in self._workers.values():
            worker.stop()

    def close(self) -> None:
        """Ask every worker to end, then make sure each has."""
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            self.stop()
        self.close()


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: raised where a run is, so it stops as on Ctrl-C (children killed, partial results kept)."""


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) in the main thread,
    so a run stopped by ``timeout(1)`` or CI ends as one stopped by Ctrl-C does. Outside the main
    thread it does nothing."""
    def handler(signum: int, frame: Any) -> None:
        raise Terminated("SIGTERM")

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
