"""What the default exact gate costs: wall and CPU seconds of ``callscale gate --meter instructions`` per
checkout, back to back, and a Markdown record of them (docs/measurements/).

    python scripts/gate_cost.py --checkout before=/tmp/old --checkout after=. --parser qwen3 --parser glm47 \
        --jobs 1 --rounds 2 --out docs/measurements/DATE-gate-cost.md

Each round runs every checkout once per selection (interleaved, so load falls on both alike); a run is
``python -m callscale gate --meter instructions --jobs N --no-progress`` with ``PYTHONPATH`` set to the
checkout, its CPU the children's (``resource.RUSAGE_CHILDREN``: the gate, its callgrind children, their
forks and its workers). ``--per-workload``: also one run per default workload of the first parser (what
each row costs). ``--every-parser``: one run of the whole default gate (every built-in parser) per
checkout. The machine is shared: the 1-minute load average before and after each run is recorded.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path


def one(checkout: Path, args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    env.pop("CALLSCALE_CHILD_TMPDIR", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "callscale", "gate", "--meter", "instructions", "--no-progress", *args],
                          cwd=checkout, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr.strip()[-200:]
    return {"wall": wall, "cpu": cpu, "load": (load, os.getloadavg()[0]), "status": proc.returncode, "last": last}


def _commit(path: Path) -> str:
    """The checkout's commit (``git rev-parse --short HEAD``, with ``+`` when it has changes), or ``no git``."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "no git: name its commit as LABEL=PATH@COMMIT"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkout", action="append", required=True, metavar="LABEL=PATH[@COMMIT]",
                   help="a checkout to measure (COMMIT: what it holds, where PATH is an exported tree, not a git one)")
    p.add_argument("--parser", action="append", default=[])
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--per-workload", action="store_true")
    p.add_argument("--every-parser", action="store_true")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    checkouts = [(c.split("=", 1)[0], Path(c.split("=", 1)[1].split("@", 1)[0]).resolve()) for c in args.checkout]
    commits = {c.split("=", 1)[0]: (c.split("@", 1)[1] if "@" in c.split("=", 1)[1] else _commit(Path(c.split("=", 1)[1])))
               for c in args.checkout}
    selections = [(name, ["--parser", name]) for name in args.parser]
    if args.per_workload and args.parser:
        sys.path.insert(0, str(checkouts[-1][1]))
        from callscale.config import DEFAULTS

        selections += [(f"{args.parser[0]} on {w}", ["--parser", args.parser[0], "--workload", w])
                       for w in DEFAULTS.workloads]
    if args.every_parser:
        selections.append(("every built-in parser", []))
    rows = []
    for round_ in range(args.rounds):
        for what, extra in selections:
            for label, path in checkouts:
                got = one(path, ["--jobs", str(args.jobs), *extra])
                rows.append((round_ + 1, what, label, got))
                print(f"round {round_ + 1} {what} {label}: {got['wall']:.1f} s wall, {got['cpu']:.1f} s CPU, load "
                      f"{got['load'][0]:.1f} -> {got['load'][1]:.1f}, exit {got['status']}: {got['last'][:90]}",
                      flush=True)
    if args.out is not None:
        lines = [f"# The default exact gate's cost, {' vs '.join(label for label, _ in checkouts)}", "",
                 f"Measured {date.today().isoformat()} on the 2-core shared machine. Made by:", "", "```sh",
                 "python scripts/gate_cost.py " + " ".join(a if " " not in a else repr(a) for a in (argv or sys.argv[1:])),
                 "```", "", f"`callscale gate --meter instructions --jobs {args.jobs} --no-progress` and the selection; "
                 "CPU: the run's children (the gate, its callgrind children and their forks, its workers).", "",
                 "| round | selection | checkout | wall | CPU | load (1 min, start -> end) | exit |", "|---|---|---|---|---|---|---|"]
        for round_, what, label, got in rows:
            lines.append(f"| {round_} | {what} | {label} | {got['wall']:.1f} s | {got['cpu']:.1f} s | "
                         f"{got['load'][0]:.1f} -> {got['load'][1]:.1f} | {got['status']} |")
        lines += ["", "Checkouts: " + "; ".join(f"{label} = {path} ({commits[label]})" for label, path in checkouts), ""]
        args.out.write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
