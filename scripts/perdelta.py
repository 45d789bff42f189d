"""Instructions a delta for every built-in parser: the hot path of every format.

Counts each parser's streaming of each headline workload under callgrind
(``callscale.instructions.count_matrix``: exact, repeatable), divides by the
case's number of deltas and prints a Markdown table (parser x workload, in
thousands of instructions a delta) with the median and max rows.

    python scripts/perdelta.py                      # 8k characters, tokens:4
    python scripts/perdelta.py --length 8k --csv out.csv
    python scripts/perdelta.py --new sarashina --new minicpm5 --out docs/measurements/DATE-NAME.md

``--new``: parsers measured against the others: one more row, the median of the parsers not named, and
each named parser's cells against it. ``--out``: the table also written as a dated record (the
command, the Python version, the table).

Needs valgrind. Counts move by 1-2% with unrelated code changes (code
layout): compare two tables made in one session.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import platform
import shlex
import statistics
import sys

from callscale import parsers, tables
from callscale.config import parse_size
from callscale.instructions import count_matrix
from callscale.workloads import catalog

WORKLOADS = ("write_file", "many_short_calls", "repeated_opener")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", default="8k", help="characters (k = 1024; default 8k)")
    ap.add_argument("--chunking", default="tokens:4")
    ap.add_argument("--parser", action="append", help="a registered parser (repeatable; default all)")
    ap.add_argument("--csv", help="also write parser,workload,instructions,deltas,per_delta rows here")
    ap.add_argument("--new", action="append", default=[],
                    help="a parser measured against the others (repeatable): the others' median row, and its cells against it")
    ap.add_argument("--out", help="also write the table as a dated Markdown record here")
    args = ap.parse_args(argv)
    n = parse_size(args.length)
    names = args.parser or parsers.names()
    unknown = [p for p in args.new if p not in names]
    if unknown:
        ap.error(f"--new names parsers not measured: {', '.join(unknown)}")
    table: dict[str, dict[str, float]] = {}
    rows = []
    for name in names:
        counts = count_matrix([name], name, WORKLOADS, [n], args.chunking)
        for w in WORKLOADS:
            case = catalog.make(w, name, n)
            deltas = len(case.deltas(args.chunking))
            per = counts[(name, w, n)] / deltas
            table.setdefault(name, {})[w] = per
            rows.append((name, w, counts[(name, w, n)], deltas, round(per)))
        print(f"  {name}: " + ", ".join(f"{w} {table[name][w] / 1000:.1f}k" for w in WORKLOADS),
              file=sys.stderr, flush=True)
    body = [[name, *(f"{table[name][w] / 1000:.2f}k" for w in WORKLOADS)] for name in names]
    body += [[f"**{label}**", *(f"{f([table[p][w] for p in names]) / 1000:.2f}k" for w in WORKLOADS)]
             for label, f in (("median", statistics.median), ("max", max))]
    others = [p for p in names if p not in args.new]
    if args.new and others:
        median = {w: statistics.median(table[p][w] for p in others) for w in WORKLOADS}
        body.append(["**median of the others**", *(f"{median[w] / 1000:.2f}k" for w in WORKLOADS)])
        body += [[f"{p} against it", *(f"{table[p][w] / median[w] - 1:+.1%}" for w in WORKLOADS)] for p in args.new]
    text = tables.render(["parser", *WORKLOADS], body, markdown=True)
    print(text)
    if args.out:
        command = "python scripts/perdelta.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        with open(args.out, "w") as fh:
            fh.write(f"# Instructions a delta, {len(names)} parsers, {args.length} characters, {args.chunking}\n\n"
                     f"Measured {datetime.date.today().isoformat()} (Python {platform.python_version()}, "
                     "callgrind: exact, repeatable for one commit; code layout moves counts by 1-2% between commits). "
                     f"Made by:\n\n```sh\n{command}\n```\n\n"
                     "Thousands of instructions a delta (the case's count divided by its number of deltas).\n\n"
                     f"{text}\n")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            wr = csv.writer(fh)
            wr.writerow(["parser", "workload", "instructions", "deltas", "per_delta"])
            wr.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
