"""``callscale engines build|status ENGINE``: build a compiled engine's harness once, or say whether it is built
(the engines of :data:`callscale.adapters.BUILT_HARNESSES`).
"""

from __future__ import annotations

import argparse
import sys

from .options import parser_of


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale engines``'s options."""
    from ..adapters import BUILT_HARNESSES

    p.add_argument("action", choices=["build", "status"],
                   help="build: fetch and build a compiled engine's harness (once; cached); status: say whether "
                        "it is built and where")
    p.add_argument("engine", choices=sorted(BUILT_HARNESSES),
                   help="; ".join(f"{name}: {words}" for name, (_, words) in BUILT_HARNESSES.items()))
    p.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")


def run(args: argparse.Namespace) -> int:
    """``callscale engines``: 0 built (status: is built), 1 not built, 2 the build cannot run or failed."""
    import importlib

    from ..adapters import BUILT_HARNESSES

    p = parser_of(args, "engines")
    harness = importlib.import_module(BUILT_HARNESSES[args.engine][0])
    if args.jobs < 1:
        p.error(f"--jobs must be 1 or more, not {args.jobs}")
    if args.action == "status":
        state = "built" if harness.built() else "not built"
        print(f"{args.engine}: {harness.SOURCE}, {state}: {harness.library_path()}")
        return 0 if harness.built() else 1
    missing = harness.missing_tools()
    if missing:
        print(f"callscale engines build {args.engine}: {' and '.join(missing)} not found; install {harness.INSTALL}",
              file=sys.stderr)
        return 2
    try:
        harness.build(jobs=args.jobs)
    except RuntimeError as exc:  # the harness's build error
        print(f"callscale engines build {args.engine}: {exc}", file=sys.stderr)
        return 2
    return 0
