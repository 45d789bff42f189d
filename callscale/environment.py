"""The environment a run was measured in, stored beside its results, and what differs between two runs'.

    >>> env = environment.fingerprint(["team_engine.tool_parsers:TeamParser"])
    >>> environment.write(env, "results")                 # results/environment.json
    >>> environment.differences(environment.read("base"), env, meter="instructions")

A harness edit, another Python build or another valgrind moves every
instruction count a few percent (docs/exact.md), so ``compare`` and
``--baseline`` name what differs between the base's environment and the new
run's, and say when the counts are not comparable.

:func:`fingerprint` is a flat dict of text (``None`` where a thing is
absent): ``python`` (version, implementation and build), ``valgrind``
(``valgrind --version``), ``callscale`` (version), ``callscale_commit`` (the
git commit of the callscale source tree, ``+dirty`` when it has uncommitted
changes; ``None`` for an installed wheel), ``repository_commit`` (the git
commit of the working directory, where the parser under test usually
lives), ``platform`` and ``machine``, ``cpus``, one ``package:NAME`` per
engine, tokenizer or numeric package installed (:data:`PACKAGES`) and one
``parser:SPEC`` per plug-in parser naming the distribution and version that
provides its module (read from the installed metadata, without importing it).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["FILE", "PACKAGES", "HARNESS", "fingerprint", "write", "read", "beside", "differences"]

#: The file name beside ``scaling.csv``.
FILE = "environment.json"

#: Distributions whose version is recorded when installed: the engines, the tokenizers, the numeric stack.
PACKAGES = ("vllm", "sglang", "tensorrt_llm", "transformers", "tokenizers", "tiktoken", "mistral_common",
            "sentencepiece", "numpy", "scipy", "pandas", "regex", "partial-json-parser", "pydantic")

#: The keys whose change moves instruction counts whatever the parser does (the harness and interpreter).
HARNESS = ("python", "valgrind", "callscale", "callscale_commit")


def _run(cmd: list[str], cwd: Path | None = None) -> str | None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def _commit(folder: Path) -> str | None:
    """The git commit checked out at ``folder`` (``+dirty`` with uncommitted changes to tracked files), or None."""
    head = _run(["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"])
    if head is None:
        return None
    dirty = _run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"])
    return head + ("+dirty" if dirty else "")


def _version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _provider(spec: str) -> str | None:
    """``"DIST VERSION"`` of the distribution holding a ``module.path:Class`` spec's top module, or None."""
    from importlib import metadata

    top = spec.split(":", 1)[0].split(".", 1)[0]
    try:
        dists = metadata.packages_distributions().get(top) or []
    except Exception:  # a broken metadata entry of another package
        return None
    return ", ".join(f"{d} {_version(d) or '?'}" for d in dict.fromkeys(dists)) or None


def fingerprint(parsers: Iterable[str] = ()) -> dict[str, Any]:
    """The environment of this process (the dict described in the module docstring). ``parsers``: the parser
    selections of the run; each ``module.path:Class`` one gets a ``parser:SPEC`` entry."""
    from . import __version__

    root = Path(__file__).resolve().parent.parent
    valgrind = _run(["valgrind", "--version"])
    env: dict[str, Any] = {
        "python": f"{platform.python_implementation()} {platform.python_version()} "
                  f"({' '.join(platform.python_build())}, {platform.python_compiler()})",
        "valgrind": valgrind,
        "callscale": __version__,
        "callscale_commit": _commit(root) if (root / ".git").exists() else None,
        "repository_commit": _commit(Path.cwd()),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    for name in PACKAGES:
        version = _version(name)
        if version is not None:
            env[f"package:{name}"] = version
    for spec in parsers:
        if ":" in spec:
            env[f"parser:{spec}"] = _provider(spec)
    return env


def write(env: Mapping[str, Any], folder: Path | str) -> Path:
    """Write ``env`` as ``folder/environment.json`` (sorted keys, indented); returns the path. Raises ``OSError``."""
    from .exports import regular_file

    path = regular_file(Path(folder) / FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{FILE}.{os.getpid()}")
    tmp.write_text(json.dumps(dict(env), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def beside(csv: Path | str) -> Path:
    """Where the environment of a ``scaling.csv`` is: ``environment.json`` in its folder."""
    return Path(csv).parent / FILE


def read(path: Path | str) -> dict[str, Any] | None:
    """The environment in ``path`` (a file, or a folder holding :data:`FILE`), or ``None`` when there is none or
    it is not a JSON object."""
    path = Path(path)
    if path.is_dir():
        path = path / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def differences(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None, meter: str = "instructions",
                base_name: str = "the base") -> list[str]:
    """Lines saying how the environments differ (empty when they do not, or neither was recorded).

    The first line names every key that differs (``key base -> new``); a second says what it means: under
    the instruction meter, a change in :data:`HARNESS` moves every count, so the ratios mix the change with
    the harness's; a change in a package or parser provider is part of what is measured. When only ``new``
    was recorded, one line says the base's environment is unknown.
    """
    if base is None and new is None:
        return []
    if base is None:
        return [f"environment: {base_name} recorded none ({FILE} is missing): cannot tell whether the counts "
                f"moved with the interpreter or the harness"]
    if new is None:
        return []
    ignore = {"repository_commit"}  # the change under test itself
    keys = [k for k in dict.fromkeys([*base, *new]) if k not in ignore and base.get(k) != new.get(k)]
    if not keys:
        return []
    shown = "; ".join(f"{k} {base.get(k) if base.get(k) is not None else '(none)'} -> "
                      f"{new.get(k) if new.get(k) is not None else '(none)'}" for k in keys)
    lines = [f"environment differs from {base_name}'s: {shown}"]
    harness = [k for k in keys if k in HARNESS]
    if harness and meter == "instructions":
        lines.append(f"counts moved: the harness changed ({', '.join(harness)}); every count may move a few "
                     "percent with it (docs/exact.md): measure the base again in this environment to compare")
    elif harness or any(k in ("platform", "machine", "cpus") for k in keys):
        lines.append("times are not comparable across machines or interpreters: measure the base again here")
    return lines
