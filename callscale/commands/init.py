"""``callscale init``: write an asv set-up into a team's repository that measures its parser classes at every
commit (:mod:`callscale.init` writes the files; this module checks the options, imports each parser once, and
calls it).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..init import BENCHMARK_DIR, DEFAULT_LENGTHS, DEFAULT_WORKLOADS, add_ignore_lines, write
from .options import WorkloadFormat, parser_of


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale init``'s options."""
    p.add_argument("--parser", action="append", metavar="MODULE:CLASS", required=True,
                   help="a parser class or factory of the repository (module.path:ClassOrFactory); repeat "
                        "or comma-separate")
    p.add_argument("--workload-format", "--format", dest="format", metavar="NAME", action=WorkloadFormat,
                   help="the format whose workloads to render for the parsers (not needed for the engines' "
                        "known classes; see callscale parsers --engines)")
    p.add_argument("--workload", action="append", metavar="NAME",
                   help=f"a workload; repeat or comma-separate (default: {', '.join(DEFAULT_WORKLOADS)})")
    p.add_argument("--lengths", metavar="SIZES",
                   help="at least three call lengths in characters (default 1k,2k,4k,8k)")
    p.add_argument("--chunking", default="tokens:4", metavar="SPEC", help="chunking of the streams (default tokens:4)")
    p.add_argument("--dir", default=".", metavar="DIR", help="the repository's top level (default: here)")
    p.add_argument("--force", action="store_true", help="overwrite asv.conf.json and callscale_benchmarks/")
    from ..adapters import ENGINES

    p.add_argument("--engine", choices=sorted(ENGINES),
                   help="the engine whose checkout this is: its parser modules are loaded without the engine's "
                        "package roots (default: recognised from the layout: tensorrt_llm/, vllm/, python/sglang/)")


def run(args: argparse.Namespace) -> int:
    """``callscale init``: check the selections, import each parser once, write the files; exit 0 (2: bad option)."""
    from .. import config, plugins
    from ..adapters import known_format
    from ..workloads import catalog
    from ..workloads.chunking import parse_chunking

    p = parser_of(args, "init")
    folder = Path(args.dir)
    if not folder.is_dir():
        p.error(f"--dir {folder}: no such folder")
    from .. import checkout

    engine = args.engine or checkout.detect(folder)
    targets = [t.strip() for value in args.parser for t in value.split(",") if t.strip()]
    workloads = [w.strip() for value in args.workload or () for w in value.split(",") if w.strip()] \
        or list(DEFAULT_WORKLOADS)
    from ..workloads import team

    named: list[str] = []
    for name in workloads:
        if team.is_team(name):  # a team's own workload: module:function or file:PATH (an absolute path)
            here = os.getcwd()
            os.chdir(folder)  # imported as the benchmarks will, from the repository's top level
            try:
                named += team.expand(name)
            except team.TeamWorkloadError as exc:
                p.error(str(exc))
            finally:
                os.chdir(here)
        elif name not in catalog.names():
            p.error(f"unknown workload {name!r}; known: {', '.join(catalog.names())} (or a team's own: "
                    "module.path:function, file:PATH)")
        else:
            named.append(name)
    workloads = named
    try:
        lengths = list(config.parse_lengths(args.lengths)) if args.lengths else list(DEFAULT_LENGTHS)
        parse_chunking(args.chunking)
    except (config.ConfigError, ValueError) as exc:
        p.error(str(exc))
    parsers: dict[str, str] = {}
    here = os.getcwd()
    os.chdir(folder)  # the parsers import as they will from the repository's top level
    try:
        for target in targets:
            if not plugins.is_plugin(target):
                p.error(f"--parser {target!r}: name a class or factory of the repository as module.path:Class")
            if "@" in target:
                p.error(f"--parser {target!r}: name the class without @: the benchmarks load it from each commit")
            fmt = args.format or known_format(target)
            try:
                # imported and built once (in a child): a typo fails now; an engine's from this checkout
                probed = plugins.probe([plugins.resolve(f"{target}@{Path.cwd()}" if engine else target, fmt)])[0]
                spec = plugins.resolve(target, fmt)
                if probed.broken:
                    p.error(f"--parser {target}: {probed.broken}")
            except plugins.PluginError as exc:
                p.error(str(exc))
            parsers[target] = spec.format
        try:  # a team workload is made once in each format: a spec that cannot be made fails now
            team.validate(workloads, list(parsers.values()), lengths)
        except team.TeamWorkloadError as exc:
            p.error(str(exc))
    finally:
        os.chdir(here)
    try:
        written = write(folder, parsers, workloads, lengths, args.chunking, args.force, engine)
        ignored = add_ignore_lines(folder)
    except FileExistsError as exc:
        p.error(str(exc))
    except OSError as exc:
        p.error(f"cannot write to {folder}: {exc}")
    for path in written:
        print(f"wrote {path}")
    if ignored:
        print(f"added to {folder / '.gitignore'}: {' '.join(ignored)}")
    if engine:
        print(f"a {engine} checkout: each commit's parser modules are loaded without the engine's package roots "
              "(nothing built or installed per commit)")
    names = ["asv.conf.json", f"{BENCHMARK_DIR}/", ".gitignore"]
    print(f"commit: git add {' '.join(names)} && git commit -m 'callscale benchmarks' (no path of this machine in "
          "them; .asv/ and results/ stay out)")
    print("next: asv machine --yes; asv run (every commit of the branch: asv run ALL), asv continuous BASE HEAD, "
          "asv find BASE..HEAD CallscaleFit.track_exponent, callscale history (see docs/workflows.md in callscale); "
          "callscale is found where asv's Python sees it installed, else set ASV_PYTHONPATH to its folder")
    return 0
