"""``callscale parsers``: list the registered parsers, aliases and entry points (``--engines``: the engines' too).
"""

from __future__ import annotations

import argparse

from .. import tables



def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale parsers``'s options."""
    p.add_argument("--engines", action="store_true",
                   help="also list the engines' known parser classes, SMG's tool parsers (smg:NAME) and "
                        "llama.cpp's chat templates where built, and the format of each")


def run(args: argparse.Namespace) -> int:
    """``callscale parsers``: print the table; 0."""
    from .. import plugins
    from ..adapters import KNOWN_CLASSES

    from callscale import parsers

    rows = [(name, name, "built-in") for name in parsers.names()]
    rows += [(alias, fmt, f"alias of {fmt} (docs/formats.md)") for alias, fmt in sorted(parsers.ALIASES.items())]
    for name, ep in sorted(plugins.entry_points().items()):
        rows.append((name, plugins.entry_point_format(ep) or "?", f"entry point {ep.value}"))
    if args.engines:
        for target, fmt in KNOWN_CLASSES.items():
            engine = target.split(".")[0].replace("tensorrt_llm", "trtllm")
            rows.append((target, fmt, f"{engine} class (adapter)"))
        from ..adapters import llamacpp, smg

        names = smg.parser_names()  # the installed wheel's; without smg, the ones FORMATS knows
        where = "smg tool parser (gateway)" if names else f"smg tool parser (gateway; {smg.INSTALL})"
        for name in names or sorted(smg.FORMATS):
            rows.append((smg.PREFIX + name, smg.FORMATS.get(name, "?"), where))
        if llamacpp.built():
            for template in llamacpp.templates():
                rows.append((llamacpp.PREFIX + template, llamacpp.format_of(template) or "?",
                             f"llama.cpp {llamacpp.VERSION} chat template (harness)"))
    print(tables.render(["parser", "format", "source"], rows, rule=False))
    return 0
