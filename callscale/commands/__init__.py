"""The ``callscale`` subcommands, one module each (as asv's commands are).

Each module ``callscale.commands.NAME`` offers ``add_arguments(parser)`` (its options, on an
:class:`argparse.ArgumentParser`) and ``run(args) -> int`` (the exit status). The options several commands share
are in :mod:`callscale.commands.options`, what the measuring commands share in :mod:`callscale.commands.measuring`;
:mod:`callscale.cli` only wires them. A new subcommand is a module here and a line in :data:`COMMANDS`.
"""

from __future__ import annotations

from ..adapters import BUILT_HARNESSES_SHORT

COMMANDS: dict[str, str] = {
    "scale": "measure how each parser's streaming cost grows with call length; print the table, write CSV and PNG",
    "gate": "exit 0 when every parser's steepest step and projected cost pass, 1 otherwise",
    "compare": "set two scaling.csv side by side (exponent and cost per length, with ratios); "
               "exit 1 when a pair got worse",
    "profile": "stream one case under py-spy and write a flame graph (SVG) or a speedscope profile",
    "check": "stream each fault case and workload under many chunkings; compare with the expected "
             "result and with detect_and_parse",
    "history": "from asv's results, write a self-contained HTML page and PNGs of the instruction counts and "
               "scaling exponents per commit",
    "parsers": "list the parsers --parser knows (registered, aliases, entry points; --engines: the serving "
               "engines' classes)",
    "engines": f"build a compiled engine's parsing harness once ({BUILT_HARNESSES_SHORT}), or say whether it is "
               "built",
    "init": "write asv.conf.json and a benchmark module measuring this repository's parser classes at every "
            "commit (asv run/continuous/find, callscale history)",
    "hunt": "search for the input that makes a parser's cost grow fastest (exact instruction counts); exit 1 "
            "when one fails the gate's rules",
}
"""Subcommand name -> its one-line help (``None``: none shown), in the order ``callscale --help`` lists them."""
