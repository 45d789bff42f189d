"""Child process for the meter that watches a whole process: py-spy's profile.

Run as ``python -m callscale._child REQUEST`` where REQUEST is one JSON object (or ``@PATH``, a file
holding it), ``{"kind": KIND, ...}``: every kind and its fields are in :data:`REQUESTS`. (The
instruction meter's child is :mod:`callscale._metered`.)

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

import json
import os
import sys
import threading
import time

from callscale._metered import import_path, use_caller_path  # noqa: F401  (import_path re-exported)

RAISED = "callscale-child: the parser raised: "
HUNG = "callscale-child: the case did not finish within "


REQUESTS: dict[str, tuple[str, ...]] = {
    # every request also carries ``path`` (the caller's ``sys.path``) and may carry ``pth_imports``
    # (the ``import`` lines of its ``.pth`` files) and ``seed`` (the workloads', default 0)
    "profile": ("parser", "format", "workload", "length", "chunking", "seconds"),
}
"""What the child is asked: ``{"kind": KIND, FIELD: value, ...}``, the fields of each kind (see the
module docstring for their meaning)."""


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


def main(argv: list[str]) -> int:
    text = argv[0]
    if text.startswith("@"):  # a spec too long for a command line, in a file
        with open(text[1:], encoding="utf-8") as fh:
            text = fh.read()
    spec = json.loads(text)
    use_caller_path(spec.get("path", []), spec.get("pth_imports"))
    {"profile": profile}[spec["kind"]](spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
