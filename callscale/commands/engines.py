"""``callscale engines build|status llamacpp``: build a compiled engine's harness once, or say whether it is built.
"""

from __future__ import annotations

import argparse
import sys

from .options import parser_of


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale engines``'s options."""
    p.add_argument("action", choices=["build", "status"],
                   help="build: fetch and build a compiled engine's harness (once; cached); status: say whether "
                        "it is built and where")
    p.add_argument("engine", choices=["llamacpp"], help="llamacpp: llama.cpp's common library and our harness, "
                   "from the llama-cpp-python sdist (docs/engines.md)")
    p.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")


def run(args: argparse.Namespace) -> int:
    """``callscale engines``: 0 built (status: is built), 1 not built, 2 the build cannot run or failed."""
    p = parser_of(args, "engines")
    from ..adapters import llamacpp

    if args.jobs < 1:
        p.error(f"--jobs must be 1 or more, not {args.jobs}")
    if args.action == "status":
        state = "built" if llamacpp.built() else "not built"
        print(f"llamacpp: llama-cpp-python {llamacpp.VERSION}, {state}: {llamacpp.library_path()}")
        return 0 if llamacpp.built() else 1
    missing = llamacpp.missing_tools()
    if missing:
        print(f"callscale engines build llamacpp: {' and '.join(missing)} not found; install {llamacpp.INSTALL}",
              file=sys.stderr)
        return 2
    try:
        llamacpp.build(jobs=args.jobs)
    except llamacpp.LlamaCppError as exc:
        print(f"callscale engines build llamacpp: {exc}", file=sys.stderr)
        return 2
    return 0
