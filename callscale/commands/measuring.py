"""What the measuring commands (scale, gate) share: the validated selection of a run, the run itself, and the
outputs written after it (the environment file, ``--export`` files, the summary, the baseline comparison)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from .. import config
from ..measure import METERS
from ..plugins import ParserSpec
from .options import (check_chunking, check_team_workloads, check_workloads, load_settings, memory_limit_of,
                      narrow, parser_specs, request_factor_of, split_values, timeout_of,
                      verdict_rules)


@dataclass
class Selection:
    """The validated selectors of a measuring command: what to measure (``specs``, ``workloads``, ``meter``,
    ``seed``) and the run's :class:`callscale.config.Settings`, the command line's values over
    ``[tool.callscale]`` over the defaults (its ``lengths`` are this meter's; threshold, rules, chunking, repeats,
    timeout, memory limit and jobs are read from it)."""

    specs: list[ParserSpec]
    workloads: list[str]
    meter: str
    seed: int
    settings: config.Settings
    baseline: object = None
    """The ``--baseline`` file read as a DataFrame (:func:`callscale.compare.load`), or ``None``."""
    cost_only: bool = False
    """``--cost-only``: a ``wrong output`` row passes when its cost does."""
    environment: dict | None = None
    """This run's environment (:func:`environment_of`), computed once; ``gate --from``: the shards' run."""

    @property
    def lengths(self) -> tuple[int, ...]:
        return self.settings.lengths

    @property
    def chunking(self) -> str:
        return self.settings.chunking

    @property
    def threshold(self) -> float:
        return self.settings.threshold

    @property
    def rules(self) -> dict[str, float]:
        """The projection rule's keywords (``reference_length``, ``projection_factor``)."""
        return {"reference_length": self.settings.reference_length,
                "projection_factor": self.settings.projection_factor}


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
    check_team_workloads(p, workloads, specs, lengths, args.seed, timeout_of(args, settings))
    chunking = subjects_chunking(p, specs, meter, chunking, args.chunking is not None)
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
    run = replace(settings, lengths=tuple(lengths), chunking=chunking, repeats=repeats, threshold=threshold,
                  reference_length=reference, projection_factor=factor, request_factor=request_factor_of(args, settings),
                  timeout=timeout_of(args, settings),
                  memory_limit=memory_limit_of(args, settings),
                  jobs=getattr(args, "jobs", None) if getattr(args, "jobs", None) is not None else settings.jobs)
    return Selection(specs=specs, workloads=workloads, meter=meter, seed=args.seed, settings=run, baseline=baseline,
                     cost_only=bool(getattr(args, "cost_only", False)))


def subjects_chunking(p: argparse.ArgumentParser, specs: list, meter: str, chunking: str, given: bool) -> str:
    """The run's chunking as the subjects take it (:meth:`callscale.adapters.protocol.Subject.chunking`: a subject
    that streams elsewhere may take one delivery only), each subject's note said once on stderr; ``p.error`` when
    a subject cannot be measured under ``meter`` and the chunking."""
    from ..adapters.protocol import subject_of

    notes: list[str] = []
    taken = chunking
    for spec in specs:
        try:
            own, note = subject_of(spec.factory).chunking(meter, chunking, given)
        except ValueError as exc:
            p.error(str(exc))
        taken = own if own != chunking else taken
        if note and note not in notes:
            notes.append(note)
            print(note, file=sys.stderr)
    return taken


def measure(sel: Selection, args: argparse.Namespace, detail: bool, on_measurement=None):
    """:func:`callscale.matrix.run` of the selection under its settings (``detail``: scale's latency and memory
    passes too); what a parser started is stopped before it returns."""
    from .. import matrix

    run = sel.settings
    if run.chunking.startswith("model"):  # which tokenizer cut the deltas
        from .. import tokenizers

        print("note: model chunking tokenizers: " + tokenizers.note([s.format for s in sel.specs]), file=sys.stderr)
    from ..bounded import stop_new

    try:
        return matrix.run(sel.specs, sel.workloads, run.lengths, chunking=run.chunking, repeats=run.repeats,
                          threshold=run.threshold, meter=sel.meter, seed=sel.seed,
                          latency=detail or sel.meter == "time",  # the gate's slowest-increment rule (time meter)
                          memory=detail, progress=args.progress, timeout=run.timeout, memory_limit=run.memory_limit,
                          cost_only=sel.cost_only, on_measurement=on_measurement, jobs=run.jobs,
                          request_factor=run.request_factor, **sel.rules)
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
