"""Defaults of the ``callscale`` command, from ``pyproject.toml`` under ``[tool.callscale]``.

    [tool.callscale]
    threshold = 1.3                    # gate: the largest step exponent that passes
    reference_length = "256k"          # gate: the length (characters) the fitted cost is projected to
    projection_factor = 3.0            # gate: largest projected / linear-projected cost that passes
    timeout = 120                      # seconds one case may take before its parser is stopped
    lengths = ["4k", "16k", "64k"]     # call lengths in characters (k = 1024)
    chunking = "tokens:4"              # how the text is split into deltas
    repeats = 3                        # timed runs per measurement (the minimum counts)
    workloads = ["write_file", "many_short_calls", "repeated_opener"]
    parsers = []                       # empty or absent: every registered parser
    out = "results"                    # where scale writes its CSV and PNG (relative to pyproject.toml)

The ``pyproject.toml`` is looked for in the current directory and its parents;
without one (or without the table) the built-in :data:`DEFAULTS` apply, which
are the values above. Command-line options override all of these.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Settings", "DEFAULTS", "ConfigError", "parse_size", "format_size", "parse_lengths",
           "find_pyproject", "load"]

MIN_LENGTHS = 3
"""A fit needs at least this many distinct lengths."""


class ConfigError(ValueError):
    """A bad value in ``[tool.callscale]`` or on the command line (the message is one line)."""


@dataclass(frozen=True)
class Settings:
    """Resolved defaults. ``lengths`` in characters, ascending; ``out`` a directory."""

    threshold: float = 1.3
    reference_length: int = 256 * 1024
    """Length (characters) the fitted ``a*n + b*n**2`` is projected to (:mod:`callscale.fit`)."""
    projection_factor: float = 3.0
    """Largest ratio of the projected cost to the linear projection that passes."""
    timeout: float = 120.0
    """Seconds one case (one parser on one case, all its passes) may take before it is stopped."""
    lengths: tuple[int, ...] = (4096, 16384, 65536)
    instruction_lengths: tuple[int, ...] = (1024, 2048, 4096, 8192)
    """Lengths for ``--meter instructions``: exact counts separate linear from quadratic at small sizes."""
    chunking: str = "tokens:4"
    repeats: int = 3
    workloads: tuple[str, ...] = ("write_file", "many_short_calls", "repeated_opener")
    parsers: tuple[str, ...] = ()
    out: Path = field(default_factory=lambda: Path("results"))
    source: Path | None = None
    """The ``pyproject.toml`` the values came from (``None``: built-in defaults)."""


DEFAULTS = Settings()

_SIZE = re.compile(r"^\s*(\d+)\s*([kKmM]?)\s*$")
_UNITS = {"": 1, "k": 1024, "m": 1024 * 1024}


def parse_size(text: str | int) -> int:
    """A length in characters from ``"4k"`` (4096), ``"64K"``, ``"1m"`` or ``"1000"``.

    ``k`` is 1024 characters, ``m`` 1024 k. Raises :class:`ConfigError` for
    anything that is not a positive whole size.
    """
    if isinstance(text, bool):
        raise ConfigError(f"bad length {text!r}: expected a positive size like 4k, 16k or 1000")
    if isinstance(text, int):
        value = text
    else:
        hit = _SIZE.match(str(text))
        if hit is None:
            raise ConfigError(f"bad length {text!r}: expected a positive size like 4k, 16k or 1000")
        value = int(hit.group(1)) * _UNITS[hit.group(2).lower()]
    if value < 1:
        raise ConfigError(f"bad length {text!r}: a length must be at least 1 character")
    return value


def format_size(chars: int) -> str:
    """The short label of a length: 4096 -> ``"4k"``, 1000 -> ``"1000"``."""
    for suffix, unit in (("m", 1024 * 1024), ("k", 1024)):
        if chars >= unit and chars % unit == 0:
            return f"{chars // unit}{suffix}"
    return str(chars)


def parse_lengths(spec: str | list | tuple) -> tuple[int, ...]:
    """Lengths from ``"4k,16k,64k"`` or a list of sizes: distinct, ascending, at least three.

    Raises :class:`ConfigError` on a bad size or fewer than three distinct lengths.
    """
    items = [s for s in spec.split(",") if s.strip()] if isinstance(spec, str) else list(spec)
    lengths = sorted({parse_size(item) for item in items})
    if len(lengths) < MIN_LENGTHS:
        raise ConfigError(
            f"need at least {MIN_LENGTHS} distinct lengths to fit an exponent, got {len(lengths)}"
            f" ({','.join(format_size(n) for n in lengths) or 'none'})"
        )
    return tuple(lengths)


def find_pyproject(start: Path | str | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (default: the current directory) or a parent."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


#: Largest per-case time budget, in seconds (one day): the worker's timer takes no more.
MAX_TIMEOUT = 86400.0

KEYS = frozenset({"threshold", "reference_length", "projection_factor", "timeout", "lengths", "instruction_lengths", "chunking", "repeats", "workloads", "parsers",
                  "out"})
"""The keys ``[tool.callscale]`` may hold."""


def _names(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.callscale] {key} must be a list of names, got {value!r}")
    return tuple(value)


def load(start: Path | str | None = None) -> Settings:
    """The settings: built-in defaults updated from the nearest ``pyproject.toml``.

    Raises :class:`ConfigError` when the file cannot be read as TOML, a key
    is unknown (a misspelt key would otherwise be ignored without a word), or
    a value is wrong; the message names ``[tool.callscale]`` and the key.
    """
    path = find_pyproject(start)
    if path is None:
        return DEFAULTS
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    settings = replace(DEFAULTS, source=path, out=path.parent / DEFAULTS.out)
    table = data.get("tool", {}).get("callscale")
    if not isinstance(table, dict):
        return settings
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"[tool.callscale] in {path}: unknown key {unknown[0]!r}; known: {', '.join(sorted(KEYS))}")
    changes: dict[str, Any] = {}
    for key in ("threshold", "projection_factor", "timeout"):
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"[tool.callscale] {key} must be a positive number, got {value!r}")
            if key == "timeout" and value > MAX_TIMEOUT:
                raise ConfigError(f"[tool.callscale] timeout must be at most {MAX_TIMEOUT:g} seconds, got {value!r}")
            changes[key] = float(value)
    if "reference_length" in table:
        try:
            changes["reference_length"] = parse_size(table["reference_length"])
        except ConfigError as exc:
            raise ConfigError(f"[tool.callscale] reference_length: {exc}") from None
    for key in ("lengths", "instruction_lengths"):
        if key in table:
            try:
                changes[key] = parse_lengths(table[key])
            except (ConfigError, AttributeError, TypeError) as exc:
                raise ConfigError(f"[tool.callscale] {key}: {exc}") from None
    if "chunking" in table:
        from callscale.workloads.chunking import parse_chunking

        if not isinstance(table["chunking"], str):
            raise ConfigError(f"[tool.callscale] chunking must be a string, got {table['chunking']!r}")
        try:
            parse_chunking(table["chunking"])
        except ValueError as exc:
            raise ConfigError(f"[tool.callscale] chunking: {exc}") from None
        changes["chunking"] = table["chunking"]
    if "repeats" in table:
        value = table["repeats"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"[tool.callscale] repeats must be a whole number >= 1, got {value!r}")
        changes["repeats"] = value
    if "workloads" in table:
        changes["workloads"] = _names(table["workloads"], "workloads")
    if "parsers" in table:
        changes["parsers"] = _names(table["parsers"], "parsers")
    if "out" in table:
        if not isinstance(table["out"], str):
            raise ConfigError(f"[tool.callscale] out must be a path string, got {table['out']!r}")
        changes["out"] = path.parent / table["out"]
    return replace(settings, **changes)
