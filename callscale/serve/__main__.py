"""``python -m callscale.serve``: the names callscale registers in each engine, and the plugin file.

    python -m callscale.serve --list            # engine: names, one line per engine
    python -m callscale.serve vllm --path       # the file for vLLM's --tool-parser-plugin
    python -m callscale.serve vllm --list       # one engine's names, one a line

No engine is imported. Bad arguments: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import sys

from . import ENGINES, names, plugin_path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m callscale.serve",
                     description="callscale's parsers as the engines' tool parsers (docs/serving.md)")
    parser.add_argument("engine", nargs="?", help=f"one of: {', '.join(ENGINES)}")
    parser.add_argument("--list", action="store_true", help="the registered names (of ENGINE, or per engine)")
    parser.add_argument("--path", action="store_true", help="the plugin file of ENGINE")
    args = parser.parse_args(argv)
    if args.engine is not None and args.engine not in ENGINES:
        parser.error(f"unknown engine {args.engine!r}; known: {', '.join(ENGINES)}")
    if args.list == args.path:
        parser.error("give one of --list or --path")
    if args.path:
        if args.engine is None:
            parser.error("--path needs an engine (e.g. vllm)")
        print(plugin_path(args.engine))
        return 0
    if args.engine is not None:
        print("\n".join(names(args.engine)))
        return 0
    for engine, (_, how) in ENGINES.items():
        print(f"{engine}: {' '.join(names(engine))}")
        print(f"  ({how})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
