"""The ``callscale`` command.

    callscale scale [--parser NAME ...] [--workload NAME ...] [--lengths 4k,16k,64k]
                    [--chunking tokens:4] [--repeats N] [--threshold X] [--timeout S] [--baseline CSV] [--out DIR]
    callscale gate  [--threshold 1.3] [--projection-factor 3] [--reference-length 256k] [same selectors] [--out DIR]
                    [--summary PATH] [--export bmf:PATH]
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

Each subcommand is a ``(add_arguments, run)`` pair in :data:`COMMANDS`, and
the selectors shared by the measuring commands are added by
:func:`add_selectors`, so a new subcommand or a new shared option slots in.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from . import __version__, config, tables
from .measure import METERS
from .plugins import ParserSpec, PluginError, resolve, takes_format

__all__ = ["main", "build_parser", "add_selectors", "Selection", "select", "COMMANDS"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error: ``callscale scale: error: ...`` on stderr, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _whole_number(minimum: int) -> Callable[[str], int]:
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


_positive_int = _whole_number(1)
_count = _whole_number(0)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _setting(key: str) -> Callable[[str], object]:
    """An argparse type for the setting ``key``: :func:`callscale.config.check`, the one validation
    ``[tool.callscale]`` gets too (finite, in :data:`callscale.config.RANGES`)."""
    def parse(text: str) -> object:
        try:
            return config.check(key, text, "")
        except config.ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc).strip()) from None
    parse.__name__ = key
    return parse


_timeout_seconds = _setting("timeout")


def _jobs(text: str) -> int | None:
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


class _InOrder(argparse._AppendAction):
    """Append the value, and note ``(dest, value)`` in ``namespace.in_order`` (the command line's order),
    so each ``--workload-format`` pairs with the ``--parser`` it follows (:func:`_pairs`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        warn_deprecated_format(parser.prog, option_string, namespace)
        super().__call__(parser, namespace, values, option_string)
        order = list(getattr(namespace, "in_order", None) or [])
        namespace.in_order = order + [(self.dest, values)]


def add_parser_options(p: argparse.ArgumentParser, null: bool = True, short_format: bool = True) -> None:
    """``--parser`` (repeatable) and ``--workload-format``, shared by the commands that take parsers.

    ``short_format``: ``--format`` is a deprecated alias of ``--workload-format`` (a line on stderr says so;
    not in ``profile``, where ``--format`` is the output's, deprecated too). One
    ``--workload-format`` applies to every plug-in; several pair each with
    the ``--parser`` it follows (:func:`_pairs`).
    """
    p.add_argument("--parser", action=_InOrder, metavar="NAME",
                   help=f"a registered parser{', null,' if null else ''} or module.path:ClassOrFactory "
                        "(with --workload-format); repeat or comma-separate; default: every registered parser")
    flags = ("--workload-format", "--format") if short_format else ("--workload-format",)
    p.add_argument(*flags, dest="format", action=_InOrder, metavar="NAME",
                   help="the format whose workloads to render for module:Factory parsers"
                        + (" (--format: deprecated spelling)" if short_format else "")
                        + "; given once it applies to every such parser, given more than once each applies to "
                          "the --parser it follows")


def _pairs(p: argparse.ArgumentParser, args: argparse.Namespace, names: Sequence[str]) -> list[tuple[str, str | None]]:
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


def _settings(p: argparse.ArgumentParser) -> config.Settings:
    try:
        return config.load()
    except config.ConfigError as exc:
        p.error(str(exc))


def _chunking(p: argparse.ArgumentParser, spec: str) -> str:
    from callscale.workloads.chunking import parse_chunking

    try:
        return str(parse_chunking(spec))
    except ValueError as exc:
        p.error(str(exc))


def _specs(p: argparse.ArgumentParser, names: Sequence[str], fmt: object, null: bool = True,
           timeout: float | None = None, memory_limit: int | None = None) -> list[ParserSpec]:
    """Resolve parser selections (``p.error`` on an unusable one); ``null``: the floor parser is allowed.

    ``fmt``: the parsed arguments (each ``--workload-format`` paired by :func:`_pairs`), or one format
    name for every parser. Each plug-in is then loaded once in a child process
    (:func:`callscale.plugins.probe`, ``timeout`` seconds): one that cannot be used is an error here,
    one whose child died or hung is measured as failing (its rows say why).
    """
    pairs = _pairs(p, fmt, names) if isinstance(fmt, argparse.Namespace) else [(n, fmt) for n in names]
    if any(f is not None for _, f in pairs) and not any(takes_format(n) for n in names):
        p.error("--workload-format applies to module.path:ClassOrFactory and entry-point parsers only "
                "(a registered parser's format is its name)")
    specs = []
    for name, one in pairs:
        try:
            spec = resolve(name, one)
        except PluginError as exc:
            _cannot_test(p, exc)
            p.error(str(exc))
        if spec.format is None and not null:
            p.error("the null parser parses nothing; name a parser")
        specs.append(spec)
    from .plugins import probe

    try:
        return probe(specs, timeout, memory_limit)
    except PluginError as exc:
        _cannot_test(p, exc)
        p.error(str(exc))


#: Exit status of ``gate`` and ``check`` when the parser cannot be imported or built: "cannot test",
#: which ``git bisect run`` skips (a commit that does not import is neither good nor bad).
CANNOT_TEST = 125
_VERDICT_COMMANDS = ("gate", "check")
#: How :func:`callscale.plugins.load_factory` words a parser that cannot be imported or built (the other
#: PluginErrors, such as an unknown name or format, are bad options: exit 2).
_LOAD_FAILURES = ("cannot import ", " has no attribute ", "() failed: ", " without ", " is not a class or factory")


def _cannot_test(p: argparse.ArgumentParser, exc: Exception) -> None:
    """Exit :data:`CANNOT_TEST` (one line) when a verdict command's parser cannot be imported or built."""
    missing_engine = " engine is not installed" in str(exc)  # the runner lacks the engine: a bad setup, exit 2
    if p.prog.split()[-1] in _VERDICT_COMMANDS and not missing_engine and any(s in str(exc) for s in _LOAD_FAILURES):
        p.exit(CANNOT_TEST, f"{p.prog}: cannot test: {' '.join(str(exc).split())} (exit {CANNOT_TEST}: "
                            "git bisect run skips this commit)\n")


def _workloads(p: argparse.ArgumentParser, names: Sequence[str]) -> list[str]:
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


def _team_workloads(p: argparse.ArgumentParser, workloads: Sequence[str], specs: Sequence, lengths: Sequence[int],
                    seed: int = 0, timeout: float | None = None) -> None:
    """Make each team workload in each selected format at the shortest and longest length (``p.error``,
    one line, when one cannot be made), before anything is measured."""
    from callscale.workloads import team

    plugins = [str(getattr(s.factory, "target", getattr(s.factory, "__module__", ""))).partition(":")[0]
               for s in specs if getattr(s, "plugin", False)]
    try:
        team.validate(workloads, [getattr(s, "format", None) for s in specs], lengths, seed, timeout, plugins)
    except team.TeamWorkloadError as exc:
        p.error(str(exc))


def add_selectors(p: argparse.ArgumentParser) -> None:
    """The options shared by the measuring commands (what to measure, how, and the threshold)."""
    add_parser_options(p)
    p.add_argument("--workload", action="append", metavar="NAME",
                   help="a workload name; repeat or comma-separate; default from [tool.callscale]")
    p.add_argument("--lengths", metavar="SIZES",
                   help="at least three call lengths in characters (k = 1024); default from [tool.callscale]: "
                        "lengths (4k,16k,64k), or instruction_lengths with --meter instructions (4k,16k,64k)")
    p.add_argument("--chunking", metavar="SPEC",
                   help="whole, char, fixed:K, tokens:K, random:SEED:MAX, tokens-random:SEED:MAX, model or "
                        "model-random:SEED:K (default from [tool.callscale])")
    p.add_argument("--repeats", type=_setting("repeats"), metavar="N",
                   help="timed runs per measurement; the minimum counts (default from [tool.callscale]: 3)")
    p.add_argument("--threshold", type=_setting("threshold"), metavar="X",
                   help="largest scaling exponent that passes (default from [tool.callscale])")
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
    p.add_argument("--jobs", type=_jobs, metavar="N",
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


def _narrow(p: argparse.ArgumentParser, args: argparse.Namespace, specs: list) -> list:
    """``--changed-since`` and ``--shard`` applied to the selected parser specs (``p.error`` on a bad value;
    exit 0 with one line when nothing is left to measure)."""
    from . import shard

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
    p.add_argument("--timeout", type=_timeout_seconds, metavar="SECONDS",
                   help="seconds one case may take; a parser that overruns is stopped and its row reads "
                        "timeout (default from [tool.callscale]: 120)")
    p.add_argument("--memory-limit", type=_setting("memory_limit"), metavar="SIZE",
                   help="address space each child measuring a parser may take, e.g. 4g or 512m; a parser that "
                        "needs more reads `out of memory` (default from [tool.callscale]: 4g)")


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
    reference_length: int = 256 * 1024
    projection_factor: float = 3.0
    timeout: float = 120.0
    baseline: object = None
    """The ``--baseline`` file read as a DataFrame (:func:`callscale.compare.load`), or ``None``."""
    memory_limit: int | None = None
    """Bytes of address space per measuring child (``--memory-limit``)."""
    cost_only: bool = False
    """``--cost-only``: a ``wrong output`` row passes when its cost does."""
    jobs: int | None = None
    """``--jobs``: callgrind children at once (``None``: auto)."""


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
        lengths = (config.check_lengths(args.lengths, meter, "--lengths") if args.lengths is not None
                   else config.check_lengths(default_lengths, meter, "the lengths of [tool.callscale]"))
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
        from callscale import parsers

        names = list(parsers.names())
        if not names:
            p.error("no parsers are registered; name one with --parser module.path:ClassOrFactory "
                    "--workload-format NAME")
    workloads = _workloads(p, _split(args.workload) or list(settings.workloads))
    threshold = args.threshold if args.threshold is not None else settings.threshold
    repeats = args.repeats if args.repeats is not None else settings.repeats
    reference, factor = _verdict_rules(p, args, settings)
    try:
        config.check_rules(lengths, reference, factor)
    except config.ConfigError as exc:
        p.error(str(exc))
    specs = _narrow(p, args, _specs(p, names, args, timeout=_timeout(args, settings),
                                    memory_limit=_memory_limit(args, settings)))
    _team_workloads(p, workloads, specs, lengths, args.seed, _timeout(args, settings))
    from .adapters import smg

    if any(smg.is_gateway(spec.factory) for spec in specs):  # smg: parsers stream DeepSeek tokens (adapters/smg.py)
        chunking = "model" if args.chunking is None else chunking
        if smg.unsupported(meter, chunking):
            p.error(smg.unsupported(meter, chunking))
        print("note: the smg: parsers get one DeepSeek token a delta (SMG's router detokenizes the stand-in "
              "worker's token ids)", file=sys.stderr)
    baseline = None
    if getattr(args, "baseline", None) is not None:
        from . import compare

        try:
            baseline = compare.load(args.baseline)
        except compare.CompareError as exc:
            p.error(f"--baseline: {exc}")
        if str(baseline["meter"].iloc[0]) != meter:
            p.error(f"--baseline {args.baseline} was measured with --meter {baseline['meter'].iloc[0]}, "
                    f"this run with {meter}")
        try:  # before measuring: a baseline that cannot judge this run is no pass
            compare.check_base(baseline, [(s.name, w, n) for s in specs if s.name != "null"
                                          for w in workloads for n in lengths])
        except compare.CompareError as exc:
            p.error(f"--baseline: {exc}")
    return Selection(specs, workloads, lengths, chunking, repeats, threshold, meter, args.seed, settings,
                     reference, factor, _timeout(args, settings), baseline, _memory_limit(args, settings),
                     bool(getattr(args, "cost_only", False)),
                     getattr(args, "jobs", None) if getattr(args, "jobs", None) is not None else settings.jobs)


def _timeout(args: argparse.Namespace, settings: config.Settings) -> float:
    return args.timeout if getattr(args, "timeout", None) is not None else settings.timeout


def _memory_limit(args: argparse.Namespace, settings: config.Settings) -> int:
    return args.memory_limit if getattr(args, "memory_limit", None) is not None else settings.memory_limit


def _run(sel: Selection, args: argparse.Namespace, detail: bool, on_measurement=None):
    from . import matrix

    if sel.chunking.startswith("model"):  # which tokenizer cut the deltas (issue 20)
        from . import tokenizers

        print("note: model chunking tokenizers: " + tokenizers.note([s.format for s in sel.specs]), file=sys.stderr)
    from .bounded import stop_new

    try:
        return matrix.run(sel.specs, sel.workloads, sel.lengths, chunking=sel.chunking, repeats=sel.repeats,
                          threshold=sel.threshold, meter=sel.meter, seed=sel.seed,
                          latency=detail or sel.meter == "time",  # the gate's slowest-increment rule (time meter)
                          memory=detail, progress=args.progress, reference_length=sel.reference_length,
                          projection_factor=sel.projection_factor, timeout=sel.timeout,
                          memory_limit=sel.memory_limit, cost_only=sel.cost_only, on_measurement=on_measurement,
                          jobs=sel.jobs)
    finally:
        stop_new()  # what a parser started (a detached process too) is gone before anything is written


def _interrupted(exc, out: Path | None = None) -> int:
    """Say which case was running and where the measurements so far went; exit status 130 (143 after SIGTERM)."""
    from . import report

    done = len(exc.run.measurements)
    where = ""
    if out is not None and done:
        try:
            where = f"; {done} measurements taken before it are in {_shown(report.write_partial(exc.run, out))}"
        except OSError as err:
            where = f"; the {done} measurements taken before it could not be saved: {err}"
    elif out is not None:
        where = "; nothing was measured yet"
    how = "terminated (SIGTERM)" if getattr(exc, "terminated", False) else "interrupted"
    print(f"callscale: {how} while measuring {exc.running or 'nothing'}{where}", file=sys.stderr)
    return 143 if getattr(exc, "terminated", False) else 130


def _against_baseline(sel: Selection, run, compared: list | None = None) -> int:
    """Compare the run with ``--baseline`` (if given): print the side-by-side table; 1 when a pair got worse.
    ``compared``: a list the :class:`callscale.compare.Comparison` is appended to (for the summary)."""
    if sel.baseline is None:
        return 0
    from . import compare, report

    try:
        result = compare.compare(sel.baseline, report.frame(run))
    except compare.CompareError as exc:  # measured already: say why, and fail
        print(f"callscale: cannot compare with the baseline {sel.baseline.attrs.get('path', '')}: {exc}",
              file=sys.stderr)
        return 1
    if compared is not None:
        compared.append(result)
    print()
    print(f"against the baseline {sel.baseline.attrs.get('path', '')}:")
    print(compare.table(result))
    for line in compare.summary(result):
        print(line)
    for line in _environment_lines(sel.baseline.attrs.get("path"), _environment(sel), run.meter):
        print(line)
    return 1 if result.worse else 0


def _environment(sel: Selection) -> dict:
    """This run's environment (:func:`callscale.environment.fingerprint`), computed once per run."""
    from . import environment

    if not hasattr(sel, "_environment"):
        sel._environment = environment.fingerprint([s.name for s in sel.specs])
    return sel._environment


def _environment_lines(base_csv, new_env: dict | None, meter: str) -> list[str]:
    """What differs between the environment recorded beside ``base_csv`` and ``new_env``."""
    from . import environment

    if base_csv is None:
        return []
    return environment.differences(environment.read(environment.beside(base_csv)), new_env, meter,
                                   base_name=f"the base {base_csv}")


def _write_environment(sel: Selection, out: Path) -> Path | None:
    """``OUT/environment.json`` beside the results (None, said on stderr, when it cannot be written)."""
    from . import environment

    try:
        return environment.write(_environment(sel), out)
    except OSError as exc:
        print(f"callscale: cannot write {environment.FILE}: {exc}", file=sys.stderr)
        return None


def add_export(p: argparse.ArgumentParser) -> None:
    """``--export FORMAT:PATH`` (repeatable): the figures in another tool's format (:mod:`callscale.exports`)."""
    p.add_argument("--export", action="append", metavar="FORMAT:PATH",
                   help="also write the measured figures as FORMAT to PATH: bmf (Bencher Metric Format JSON, "
                        "for `bencher run --adapter json --file PATH`); repeatable")


def _exports(p: argparse.ArgumentParser, args: argparse.Namespace) -> list:
    """The ``--export`` values as ``(format, path)`` (``p.error`` on a bad one, and on a ``--summary`` path
    that holds no regular file, before measuring)."""
    from . import exports

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


def _write_exports(wanted: list, run) -> bool:
    """Write each ``--export``; False (said on stderr) when one cannot be written."""
    from . import exports

    ok = True
    for fmt, path in wanted:
        try:
            print(f"wrote {_shown(exports.write(fmt, path, run))}")
        except OSError as exc:
            print(f"callscale: cannot write --export {fmt}:{path}: {exc}", file=sys.stderr)
            ok = False
    return ok


def add_summary(p: argparse.ArgumentParser) -> None:
    """``--summary PATH``: where the Markdown summary goes (:mod:`callscale.summary`)."""
    p.add_argument("--summary", metavar="PATH",
                   help="write the verdict as Markdown there (verdict, a row per pair with the failing first, "
                        "each failing pair's reason and the command that reproduces it); default: summary.md in "
                        "--out when given; also appended to $GITHUB_STEP_SUMMARY when that is set")


def _write_summary(text: str, path: Path | None) -> bool:
    """Write the summary (``--summary``/``--out``, ``$GITHUB_STEP_SUMMARY``); False (said on stderr) when it
    cannot be written."""
    from . import summary

    try:
        written = summary.write(text, path)
    except OSError as exc:
        print(f"callscale: cannot write the summary: {exc}", file=sys.stderr)
        return False
    if path is not None and written:
        print(f"wrote {_shown(written[0])}")
    return True


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------- scale
def _scale_arguments(p: argparse.ArgumentParser) -> None:
    add_selectors(p)
    add_export(p)
    p.add_argument("--out", metavar="DIR", help="where to write scaling.csv, scaling-fits.csv and scaling.png "
                                                "(default: results/ next to pyproject.toml)")


def _scale(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import report

    from .matrix import Interrupted

    sel = select(p, args)
    wanted = _exports(p, args)
    out = Path(args.out) if args.out is not None else sel.settings.out
    formats = len({spec.format for spec in sel.specs}) or 1
    rows = len(sel.specs) * len(sel.workloads)
    measurements = (2 * len(sel.specs) + formats) * len(sel.workloads) * len(sel.lengths)
    try:
        report.check_writable(out)
        held = report.lock_out(out)  # a second run on this --out refuses here, before measuring
        # the space the results need, held until they are written: a full disk stops the run here
        reservation = report.reserve(out, report.space_needed(measurements, rows))
    except OSError as exc:
        p.error(f"--out: {exc}")
    started = time.perf_counter()
    journal = report.Journal(out)
    try:
        try:
            run = _run(sel, args, detail=True, on_measurement=journal.append)
        except Interrupted as exc:
            reservation.release()
            status = _interrupted(exc, out)
            if (out / report.PARTIAL).exists() or not exc.run.measurements:
                journal.remove()  # the partial file holds them (else the journal stays, and says so)
            else:
                print(f"callscale: the journal {_shown(journal.path)} holds {journal.count} of them", file=sys.stderr)
            return status
        print(report.table(run))
        for line in report.error_lines(run):
            print(f"error: {line}")
        reservation.release()
        try:
            written = report.write_outputs(run, out)
        except OSError as exc:
            journal.close()
            kept = (f"; the {journal.count} measurements are in {_shown(journal.path)}" if journal.failed is None
                    else f"; the journal {_shown(journal.path)} holds {journal.count} of them ({journal.failed})")
            print(f"callscale scale: cannot write the results: {exc}{kept}", file=sys.stderr)
            return 1
        journal.remove()
        env_path = _write_environment(sel, out)
        written += [env_path] if env_path is not None else []
    finally:
        reservation.release()
        journal.close()
    print(f"wrote {', '.join(_shown(path) for path in written)} in {time.perf_counter() - started:.0f} s")
    exported = _write_exports(wanted, run)
    return _against_baseline(sel, run) or (0 if exported else 1)


# ----------------------------------------------------------------------- gate
def _gate_arguments(p: argparse.ArgumentParser) -> None:
    add_selectors(p)
    p.add_argument("--out", metavar="DIR", help="also write scaling.csv, scaling-fits.csv and scaling.png there, "
                                                "as scale does (without its slowest-increment and memory columns)")
    add_summary(p)
    add_export(p)
    p.add_argument("--from", dest="from_csv", nargs="+", metavar="CSV",
                   help="measure nothing: judge the scaling.csv files of a run's shards as one run "
                        "(the selectors other than --threshold and the verdict rules are ignored)")


def _gate_from(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``gate --from CSV ...``: the merged verdict of the shards' files (:func:`callscale.shard.merge`)."""
    from . import report, shard

    settings = _settings(p)
    reference, factor = _verdict_rules(p, args, settings)
    threshold = args.threshold if args.threshold is not None else settings.threshold
    wanted = _exports(p, args)
    try:
        run = shard.merge(args.from_csv, threshold, reference, factor)
    except shard.ShardError as exc:
        p.error(f"--from: {exc}")
    base = None
    if args.baseline is not None:  # checked before anything is printed
        from . import compare

        try:
            base = compare.load(args.baseline)
            compare.check_base(base, [(r.parser, r.workload, m.length) for r in run.rows for m in r.measurements])
        except compare.CompareError as exc:
            p.error(f"--baseline: {exc}")
    print(report.table(run))
    for line in report.error_lines(run):
        print(f"error: {line}")
    print()
    for line in report.gate_lines(run):
        print(line)
    sel = Selection([], [], run.lengths, run.chunking, run.repeats, threshold, run.meter, 0, settings, baseline=base)
    from . import environment

    sel._environment = environment.read(environment.beside(args.from_csv[0]))  # the shards' run, not this process
    compared: list = []
    worse = _against_baseline(sel, run, compared)
    from . import summary

    differ = _environment_lines(base.attrs.get("path"), sel._environment, run.meter) if compared else []
    summary_ok = _write_summary(summary.gate_markdown(run, compared[0] if compared else None, environment=differ),
                                Path(args.summary) if args.summary is not None else None)
    exported = _write_exports(wanted, run)
    return report.closing(run, worse=bool(worse), summary=summary_ok, exported=exported)


def _gate(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import integrity  # what was measured must not have changed callscale's own files

    return integrity.guarded(lambda: _gate_run(p, args))


def _gate_run(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import report

    from .matrix import Interrupted

    if args.from_csv:
        return _gate_from(p, args)
    sel = select(p, args)
    wanted = _exports(p, args)
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        try:
            report.check_writable(out)
            held = report.lock_out(out)  # a second run on this --out refuses here, before measuring
        except OSError as exc:
            p.error(f"--out: {exc}")
    try:
        run = _run(sel, args, detail=False)
    except Interrupted as exc:
        return _interrupted(exc, out)
    print(report.table(run))
    for line in report.error_lines(run):
        print(f"error: {line}")
    print()
    for line in report.gate_lines(run):
        print(line)
    written_ok = True
    if out is not None:
        try:
            written = report.write_outputs(run, out)
            env_path = _write_environment(sel, out)
            print(f"wrote {', '.join(_shown(path) for path in written + ([env_path] if env_path else []))}")
        except OSError as exc:
            print(f"callscale gate: cannot write the results: {exc}", file=sys.stderr)
            written_ok = False
    compared: list = []
    worse = _against_baseline(sel, run, compared)
    from . import summary

    where = Path(args.summary) if args.summary is not None else (out / summary.FILE if out is not None else None)
    differ = _environment_lines(sel.baseline.attrs.get("path"), _environment(sel), run.meter) if compared else []
    summary_ok = _write_summary(summary.gate_markdown(run, compared[0] if compared else None, environment=differ),
                                where)
    exported = _write_exports(wanted, run)
    return report.closing(run, worse=bool(worse), written=written_ok, summary=summary_ok, exported=exported)


# ----------------------------------------------------------------------- compare
def _compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", metavar="BASE", help="scaling.csv of the base run (e.g. the main branch)")
    p.add_argument("new", metavar="NEW", help="scaling.csv of the new run (e.g. the pull request)")
    p.add_argument("--max-ratio", type=_setting("max_ratio"), metavar="R",
                   help="largest new/base cost at one length that passes (default 1.05 under the instruction "
                        "meter, 1.5 by time)")
    p.add_argument("--max-step", type=_setting("max_step"), metavar="X",
                   help="largest exponent increase that passes (default 0.05 under the instruction meter, "
                        "0.25 by time)")
    add_summary(p)


def _compare(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import compare

    _exports(p, args)  # --summary: a regular file's path

    try:
        base, new = compare.load(args.base), compare.load(args.new)
        result = compare.compare(base, new, max_ratio=args.max_ratio, max_step=args.max_step)
    except compare.CompareError as exc:
        p.error(str(exc))
    print(compare.table(result))
    print()
    for line in compare.summary(result):
        print(line)
    from . import environment, summary

    differ = environment.differences(environment.read(environment.beside(args.base)),
                                     environment.read(environment.beside(args.new)), result.meter,
                                     base_name=f"the base {args.base}")
    for line in differ:
        print(line)
    ok = _write_summary(summary.compare_markdown(result, args.base, args.new, differ),
                        Path(args.summary) if args.summary is not None else None)
    return 1 if result.worse or not ok else 0


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
    p.add_argument("--seconds", type=_setting("seconds"), default=3.0,
                   help="how long to keep streaming the case while sampling (default 3)")
    p.add_argument("--rate", type=_setting("rate"), default=250, help="samples a second (default 250)")
    add_timeout(p)


def _profile(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import profile

    settings = _settings(p)
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
    chunking = _chunking(p, args.chunking if args.chunking is not None else settings.chunking)
    specs = _specs(p, [args.parser], args.format, null=False, timeout=_timeout(args, settings),
                   memory_limit=_memory_limit(args, settings))
    from .adapters import smg

    if smg.is_gateway(specs[0].factory):
        p.error(f"--parser {args.parser}: SMG's parsers run compiled inside its router, where py-spy finds no "
                f"Python frames of theirs; count them with callscale gate --meter instructions --parser {args.parser}")
    named = _workloads(p, [args.workload])
    if len(named) != 1:
        p.error(f"--workload {args.workload}: the file holds {len(named)} records; name one as {named[0]}")
    args.workload = named[0]
    _team_workloads(p, named, specs, [length], 0, _timeout(args, settings))
    output = args.output
    if output is None:
        output = profile.default_output(args.parser, args.workload, length, args.output_format, settings.out)
    if args.against is not None and Path(output).suffix != ".folded":  # -o x.svg: x.folded, x.diff.svg, ...
        output = Path(output).with_suffix(".folded")
    from . import report

    from .exports import regular_file

    try:
        report.check_writable(Path(output).parent)
        regular_file(output)
    except OSError as exc:
        p.error(f"-o: {exc}")
    try:
        path = profile.profile(args.parser, args.workload, length, fmt=args.format, chunking=chunking,
                               output_format=args.output_format, output=output, seconds=args.seconds,
                               rate=args.rate, timeout=args.seconds + _timeout(args, settings))
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
        return _profile_against(p, args, path, length, chunking, settings)
    print(f"wrote {_shown(path)}")
    return 0


def _profile_against(p: argparse.ArgumentParser, args: argparse.Namespace, head: Path, length: int, chunking: str,
                     settings: config.Settings) -> int:
    """``profile --against REV|FILE``: the base's collapsed stacks (a file, or the same case profiled at the
    commit), then the differential SVG, the difffolded file and the table of the frames that grew most."""
    from . import flamediff, profile

    stem = head.with_suffix("") if head.suffix == ".folded" else head
    base_path = Path(args.against)
    if not base_path.is_file():
        target = Path(f"{stem}.base.folded")
        try:
            with profile.worktree(args.against) as tree:
                base_path = profile.profile(args.parser, args.workload, length, fmt=args.format, chunking=chunking,
                                            output_format="raw", output=target, seconds=args.seconds,
                                            rate=args.rate, timeout=args.seconds + _timeout(args, settings),
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
    grown = [f for f in flamediff.frames(base, new) if f.change > 0.005][:10]
    rows = [[f.name, f"{100 * f.base:.1f}%", f"{100 * f.head:.1f}%", f"{100 * f.change:+.1f}"] for f in grown]
    print(f"frames whose share of the samples grew most (head against {args.against}):")
    print(tables.render(["frame", "base", "head", "points"], rows, right={1, 2, 3}) if rows else "(none grew)")
    print(f"wrote {_shown(head)}, {_shown(base_path)}, {_shown(diff)}, {_shown(drawn)}")
    return 0


# ----------------------------------------------------------------------- check
def _check_arguments(p: argparse.ArgumentParser) -> None:
    add_parser_options(p, null=False)
    p.add_argument("--workload", action="append", metavar="NAME",
                   help="a workload to check; repeat or comma-separate; default: every workload")
    p.add_argument("--lengths", metavar="SIZES", default="1k",
                   help="call lengths in characters, comma-separated (default 1k)")
    p.add_argument("--chunkings", metavar="SPECS",
                   help="comma-separated chunkings to stream under (default: whole, tokens:1,2,3,7 and "
                        "tokens-random:0..19:8, which never split a special token)")
    p.add_argument("--strict", action="store_true",
                   help="also split inside special tokens: char, fixed:2,3,4,7 and random:0..19:8")
    p.add_argument("--no-faults", action="store_true", help="skip the shared streaming fault cases")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--show", type=_count, default=20, metavar="N",
                   help="failing streams to print, 0 for none (default 20)")
    add_timeout(p)
    from .against import add_arguments as add_against

    add_against(p)  # --against SPEC: old versus new (callscale/against.py)
    add_shard(p)


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from callscale.workloads import catalog
    from callscale.workloads.chunking import CHECK_CHUNKINGS, INSIDE_TOKEN_CHUNKINGS

    from . import check

    try:
        lengths = [config.parse_size(x) for x in args.lengths.split(",") if x.strip()]
    except config.ConfigError as exc:
        p.error(str(exc))
    if not lengths:
        p.error("--lengths needs at least one size")
    chunkings = [_chunking(p, spec) for spec in _split([args.chunkings])] if args.chunkings else list(CHECK_CHUNKINGS)
    if args.strict:
        chunkings += [spec for spec in INSIDE_TOKEN_CHUNKINGS if spec not in chunkings]
    if args.against is not None:
        from . import against

        return against.run(p, args, lengths, chunkings if args.chunkings or args.strict else None,
                           _workloads(p, _split(args.workload) or catalog.names()), _timeout(args, _settings(p)),
                           dict(_pairs(p, args, _split(args.parser))))
    if not _split(args.parser):
        from callscale import parsers

        args.parser = parsers.names()
    settings = _settings(p)
    timeout = _timeout(args, settings)
    specs = _narrow(p, args, _specs(p, _split(args.parser), args, null=False, timeout=timeout,
                                    memory_limit=_memory_limit(args, settings)))
    workloads = _workloads(p, _split(args.workload) or catalog.names())
    _team_workloads(p, workloads, specs, lengths, args.seed, timeout)
    if not args.chunkings:  # the model's own tokens where a tokenizer is installed (issue 20)
        from callscale.workloads.chunking import model_check_chunkings

        extra, note = model_check_chunkings([spec.format for spec in specs])
        chunkings += extra
        print(note, file=sys.stderr)
    elif any(spec.startswith("model") for spec in chunkings):
        from callscale import tokenizers

        print("note: model chunking tokenizers: " + ", ".join(
            f"{fmt} {tokenizers.describe(fmt)}" for fmt in dict.fromkeys(spec.format for spec in specs)),
            file=sys.stderr)
    from .adapters import smg

    gateways = [smg.is_gateway(spec.factory) for spec in specs]
    if any(gateways):  # streamed through SMG's router (adapters/smg.py)
        print(f"note: the smg: parsers stream {', '.join(map(str, smg.CHECK_TOKENS))} DeepSeek tokens a chunk "
              "through SMG's router, not the chunkings above", file=sys.stderr)
    texts = []
    for spec in specs:
        items = [] if args.no_faults else check.fault_items(spec.format)
        items += check.workload_items(spec.format, workloads, lengths, args.seed)
        texts.append(items)
    from .bounded import stop_new

    try:
        results = check.run_bounded(specs, texts, chunkings, timeout, args.progress, _memory_limit(args, settings))
    finally:
        stop_new()
    named = None
    if any(str(c).startswith("model") for c in chunkings):  # which tokenizer cut the model deltas (issue 20)
        from callscale import tokenizers

        named = tokenizers.note([spec.format for spec in specs])
    if all(gateways):  # what the report names: the deliveries through the router
        from .adapters.smg_gateway import check_label

        chunkings, named = [check_label(k) for k in smg.CHECK_TOKENS], None
    for line in check.report(results, chunkings, args.show, named):
        print(line)
    return 0 if all(r.passed for r in results) else 1


# ----------------------------------------------------------------------- parsers
def _parsers_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engines", action="store_true",
                   help="also list the engines' known parser classes, SMG's tool parsers (smg:NAME) and "
                        "llama.cpp's chat templates where built, and the format of each")


def _parsers(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import plugins
    from .adapters import KNOWN_CLASSES

    from callscale import parsers

    rows = [(name, name, "built-in") for name in parsers.names()]
    rows += [(alias, fmt, f"alias of {fmt} (docs/formats.md)") for alias, fmt in sorted(parsers.ALIASES.items())]
    for name, ep in sorted(plugins.entry_points().items()):
        rows.append((name, plugins.entry_point_format(ep) or "?", f"entry point {ep.value}"))
    if args.engines:
        for target, fmt in KNOWN_CLASSES.items():
            engine = target.split(".")[0].replace("tensorrt_llm", "trtllm")
            rows.append((target, fmt, f"{engine} class (adapter)"))
        from .adapters import llamacpp, smg

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


# ----------------------------------------------------------------------- engines
def _engines_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["build", "status"],
                   help="build: fetch and build a compiled engine's harness (once; cached); status: say whether "
                        "it is built and where")
    p.add_argument("engine", choices=["llamacpp"], help="llamacpp: llama.cpp's common library and our harness, "
                   "from the llama-cpp-python sdist (docs/engines.md)")
    p.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")


def _engines(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .adapters import llamacpp

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


Command = tuple[str, Callable[[argparse.ArgumentParser], None],
                Callable[[argparse.ArgumentParser, argparse.Namespace], int]]


# ----------------------------------------------------------------------- history
def add_verdict_rules(p: argparse.ArgumentParser) -> None:
    """``--reference-length`` and ``--projection-factor``: the projection rule of the verdict."""
    p.add_argument("--reference-length", metavar="SIZE",
                   help="length (characters) the fitted c + a*n + b*n**2 is projected to (default from "
                        "[tool.callscale]: 256k)")
    p.add_argument("--projection-factor", type=_setting("projection_factor"), metavar="X",
                   help="largest projected / linear-projected cost that passes (default from [tool.callscale]: 3)")


def _verdict_rules(p: argparse.ArgumentParser, args: argparse.Namespace, settings) -> tuple[int, float]:
    """``(reference_length, projection_factor)`` from the options, else ``[tool.callscale]``."""
    reference = settings.reference_length
    if args.reference_length is not None:
        try:
            reference = config.check("reference_length", args.reference_length, "--reference-length")
        except config.ConfigError as exc:
            p.error(str(exc))
    factor = args.projection_factor if args.projection_factor is not None else settings.projection_factor
    return reference, factor


def _history_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", metavar="DIR",
                   help="asv's results folder (default: asv/ in the results folder of [tool.callscale], "
                        "results/asv)")
    p.add_argument("--out", metavar="DIR", help="where to write index.html, instructions.png, exponents.png and "
                                                "history.csv (default: results/history)")
    p.add_argument("--threshold", type=_setting("threshold"), metavar="X",
                   help="largest scaling exponent that passes (default from [tool.callscale])")
    add_verdict_rules(p)
    p.add_argument("--factor", type=_positive_float, default=1.05, metavar="X",
                   help="list the counts that moved by more than this factor between commits (default 1.05)")
    p.add_argument("--commit-url", metavar="TEMPLATE",
                   help="link commit hashes here, {commit} replaced by the full hash (default: to the page's "
                        "own commit list, which gives `git show HASH`)")
    p.add_argument("--skip-bad", action="store_true",
                   help="pass over result files that cannot be read (each is still named on stderr); without it "
                        "they make the command exit 1")
    p.add_argument("--machine", help="asv machine name (default: the one with the most commits)")
    p.add_argument("--env", help="asv environment name (default: the one with the most commits)")


def _history(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import history

    settings = _settings(p)
    results = Path(args.results) if args.results is not None else settings.out / "asv"
    out = Path(args.out) if args.out is not None else settings.out / "history"
    threshold = args.threshold if args.threshold is not None else settings.threshold
    reference, projection = _verdict_rules(p, args, settings)
    try:
        written = history.write(out, results, threshold, factor=args.factor, commit_url=args.commit_url,
                                machine=args.machine, env=args.env,
                                rules={"reference_length": reference, "projection_factor": projection},
                                skip_bad=args.skip_bad)
    except history.BadResults as exc:
        for path, why in exc.files:
            print(f"callscale history: cannot read {path}: {why}", file=sys.stderr)
        print(f"callscale history: {len(exc.files)} unreadable result file{'s' if len(exc.files) != 1 else ''}; "
              "--skip-bad passes over them", file=sys.stderr)
        return 1
    except history.HistoryError as exc:
        p.error(str(exc))
    except OSError as exc:
        p.error(f"cannot write to --out {out}: {exc.strerror or exc}")
    if args.skip_bad:  # name what was passed over
        for path, why in history.load_results(results, skip_bad=True).attrs.get("bad", []):
            print(f"callscale history: skipped {path}: {why}", file=sys.stderr)
    print(f"{written.commits} commits, {written.verdict_changes} verdict changes, {written.count_changes} counts "
          f"moved by more than {args.factor:g}x")
    print(f"wrote {_shown(written.page)}, {_shown(written.instructions_png)}, {_shown(written.exponents_png)}, "
          f"{_shown(written.csv)}")
    return 0


def _init_module():
    from . import init

    return init


COMMANDS: list[Command] = [
    ("scale", _scale_arguments, _scale),
    ("gate", _gate_arguments, _gate),
    ("compare", _compare_arguments, _compare),
    ("profile", _profile_arguments, _profile),
    ("check", _check_arguments, _check),
    ("history", _history_arguments, _history),
    ("parsers", _parsers_arguments, _parsers),
    ("engines", _engines_arguments, _engines),
    ("init", lambda p: _init_module().add_arguments(p), lambda p, args: _init_module().run(p, args)),
    ("hunt", lambda p: importlib.import_module("callscale.hunt").add_arguments(p),
     lambda p, args: importlib.import_module("callscale.hunt").run(p, args)),
]
"""Subcommands: ``(name, add_arguments(parser), run(parser, args) -> exit status)``."""

_HELP = {
    "scale": "measure how each parser's streaming cost grows with call length; print the table, write CSV and PNG",
    "gate": "exit 0 when every parser's steepest step and projected cost pass, 1 otherwise",
    "compare": "set two scaling.csv side by side (exponent and cost per length, with ratios); "
               "exit 1 when a pair got worse",
    "profile": "stream one case under py-spy and write a flame graph (SVG) or a speedscope profile",
    "check": "stream each fault case and workload under many chunkings; compare with the expected "
             "result and with detect_and_parse",
    "engines": "build a compiled engine's parsing harness once (llamacpp: llama.cpp from the llama-cpp-python "
               "sdist), or say whether it is built",
    "init": "write asv.conf.json and a benchmark module measuring this repository's parser classes at every "
            "commit (asv run/continuous/find, callscale history)",
    "hunt": "search for the input that makes a parser's cost grow fastest (exact instruction counts); exit 1 "
            "when one fails the gate's rules",
    "history": "from asv's results, write a self-contained HTML page and PNGs of the instruction counts and "
               "scaling exponents per commit",
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


#: Options whose value may start with a minus sign and a digit (``--lengths -1k,2k``): argparse would take
#: such a value for an option and say "expected one argument"; it is passed as ``--lengths=-1k,2k`` instead,
#: so the option's own check says what is wrong with it.
_SIGNED_VALUES = frozenset({"--lengths", "--length", "--threshold", "--projection-factor", "--reference-length",
                            "--timeout", "--repeats", "--seed", "--max-ratio", "--max-step", "--seconds", "--rate",
                            "--memory-limit", "--jobs", "--factor"})


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
        args._parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from .bounded import Terminated, own_descendants, terminate_as_interrupt

    try:
        # SIGTERM (timeout(1), CI) stops a run as Ctrl-C does; no process a parser started outlives the command
        with terminate_as_interrupt(), own_descendants():
            return args._run(args._parser, args)
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
