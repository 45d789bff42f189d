"""``callscale compare BASE.csv NEW.csv``: the two runs side by side; exit 1 when a pair got worse.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .measuring import write_summary
from .options import add_summary, export_targets, parser_of, setting_type


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale compare``'s options."""
    p.add_argument("base", metavar="BASE", help="scaling.csv of the base run (e.g. the main branch)")
    p.add_argument("new", metavar="NEW", help="scaling.csv of the new run (e.g. the pull request)")
    p.add_argument("--max-ratio", type=setting_type("max_ratio"), metavar="R",
                   help="largest new/base cost at one length that passes (default 1.05 under the instruction "
                        "meter, 1.5 by time)")
    p.add_argument("--max-step", type=setting_type("max_step"), metavar="X",
                   help="largest exponent increase that passes (default 0.05 under the instruction meter, "
                        "0.25 by time)")
    add_summary(p)


def run(args: argparse.Namespace) -> int:
    """``callscale compare``: 1 when a pair got worse or the summary cannot be written, else 0; 2 bad input."""
    p = parser_of(args, "compare")
    from .. import compare

    export_targets(p, args)  # --summary: a regular file's path

    try:
        base, new = compare.load(args.base), compare.load(args.new)
        result = compare.compare(base, new, max_ratio=args.max_ratio, max_step=args.max_step)
    except compare.CompareError as exc:
        p.error(str(exc))
    print(compare.table(result))
    print()
    for line in compare.summary(result):
        print(line)
    from .. import environment, summary

    differ = environment.differences(environment.read(environment.beside(args.base)),
                                     environment.read(environment.beside(args.new)), result.meter,
                                     base_name=f"the base {args.base}")
    for line in differ:
        print(line)
    ok = write_summary(summary.compare_markdown(result, args.base, args.new, differ),
                       Path(args.summary) if args.summary is not None else None)
    return 1 if result.worse or not ok else 0
