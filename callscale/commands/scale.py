"""``callscale scale``: measure every selected parser on every workload at every length; print the table, write
``scaling.csv``, ``scaling-fits.csv``, ``scaling.png`` and ``environment.json`` to ``--out``; exit 0 (a failed
run shows in the table), 1 when ``--baseline`` finds a pair got worse or a result cannot be written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .measuring import against_baseline, interrupted, measure, select, shown, write_environment, write_exports
from .options import add_export, add_output, add_selectors, export_targets, parser_of


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``callscale scale``'s options."""
    add_selectors(p)
    add_output(p)
    add_export(p)
    p.add_argument("--out", metavar="DIR", help="where to write scaling.csv, scaling-fits.csv and scaling.png "
                                                "(default: results/ next to pyproject.toml)")


def run(args: argparse.Namespace) -> int:
    """``callscale scale``: 0 measured and written (failed rows show in the table), 1 worse than ``--baseline`` or
    not written, 2 bad option, 3 callscale's own files changed during
    the run (:func:`callscale.integrity.guarded`), 130/143 stopped."""
    from .. import integrity  # what was measured must not have changed callscale's own files

    return integrity.guarded(lambda: scale_run(args), "scale")


def scale_run(args: argparse.Namespace) -> int:
    """The scale command itself (:func:`run` guards it)."""
    p = parser_of(args, "scale")
    from .. import report

    from ..matrix import Interrupted

    sel = select(p, args)
    wanted = export_targets(p, args)
    out = Path(args.out) if args.out is not None else sel.settings.out
    formats = len({spec.format for spec in sel.specs}) or 1
    rows = len(sel.specs) * len(sel.workloads)
    measurements = (2 * len(sel.specs) + formats) * len(sel.workloads) * len(sel.lengths)
    try:
        report.check_writable(out)
        held = report.lock_out(out)  # noqa: F841  a second run on this --out refuses here, before measuring
        # the space the results need, held until they are written: a full disk stops the run here
        reservation = report.reserve(out, report.space_needed(measurements, rows))
    except OSError as exc:
        p.error(f"--out: {exc}")
    started = time.perf_counter()
    journal = report.Journal(out)
    try:
        try:
            measured = measure(sel, args, detail=True, on_measurement=journal.append)
        except Interrupted as exc:
            reservation.release()
            status = interrupted(exc, out)
            if (out / report.PARTIAL).exists() or not exc.run.measurements:
                journal.remove()  # the partial file holds them (else the journal stays, and says so)
            else:
                print(f"callscale: the journal {shown(journal.path)} holds {journal.count} of them", file=sys.stderr)
            return status
        report.show(measured, args.output, out=shown(out))
        reservation.release()
        try:
            written = report.write_outputs(measured, out)
        except OSError as exc:
            journal.close()
            kept = (f"; the {journal.count} measurements are in {shown(journal.path)}" if journal.failed is None
                    else f"; the journal {shown(journal.path)} holds {journal.count} of them ({journal.failed})")
            print(f"callscale scale: cannot write the results: {exc}{kept}", file=sys.stderr)
            return 1
        journal.remove()
        env_path = write_environment(sel, out)
        written += [env_path] if env_path is not None else []
    finally:
        reservation.release()
        journal.close()
    print(f"wrote {', '.join(shown(path) for path in written)} in {time.perf_counter() - started:.0f} s",
          file=report.stream(args.output))
    exported = write_exports(wanted, measured)
    return against_baseline(sel, measured) or (0 if exported else 1)
