"""The ``callscale`` command.

    callscale scale [--parser NAME ...] [--workload NAME ...] [--lengths 4k,16k,64k]
                    [--chunking tokens:4] [--repeats N] [--threshold X] [--out DIR]
    callscale gate  [--threshold 1.3] [same selectors]
    callscale profile --parser NAME --workload NAME --length N [--format flamegraph|speedscope] [-o PATH]
    callscale check [--parser NAME ...] [--workload NAME ...] [--lengths 1k] [--chunkings SPEC,...]
    callscale parsers [--engines]

``scale`` measures every selected parser on every selected workload at every
length, prints the table, and writes ``scaling.csv``, ``scaling-fits.csv``
and ``scaling.png`` to ``--out``; it exits 0 (a failed run shows in the
table). ``gate`` measures the same matrix (without the latency and memory
passes), prints the table and exits 0 when every exponent is within the
threshold, 1 otherwise, naming each offender. Defaults come from
``[tool.callscale]`` in the nearest ``pyproject.toml``
(:mod:`callscale.config`). A bad option prints one line on stderr and exits 2.

Each subcommand is a ``(add_arguments, run)`` pair in :data:`COMMANDS`, and
the selectors shared by the measuring commands are added by
:func:`add_selectors`, so a new subcommand or a new shared option slots in.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from . import __version__, config
from .measure import METERS
from .plugins import ParserSpec, PluginError, resolve, takes_format

__all__ = ["main", "build_parser", "add_selectors", "Selection", "select", "COMMANDS"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error: ``callscale scale: error: ...`` on stderr, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def add_parser_options(p: argparse.ArgumentParser, null: bool = True, short_format: bool = True) -> None:
    """``--parser`` (repeatable) and ``--workload-format``, shared by the commands that take parsers.

    ``short_format``: ``--format`` is an alias of ``--workload-format`` (not
    in ``profile``, where ``--format`` is the output's).
    """
    p.add_argument("--parser", action="append", metavar="NAME",
                   help=f"a registered parser{', null,' if null else ''} or module.path:ClassOrFactory "
                        "(with --workload-format); repeat or comma-separate; default: every registered parser")
    flags = ("--workload-format", "--format") if short_format else ("--workload-format",)
    p.add_argument(*flags, dest="format", metavar="NAME",
                   help="the format whose workloads to render for module:Factory parsers"
                        + (" (--format for short)" if short_format else ""))


def _settings(p: argparse.ArgumentParser) -> config.Settings:
    try:
        return config.load()
    except config.ConfigError as exc:
        p.error(str(exc))


def _chunking(p: argparse.ArgumentParser, spec: str) -> str:
    from workloads.chunking import parse_chunking

    try:
        return str(parse_chunking(spec))
    except ValueError as exc:
        p.error(str(exc))


def _specs(p: argparse.ArgumentParser, names: Sequence[str], fmt: str | None, null: bool = True) -> list[ParserSpec]:
    """Resolve parser selections (``p.error`` on an unusable one); ``null``: the floor parser is allowed."""
    if fmt is not None and not any(takes_format(n) for n in names):
        p.error("--workload-format applies to module.path:ClassOrFactory and entry-point parsers only "
                "(a registered parser's format is its name)")
    specs = []
    for name in names:
        try:
            spec = resolve(name, fmt)
        except PluginError as exc:
            p.error(str(exc))
        if spec.format is None and not null:
            p.error("the null parser parses nothing; name a parser")
        specs.append(spec)
    return specs


def _workloads(p: argparse.ArgumentParser, names: Sequence[str]) -> list[str]:
    """Check workload names against the catalog (``p.error`` on an unknown one)."""
    try:
        from workloads import catalog

        known = list(catalog.names())
    except Exception as exc:  # the catalog is missing or broken
        p.error(f"the workload catalog cannot be loaded: {type(exc).__name__}: {exc}")
    for name in names:
        if name not in known:
            p.error(f"unknown workload {name!r}; known: {', '.join(known)}")
    return list(names)


def add_selectors(p: argparse.ArgumentParser) -> None:
    """The options shared by the measuring commands (what to measure, how, and the threshold)."""
    add_parser_options(p)
    p.add_argument("--workload", action="append", metavar="NAME",
                   help="a workload name; repeat or comma-separate; default from [tool.callscale]")
    p.add_argument("--lengths", metavar="SIZES",
                   help="at least three call lengths in characters (k = 1024); default from [tool.callscale]: "
                        "4k,16k,64k, or 1k,2k,4k,8k with --meter instructions")
    p.add_argument("--chunking", metavar="SPEC",
                   help="whole, char, fixed:K, tokens:K or random:SEED:MAX (default from [tool.callscale])")
    p.add_argument("--repeats", type=_positive_int, metavar="N",
                   help="timed runs per measurement; the minimum counts (default from [tool.callscale]: 3)")
    p.add_argument("--threshold", type=_positive_float, metavar="X",
                   help="largest scaling exponent that passes (default from [tool.callscale])")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--meter", choices=sorted(METERS), default="time",
                   help="time: process seconds, min over --repeats (default); instructions: "
                        "callgrind instruction counts of the streaming alone (exact, repeatable; needs valgrind; "
                        "default lengths from instruction_lengths in [tool.callscale])")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")


@dataclass
class Selection:
    """The validated selectors of a measuring command."""

    specs: list[ParserSpec]
    workloads: list[str]
    lengths: tuple[int, ...]
    chunking: str
    repeats: int
    threshold: float
    meter: str
    seed: int
    settings: config.Settings


def _split(values: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return list(dict.fromkeys(out))


def select(p: argparse.ArgumentParser, args: argparse.Namespace) -> Selection:
    """Validate the selectors against the settings, the registries and the catalog.

    Calls ``p.error`` (one line, exit 2) on anything unusable.
    """
    settings = _settings(p)
    meter = getattr(args, "meter", None) or "time"
    if meter not in METERS:
        p.error(f"unknown meter {meter!r}; known: {', '.join(METERS)}")
    default_lengths = settings.instruction_lengths if meter == "instructions" else settings.lengths
    try:
        lengths = config.parse_lengths(args.lengths) if args.lengths is not None else default_lengths
    except config.ConfigError as exc:
        p.error(str(exc))
    if meter == "instructions":
        from .instructions import MeterUnavailable, check_available

        try:
            check_available()
        except MeterUnavailable as exc:
            p.error(str(exc))
    chunking = _chunking(p, args.chunking if args.chunking is not None else settings.chunking)
    names = _split(args.parser) or list(settings.parsers)
    if not names:
        import parsers

        names = list(parsers.names())
        if not names:
            p.error("no parsers are registered; name one with --parser module.path:ClassOrFactory "
                    "--workload-format NAME")
    specs = _specs(p, names, args.format)
    workloads = _workloads(p, _split(args.workload) or list(settings.workloads))
    threshold = args.threshold if args.threshold is not None else settings.threshold
    repeats = args.repeats if args.repeats is not None else settings.repeats
    return Selection(specs, workloads, lengths, chunking, repeats, threshold, meter, args.seed, settings)


def _run(sel: Selection, args: argparse.Namespace, detail: bool):
    from . import matrix

    return matrix.run(sel.specs, sel.workloads, sel.lengths, chunking=sel.chunking, repeats=sel.repeats,
                      threshold=sel.threshold, meter=sel.meter, seed=sel.seed, latency=detail,
                      memory=detail, progress=args.progress)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------- scale
def _scale_arguments(p: argparse.ArgumentParser) -> None:
    add_selectors(p)
    p.add_argument("--out", metavar="DIR", help="where to write scaling.csv, scaling-fits.csv and scaling.png "
                                                "(default: results/ next to pyproject.toml)")


def _scale(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import report

    sel = select(p, args)
    out = Path(args.out) if args.out is not None else sel.settings.out
    started = time.perf_counter()
    run = _run(sel, args, detail=True)
    print(report.table(run))
    for line in report.error_lines(run):
        print(f"error: {line}")
    csv = report.write_csv(run, out / "scaling.csv")
    fits = report.write_fits_csv(run, out / "scaling-fits.csv")
    png = report.plot(run, out / "scaling.png")
    print(f"wrote {_shown(csv)}, {_shown(fits)}, {_shown(png)} in {time.perf_counter() - started:.0f} s")
    return 0


# ----------------------------------------------------------------------- gate
def _gate_arguments(p: argparse.ArgumentParser) -> None:
    add_selectors(p)


def _gate(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import report

    sel = select(p, args)
    run = _run(sel, args, detail=False)
    print(report.table(run))
    for line in report.error_lines(run):
        print(f"error: {line}")
    print()
    for line in report.gate_lines(run):
        print(line)
    return 0 if run.passed else 1


# ----------------------------------------------------------------------- profile
def _profile_arguments(p: argparse.ArgumentParser) -> None:
    from .profile import FORMATS

    p.add_argument("--parser", required=True, metavar="NAME",
                   help="a registered parser or module.path:ClassOrFactory (with --workload-format)")
    p.add_argument("--workload-format", dest="format", metavar="NAME",
                   help="the format whose workload to render for module:Factory parsers")
    p.add_argument("--workload", required=True, metavar="NAME", help="a workload name")
    p.add_argument("--length", required=True, metavar="SIZE", help="call length in characters, e.g. 64k (k = 1024)")
    p.add_argument("--chunking", metavar="SPEC", help="default from [tool.callscale]")
    p.add_argument("--format", dest="output_format", choices=sorted(FORMATS), default="flamegraph",
                   help="flamegraph (SVG, the default) or speedscope (JSON)")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="where to write it (default results/flame/<parser>-<workload>-<length>.svg)")
    p.add_argument("--seconds", type=_positive_float, default=3.0,
                   help="how long to keep streaming the case while sampling (default 3)")
    p.add_argument("--rate", type=_positive_int, default=250, help="samples a second (default 250)")


def _profile(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import profile

    settings = _settings(p)
    try:
        length = config.parse_size(args.length)
    except config.ConfigError as exc:
        p.error(str(exc))
    chunking = _chunking(p, args.chunking if args.chunking is not None else settings.chunking)
    _specs(p, [args.parser], args.format, null=False)
    _workloads(p, [args.workload])
    output = args.output
    if output is None:
        output = profile.default_output(args.parser, args.workload, length, args.output_format, settings.out)
    try:
        path = profile.profile(args.parser, args.workload, length, fmt=args.format, chunking=chunking,
                               output_format=args.output_format, output=output, seconds=args.seconds,
                               rate=args.rate)
    except profile.ProfilerUnavailable as exc:
        print(f"callscale profile: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"callscale profile: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(f"wrote {_shown(path)}")
    return 0


# ----------------------------------------------------------------------- check
def _check_arguments(p: argparse.ArgumentParser) -> None:
    add_parser_options(p, null=False)
    p.add_argument("--workload", action="append", metavar="NAME",
                   help="a workload to check; repeat or comma-separate; default: every workload")
    p.add_argument("--lengths", metavar="SIZES", default="1k",
                   help="call lengths in characters, comma-separated (default 1k)")
    p.add_argument("--chunkings", metavar="SPECS",
                   help="comma-separated chunkings to stream under (default: whole, char, fixed:2,3,4,7 "
                        "and random:0..19:8)")
    p.add_argument("--no-faults", action="store_true", help="skip the shared streaming fault cases")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--show", type=_positive_int, default=20, metavar="N", help="failures to print (default 20)")


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from workloads import catalog
    from workloads.chunking import CHECK_CHUNKINGS

    from . import check

    try:
        lengths = [config.parse_size(x) for x in args.lengths.split(",") if x.strip()]
    except config.ConfigError as exc:
        p.error(str(exc))
    if not lengths:
        p.error("--lengths needs at least one size")
    chunkings = [_chunking(p, spec) for spec in _split([args.chunkings])] if args.chunkings else list(CHECK_CHUNKINGS)
    if not _split(args.parser):
        import parsers

        args.parser = parsers.names()
    specs = _specs(p, _split(args.parser), args.format, null=False)
    workloads = _workloads(p, _split(args.workload) or catalog.names())
    results = []
    failed = False
    for spec in specs:
        items = [] if args.no_faults else check.fault_items(spec.format)
        items += check.workload_items(spec.format, workloads, lengths, args.seed)
        result = check.run_check(spec.name, spec.factory, items, chunkings)
        results.append(result)
        failed |= not result.passed
    width = max(len(r.parser) for r in results)
    print(f"{'parser'.ljust(width)}  {'texts':>5}  {'streams':>7}  {'failures':>8}  verdict")
    for r in results:
        print(f"{r.parser.ljust(width)}  {r.items:>5}  {r.streams:>7}  {len(r.failures):>8}  "
              f"{'ok' if r.passed else 'FAIL'}")
    every = [(r.parser, *f) for r in results for f in r.failures]
    if every:
        print()
    for parser, label, chunking, problem in every[: args.show]:
        print(f"FAIL {parser} {label} under {chunking}: {problem}")
    if len(every) > args.show:
        print(f"... {len(every) - args.show} more (--show N prints more)")
    print(f"\nchecked {sum(r.streams for r in results)} streams of {sum(r.items for r in results)} texts "
          f"under {len(chunkings)} chunkings (+ each fault case's own deltas): "
          f"{'all agree' if not failed else 'differences found'}")
    return 1 if failed else 0


# ----------------------------------------------------------------------- parsers
def _parsers_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engines", action="store_true",
                   help="also list the engines' known parser classes and the format of each")


def _parsers(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import plugins
    from .adapters import KNOWN_CLASSES

    import parsers

    rows = [(name, name, "built-in") for name in parsers.names()]
    for name, ep in sorted(plugins.entry_points().items()):
        rows.append((name, plugins.entry_point_format(ep) or "?", f"entry point {ep.value}"))
    if args.engines:
        for target, fmt in KNOWN_CLASSES.items():
            engine = target.split(".")[0].replace("tensorrt_llm", "trtllm")
            rows.append((target, fmt, f"{engine} class (adapter)"))
    width = max(len(r[0]) for r in rows)
    fwidth = max(len(r[1]) for r in rows + [("", "format", "")])
    print(f"{'parser'.ljust(width)}  {'format'.ljust(fwidth)}  source")
    for name, fmt, source in rows:
        print(f"{name.ljust(width)}  {fmt.ljust(fwidth)}  {source}")
    return 0


Command = tuple[str, Callable[[argparse.ArgumentParser], None],
                Callable[[argparse.ArgumentParser, argparse.Namespace], int]]

COMMANDS: list[Command] = [
    ("scale", _scale_arguments, _scale),
    ("gate", _gate_arguments, _gate),
    ("profile", _profile_arguments, _profile),
    ("check", _check_arguments, _check),
    ("parsers", _parsers_arguments, _parsers),
]
"""Subcommands: ``(name, add_arguments(parser), run(parser, args) -> exit status)``."""

_HELP = {
    "scale": "measure how each parser's streaming cost grows with call length; print the table, write CSV and PNG",
    "gate": "exit 0 when every scaling exponent is within the threshold, 1 otherwise",
    "profile": "stream one case under py-spy and write a flame graph (SVG) or a speedscope profile",
    "check": "stream each fault case and workload under many chunkings; compare with the expected "
             "result and with detect_and_parse",
}


def build_parser() -> ArgumentParser:
    """The argument parser with one subparser per entry of :data:`COMMANDS`."""
    p = ArgumentParser(prog="callscale", description="Measure how a streaming tool-call parser's cost "
                                                    "grows with call length, and gate CI on it.")
    p.add_argument("--version", action="version", version=f"callscale {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, add_arguments, run in COMMANDS:
        sp = sub.add_parser(name, help=_HELP.get(name), description=_HELP.get(name))
        add_arguments(sp)
        sp.set_defaults(_run=run, _parser=sp)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    p = build_parser()
    args, extra = p.parse_known_args(argv)
    if extra:  # name the subcommand whose options these are not
        args._parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args._run(args._parser, args)
    except BrokenPipeError:  # `callscale scale | head`
        return 0
    except KeyboardInterrupt:
        print("callscale: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
