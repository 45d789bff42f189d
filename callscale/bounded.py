"""Run cases under a time budget in one reusable worker process.

A parser that loops forever cannot be stopped from a thread, so the cases
run in a child process: one :class:`Worker` is forked once and serves case
after case (no start-up cost per case); when a case overruns its budget the
worker is killed, the caller gets :class:`CaseTimeout`, and the next case
starts a fresh worker. The worker is forked (``multiprocessing`` "fork"
context), so it inherits the parsers, factories and workload makers of the
caller as they are, closures included; only each job and its result cross
the pipe (they must pickle).

    >>> with Worker(handler, timeout=120) as worker:
    ...     result = worker.call(job)      # handler(job), run in the worker
"""

from __future__ import annotations

import multiprocessing
import signal
from typing import Any, Callable

__all__ = ["Worker", "CaseTimeout", "WorkerFailed"]


class CaseTimeout(Exception):
    """A job ran longer than the worker's ``timeout`` (seconds); the worker was stopped."""


class WorkerFailed(RuntimeError):
    """The worker process ended without answering (killed, crashed, or the result did not pickle)."""


def _serve(conn: Any, handler: Callable[[Any], Any]) -> None:
    # Ctrl-C reaches the whole process group: the caller decides what it
    # means (and stops this worker), so the worker does not raise on it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            answer: tuple[str, Any] = ("ok", handler(job))
        except BaseException as exc:  # reported to the caller, who goes on
            answer = ("raised", f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        try:
            conn.send(answer)
        except Exception as exc:  # the result does not pickle
            conn.send(("raised", f"result cannot be sent back: {type(exc).__name__}: {exc}"))


class Worker:
    """A forked process that runs ``handler(job)`` for each :meth:`call`, ``timeout`` seconds at most.

    ``timeout``: wall seconds per job (``None``: no limit). :meth:`call`
    returns the handler's result; raises :class:`CaseTimeout` when the job
    overran (the worker is killed and replaced at the next call),
    :class:`WorkerFailed` when the worker died, and ``RuntimeError`` with
    the text ``"Type: message"`` when the handler raised.
    """

    def __init__(self, handler: Callable[[Any], Any], timeout: float | None) -> None:
        self.handler = handler
        self.timeout = timeout
        self._proc: Any = None
        self._conn: Any = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self.handler), daemon=True,
                                 name="callscale-worker")
        self._proc.start()
        child.close()
        self._conn = parent

    def call(self, job: Any) -> Any:
        if self._proc is None or not self._proc.is_alive():
            self.stop()
            self._start()
        try:
            self._conn.send(job)
            ready = self._conn.poll(self.timeout)
        except BaseException:  # an interrupt while waiting: do not leave the case running
            self.stop()
            raise
        if not ready:
            self.stop()
            raise CaseTimeout(f"stopped after {self.timeout:g} s")
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            self.stop()
            raise WorkerFailed(f"the worker process died (exit code {code})") from None
        if kind == "raised":
            raise RuntimeError(value)
        return value

    def stop(self) -> None:
        """Kill the worker (if any) and wait for it; the next :meth:`call` starts a new one."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
            self._proc = None

    def close(self) -> None:
        """Ask the worker to end, then make sure it has."""
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
