"""Instructions of one delta at a given held length: llama.cpp's update (``llamacpp:<template>``) against ours.

The gate's rows give a stream's total; where a quadratic parser's cost a
delta crosses ours needs the cost of one delta as a function of the text
already held. This script streams one case (default ``write_file`` in
``qwen3_coder`` at 64k, ``tokens:4``) natively up to each held length
(uninstrumented, so a 64k prefix takes seconds, not hours), then switches
callgrind's instrumentation on and counts the next ``--deltas`` deltas
(default 8) of each parser, one dump each, and prints the mean a delta.

What is counted: for ``llamacpp:`` the harness's update alone (as the
gate's instruction meter counts it: append, ``common_chat_parse``, ids,
``compute_diffs``); for ours the ``parse_streaming_increment`` call,
Python's call included. Needs valgrind and the built harness
(``callscale engines build llamacpp``).

    python scripts/llamacpp_crossover.py                     # Qwen3-Coder vs qwen3_coder
    python scripts/llamacpp_crossover.py --at 0,1k,4k,16k,64k --deltas 8
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from callscale import tables
from callscale.config import parse_size

STOP_INSTRUMENTATION_OFFSET = 5  # valgrind/callgrind.h: VG_USERREQ_TOOL_BASE('C', 'T') + 5


def _child(args: argparse.Namespace) -> None:
    from callscale._metered import _CT, ClientRequests
    from callscale.adapters import llamacpp
    from callscale.plugins import resolve
    from callscale.workloads import make

    requests = ClientRequests()
    stop = requests._block(_CT + STOP_INSTRUMENTATION_OFFSET)
    case = make(args.workload, args.format, parse_size(args.length), 0)
    deltas, tools = case.deltas(args.chunking), list(case.tools)
    theirs = llamacpp.factory(args.template)
    ours = resolve(args.ours).factory
    held = [0]
    for delta in deltas:
        held.append(held[-1] + len(delta))
    out = []
    for at in [parse_size(a) if a != "0" else 0 for a in args.at.split(",")]:
        k = next((i for i, h in enumerate(held) if h >= at), None)
        if k is None or k + args.deltas > len(deltas):
            out.append({"at": at, "error": "past the case's end"})
            continue
        row = {"at": at, "held": held[k]}
        for label, factory in (("theirs", theirs), ("ours", ours)):
            parser = factory()
            for delta in deltas[:k]:
                parser.parse_streaming_increment(delta, tools)
            collect = getattr(factory, "callscale_collect", None) or requests.collect
            requests.start()
            collect()
            for delta in deltas[k:k + args.deltas]:
                parser.parse_streaming_increment(delta, tools)
            collect()
            requests.dump(f"{label} {at}")
            requests._call(stop, 0)
            row[label + "_chars"] = sum(len(d) for d in deltas[k:k + args.deltas])
        out.append(row)
    print(json.dumps(out))


def _totals(path: Path) -> tuple[str, int]:
    """``(label, instructions)`` of one dump: its ``totals:`` line (the ``summary:`` line is wrong after
    callgrind's instrumentation is stopped and started again)."""
    text = path.read_text(errors="replace")
    label = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
    total = re.search(r"^totals: (\d+)", text, re.M)
    return (label.group(1).strip() if label else ""), int(total.group(1)) if total else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--template", default="Qwen3-Coder", help="llama.cpp chat template (default Qwen3-Coder)")
    ap.add_argument("--ours", default="qwen3_coder", help="our parser (default qwen3_coder)")
    ap.add_argument("--format", default="qwen3_coder")
    ap.add_argument("--workload", default="write_file")
    ap.add_argument("--length", default="64k", help="the case streamed (default 64k)")
    ap.add_argument("--chunking", default="tokens:4")
    ap.add_argument("--at", default="0,256,1k,2k,4k,8k,16k,32k,60k", help="held lengths (characters)")
    ap.add_argument("--deltas", type=int, default=8, help="deltas counted at each held length (default 8)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args)
        return 0
    from callscale.instructions import child_environment, interpreter

    with tempfile.TemporaryDirectory(prefix="callscale-crossover-") as tmp:
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
               f"--callgrind-out-file={tmp}/cg.out", "--dump-instr=no", "--compress-strings=no",
               interpreter(), os.path.abspath(__file__), "--child", *(argv if argv is not None else sys.argv[1:])]
        env = dict(child_environment(), PYTHONPATH=os.pathsep.join(sys.path))
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        rows = json.loads(done.stdout.strip().splitlines()[-1])
        counts = dict(_totals(Path(path)) for path in glob.glob(f"{tmp}/cg.out.*"))
    table = []
    for row in rows:
        if "error" in row:
            table.append((row["at"], "-", "-", "-", "-", row["error"]))
            continue
        theirs, ours = counts[f"theirs {row['at']}"] / args.deltas, counts[f"ours {row['at']}"] / args.deltas
        table.append((row["at"], row["held"], f"{theirs:,.0f}", f"{ours:,.0f}", f"{theirs / ours:.1f}x", ""))
    print(tables.render(["at", "held chars", f"llamacpp:{args.template} a delta", f"{args.ours} a delta",
                         "ratio", "note"], table, rule=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
