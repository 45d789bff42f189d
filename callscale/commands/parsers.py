"""``callscale parsers``: list the registered parsers, aliases and entry points (``--engines``: the engines' too).
"""

from __future__ import annotations

import argparse

from .. import tables
from ..adapters import ENGINE_PARSERS


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale parsers``'s options."""
    p.add_argument("--engines", action="store_true",
                   help=f"also list {ENGINE_PARSERS}, and the format of each")


def run(args: argparse.Namespace) -> int:
    """``callscale parsers``: print the table; 0."""
    from .. import parsers, plugins

    rows = [(name, name, "built-in") for name in parsers.names()]
    rows += [(alias, fmt, f"alias of {fmt} (docs/formats.md)") for alias, fmt in sorted(parsers.ALIASES.items())]
    for name, ep in sorted(plugins.entry_points().items()):
        rows.append((name, plugins.entry_point_format(ep) or "?", f"entry point {ep.value}"))
    if args.engines:
        from ..adapters.listing import engine_rows

        rows += engine_rows()
    print(tables.render(["parser", "format", "source"], rows, rule=False))
    return 0
