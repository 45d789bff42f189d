"""callscale's benchmarks of this repository's parsers, for asv (written by ``callscale init``).

What is measured is read from ``callscale.json`` beside this file (edit it,
or run ``callscale init --force`` again): ``parsers`` (``module.path:Class``
-> format), ``workloads``, ``lengths`` (characters), ``chunking``,
``checkout`` (the engine whose checkout the repository is, or ``null``).

asv checks out each commit into ``$ASV_ENV_DIR/project``. An engine's
parser classes (``checkout`` set) are loaded from there as
``MODULE:CLASS@FOLDER`` (``callscale.checkout``: the engine's package roots
not run, nothing built or installed); other parser classes are imported
with that folder first on the import path. Either way each commit's own
parser classes are measured. callscale itself is found at run time: the one
installed where asv's Python sees it (asv's virtualenv sees the packages
beside its Python), else the folder named by ``ASV_PYTHONPATH`` (asv's own
variable; asv drops ``PYTHONPATH``). Nothing here names a path of the
machine that wrote it.
All figures of a commit are taken once, in ``setup_cache``, by
``callscale.matrix.run`` with the instruction meter (callgrind: exact
counts, the same on every run of the same code).

- ``CallscaleSeries.track_instructions``: instructions to stream one
  workload at one length through a fresh parser (the exact series
  ``callscale history`` plots and fits);
- ``CallscaleFit.track_exponent``: the scaling exponent fitted over all
  the lengths, once per parser and workload, so ``asv continuous`` and
  ``asv find`` see a parser turn quadratic as a jump from ~1 to ~2. Its
  ``setup_cache`` reads the figures ``CallscaleSeries`` took at the same
  commit (a file in ``$ASV_ENV_DIR``, keyed by the commit and this
  configuration), so nothing is counted twice.

A parser that cannot be imported or built at a commit fails its benchmarks
there (asv stores no figure; ``asv find`` passes over the commit, while a
skipped result, ``n/a``, would be taken for a figure and mislead it; ``asv
run`` then exits 2), each with one line (``RuntimeError: cannot import or
build the parser here: ...``, no traceback). A machine without valgrind
skips them (``n/a``).
"""

import json
import os
import sys
from pathlib import Path

_CONFIG = json.loads((Path(__file__).resolve().parent / "callscale.json").read_text(encoding="utf-8"))
FORMATS = dict(_CONFIG["parsers"])
PARSERS = list(FORMATS)
WORKLOADS = list(_CONFIG["workloads"])
LENGTHS = [int(n) for n in _CONFIG["lengths"]]
CHUNKING = _CONFIG.get("chunking", "tokens:4")
TIMEOUT = float(_CONFIG.get("timeout", 600))


def _project():
    """asv's checkout of the commit measured (``None`` outside asv)."""
    project = Path(os.environ.get("ASV_ENV_DIR") or "/nonexistent") / "project"
    return project if project.is_dir() else None


def _import_path():
    # ASV_PYTHONPATH names where callscale is when asv's Python does not see it installed; asv 0.6 turns it
    # into this process's PYTHONPATH and then takes those entries off sys.path again: put them back, first
    named = os.environ.get("ASV_PYTHONPATH") or os.environ.get("PYTHONPATH") or ""
    for entry in reversed([p for p in named.split(os.pathsep) if p]):
        if entry in sys.path:
            sys.path.remove(entry)
        sys.path.insert(0, entry)
    project = _project()
    if project is not None and not _CONFIG.get("checkout") and str(project) not in sys.path:
        sys.path.insert(0, str(project))


def _spec(target):
    """The parser spec at this commit: an engine's class from asv's checkout of it, else ``target``."""
    project = _project()
    return f"{target}@{project}" if _CONFIG.get("checkout") and project is not None else target


def _cache_file():
    """Where this commit's figures are kept for the other class (``None`` outside asv)."""
    import hashlib

    folder, commit = os.environ.get("ASV_ENV_DIR"), os.environ.get("ASV_COMMIT")
    if not folder or not commit:
        return None
    key = hashlib.sha256(json.dumps(_CONFIG, sort_keys=True).encode()).hexdigest()[:12]
    return Path(folder) / f"callscale-figures-{commit[:12]}-{key}.json"


def _figures():
    """:func:`_measure_all`, once per commit: the second class reads what the first took."""
    path = _cache_file()
    if path is not None and path.is_file():
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            kept["rows"] = {tuple(k.split("\t")): {"counts": {int(n): c for n, c in v["counts"].items()},
                                                   "exponent": v["exponent"], "verdict": v["verdict"]}
                            for k, v in kept.get("rows", {}).items()}
            return kept
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    figures = _measure_all()
    if path is not None and "unavailable" not in figures:
        try:
            kept = dict(figures, rows={"\t".join(k): v for k, v in figures["rows"].items()})
            path.write_text(json.dumps(kept), encoding="utf-8")
        except OSError:
            pass
    return figures


def _fail(message):
    """Fail the benchmark with one line (asv prints the traceback; a short one is the message alone)."""
    sys.tracebacklimit = 0
    raise RuntimeError(message)


def _measure_all():
    _import_path()
    try:
        from callscale import matrix, plugins
        from callscale.instructions import MeterUnavailable, check_available
    except ImportError as exc:
        return {"unavailable": f"callscale cannot be imported: {exc} (install it where asv's Python sees it, "
                               "or set ASV_PYTHONPATH to its folder)"}
    import callscale

    # callscale's child processes import the callscale this benchmark imported (asv passes ASV_PYTHONPATH to
    # this process's path only, and an installed one may be another version)
    home = str(Path(callscale.__file__).resolve().parent.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join([home] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                         if p and p != home])
    try:
        check_available()
    except MeterUnavailable as exc:
        return {"unavailable": str(exc)}
    errors, rows = {}, {}
    for target, fmt in FORMATS.items():
        try:
            spec = plugins.probe([plugins.resolve(_spec(target), fmt)], TIMEOUT)[0]  # imported and built in a child
        except plugins.PluginError as exc:
            errors[target] = f"cannot import or build the parser here: {exc}"
            continue
        if spec.broken is not None:
            errors[target] = f"cannot import or build the parser here: {spec.broken}"
            continue
        run = matrix.run([spec], WORKLOADS, LENGTHS, chunking=CHUNKING, meter="instructions", latency=False,
                         memory=False, progress=False, timeout=TIMEOUT)
        for row in run.rows:
            rows[target, row.workload] = {
                "counts": {m.length: (m.seconds if m.ok else m.error) for m in row.measurements},
                "exponent": row.fit.exponent, "verdict": row.fit.verdict}
    return {"errors": errors, "rows": rows}


def _check(cache, parser):
    if "unavailable" in cache:
        raise NotImplementedError(cache["unavailable"])
    if parser in cache["errors"]:  # failed, not skipped: asv find passes over a failed commit, not a skipped one
        _fail(cache["errors"][parser])


class CallscaleSeries:
    params = (PARSERS, WORKLOADS, LENGTHS)
    param_names = ["parser", "workload", "length"]
    timeout = 120

    def setup_cache(self):
        return _figures()

    setup_cache.timeout = 3600

    def setup(self, cache, parser, workload, length):
        _check(cache, parser)

    def track_instructions(self, cache, parser, workload, length):
        value = cache["rows"][parser, workload]["counts"][length]
        if isinstance(value, str) or value is None:
            _fail(value)
        return float(value)

    track_instructions.unit = "instructions"


class CallscaleFit:
    params = (PARSERS, WORKLOADS)
    param_names = ["parser", "workload"]
    timeout = 120

    def setup_cache(self):
        return _figures()

    setup_cache.timeout = 3600

    def setup(self, cache, parser, workload):
        _check(cache, parser)

    def track_exponent(self, cache, parser, workload):
        value = cache["rows"][parser, workload]["exponent"]
        if value is None:
            _fail(f"no exponent: {cache['rows'][parser, workload]['verdict']}")
        return float(value)

    track_exponent.unit = "exponent"
