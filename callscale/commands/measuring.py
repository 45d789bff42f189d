"""What the measuring commands (scale, gate) share: the validated selection of a run, the run itself, and the
outputs written after it (the environment file, ``--export`` files, the summary, the baseline comparison)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import config
from ..measure import METERS
from ..plugins import ParserSpec
from .options import (check_chunking, check_team_workloads, check_workloads, load_settings, memory_limit_of,
                      narrow, parser_specs, split_values, timeout_of, verdict_rules)


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
    environment: dict | None = None
    """This run's environment (:func:`environment_of`), computed once; ``gate --from``: the shards' run."""


def select(p: argparse.ArgumentParser, args: argparse.Namespace) -> Selection:
    """Validate the selectors against the settings, the registries and the catalog.

    Calls ``p.error`` (one line, exit 2) on anything unusable.
    """
    settings = load_settings(p)
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
        from ..instructions import MeterUnavailable, check_available

        try:
            check_available()
        except MeterUnavailable as exc:
            p.error(str(exc))
    chunking = check_chunking(p, args.chunking if args.chunking is not None else settings.chunking)
    names = split_values(args.parser) or list(settings.parsers)
    if not names:
        from callscale import parsers

        names = list(parsers.names())
        if not names:
            p.error("no parsers are registered; name one with --parser module.path:ClassOrFactory "
                    "--workload-format NAME")
    workloads = check_workloads(p, split_values(args.workload) or list(settings.workloads))
    threshold = args.threshold if args.threshold is not None else settings.threshold
    repeats = args.repeats if args.repeats is not None else settings.repeats
    reference, factor = verdict_rules(p, args, settings)
    try:
        config.check_rules(lengths, reference, factor)
    except config.ConfigError as exc:
        p.error(str(exc))
    specs = narrow(p, args, parser_specs(p, names, args, timeout=timeout_of(args, settings),
                                    memory_limit=memory_limit_of(args, settings)))
    check_team_workloads(p, workloads, specs, lengths, args.seed)
    from ..adapters import smg

    if any(smg.is_gateway(spec.factory) for spec in specs):  # smg: parsers stream DeepSeek tokens (adapters/smg.py)
        chunking = "model" if args.chunking is None else chunking
        if smg.unsupported(meter, chunking):
            p.error(smg.unsupported(meter, chunking))
        print("note: the smg: parsers get one DeepSeek token a delta (SMG's router detokenizes the stand-in "
              "worker's token ids)", file=sys.stderr)
    baseline = None
    if getattr(args, "baseline", None) is not None:
        from .. import compare

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
    return Selection(specs=specs, workloads=workloads, lengths=lengths, chunking=chunking, repeats=repeats,
                     threshold=threshold, meter=meter, seed=args.seed, settings=settings, reference_length=reference,
                     projection_factor=factor, timeout=timeout_of(args, settings), baseline=baseline,
                     memory_limit=memory_limit_of(args, settings), cost_only=bool(getattr(args, "cost_only", False)),
                     jobs=getattr(args, "jobs", None) if getattr(args, "jobs", None) is not None else settings.jobs)


def measure(sel: Selection, args: argparse.Namespace, detail: bool, on_measurement=None):
    from .. import matrix

    if sel.chunking.startswith("model"):  # which tokenizer cut the deltas (issue 20)
        from .. import tokenizers

        print("note: model chunking tokenizers: " + tokenizers.note([s.format for s in sel.specs]), file=sys.stderr)
    from ..bounded import stop_new

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


def interrupted(exc, out: Path | None = None) -> int:
    """Say which case was running and where the measurements so far went; exit status 130 (143 after SIGTERM)."""
    from .. import report

    done = len(exc.run.measurements)
    where = ""
    if out is not None and done:
        try:
            where = f"; {done} measurements taken before it are in {shown(report.write_partial(exc.run, out))}"
        except OSError as err:
            where = f"; the {done} measurements taken before it could not be saved: {err}"
    elif out is not None:
        where = "; nothing was measured yet"
    how = "terminated (SIGTERM)" if getattr(exc, "terminated", False) else "interrupted"
    print(f"callscale: {how} while measuring {exc.running or 'nothing'}{where}", file=sys.stderr)
    return 143 if getattr(exc, "terminated", False) else 130


def against_baseline(sel: Selection, run, compared: list | None = None) -> int:
    """Compare the run with ``--baseline`` (if given): print the side-by-side table; 1 when a pair got worse.
    ``compared``: a list the :class:`callscale.compare.Comparison` is appended to (for the summary)."""
    if sel.baseline is None:
        return 0
    from .. import compare, report

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
    for line in environment_lines(sel.baseline.attrs.get("path"), environment_of(sel), run.meter):
        print(line)
    return 1 if result.worse else 0


def environment_of(sel: Selection) -> dict:
    """This run's environment (:func:`callscale.environment.fingerprint`), computed once per run."""
    from .. import environment

    if sel.environment is None:
        sel.environment = environment.fingerprint([s.name for s in sel.specs])
    return sel.environment


def environment_lines(base_csv, new_env: dict | None, meter: str) -> list[str]:
    """What differs between the environment recorded beside ``base_csv`` and ``new_env``."""
    from .. import environment

    if base_csv is None:
        return []
    return environment.differences(environment.read(environment.beside(base_csv)), new_env, meter,
                                   base_name=f"the base {base_csv}")


def write_environment(sel: Selection, out: Path) -> Path | None:
    """``OUT/environment.json`` beside the results (None, said on stderr, when it cannot be written)."""
    from .. import environment

    try:
        return environment.write(environment_of(sel), out)
    except OSError as exc:
        print(f"callscale: cannot write {environment.FILE}: {exc}", file=sys.stderr)
        return None


def write_exports(wanted: list, run) -> bool:
    """Write each ``--export``; False (said on stderr) when one cannot be written."""
    from .. import exports

    ok = True
    for fmt, path in wanted:
        try:
            print(f"wrote {shown(exports.write(fmt, path, run))}")
        except OSError as exc:
            print(f"callscale: cannot write --export {fmt}:{path}: {exc}", file=sys.stderr)
            ok = False
    return ok


def write_summary(text: str, path: Path | None) -> bool:
    """Write the summary (``--summary``/``--out``, ``$GITHUB_STEP_SUMMARY``); False (said on stderr) when it
    cannot be written."""
    from .. import summary

    try:
        written = summary.write(text, path)
    except OSError as exc:
        print(f"callscale: cannot write the summary: {exc}", file=sys.stderr)
        return False
    if path is not None and written:
        print(f"wrote {shown(written[0])}")
    return True


def shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
