"""``callscale history``: from asv's results, write a self-contained HTML page, PNGs and ``history.csv``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .measuring import shown
from .options import add_threshold, add_verdict_rules, load_settings, parser_of, positive_float, verdict_rules


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale history``'s options."""
    p.add_argument("--results", metavar="DIR",
                   help="asv's results folder (default: asv/ in the results folder of [tool.callscale], "
                        "results/asv)")
    p.add_argument("--out", metavar="DIR", help="where to write index.html, instructions.png, exponents.png and "
                                                "history.csv (default: results/history)")
    add_threshold(p)
    add_verdict_rules(p, request=False)  # asv's results hold no per-request figure
    p.add_argument("--factor", type=positive_float, default=1.05, metavar="X",
                   help="list the counts that moved by more than this factor between commits (default 1.05)")
    p.add_argument("--commit-url", metavar="TEMPLATE",
                   help="link commit hashes here, {commit} replaced by the full hash (default: to the page's "
                        "own commit list, which gives `git show HASH`)")
    p.add_argument("--skip-bad", action="store_true",
                   help="pass over result files that cannot be read (each is still named on stderr); without it "
                        "they make the command exit 1")
    p.add_argument("--machine", help="asv machine name (default: the one with the most commits)")
    p.add_argument("--env", help="asv environment name (default: the one with the most commits)")


def run(args: argparse.Namespace) -> int:
    """``callscale history``: 0 written, 1 unreadable result files (without ``--skip-bad``), 2 bad option."""
    p = parser_of(args, "history")
    from .. import history

    settings = load_settings(p)
    results = Path(args.results) if args.results is not None else settings.out / "asv"
    out = Path(args.out) if args.out is not None else settings.out / "history"
    threshold = args.threshold if args.threshold is not None else settings.threshold
    reference, projection = verdict_rules(p, args, settings)
    try:
        written = history.write(out, results, threshold, factor=args.factor, commit_url=args.commit_url,
                                machine=args.machine, env=args.env,
                                rules={"reference_length": reference, "projection_factor": projection},
                                skip_bad=args.skip_bad)
    except history.BadResults as exc:
        for path, why in exc.files:
            print(f"callscale history: cannot read {path}: {why}", file=sys.stderr)
        print(f"callscale history: {len(exc.files)} unreadable result file{'s' if len(exc.files) != 1 else ''}; "
              "--skip-bad passes over them", file=sys.stderr)
        return 1
    except history.HistoryError as exc:
        p.error(str(exc))
    except OSError as exc:
        p.error(f"cannot write to --out {out}: {exc.strerror or exc}")
    if args.skip_bad:  # name what was passed over
        for path, why in history.load_results(results, skip_bad=True).attrs.get("bad", []):
            print(f"callscale history: skipped {path}: {why}", file=sys.stderr)
    print(f"{written.commits} commits, {written.verdict_changes} verdict changes, {written.count_changes} counts "
          f"moved by more than {args.factor:g}x")
    print(f"wrote {shown(written.page)}, {shown(written.instructions_png)}, {shown(written.exponents_png)}, "
          f"{shown(written.csv)}")
    return 0
