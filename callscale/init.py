"""``callscale init``: write an asv set-up into a team's repository that measures its parser classes at every commit.

    callscale init --parser my_engine.parsers:DeepSeekV31Parser --format deepseek_v31

writes, in the current folder (the repository's top level; ``--dir`` another):

- ``asv.conf.json``: a virtualenv environment of this Python version
  (``VIRTUALENV_SYSTEM_SITE_PACKAGES``, so it sees what is installed next
  to it), nothing built or installed per commit (asv's own checkout of each
  commit, ``$ASV_ENV_DIR/project``, is put first on the import path by the
  benchmark), results in ``results/asv`` (where ``callscale history`` looks
  by default), the current branch;
- ``callscale_benchmarks/``: ``callscale_series.py`` (the benchmarks, copied
  from :mod:`callscale.init_templates`), ``callscale.json`` (what they
  measure: parsers and formats, workloads, lengths, chunking, and
  ``checkout``: the engine whose checkout this is, or ``null``) and
  ``__init__.py``;
- ``.gitignore``: its lines for ``.asv/`` and ``results/`` added (what asv
  and callscale write there is the machine's, not the repository's).

Nothing written is a path of this machine: the files are committed, and
callscale is found at run time (installed where asv's Python sees it, or
named by ``ASV_PYTHONPATH``, asv's own variable). In an engine's checkout
(TensorRT-LLM, vLLM, SGLang: recognised from the layout,
:func:`callscale.checkout.detect`, or named with ``--engine``) the
benchmarks load each commit's parser modules from asv's checkout of that
commit with :mod:`callscale.checkout` (package roots not run, the engine not
built or installed).

The benchmarks (``callscale_series.CallscaleSeries.track_instructions`` and
``.track_exponent``) take callgrind instruction counts through
:func:`callscale.matrix.run` with the instruction meter, so ``asv run``,
``asv continuous`` (exit 1 when a count or an exponent got worse), ``asv
find`` and ``callscale history`` work over the team's commits as they are.
Each parser is imported (and built once) here first, so a typo fails now
(exit 2), not at every commit. Existing files are not overwritten without
``--force``. See ``docs/workflows.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["add_arguments", "run", "write", "BENCHMARK_DIR", "DEFAULT_LENGTHS", "DEFAULT_WORKLOADS"]

BENCHMARK_DIR = "callscale_benchmarks"
#: Call lengths (characters) measured by default: four, 2x apart, small because counts are exact.
DEFAULT_LENGTHS = (1024, 2048, 4096, 8192)
DEFAULT_WORKLOADS = ("write_file", "many_short_calls", "repeated_opener")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--parser", action="append", metavar="MODULE:CLASS", required=True,
                   help="a parser class or factory of the repository (module.path:ClassOrFactory); repeat "
                        "or comma-separate")
    from .cli import WorkloadFormat

    p.add_argument("--workload-format", "--format", dest="format", metavar="NAME", action=WorkloadFormat,
                   help="the format whose workloads to render for the parsers (not needed for the engines' "
                        "known classes; see callscale parsers --engines)")
    p.add_argument("--workload", action="append", metavar="NAME",
                   help=f"a workload; repeat or comma-separate (default: {', '.join(DEFAULT_WORKLOADS)})")
    p.add_argument("--lengths", metavar="SIZES",
                   help="at least three call lengths in characters (default 1k,2k,4k,8k)")
    p.add_argument("--chunking", default="tokens:4", metavar="SPEC", help="chunking of the streams (default tokens:4)")
    p.add_argument("--dir", default=".", metavar="DIR", help="the repository's top level (default: here)")
    p.add_argument("--force", action="store_true", help="overwrite asv.conf.json and callscale_benchmarks/")
    from .adapters import ENGINES

    p.add_argument("--engine", choices=sorted(ENGINES),
                   help="the engine whose checkout this is: its parser modules are loaded without the engine's "
                        "package roots (default: recognised from the layout: tensorrt_llm/, vllm/, python/sglang/)")


#: The lines ``init`` adds to ``.gitignore``: asv's environments and the results are the machine's.
IGNORE_LINES = (".asv/", "results/")


def add_ignore_lines(folder: Path) -> list[str]:
    """Append :data:`IGNORE_LINES` missing from ``folder/.gitignore`` (created if needed); returns those added."""
    path = folder / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    present = {line.strip().strip("/") for line in text.splitlines()} | {
        line.strip().lstrip("/").rstrip("*").rstrip("/") for line in text.splitlines()}
    missing = [line for line in IGNORE_LINES if line.strip("/") not in present]
    if missing:
        head = "" if not text or text.endswith("\n") else "\n"
        path.write_text(text + head + "# callscale init: asv's environments and the measured results\n"
                        + "".join(f"{line}\n" for line in missing), encoding="utf-8")
    return missing


def _branch(folder: Path) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(folder), "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "main"
    name = proc.stdout.strip()
    return name if proc.returncode == 0 and name and name != "HEAD" else "main"


def write(folder: Path, parsers: dict[str, str], workloads: list[str], lengths: list[int], chunking: str,
          force: bool = False, engine: str | None = None) -> list[Path]:
    """Write ``asv.conf.json`` and ``callscale_benchmarks/`` into ``folder``; returns the files written.

    ``parsers``: ``module:Class`` -> format; ``engine``: the engine whose
    checkout ``folder`` is (its parsers loaded with :mod:`callscale.checkout`
    at every commit), else ``None``. Raises ``FileExistsError`` when a file
    exists and not ``force``; ``OSError`` when the folder cannot be written.
    """
    conf = folder / "asv.conf.json"
    bench = folder / BENCHMARK_DIR
    if not force:
        for path in (conf, bench):
            if path.exists():
                raise FileExistsError(f"{path} exists (--force overwrites it)")
    bench.mkdir(parents=True, exist_ok=True)
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    config = {
        "version": 1,
        "project": folder.resolve().name,
        "project_url": "",
        "repo": ".",
        "branches": [_branch(folder)],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "pythons": [python],
        # see what is installed beside this Python (callscale, numpy, ...)
        "matrix": {"env": {"VIRTUALENV_SYSTEM_SITE_PACKAGES": ["true"]}},
        # nothing to build or install: the benchmark imports asv's checkout of each commit
        "build_command": [],
        "install_command": [],
        "uninstall_command": [],
        "benchmark_dir": BENCHMARK_DIR,
        "env_dir": ".asv/env",
        "results_dir": "results/asv",
        "html_dir": "results/html",
    }
    conf.write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    settings = {
        "parsers": parsers,
        "workloads": workloads,
        "lengths": lengths,
        "chunking": chunking,
        "checkout": engine,
    }
    (bench / "callscale.json").write_text(json.dumps(settings, indent=4) + "\n", encoding="utf-8")
    (bench / "__init__.py").write_text('"""asv benchmarks written by `callscale init`."""\n', encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name("init_templates") / "callscale_series.py", bench / "callscale_series.py")
    return [conf, bench / "__init__.py", bench / "callscale_series.py", bench / "callscale.json"]


def run(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``callscale init``: check the selections, import each parser once, write the files; exit 0 (2: bad option)."""
    import os

    from . import config, plugins
    from .adapters import known_format
    from .workloads import catalog
    from .workloads.chunking import parse_chunking

    folder = Path(args.dir)
    if not folder.is_dir():
        p.error(f"--dir {folder}: no such folder")
    from . import checkout

    engine = args.engine or checkout.detect(folder)
    targets = [t.strip() for value in args.parser for t in value.split(",") if t.strip()]
    workloads = [w.strip() for value in args.workload or () for w in value.split(",") if w.strip()] \
        or list(DEFAULT_WORKLOADS)
    from .workloads import team

    named: list[str] = []
    for name in workloads:
        if team.is_team(name):  # a team's own workload: module:function or file:PATH (an absolute path)
            here = os.getcwd()
            os.chdir(folder)  # imported as the benchmarks will, from the repository's top level
            try:
                named += team.expand(name)
            except team.TeamWorkloadError as exc:
                p.error(str(exc))
            finally:
                os.chdir(here)
        elif name not in catalog.names():
            p.error(f"unknown workload {name!r}; known: {', '.join(catalog.names())} (or a team's own: "
                    "module.path:function, file:PATH)")
        else:
            named.append(name)
    workloads = named
    try:
        lengths = list(config.parse_lengths(args.lengths)) if args.lengths else list(DEFAULT_LENGTHS)
        parse_chunking(args.chunking)
    except (config.ConfigError, ValueError) as exc:
        p.error(str(exc))
    parsers: dict[str, str] = {}
    here = os.getcwd()
    os.chdir(folder)  # the parsers import as they will from the repository's top level
    try:
        for target in targets:
            if not plugins.is_plugin(target):
                p.error(f"--parser {target!r}: name a class or factory of the repository as module.path:Class")
            if "@" in target:
                p.error(f"--parser {target!r}: name the class without @: the benchmarks load it from each commit")
            fmt = args.format or known_format(target)
            try:
                # imported and built once (in a child): a typo fails now; an engine's from this checkout
                probed = plugins.probe([plugins.resolve(f"{target}@{Path.cwd()}" if engine else target, fmt)])[0]
                spec = plugins.resolve(target, fmt)
                if probed.broken:
                    p.error(f"--parser {target}: {probed.broken}")
            except plugins.PluginError as exc:
                p.error(str(exc))
            parsers[target] = spec.format
        try:  # a team workload is made once in each format: a spec that cannot be made fails now
            team.validate(workloads, list(parsers.values()), lengths)
        except team.TeamWorkloadError as exc:
            p.error(str(exc))
    finally:
        os.chdir(here)
    try:
        written = write(folder, parsers, workloads, lengths, args.chunking, args.force, engine)
        ignored = add_ignore_lines(folder)
    except FileExistsError as exc:
        p.error(str(exc))
    except OSError as exc:
        p.error(f"cannot write to {folder}: {exc}")
    for path in written:
        print(f"wrote {path}")
    if ignored:
        print(f"added to {folder / '.gitignore'}: {' '.join(ignored)}")
    if engine:
        print(f"a {engine} checkout: each commit's parser modules are loaded without the engine's package roots "
              "(nothing built or installed per commit)")
    names = ["asv.conf.json", f"{BENCHMARK_DIR}/", ".gitignore"]
    print(f"commit: git add {' '.join(names)} && git commit -m 'callscale benchmarks' (no path of this machine in "
          "them; .asv/ and results/ stay out)")
    print("next: asv machine --yes; asv run (every commit of the branch: asv run ALL), asv continuous BASE HEAD, "
          "asv find BASE..HEAD CallscaleFit.track_exponent, callscale history (see docs/workflows.md in callscale); "
          "callscale is found where asv's Python sees it installed, else set ASV_PYTHONPATH to its folder")
    return 0
