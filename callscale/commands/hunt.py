"""``callscale hunt``: search for the input that makes a parser's cost grow fastest (:mod:`callscale.hunt`, exact
instruction counts), then run the gate's row on it; exit 1 when it fails the gate's rules.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..hunt import DEFAULT_BUDGET, LENGTHS, MIN_BUDGET, hunt, planned_cut, summary, worst_characters
from .options import (add_parser_options, add_verdict_rules, load_settings, memory_limit_of, parse_jobs, parser_of,
                      parser_specs, request_factor_of, setting_type, split_values, timeout_of,
                      verdict_rules)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale hunt``'s options."""
    add_parser_options(p, null=False, parser_help="the parser to hunt on: a registered parser or "
                                                  "module.path:ClassOrFactory (with --workload-format)")
    p.add_argument("--budget", type=budget_seconds, default=None, metavar="SECONDS",
                   help=f"seconds of wall time the whole hunt may take, the gate's row on the steepest input included "
                        f"(default {DEFAULT_BUDGET:g}: the whole survey, about two batches of mutants and the gate's row "
                        f"at a 2-core machine's pace; the report says what a slower pace cut; at least "
                        f"{MIN_BUDGET:g}: a first batch of the survey and the gate's row)")
    p.add_argument("--save", metavar="PATH",
                   help="write the steepest input found as a file: workload (JSON lines) that gate and scale take")
    p.add_argument("--seed", type=int, default=0, help="seed of the search's choices (default 0)")
    p.add_argument("--lengths", metavar="SIZES",
                   help="the confirming run's lengths (default: instruction_lengths of [tool.callscale], 4k,16k,64k)")
    p.add_argument("--threshold", type=setting_type("threshold"), metavar="X", help="largest step exponent that passes")
    add_verdict_rules(p)
    p.add_argument("--jobs", type=parse_jobs, metavar="N", help="callgrind children at once, 1-64 or auto")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a line per round on stderr (default: on; --no-progress: only the result)")


def budget_seconds(text: str) -> float:
    """``--budget``: seconds, more than 0 and at most a day (argparse's error otherwise)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 86400 seconds, got {text}")
    return value


def run(args: argparse.Namespace) -> int:
    """``callscale hunt``: exit 1 when the steepest input found fails the gate's rules, 0 when not, 2 on a bad
    option, 3 callscale's own files changed during the run (:func:`callscale.integrity.guarded`)."""
    from .. import integrity  # what was measured must not have changed callscale's own files

    return integrity.guarded(lambda: hunt_run(args), "hunt")


def hunt_run(args: argparse.Namespace) -> int:
    """The hunt itself (:func:`run` guards it)."""
    from .. import config, report
    from ..instructions import MeterUnavailable, check_available

    p = parser_of(args, "hunt")
    settings = load_settings(p)
    names = split_values(args.parser)
    if len(names) != 1:
        p.error("name one parser: --parser NAME (a registered parser or module.path:ClassOrFactory with "
                "--workload-format)")
    try:
        check_available()
    except MeterUnavailable as exc:
        p.error(str(exc))
    try:
        lengths = (config.check_lengths(args.lengths, "instructions", "--lengths") if args.lengths is not None
                   else config.check_lengths(settings.instruction_lengths, "instructions",
                                             "the lengths of [tool.callscale]"))
    except config.ConfigError as exc:
        p.error(str(exc))
    reference, factor = verdict_rules(p, args, settings)
    try:
        config.check_rules(lengths, reference, factor)
    except config.ConfigError as exc:
        p.error(str(exc))
    if args.save is not None:
        try:
            report.check_writable(Path(args.save).resolve().parent)
        except OSError as exc:
            p.error(f"--save: {exc}")
    spec = parser_specs(p, names, args, null=False, timeout=timeout_of(args, settings),
                        memory_limit=memory_limit_of(args, settings))[0]
    if spec.broken is not None:
        p.error(f"--parser {spec.name}: {spec.broken}")
    from ..adapters.protocol import subject_of

    try:  # the hunt counts under deliveries of its own choosing (tokens:K, fixed:K, ...)
        subject_of(spec.factory).chunking("instructions", "tokens:4", True)
    except ValueError as exc:
        p.error(f"--parser {spec.name}: the hunt's deliveries (tokens:K, fixed:K, ...) cannot reach it: {exc}; count "
                f"them with callscale gate --meter instructions --parser {spec.name} --workload W@KIND")
    budget = args.budget if args.budget is not None else DEFAULT_BUDGET
    if budget < MIN_BUDGET:
        p.error(f"--budget: {budget:g} s holds less than a first batch of the survey and the gate's row; give at least "
                f"{MIN_BUDGET:g} s")
    threshold = args.threshold if args.threshold is not None else settings.threshold
    def say(line: str) -> None:  # a line per round, unless --no-progress
        if args.progress is not False:
            print(f"hunt: {line}", file=sys.stderr, flush=True)

    held, cut = planned_cut(spec.format, budget, lengths, args.seed)
    if cut:  # always said, progress or not: the search will not cover its whole survey
        print(f"hunt: a {budget:g} s budget holds about {held} inputs of the survey: cut {'; '.join(cut)}",
              file=sys.stderr, flush=True)
    found = hunt(spec, budget, args.seed, args.save, lengths, threshold, reference, factor,
                 args.jobs if args.jobs is not None else settings.jobs, say,
                 request_factor=request_factor_of(args, settings))
    counted = [m for m in found.measured if m.growth is not None]
    print(f"hunted {spec.name} ({found.format}) for {found.seconds:.0f} s of a {budget:g} s budget: "
          f"{len(found.measured)} inputs in {found.rounds} batches ({len(counted)} counted at "
          f"{LENGTHS[0]} and {LENGTHS[1]} characters)")
    for line in summary(found):
        print(line)
    failed = [m for m in found.measured if m.growth is None]
    if failed:
        print(f"not counted: {len(failed)} inputs (first: {failed[0].candidate.describe()}: "
              f"{' '.join(str(failed[0].error).split())[:300]})")
    worst = found.worst
    if worst is None or found.confirm is None:
        print("no input could be measured")
        return 1
    print(f"steepest input: {worst.candidate.describe()}")
    print(f"  growth {LENGTHS[0]} -> {LENGTHS[1]} characters: x{4 ** worst.growth:.2f} per 4x (exponent "
          f"{worst.growth:.3f}; instructions {worst.counts[0]} -> {worst.counts[1]})")
    print(f"  inserted characters: {worst_characters(worst.candidate)}")
    print("the gate's row for it (--meter instructions):")
    for line in report.table(found.confirm).splitlines():
        print("  " + line)
    for line in report.gate_lines(found.confirm):
        print(line)
    if found.saved is not None and worst.candidate.axis == "value":
        print(f"wrote {found.saved} (as a workload: --workload file:{found.saved})")
    elif found.saved is not None:
        print(f"wrote {found.saved}: the input at each of the gate's lengths, a record a line (a file: workload "
              f"grows only its longest value, not the {worst.candidate.axis} axis)")
    if found.failed:
        print(f"hunt: found an input on which {spec.name} fails the gate's rules")
        return 1
    print(f"hunt: no input found on which {spec.name} fails the gate's rules")
    return 0
