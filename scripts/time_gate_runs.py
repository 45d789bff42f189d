"""The default time gate run again and again: how often it fails a good parser on a shared machine, and a
Markdown record of the runs (docs/measurements/).

    python scripts/time_gate_runs.py --runs 10 --out docs/measurements/DATE-time-gate-runs.md
    python scripts/time_gate_runs.py --runs 10 --beside "python -m pytest -q -n auto -m 'not slow'"

Each run is ``python -m callscale gate --no-progress --out DIR`` (every built-in parser, the default rows,
process time) from this checkout, one after another. ``--beside COMMAND``: that command is started before
the first run and started again whenever it ends, so every run has it beside it (it is stopped after the
last run). Recorded per run: exit status, wall seconds, the 1-minute load average before and after, the
pairs given a second look and how each ended (the gate's ``second look:`` line), and the closing verdict
line. Exit 1 when any run did not pass (a false failure: every built-in parser is linear), else 0.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _second_look(out: str) -> str:
    """The gate's ``second look:`` line with its continuation lines, on one line; ``-`` when it has none."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("second look: "):
            text = [line]
            text += [ln.strip() for ln in lines[i + 1:] if ln.startswith("  ")][:3]
            return " ".join(text).removeprefix("second look: ")
    return "-"


def _start(command: str) -> subprocess.Popen:
    return subprocess.Popen(command, shell=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--beside", metavar="COMMAND", help="a shell command kept running beside every run")
    p.add_argument("--out", help="write the Markdown record here (default: stdout)")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "no git"
    rows, beside, restarts = [], None, 0
    try:
        for n in range(1, args.runs + 1):
            if args.beside and (beside is None or beside.poll() is not None):
                restarts += beside is not None
                beside = _start(args.beside)
            with tempfile.TemporaryDirectory() as out:
                load = os.getloadavg()[0]
                start = time.monotonic()
                proc = subprocess.run([sys.executable, "-m", "callscale", "gate", "--no-progress", "--out", out],
                                      cwd=ROOT, capture_output=True, text=True)
                wall = time.monotonic() - start
            closing = [ln for ln in proc.stdout.splitlines() if re.match(r"gate (passed|failed): ", ln)]
            rows.append((n, proc.returncode, wall, load, os.getloadavg()[0], _second_look(proc.stdout),
                         closing[-1] if closing else proc.stderr.strip()[-200:]))
            print(f"run {n}: exit {proc.returncode}, {wall:.0f} s", file=sys.stderr, flush=True)
    finally:
        _stop(beside)
    failed = [r for r in rows if r[1] != 0]
    lines = [f"# The default time gate, {args.runs} runs in a row ({date.today().isoformat()})", "",
             f"Made by `python scripts/time_gate_runs.py --runs {args.runs}"
             + (f" --beside {shlex.quote(args.beside)}" if args.beside else "") + f"` at commit {commit}, on a machine "
             f"of {os.cpu_count()} cores. Each run: `callscale gate --no-progress` (every built-in parser, the "
             "default rows, process time)" + (f"; beside every run: `{args.beside}` (started {restarts + 1} times)"
                                               if args.beside else "") + ".", "",
             f"Runs that failed: {len(failed)} of {len(rows)}.", "",
             "| run | exit | wall s | load before | load after | second look | closing line |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {n} | {rc} | {wall:.0f} | {a:.2f} | {b:.2f} | {look.replace('|', '/')} | {close.replace('|', '/')} |"
              for n, rc, wall, a, b, look, close in rows]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
