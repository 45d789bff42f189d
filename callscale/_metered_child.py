"""Child process of the instruction meter (run under callgrind; see callscale.instructions).

Argument: one JSON object with parser, format, workload, lengths, chunking,
seed. Between two calls of the marker function the child does nothing but
stream one case through a fresh parser and call ``finish``.
"""

from __future__ import annotations

import gc
import json
import sys


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    from callscale.plugins import load_parser
    from workloads import make

    factory, fmt = load_parser(spec["parser"], spec.get("format"))
    marker = sys.getswitchinterval  # callgrind dumps its counters on entry to this
    marker()  # end of start-up and imports
    for length in spec["lengths"]:
        case = make(spec["workload"], fmt, length, spec.get("seed", 0))
        deltas = case.deltas(spec["chunking"])
        tools = list(case.tools)
        parser = factory()
        feed = parser.parse_streaming_increment
        gc.collect()
        marker()
        for delta in deltas:
            feed(delta, tools)
        parser.finish(tools)
        marker()
    marker()
    marker()  # the calibration pair: the marker's own cost
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
