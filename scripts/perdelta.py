"""Instructions a delta for every built-in parser: the hot path of every format.

Counts each parser's streaming of each headline workload under callgrind
(``callscale.instructions.count_matrix``: exact, repeatable), divides by the
case's number of deltas and prints a Markdown table (parser x workload, in
thousands of instructions a delta) with the median and max rows.

    python scripts/perdelta.py                      # 8k characters, tokens:4
    python scripts/perdelta.py --length 8k --csv out.csv

Needs valgrind. Counts move by 1-2% with unrelated code changes (code
layout): compare two tables made in one session.
"""

from __future__ import annotations

import argparse
import csv
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
    args = ap.parse_args(argv)
    n = parse_size(args.length)
    names = args.parser or parsers.names()
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
    body = [[name, *(f"{table[name][w] / 1000:.1f}k" for w in WORKLOADS)] for name in names]
    body += [[f"**{label}**", *(f"{f([table[p][w] for p in names]) / 1000:.1f}k" for w in WORKLOADS)]
             for label, f in (("median", statistics.median), ("max", max))]
    print(tables.render(["parser", *WORKLOADS], body, markdown=True))
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            wr = csv.writer(fh)
            wr.writerow(["parser", "workload", "instructions", "deltas", "per_delta"])
            wr.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
