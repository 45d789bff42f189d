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

import json
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["write", "BENCHMARK_DIR", "DEFAULT_LENGTHS", "DEFAULT_WORKLOADS"]

BENCHMARK_DIR = "callscale_benchmarks"
#: Call lengths (characters) measured by default: four, 2x apart, small because counts are exact.
DEFAULT_LENGTHS = (1024, 2048, 4096, 8192)
DEFAULT_WORKLOADS = ("write_file", "many_short_calls", "repeated_opener")


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
