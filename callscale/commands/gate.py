"""``callscale gate``: measure the matrix (or judge shards' files, ``--from``) and exit 0 when every pair passes both
rules of :func:`callscale.fit.fit` (steepest step, projection), 1 otherwise, naming each offender and the rule.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from .measuring import (Selection, against_baseline, environment_lines, environment_of, interrupted, measure, select,
                        shown, write_environment, write_exports, write_summary)
from .options import (add_export, add_output, add_selectors, add_summary, export_targets, load_settings,
                      parser_of, request_factor_of, verdict_rules)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale gate``'s options."""
    add_selectors(p)
    add_output(p)
    p.add_argument("--out", metavar="DIR", help="also write scaling.csv, scaling-fits.csv and scaling.png there, "
                                                "as scale does (without its slowest-increment and memory columns)")
    add_summary(p)
    add_export(p)
    p.add_argument("--from", dest="from_csv", nargs="+", metavar="CSV",
                   help="measure nothing: judge the scaling.csv files of a run's shards as one run "
                        "(the selectors other than --threshold and the verdict rules are ignored)")


def gate_from(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``gate --from CSV ...``: the merged verdict of the shards' files (:func:`callscale.shard.merge`)."""
    from .. import environment, shard

    settings = load_settings(p)
    reference, factor = verdict_rules(p, args, settings)
    request = request_factor_of(args, settings)
    threshold = args.threshold if args.threshold is not None else settings.threshold
    wanted = export_targets(p, args)
    try:
        merged = shard.merge(args.from_csv, threshold, reference, factor, request)
    except shard.ShardError as exc:
        p.error(f"--from: {exc}")
    base = None
    if args.baseline is not None:  # checked before anything is printed
        from .. import compare

        try:
            base = compare.load(args.baseline)
            compare.check_base(base, [(r.parser, r.workload, m.length) for r in merged.rows
                                      for m in r.measurements])
        except compare.CompareError as exc:
            p.error(f"--baseline: {exc}")
    run = replace(settings, lengths=tuple(merged.lengths), chunking=merged.chunking, repeats=merged.repeats,
                  threshold=threshold, reference_length=reference, projection_factor=factor, request_factor=request)
    sel = Selection(specs=[], workloads=[], meter=merged.meter, seed=0, settings=run, baseline=base,
                    environment=environment.read(environment.beside(args.from_csv[0])))  # the shards' run
    print_verdict(merged, args.output)
    return judge(sel, merged, wanted, Path(args.summary) if args.summary is not None else None)


def print_verdict(measured, style: str, out: str | None = None) -> None:
    """The table (in ``style``: :func:`callscale.report.show`), its error lines and the gate's verdict lines
    (:func:`callscale.report.gate_lines`)."""
    from .. import report

    report.show(measured, style, gate=True, out=out)


def judge(sel: Selection, measured, wanted: list, summary_path: Path | None, written_ok: bool = True) -> int:
    """The ending both ways of gating share: compare with ``--baseline``, write the summary and the
    ``--export`` files; 0 when every pair passed, nothing got worse and everything was written, else 1 (with
    the closing ``gate failed:`` line, :func:`callscale.report.closing`)."""
    from .. import report, summary

    compared: list = []
    worse = against_baseline(sel, measured, compared)
    differ = (environment_lines(sel.baseline.attrs.get("path"), environment_of(sel), measured.meter)
              if compared else [])
    summary_ok = write_summary(summary.gate_markdown(measured, compared[0] if compared else None,
                                                     environment=differ), summary_path)
    exported = write_exports(wanted, measured)
    return report.closing(measured, worse=bool(worse), written=written_ok, summary=summary_ok, exported=exported)


def run(args: argparse.Namespace) -> int:
    """``callscale gate``: the exit status (0 pass, 1 fail, 2 bad option, 3 callscale's own files changed during
    the run (:func:`callscale.integrity.guarded`), 125 cannot test, 130/143 stopped)."""
    from .. import integrity  # what was measured must not have changed callscale's own files

    return integrity.guarded(lambda: gate_run(args))


def gate_run(args: argparse.Namespace) -> int:
    """The gate itself (:func:`run` guards it)."""
    p = parser_of(args, "gate")
    from .. import report, summary
    from ..matrix import Interrupted

    if args.from_csv:
        return gate_from(p, args)
    sel = select(p, args)
    wanted = export_targets(p, args)
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        try:
            report.check_writable(out)
            held = report.lock_out(out)  # noqa: F841  a second run on this --out refuses here, before measuring
        except OSError as exc:
            p.error(f"--out: {exc}")
    try:
        measured = measure(sel, args, detail=False)
    except Interrupted as exc:
        return interrupted(exc, out)
    print_verdict(measured, args.output, out=args.out)
    written_ok = True
    if out is not None:
        try:
            written = report.write_outputs(measured, out)
            env_path = write_environment(sel, out)
            print(f"wrote {', '.join(shown(path) for path in written + ([env_path] if env_path else []))}",
                  file=report.stream(args.output))
        except OSError as exc:
            print(f"callscale gate: cannot write the results: {exc}", file=sys.stderr)
            written_ok = False
    where = Path(args.summary) if args.summary is not None else (out / summary.FILE if out is not None else None)
    return judge(sel, measured, wanted, where, written_ok)
