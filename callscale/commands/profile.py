"""``callscale profile``: stream one case under py-spy and write a flame graph (SVG), a speedscope profile or
collapsed stacks; ``--against`` also profiles a base and draws what changed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import config, tables
from .measuring import shown
from .options import (add_timeout, check_chunking, check_team_workloads, check_workloads,
                      load_settings, memory_limit_of, parser_of, parser_specs, setting_type, timeout_of)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale profile``'s options."""
    from ..profile import FORMATS

    p.add_argument("--parser", required=True, metavar="NAME",
                   help="a registered parser or module.path:ClassOrFactory (with --workload-format)")
    p.add_argument("--workload-format", dest="format", metavar="NAME",
                   help="the format whose workload to render for module:Factory parsers")
    p.add_argument("--workload", required=True, metavar="NAME", help="a workload name")
    p.add_argument("--length", required=True, metavar="SIZE", help="call length in characters, e.g. 64k (k = 1024)")
    p.add_argument("--chunking", metavar="SPEC", help="default from [tool.callscale]")
    p.add_argument("--output-format", dest="output_format", choices=sorted(FORMATS), default=None,
                   help="flamegraph (SVG, the default), speedscope (JSON) or raw (collapsed stacks, what --against "
                        "reads)")
    p.add_argument("--format", dest="old_output_format", choices=sorted(FORMATS), default=None,
                   help="deprecated spelling of --output-format")
    p.add_argument("--against", metavar="REV|FILE",
                   help="also profile the base, a git commit of the working directory's repository (in a temporary "
                        "worktree) or a collapsed-stack file (--output-format raw), and draw what changed: "
                        "OUT.diff.svg (red: frames whose share of samples grew), OUT.diff.folded, and a table of "
                        "the frames that grew most")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="where to write it (default results/flame/<parser>-<workload>-<length>.svg)")
    p.add_argument("--seconds", type=setting_type("seconds"), default=3.0,
                   help="how long to keep streaming the case while sampling (default 3)")
    p.add_argument("--rate", type=setting_type("rate"), default=250, help="samples a second (default 250)")
    add_timeout(p)


def run(args: argparse.Namespace) -> int:
    """``callscale profile``: 0 written, 1 the case failed, 2 bad option or py-spy unavailable."""
    p = parser_of(args, "profile")
    from .. import profile

    settings = load_settings(p)
    if args.old_output_format is not None:
        if args.output_format is not None and args.output_format != args.old_output_format:
            p.error("--format and --output-format disagree; give --output-format alone")
        print("callscale profile: --format is deprecated here (it names the workload's format elsewhere); "
              "use --output-format", file=sys.stderr)
        args.output_format = args.old_output_format
    if args.output_format is None:
        args.output_format = "raw" if args.against is not None else "flamegraph"
    if args.against is not None and args.output_format != "raw":
        p.error("--against writes collapsed stacks and a differential SVG: leave --output-format out (or raw)")
    try:
        length = config.parse_size(args.length)
    except config.ConfigError as exc:
        p.error(str(exc))
    chunking = check_chunking(p, args.chunking if args.chunking is not None else settings.chunking)
    specs = parser_specs(p, [args.parser], args.format, null=False, timeout=timeout_of(args, settings),
                         memory_limit=memory_limit_of(args, settings))
    from ..adapters.protocol import cannot

    if cannot(specs[0].factory, "profile"):
        p.error(cannot(specs[0].factory, "profile"))
    named = check_workloads(p, [args.workload])
    if len(named) != 1:
        p.error(f"--workload {args.workload}: the file holds {len(named)} records; name one as {named[0]}")
    args.workload = named[0]
    check_team_workloads(p, named, specs, [length], 0, timeout_of(args, settings))
    output = args.output
    if output is None:
        output = profile.default_output(args.parser, args.workload, length, args.output_format, settings.out)
    if args.against is not None and Path(output).suffix != ".folded":  # -o x.svg: x.folded, x.diff.svg, ...
        output = Path(output).with_suffix(".folded")
    from .. import report
    from ..exports import regular_file

    try:
        report.check_writable(Path(output).parent)
        regular_file(output)
    except OSError as exc:
        p.error(f"-o: {exc}")
    try:
        path = profile.profile(args.parser, args.workload, length, fmt=args.format, chunking=chunking,
                               output_format=args.output_format, output=output, seconds=args.seconds,
                               rate=args.rate, timeout=args.seconds + timeout_of(args, settings))
    except profile.ProfilerUnavailable as exc:
        print(f"callscale profile: {exc}", file=sys.stderr)
        return 2
    except profile.CaseFailed as exc:
        print(f"callscale profile: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        print(f"callscale profile: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    if args.against is not None:
        return profile_against(p, args, path, length, chunking, settings)
    print(f"wrote {shown(path)}")
    return 0


def profile_against(p: argparse.ArgumentParser, args: argparse.Namespace, head: Path, length: int, chunking: str,
                    settings: config.Settings) -> int:
    """``profile --against REV|FILE``: the base's collapsed stacks (a file, or the same case profiled at the
    commit), then the differential SVG, the difffolded file and the table of the frames that grew most."""
    from .. import flamediff, profile

    stem = head.with_suffix("") if head.suffix == ".folded" else head
    base_path = Path(args.against)
    if not base_path.is_file():
        target = Path(f"{stem}.base.folded")
        try:
            with profile.worktree(args.against) as tree:
                base_path = profile.profile(args.parser, args.workload, length, fmt=args.format, chunking=chunking,
                                            output_format="raw", output=target, seconds=args.seconds,
                                            rate=args.rate, timeout=args.seconds + timeout_of(args, settings),
                                            cwd=tree)
        except profile.BadRevision as exc:
            p.error(str(exc))
        except (profile.CaseFailed, RuntimeError) as exc:
            print(f"callscale profile: the base {args.against}: {' '.join(str(exc).split())}", file=sys.stderr)
            return 1
    try:
        base, new = flamediff.read(base_path), flamediff.read(head)
    except (OSError, ValueError) as exc:
        p.error(f"--against: {exc}")
    diff = flamediff.write_diff(base, new, f"{stem}.diff.folded")
    drawn = flamediff.svg(base, new, f"{stem}.diff.svg",
                          f"{args.parser} on {args.workload}, {length} characters ({chunking}): head against "
                          f"{args.against}")
    grown = flamediff.grown(base, new)  # under the streaming loop, as the graph draws them
    rows = [[f.name, f"{100 * f.base:.1f}%", f"{100 * f.head:.1f}%", f"{100 * f.change:+.1f}"] for f in grown]
    print(f"frames of the streaming whose share of the samples grew most (head against {args.against}):")
    print(tables.render(["frame", "base", "head", "points"], rows, right={1, 2, 3}) if rows else "(none grew)")
    print(f"wrote {shown(head)}, {shown(base_path)}, {shown(diff)}, {shown(drawn)}")
    return 0
