"""Child process for the meters that watch a whole process: callgrind and py-spy.

Run as ``python -m callscale._child SPEC`` where SPEC is one JSON object:
``mode``, ``format``, ``chunking``, ``seed``, and

- ``instructions``: ``parsers``, ``workloads``, ``lengths`` (characters).
  For each workload x length x parser, between two calls of the marker
  function (:data:`callscale.instructions.MARKER_SYMBOL`) the child does
  nothing but stream the case through a fresh parser and call ``finish``.
- ``profile``: ``parser``, ``workload``, ``length``, ``seconds`` (how long to
  keep streaming, in CPU seconds, so the sampler collects enough samples).
``profile``: streams the case through fresh parsers again and again for
``seconds``, so the profile is dominated by the parser's own frames. A
parser that raises ends the child with exit status 3 and the line
``callscale-child: the parser raised: Type: message`` on stderr; one that does
not finish (a hang) is ended by a watchdog after ``2 * seconds + 5`` wall
seconds with exit status 4 and ``callscale-child: the case did not finish ...``.
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


def _factory(name: str, fmt: str | None):
    from callscale.plugins import resolve

    chosen = resolve(name, fmt)
    return chosen.factory, fmt or chosen.format


def _case(workload: str, fmt: str, length: int, spec) -> tuple[list[str], list]:
    from callscale.workloads import make

    case = make(workload, fmt, length, spec.get("seed", 0))
    return case.deltas(spec["chunking"]), list(case.tools)


def _stream(factory, deltas, tools) -> None:
    parser = factory()
    feed = parser.parse_streaming_increment
    for delta in deltas:
        feed(delta, tools)
    parser.finish(tools)


def instructions(spec) -> None:
    fmt = spec["format"]
    factories = {name: _factory(name, fmt)[0] for name in spec["parsers"]}
    # Warm-up: the first stream of a parser pays one-time costs (lazy
    # imports, regex compilation, caches); they belong to start-up.
    for workload in spec["workloads"]:
        deltas, tools = _case(workload, fmt, min(spec["lengths"]), spec)
        for factory in factories.values():
            _stream(factory, deltas, tools)
    marker = sys.getswitchinterval  # callgrind dumps its counters on entry to this
    marker()  # end of start-up, imports and warm-up
    for workload in spec["workloads"]:
        for length in spec["lengths"]:
            deltas, tools = _case(workload, fmt, length, spec)
            for name in spec["parsers"]:
                factory = factories[name]
                gc.collect()
                marker()
                _stream(factory, deltas, tools)
                marker()
    marker()
    marker()  # the calibration pair: the marker's own cost


def _watchdog(limit: float) -> None:
    def stop() -> None:
        sys.stderr.write(f"{HUNG}{limit:g} s\n")
        sys.stderr.flush()
        os._exit(4)

    timer = threading.Timer(limit, stop)
    timer.daemon = True
    timer.start()


def profile(spec) -> None:
    factory, fmt = _factory(spec["parser"], spec.get("format"))
    deltas, tools = _case(spec["workload"], fmt, spec["length"], spec)
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


def _use_caller_path(caller: list[str]) -> None:
    """Make the caller's import path (``spec["path"]``, its ``sys.path``) this process's (:func:`import_path`);
    the caller's site-packages folders go through ``site.addsitedir`` so their ``.pth`` files apply."""
    if not caller:
        return
    import os
    import site

    sys.path[:] = import_path(sys.path, caller, os.environ.get("PYTHONPATH", "").split(os.pathsep))
    for path in caller:
        if _site_dir(path):
            site.addsitedir(path)


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    _use_caller_path(spec.get("path", []))
    {"instructions": instructions, "profile": profile}[spec.get("mode", "instructions")](spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
