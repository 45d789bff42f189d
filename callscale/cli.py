"""The ``callscale`` command.

    callscale scale [--parser NAME ...] [--workload NAME ...] [--lengths 4k,16k,64k]
                    [--chunking tokens:4] [--repeats N] [--threshold X] [--timeout S] [--baseline CSV] [--out DIR]
    callscale gate  [--threshold 1.3] [--projection-factor 3] [--request-factor 1000] [--reference-length 256k]
                    [same selectors] [--out DIR] [--summary PATH] [--export bmf:PATH]
    callscale compare BASE.csv NEW.csv [--max-ratio R] [--max-step X] [--summary PATH]
    callscale profile --parser NAME --workload NAME --length N [--output-format flamegraph|speedscope|raw] [-o PATH]
                      [--against REV|FILE]
    callscale check [--parser NAME ...] [--workload NAME ...] [--lengths 1k] [--chunkings SPEC,...] [--strict] [--timeout S]
                    [--against SPEC [--outputs 3000] [--seeds 0,1,2]]
    callscale history [--results DIR] [--out DIR] [--commit-url TEMPLATE] [--factor 1.05]
    callscale parsers [--engines]
    callscale init --parser MODULE:CLASS [--format NAME] [--workload NAME] [--lengths 1k,2k,4k,8k] [--force]

``scale`` measures every selected parser on every selected workload at every
length, prints the table, and writes ``scaling.csv``, ``scaling-fits.csv``
and ``scaling.png`` to ``--out``; it exits 0 (a failed run shows in the
table). ``gate`` measures the same matrix (without the latency and memory
passes), prints the table (and with ``--out`` writes the same files) and exits 0 when every pair passes both rules of
:func:`callscale.fit.fit` (steepest step, projection), 1 otherwise, naming
each offender and the rule. ``compare`` sets two ``scaling.csv`` side by
side and exits 1 when a pair got worse (``--baseline`` does the same after
``scale``/``gate``). Every parser under test is loaded and measured in a child
process of its own, each case under ``--timeout`` seconds and ``--memory-limit``
bytes; a parser that does not reproduce a case's calls reads ``wrong output``
and fails unless ``--cost-only``; SIGTERM stops a run as Ctrl-C does
(docs/gate.md). Defaults come from
``[tool.callscale]`` in the nearest ``pyproject.toml``
(:mod:`callscale.config`). A bad option prints one line on stderr and exits 2;
``gate`` and ``check`` exit 125 when the parser cannot be imported or built
(``git bisect run`` skips such a commit; see docs/workflows.md).

Each subcommand is a module of :mod:`callscale.commands` with ``add_arguments(parser)`` and ``run(args)``;
this module only wires them into one argument parser, and runs the one named under the signal handling every
command shares (SIGTERM as Ctrl-C, no process a parser started outliving the command).
"""

from __future__ import annotations

import importlib
import sys
from typing import Sequence

from . import __version__
from .commands import COMMANDS
from .config import ArgumentParser

__all__ = ["main", "build_parser"]


def build_parser() -> ArgumentParser:
    """The argument parser with one subparser per module of :data:`callscale.commands.COMMANDS`; each subparser
    stores its parser as ``command_parser`` (where ``run`` reports a bad option)."""
    p = ArgumentParser(prog="callscale",
                       description="Measure how a streaming tool-call parser's cost grows with call length, and gate "
                                   "CI on it.", allow_abbrev=False)
    p.add_argument("--version", action="version", version=f"callscale {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, text in COMMANDS.items():
        # allow_abbrev=False: --length 4k is not taken for --lengths (nor any prefix for an option)
        sp = sub.add_parser(name, help=text, description=text, allow_abbrev=False)
        importlib.import_module(f"callscale.commands.{name}").add_arguments(sp)
        sp.set_defaults(command_parser=sp)
    return p


#: Options whose value may start with a minus sign and a digit (``--lengths -1k,2k``): argparse would take
#: such a value for an option and say "expected one argument"; it is passed as ``--lengths=-1k,2k`` instead,
#: so the option's own check says what is wrong with it.
_SIGNED_VALUES = frozenset({"--lengths", "--length", "--threshold", "--projection-factor", "--request-factor",
                            "--reference-length", "--timeout", "--repeats", "--seed", "--max-ratio", "--max-step",
                            "--seconds", "--rate", "--memory-limit", "--jobs", "--factor"})


def _signed_values(argv: Sequence[str]) -> list[str]:
    """``argv`` with each ``OPTION -1...`` of :data:`_SIGNED_VALUES` joined as ``OPTION=-1...``."""
    import re

    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        if items[i] in _SIGNED_VALUES and i + 1 < len(items) and re.match(r"-\.?\d", items[i + 1]):
            out.append(f"{items[i]}={items[i + 1]}")
            i += 2
            continue
        out.append(items[i])
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    p = build_parser()
    args, extra = p.parse_known_args(_signed_values(sys.argv[1:] if argv is None else argv))
    if extra:  # name the subcommand whose options these are not
        args.command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from .bounded import Terminated, own_descendants, terminate_as_interrupt

    try:
        # SIGTERM (timeout(1), CI) stops a run as Ctrl-C does; no process a parser started outlives the command
        with terminate_as_interrupt(), own_descendants():
            return importlib.import_module(f"callscale.commands.{args.command}").run(args)
    except BrokenPipeError:  # `callscale scale | head`
        return 0
    except Terminated:
        print("callscale: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except KeyboardInterrupt as exc:
        running = f" while checking {exc.args[0]}" if exc.args else ""
        print(f"callscale: interrupted{running}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
