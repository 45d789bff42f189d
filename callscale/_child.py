"""Child process for the meters that watch a whole process: callgrind and py-spy.

Run as ``python -m callscale._child SPEC`` where SPEC is one JSON object:
``mode`` (``instructions`` or ``profile``), ``parser``, ``format``,
``workload``, ``lengths`` (characters), ``chunking``, ``seed`` and, for
``profile``, ``seconds`` (how long to keep streaming, so the sampler
collects enough samples).

``instructions``: between two calls of the marker function
(:data:`callscale.instructions.MARKER_SYMBOL`) the child does nothing but
stream one case through a fresh parser and call ``finish``.
``profile``: streams the case through fresh parsers again and again for
``seconds``, so the profile is dominated by the parser's own frames.
"""

from __future__ import annotations

import gc
import json
import sys
import time


def _cases(spec):
    from callscale.plugins import resolve
    from workloads import make

    chosen = resolve(spec["parser"], spec.get("format"))
    factory, fmt = chosen.factory, spec.get("format") or chosen.format
    for length in spec["lengths"]:
        case = make(spec["workload"], fmt, length, spec.get("seed", 0))
        yield factory, case.deltas(spec["chunking"]), list(case.tools)


def _stream(factory, deltas, tools) -> None:
    parser = factory()
    feed = parser.parse_streaming_increment
    for delta in deltas:
        feed(delta, tools)
    parser.finish(tools)


def instructions(spec) -> None:
    cases = list(_cases(spec))
    # Warm-up: the first stream pays one-time costs (lazy imports, regex
    # compilation, caches); they belong to start-up, not to any length.
    _stream(*cases[0])
    marker = sys.getswitchinterval  # callgrind dumps its counters on entry to this
    marker()  # end of start-up, imports and warm-up
    for factory, deltas, tools in cases:
        gc.collect()
        marker()
        _stream(factory, deltas, tools)
        marker()
    marker()
    marker()  # the calibration pair: the marker's own cost


def profile(spec) -> None:
    for factory, deltas, tools in _cases(spec):
        deadline = time.perf_counter() + float(spec.get("seconds", 3.0))
        while True:
            _stream(factory, deltas, tools)
            if time.perf_counter() >= deadline:
                break


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    {"instructions": instructions, "profile": profile}[spec.get("mode", "instructions")](spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
