"""The options the commands share, their argparse types, and the checks that turn them into values.

Every check that fails calls ``p.error`` (one line on stderr, exit status 2) before anything is measured;
a verdict command whose parser cannot be imported or built exits :data:`CANNOT_TEST` instead.
A command module adds its options with these helpers (:func:`add_selectors`, :func:`add_timeout`, ...)
and reads them back with the ``*_of`` / ``check_*`` functions, so one option is defined in one place.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from .. import config
from ..config import ArgumentParser
from ..measure import METERS
from ..plugins import ParserSpec, PluginError, resolve, takes_format


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
        return value
    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def setting_type(key: str) -> Callable[[str], object]:
    """An argparse type for the setting ``key``: :func:`callscale.config.check`, the one validation
    ``[tool.callscale]`` gets too (finite, in :data:`callscale.config.RANGES`)."""
    def parse(text: str) -> object:
        try:
            return config.check(key, text, "")
        except config.ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc).strip()) from None
    parse.__name__ = key
    return parse


timeout_seconds = setting_type("timeout")


def parse_jobs(text: str) -> int | None:
    """``--jobs``: :func:`callscale.config.check_jobs` (``auto`` is ``None``)."""
    try:
        return config.check_jobs(text, "")
    except config.ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


DEPRECATED_FORMAT = ("{prog}: --format is deprecated as the workload's format (profile's --output-format is "
                     "the output's); use --workload-format")
"""The line on stderr when ``--format`` names the workload format (scale, gate, check, init, hunt)."""


def warn_deprecated_format(prog: str, option_string: str | None, namespace: argparse.Namespace) -> None:
    """Say once per command line (on stderr) that ``--format`` is the deprecated spelling of
    ``--workload-format``."""
    if option_string == "--format" and not getattr(namespace, "_format_warned", False):
        namespace._format_warned = True
        print(DEPRECATED_FORMAT.format(prog=prog), file=sys.stderr)


class WorkloadFormat(argparse._StoreAction):
    """``--workload-format NAME`` stored, with the deprecation line when spelled ``--format``."""

    def __call__(self, parser, namespace, values, option_string=None):
        warn_deprecated_format(parser.prog, option_string, namespace)
        super().__call__(parser, namespace, values, option_string)


class InOrder(argparse._AppendAction):
    """Append the value, and note ``(dest, value)`` in ``namespace.in_order`` (the command line's order),
    so each ``--workload-format`` pairs with the ``--parser`` it follows (:func:`paired_formats`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from ..report import STYLES

        if option_string == "--format" and hasattr(namespace, "output"):
            if values in STYLES:
                namespace.output = values  # scale/gate: the output's style (add_output); else the workload's format
                return
            from ..plugins import PluginError, known_workload_format

            try:
                known_workload_format(values, "")
            except PluginError:  # neither: say both (a mistyped style reads as a format otherwise)
                parser.error(f"argument --format: {values!r} is no output style ({', '.join(STYLES)}) and no "
                             "workload format (callscale parsers lists them; --workload-format is its spelling)")
        warn_deprecated_format(parser.prog, option_string, namespace)
        super().__call__(parser, namespace, values, option_string)
        order = list(getattr(namespace, "in_order", None) or [])
        namespace.in_order = order + [(self.dest, values)]


def add_output(p: argparse.ArgumentParser) -> None:
    """``--wide`` and ``--format table|wide|json|csv|markdown``: what scale and gate print
    (:func:`callscale.report.show`)."""
    p.add_argument("--wide", dest="output", action="store_const", const="wide", default="table",
                   help="print every column (the figure at each length, the projection, the slowest increment)")
    p.set_defaults(output="table")
    p.epilog = ("--format json|csv|markdown prints the run for a machine or a pull request on stdout (the verdict "
                "lines on stderr); --format table (the default) fits 120 columns, one line per parser x workload, "
                "the failing first; any other --format value names the workload's format (deprecated: "
                "--workload-format)")


def add_parser_options(p: argparse.ArgumentParser, null: bool = True, short_format: bool = True,
                       parser_help: str | None = None) -> None:
    """``--parser`` (repeatable) and ``--workload-format``, shared by the commands that take parsers.

    ``short_format``: ``--format`` is a deprecated alias of ``--workload-format`` (a line on stderr says so;
    not in ``profile``, where ``--format`` is the output's, deprecated too). One
    ``--workload-format`` applies to every plug-in; several pair each with
    the ``--parser`` it follows (:func:`paired_formats`).
    """
    p.add_argument("--parser", action=InOrder, metavar="NAME",
                   help=parser_help or f"a registered parser{', null,' if null else ''} or module.path:ClassOrFactory "
                                       "(with --workload-format); repeat or comma-separate; default: every registered "
                                       "parser")
    flags = ("--workload-format", "--format") if short_format else ("--workload-format",)
    p.add_argument(*flags, dest="format", action=InOrder, metavar="NAME",
                   help="the format whose workloads to render for module:Factory parsers"
                        + (" (--format: deprecated spelling)" if short_format else "")
                        + "; given once it applies to every such parser, given more than once each applies to "
                          "the --parser it follows")


def paired_formats(p: argparse.ArgumentParser, args: argparse.Namespace,
                   names: Sequence[str]) -> list[tuple[str, str | None]]:
    """``(parser, format)`` for each selected parser name: the only ``--workload-format`` for every
    parser, or, when there are several, the one right after the parser's ``--parser`` option.
    ``p.error`` when a ``--workload-format`` follows no ``--parser`` or a second one follows the same."""
    formats = [v for dest, v in getattr(args, "in_order", None) or [] if dest == "format"]
    if len(formats) <= 1:
        return [(name, formats[0] if formats else None) for name in names]
    paired: dict[str, str] = {}
    last: list[str] | None = None
    for dest, value in args.in_order:
        if dest == "parser":
            last = [v.strip() for v in value.split(",") if v.strip()]
        elif last is None:
            p.error(f"--workload-format {value} follows no --parser: with several --workload-format options "
                    "each must come right after the --parser it applies to")
        else:
            for name in last:
                paired[name] = value
            last = None
    return [(name, paired.get(name)) for name in names]


def load_settings(p: argparse.ArgumentParser) -> config.Settings:
    try:
        return config.load()
    except config.ConfigError as exc:
        p.error(str(exc))


def check_chunking(p: argparse.ArgumentParser, spec: str) -> str:
    from callscale.workloads.chunking import parse_chunking

    try:
        return str(parse_chunking(spec))
    except ValueError as exc:
        p.error(str(exc))


def parser_specs(p: argparse.ArgumentParser, names: Sequence[str], fmt: object, null: bool = True,
                 timeout: float | None = None, memory_limit: int | None = None) -> list[ParserSpec]:
    """Resolve parser selections (``p.error`` on an unusable one); ``null``: the floor parser is allowed.

    ``fmt``: the parsed arguments (each ``--workload-format`` paired by :func:`paired_formats`), or one format
    name for every parser. Each plug-in is then loaded once in a child process
    (:func:`callscale.plugins.probe`, ``timeout`` seconds): one that cannot be used is an error here,
    one whose child died or hung is measured as failing (its rows say why).
    """
    pairs = paired_formats(p, fmt, names) if isinstance(fmt, argparse.Namespace) else [(n, fmt) for n in names]
    if any(f is not None for _, f in pairs) and not any(takes_format(n) for n in names):
        p.error("--workload-format applies to module.path:ClassOrFactory and entry-point parsers only "
                "(a registered parser's format is its name)")
    specs = []
    for name, one in pairs:
        try:
            spec = resolve(name, one)
        except PluginError as exc:
            exit_cannot_test(p, exc)
            p.error(str(exc))
        if spec.format is None and not null:
            p.error("the null parser parses nothing; name a parser")
        specs.append(spec)
    from ..plugins import probe

    try:
        return probe(specs, timeout, memory_limit)
    except PluginError as exc:
        exit_cannot_test(p, exc)
        p.error(str(exc))


#: Exit status of ``gate`` and ``check`` when the parser cannot be imported or built: "cannot test",
#: which ``git bisect run`` skips (a commit that does not import is neither good nor bad).
CANNOT_TEST = 125
VERDICT_COMMANDS = ("gate", "check")
#: How :func:`callscale.plugins.load_factory` words a parser that cannot be imported or built (the other
#: PluginErrors, such as an unknown name or format, are bad options: exit 2).
LOAD_FAILURES = ("cannot import ", " has no attribute ", "() failed: ", " without ", " is not a class or factory")


def exit_cannot_test(p: argparse.ArgumentParser, exc: Exception) -> None:
    """Exit :data:`CANNOT_TEST` (one line) when a verdict command's parser cannot be imported or built."""
    missing_engine = " engine is not installed" in str(exc)  # the runner lacks the engine: a bad setup, exit 2
    if p.prog.split()[-1] in VERDICT_COMMANDS and not missing_engine and any(s in str(exc) for s in LOAD_FAILURES):
        p.exit(CANNOT_TEST, f"{p.prog}: cannot test: {' '.join(str(exc).split())} (exit {CANNOT_TEST}: "
                            "git bisect run skips this commit)\n")


def check_workloads(p: argparse.ArgumentParser, names: Sequence[str]) -> list[str]:
    """Check workload names (``NAME[@KIND][+DELIVERY]``) against the catalog (``p.error`` on an unknown
    workload, content kind or delivery: one line, exit 2)."""
    try:
        from callscale.workloads import catalog, team

        catalog.names()
    except Exception as exc:  # the catalog is missing or broken
        p.error(f"the workload catalog cannot be loaded: {type(exc).__name__}: {exc}")
    out: list[str] = []
    for name in names:
        if team.is_team(name):  # a team's own workload: module:function or file:PATH
            try:
                out += team.expand(name)
            except team.TeamWorkloadError as exc:
                p.error(str(exc))
            continue
        try:
            catalog.check_name(name)
        except KeyError as exc:
            p.error(f"{exc.args[0]} (or a team's own: module.path:function, file:PATH)")
        out.append(name)
    return list(dict.fromkeys(out))


def check_team_workloads(p: argparse.ArgumentParser, workloads: Sequence[str], specs: Sequence,
                         lengths: Sequence[int], seed: int = 0, timeout: float | None = None) -> None:
    """Make each team workload in each selected format at the shortest and longest length (``p.error``,
    one line, when one cannot be made), before anything is measured. A generator runs in a child process of its
    own under ``timeout`` seconds (:func:`callscale.workloads.team.validate`), never in a plug-in's module."""
    from callscale.workloads import team

    plugins = [str(getattr(s.factory, "target", getattr(s.factory, "__module__", ""))).partition(":")[0]
               for s in specs if getattr(s, "plugin", False)]
    try:
        team.validate(workloads, [getattr(s, "format", None) for s in specs], lengths, seed, timeout, plugins)
    except team.TeamWorkloadError as exc:
        p.error(str(exc))


def add_threshold(p: argparse.ArgumentParser) -> None:
    """``--threshold X``: the largest step exponent that passes (the gate's step rule)."""
    p.add_argument("--threshold", type=setting_type("threshold"), metavar="X",
                   help="largest scaling exponent that passes (default from [tool.callscale])")


def add_selectors(p: argparse.ArgumentParser) -> None:
    """The options shared by the measuring commands (what to measure, how, and the threshold)."""
    add_parser_options(p)
    p.add_argument("--workload", action="append", metavar="NAME",
                   help="a workload name; repeat or comma-separate; default from [tool.callscale]")
    p.add_argument("--lengths", metavar="SIZES",
                   help="at least three call lengths in characters (k = 1024); default from [tool.callscale]: "
                        "lengths (4k,16k,64k), or instruction_lengths with --meter instructions (4k,16k,64k)")
    p.add_argument("--chunking", metavar="SPEC",
                   help="whole, char, fixed:K, tokens:K, random:SEED:MAX, tokens-random:SEED:MAX, alternate:K1/K2/..., model or "
                        "model-random:SEED:K (default from [tool.callscale])")
    p.add_argument("--repeats", type=setting_type("repeats"), metavar="N",
                   help="timed runs per measurement; the minimum counts (default from [tool.callscale]: 3)")
    add_threshold(p)
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--meter", choices=sorted(METERS), default="time",
                   help="time: process seconds, min over --repeats (default); instructions: "
                        "callgrind instruction counts of the streaming alone (exact, repeatable; needs valgrind; "
                        "default lengths from instruction_lengths in [tool.callscale])")
    add_verdict_rules(p)
    add_timeout(p)
    p.add_argument("--cost-only", action="store_true",
                   help="judge the cost alone: a parser whose streamed result differs from the case's still "
                        "reads `wrong output` in the table but passes when its cost does (for timing an engine "
                        "parser whose known faults are check's business)")
    p.add_argument("--baseline", metavar="CSV",
                   help="a scaling.csv of an earlier run: compare with it after measuring (as `callscale compare`) "
                        "and exit 1 when a pair got worse")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")
    add_shard(p)
    p.add_argument("--jobs", type=parse_jobs, metavar="N",
                   help="--meter instructions: callgrind children counting at once, 1-64, or auto (one per idle "
                        "core: cores less the load average); the counts do not depend on it (default from "
                        "[tool.callscale]: auto)")
    p.add_argument("--changed-since", metavar="REF",
                   help="measure only the parsers whose modules (or the shared modules they import) differ from "
                        "the git REF; nothing to measure exits 0 (mapping: docs/exact.md)")


def add_shard(p: argparse.ArgumentParser) -> None:
    """``--shard I/N``: measure every N-th parser of the selection, from the I-th (:mod:`callscale.shard`)."""
    p.add_argument("--shard", metavar="I/N",
                   help="run shard I of N: every N-th parser of the selection, starting at the I-th "
                        "(merge the shards' scaling.csv with `callscale gate --from`)")


def narrow(p: argparse.ArgumentParser, args: argparse.Namespace, specs: list) -> list:
    """``--changed-since`` and ``--shard`` applied to the selected parser specs (``p.error`` on a bad value;
    exit 0 with one line when nothing is left to measure)."""
    from .. import shard

    ref = getattr(args, "changed_since", None)
    if ref is not None:
        try:
            specs, why = shard.changed_formats(shard.changed_files(ref), specs)
        except shard.ShardError as exc:
            p.error(str(exc))
        print(f"callscale: --changed-since {ref}: {why}", file=sys.stderr)
        if not specs:
            p.exit(0, f"callscale: no parser's modules changed since {ref}: nothing to measure\n")
    if getattr(args, "shard", None) is not None:
        try:
            which = shard.parse_shard(args.shard)
        except shard.ShardError as exc:
            p.error(str(exc))
        specs = shard.shard(specs, which)
        if not specs:
            p.exit(0, f"callscale: shard {args.shard} holds no parser: nothing to measure\n")
    return specs


def add_timeout(p: argparse.ArgumentParser) -> None:
    """``--timeout SECONDS`` (the per-case time budget, default from [tool.callscale]: 120) and
    ``--memory-limit SIZE`` (bytes of address space per measuring child, default 4g)."""
    p.add_argument("--timeout", type=timeout_seconds, metavar="SECONDS",
                   help="seconds one case may take; a parser that overruns is stopped and its row reads "
                        "timeout (default from [tool.callscale]: 120)")
    p.add_argument("--memory-limit", type=setting_type("memory_limit"), metavar="SIZE",
                   help="address space each child measuring a parser may take, e.g. 4g or 512m; a parser that "
                        "needs more reads `out of memory` (default from [tool.callscale]: 4g)")


def split_values(values: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return list(dict.fromkeys(out))


def timeout_of(args: argparse.Namespace, settings: config.Settings) -> float:
    return args.timeout if getattr(args, "timeout", None) is not None else settings.timeout


def memory_limit_of(args: argparse.Namespace, settings: config.Settings) -> int:
    return args.memory_limit if getattr(args, "memory_limit", None) is not None else settings.memory_limit


def add_verdict_rules(p: argparse.ArgumentParser, request: bool = True) -> None:
    """``--reference-length`` and ``--projection-factor``: the projection rule of the verdict; ``request``: also
    ``--request-factor``, the per-request rule (:func:`callscale.fit.judge_request`; not for a command whose
    verdict has no per-request figure)."""
    p.add_argument("--reference-length", metavar="SIZE",
                   help="length (characters) the fitted c + a*n + b*n**2 is projected to (default from "
                        "[tool.callscale]: 256k)")
    p.add_argument("--projection-factor", type=setting_type("projection_factor"), metavar="X",
                   help="largest projected / linear-projected cost that passes (default from [tool.callscale]: 3)")
    if request:
        p.add_argument("--request-factor", type=setting_type("request_factor"), metavar="X",
                       help="largest cost of one request (a fresh parser and its first delta) as a multiple of the "
                            "floor's that passes (default from [tool.callscale]: 1000)")


def verdict_rules(p: argparse.ArgumentParser, args: argparse.Namespace, settings) -> tuple[int, float]:
    """``(reference_length, projection_factor)`` from the options, else ``[tool.callscale]``."""
    reference = settings.reference_length
    if args.reference_length is not None:
        try:
            reference = config.check("reference_length", args.reference_length, "--reference-length")
        except config.ConfigError as exc:
            p.error(str(exc))
    factor = args.projection_factor if args.projection_factor is not None else settings.projection_factor
    return reference, factor


def request_factor_of(args: argparse.Namespace, settings) -> float:
    """The per-request rule's factor: ``--request-factor``, else ``[tool.callscale]``'s ``request_factor``."""
    given = getattr(args, "request_factor", None)
    return given if given is not None else settings.request_factor


def add_export(p: argparse.ArgumentParser) -> None:
    """``--export FORMAT:PATH`` (repeatable): the figures in another tool's format (:mod:`callscale.exports`)."""
    p.add_argument("--export", action="append", metavar="FORMAT:PATH",
                   help="also write the measured figures as FORMAT to PATH: bmf (Bencher Metric Format JSON, "
                        "for `bencher run --adapter json --file PATH`); repeatable")


def export_targets(p: argparse.ArgumentParser, args: argparse.Namespace) -> list:
    """The ``--export`` values as ``(format, path)`` (``p.error`` on a bad one, and on a ``--summary`` path
    that holds no regular file, before measuring)."""
    from .. import exports

    out = []
    for spec in getattr(args, "export", None) or []:
        try:
            out.append(exports.parse(spec))
        except exports.ExportError as exc:
            p.error(str(exc))
    if getattr(args, "summary", None) is not None:
        try:
            exports.regular_file(args.summary)
        except OSError as exc:
            p.error(f"--summary: {exc}")
    return out


def add_summary(p: argparse.ArgumentParser) -> None:
    """``--summary PATH``: where the Markdown summary goes (:mod:`callscale.summary`)."""
    p.add_argument("--summary", metavar="PATH",
                   help="write the verdict as Markdown there (verdict, a row per pair with the failing first, "
                        "each failing pair's reason and the command that reproduces it); default: summary.md in "
                        "--out when given; also appended to $GITHUB_STEP_SUMMARY when that is set")


def parser_of(args: argparse.Namespace, command: str) -> argparse.ArgumentParser:
    """The subcommand's parser that :func:`callscale.cli.build_parser` stored in ``args.command_parser`` (its
    ``error`` says ``callscale COMMAND: error: ...``), or a bare one for ``args`` built elsewhere."""
    return getattr(args, "command_parser", None) or ArgumentParser(prog=f"callscale {command}")
