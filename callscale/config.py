"""Defaults of the ``callscale`` command, from ``pyproject.toml`` under ``[tool.callscale]``.

    [tool.callscale]
    threshold = 1.3                    # gate: the largest step exponent that passes
    reference_length = "256k"          # gate: the length (characters) the fitted cost is projected to
    projection_factor = 3.0            # gate: largest projected / linear-projected cost that passes
    request_factor = 1000.0            # gate: largest cost of one request (a fresh parser, first delta) x the floor's
    timeout = 120                      # seconds one case may take before its parser is stopped
    memory_limit = "4g"                # address space each child measuring a parser may take
    lengths = ["4k", "16k", "64k"]     # call lengths in characters (k = 1024)
    instruction_lengths = ["4k", "16k", "64k"]  # the same under --meter instructions
    jobs = "auto"                      # callgrind children at once (--meter instructions): auto or 1-64
    chunking = "tokens:4"              # how the text is split into deltas
    repeats = 3                        # timed runs per measurement (the minimum counts)
    workloads = ["write_file", "many_short_calls", "repeated_opener", "write_file@mixed+tokens:16", "write_file@mixed+parts:16",
                 "structure@mixed+alternate:1/50/1/50/512"]
    parsers = []                       # empty or absent: every registered parser
    out = "results"                    # where scale writes its CSV and PNG (relative to pyproject.toml)

The ``pyproject.toml`` is looked for in the current directory and its parents;
without one (or without the table) the built-in :data:`DEFAULTS` apply, which
are the values above. Command-line options override all of these.

Every setting is validated here, once, for the file and the command line alike
(:func:`check`, :func:`check_lengths`, :func:`check_rules`; the ranges are
:data:`RANGES` and docs/gate.md lists them).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["ArgumentParser", "Settings", "DEFAULTS", "ConfigError", "parse_size", "format_size", "parse_lengths",
           "find_pyproject", "load", "check", "check_jobs", "check_lengths", "check_rules", "parse_bytes", "read_toml",
           "RANGES", "MIN_LENGTH", "MIN_TIME_LENGTH", "MAX_LENGTH", "MIN_LENGTHS"]

MIN_LENGTHS = 3
"""A fit needs at least this many distinct lengths."""

MIN_LENGTH = 512
"""Shortest call length (characters) any meter accepts: every workload of every format holds a whole
call there (the longest text a workload makes at length 1 is ~300 characters)."""

MIN_TIME_LENGTH = 1024
"""Shortest call length under the ``time`` meter: below it the fastest parsers stream a case in tens
of microseconds, within the process clock's noise."""

MAX_LENGTH = 4 * 1024 * 1024
"""Longest call length (characters, 4m) a run or the projection's reference length may name."""


class ConfigError(ValueError):
    """A bad value in ``[tool.callscale]`` or on the command line (the message is one line)."""


@dataclass(frozen=True)
class Settings:
    """One run's settings, defined once: these defaults (:data:`DEFAULTS`, the gate's rule thresholds among them),
    over which ``[tool.callscale]`` (:func:`load`) and then the command line go. Every command, the asv suite
    (benchmarks/benchmarks.py), the pytest API (:mod:`callscale.testing`), :class:`callscale.matrix.Settings` and
    :mod:`callscale.fit` take their defaults from here. ``lengths`` in characters, ascending; ``out`` a directory.
    """

    threshold: float = 1.3
    """The largest step exponent that passes (the gate's step rule)."""
    reference_length: int = 256 * 1024
    """Length (characters) the fitted ``c + a*n + b*n**2`` is projected to (:mod:`callscale.fit`)."""
    projection_factor: float = 3.0
    """Largest ratio of the projected cost to the linear projection that passes."""
    request_factor: float = 1000.0
    """Largest cost of one request (a fresh parser made and given its first delta) as a multiple of the
    floor's (the ``null`` parser's on the same delta) that passes (docs/gate.md: every built-in parser is
    at most 55x; a constructor that compiles a pattern over 100k special tokens is tens of thousands)."""
    timeout: float = 120.0
    """Seconds one case (one parser on one case, all its passes) may take before it is stopped."""
    memory_limit: int = 4 * 1024 ** 3  # callscale.bounded.DEFAULT_MEMORY_LIMIT
    """Bytes of address space each child measuring a parser may take (``resource.RLIMIT_AS``)."""
    lengths: tuple[int, ...] = (4096, 16384, 65536)
    instruction_lengths: tuple[int, ...] = (4096, 16384, 65536)
    """Lengths for ``--meter instructions`` (docs/exact.md: why these, and what they cost)."""
    jobs: int | None = None
    """Callgrind children counting at once under ``--meter instructions`` (``None``: ``auto``, one per idle
    core, :func:`callscale.instructions.auto_jobs`)."""
    chunking: str = "tokens:4"
    repeats: int = 3
    workloads: tuple[str, ...] = ("write_file", "many_short_calls", "repeated_opener", "write_file@mixed+tokens:16",
                                  "write_file@mixed+parts:16", "structure@mixed+alternate:1/50/1/50/512")
    """The gate's rows: the headline workloads, every content kind at once (``@mixed``, docs/gate.md), a
    delivery whose deltas grow with the text (``+parts:16``), and every structure axis at once (``structure``:
    calls, keys, depth, items, text between calls, the request's tools) under deltas that alternate 1 and 50
    characters with a 512-character bundle (``+alternate:1/50/1/50/512``)."""
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

    A lenient reader (sorts, drops repeats, no bounds); settings are validated by :func:`check_lengths`.

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

_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*$")
_BYTE_UNITS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}


def parse_bytes(text: str | int) -> int:
    """A memory size in bytes from ``"4g"``, ``"512M"``, ``"2GiB"`` or a whole number of bytes (k = 1024).

    Raises :class:`ConfigError` for anything else.
    """
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        raise ConfigError(f"bad memory size {text!r}: expected a size like 4g or 512m")
    if isinstance(text, int):
        return text
    hit = _BYTES.match(text)
    if hit is None:
        raise ConfigError(f"bad memory size {text!r}: expected a size like 4g or 512m")
    return int(float(hit.group(1)) * _BYTE_UNITS[hit.group(2).lower()])


#: The numeric settings and their validated ranges: ``key: (kind, low, high, low_open, what)``;
#: ``kind`` is ``float``, ``int``, ``size`` (characters, :func:`parse_size`) or ``bytes``
#: (:func:`parse_bytes`). docs/gate.md lists them.
RANGES: dict[str, tuple[str, float, float, bool, str]] = {
    "threshold": ("float", 1.0, 3.0, True, "the largest step exponent that passes"),
    "projection_factor": ("float", 1.0, 1000.0, True, "the largest projected / linear-projected cost that passes"),
    "request_factor": ("float", 1.0, 1e9, True, "the largest cost of one request as a multiple of the floor's"),
    "reference_length": ("size", MIN_LENGTH, MAX_LENGTH, False, "characters the fit is projected to"),
    "timeout": ("float", 0.0, MAX_TIMEOUT, True, "seconds one case may take"),
    "memory_limit": ("bytes", 64 * 1024 ** 2, 1024 ** 4, False, "bytes of address space per measuring child"),
    "repeats": ("int", 1, 1000, False, "timed runs per measurement"),
    "max_ratio": ("float", 1.0, 1000.0, True, "compare: the largest new/base cost at one length that passes"),
    "max_step": ("float", 0.0, 10.0, True, "compare: the largest exponent increase that passes"),
    "seconds": ("float", 0.0, 3600.0, True, "profile: CPU seconds to keep streaming while sampling"),
    "rate": ("int", 1, 10000, False, "profile: samples a second"),
    "jobs": ("int", 1, 64, False, "callgrind children counting at once, or auto"),
}


def _shown_range(key: str) -> str:
    kind, low, high, low_open, _ = RANGES[key]
    if kind == "size":
        return f"{format_size(int(low))} to {format_size(int(high))} characters"
    if kind == "bytes":
        return f"{int(low) // 1024 ** 2}m to {int(high) // 1024 ** 4}t bytes"
    return f"{'more than' if low_open else 'at least'} {low:g} and at most {high:g}"


def check(key: str, value: Any, source: str | None = None) -> Any:
    """The one validation of a numeric setting, for ``[tool.callscale]`` and the command line alike.

    ``key``: a key of :data:`RANGES`; ``value``: as read from TOML (a
    number or string) or the command line (a string). ``source``: how the
    message names the setting (default ``[tool.callscale] KEY``; the CLI
    passes ``--KEY``). Returns the value converted (``float``, ``int``, or
    characters / bytes as ``int``); raises :class:`ConfigError` with one
    line naming the setting, the value and the range, for a value that is
    not a finite number of its kind or is outside the range.
    """
    kind, low, high, low_open, what = RANGES[key]
    name = source if source is not None else f"[tool.callscale] {key}"
    try:
        if kind == "size":
            number: Any = parse_size(value)
        elif kind == "bytes":
            number = parse_bytes(value)
        elif isinstance(value, bool):
            raise ValueError
        elif kind == "int":
            if isinstance(value, float) or (isinstance(value, str) and not value.strip().lstrip("+-").isdigit()):
                raise ValueError
            number = int(value)
        else:
            number = float(value)
    except (ConfigError, ValueError, TypeError):
        raise ConfigError(f"{name} must be {'a whole number' if kind == 'int' else 'a number' if kind == 'float' else 'a size'}"
                          f" ({what}), got {value!r}") from None
    if kind == "float" and not math.isfinite(number):
        raise ConfigError(f"{name} must be a finite number ({what}), got {value!r}")
    if (number <= low if low_open else number < low) or number > high:
        raise ConfigError(f"{name} must be {_shown_range(key)} ({what}), got {value!r}")
    return number


def check_jobs(value: Any, source: str | None = None) -> int | None:
    """``jobs`` (``--jobs``): ``"auto"`` gives ``None`` (one child per idle core), else a whole number in
    :data:`RANGES` (:func:`check`; :class:`ConfigError` otherwise)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return None
    return check("jobs", value, source)


def check_lengths(spec: str | list | tuple, meter: str = "time", source: str = "--lengths") -> tuple[int, ...]:
    """Validated call lengths from ``"4k,16k,64k"`` or a list of sizes.

    At least :data:`MIN_LENGTHS`, each larger than the one before, none
    below :data:`MIN_LENGTH` (:data:`MIN_TIME_LENGTH` under the ``time``
    meter), none above :data:`MAX_LENGTH`. Raises :class:`ConfigError`
    (one line naming ``source``).
    """
    try:
        items = [s for s in spec.split(",") if s.strip()] if isinstance(spec, str) else list(spec)
        lengths = [parse_size(item) for item in items]
    except (ConfigError, AttributeError, TypeError) as exc:
        raise ConfigError(f"{source}: {exc}") from None
    shown = ",".join(format_size(n) for n in lengths) or "none"
    if len(set(lengths)) < MIN_LENGTHS:
        raise ConfigError(f"{source}: need at least {MIN_LENGTHS} distinct lengths to fit an exponent, "
                          f"got {len(set(lengths))} ({shown})")
    if any(b <= a for a, b in zip(lengths, lengths[1:])):
        raise ConfigError(f"{source}: each length must be larger than the one before, got {shown}")
    floor = MIN_TIME_LENGTH if meter == "time" else MIN_LENGTH
    if lengths[0] < floor:
        why = ("under the time meter, shorter cases stream within the clock's noise" if meter == "time"
               else "a shorter case does not hold a whole call")
        raise ConfigError(f"{source}: {format_size(lengths[0])} is shorter than the minimum "
                          f"{format_size(floor)} characters ({why})")
    if lengths[-1] > MAX_LENGTH:
        raise ConfigError(f"{source}: {format_size(lengths[-1])} is longer than the maximum "
                          f"{format_size(MAX_LENGTH)} characters")
    return tuple(lengths)


def check_rules(lengths: tuple[int, ...], reference_length: int, projection_factor: float) -> None:
    """The verdict's settings against the lengths of a run (:class:`ConfigError` when they cannot fail a
    quadratic term): the reference length must be longer than the longest length, and the projection
    factor below ``reference_length / longest`` (the ratio a purely quadratic cost reaches)."""
    longest = lengths[-1]
    if reference_length <= longest:
        raise ConfigError(f"reference length {format_size(reference_length)} must be longer than the longest "
                          f"length {format_size(longest)}")
    if projection_factor >= reference_length / longest:
        raise ConfigError(f"projection factor {projection_factor:g} must be below reference length / longest "
                          f"length = {reference_length / longest:g}: no quadratic cost could fail it")


KEYS = frozenset({"threshold", "reference_length", "projection_factor", "request_factor", "timeout", "memory_limit", "lengths",
                  "instruction_lengths", "chunking", "repeats", "workloads", "parsers", "out", "jobs"})
"""The keys ``[tool.callscale]`` may hold."""


def _names(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.callscale] {key} must be a list of names, got {value!r}")
    return tuple(value)


def read_toml(path: Path) -> dict:
    """``path`` read as TOML; :class:`ConfigError` naming the file and why it cannot be read
    (missing or unreadable, not UTF-8 (with the byte offset), or not TOML (with line and column))."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read {path}: not valid TOML: {' '.join(str(exc).split())}") from None


def load(start: Path | str | None = None) -> Settings:
    """The settings: built-in defaults updated from the nearest ``pyproject.toml``.

    Raises :class:`ConfigError` when the file cannot be read (:func:`read_toml`), a key
    is unknown (a misspelt key would otherwise be ignored without a word), or
    a value is wrong (:func:`check`, :func:`check_lengths`); the message names
    ``[tool.callscale]`` and the key.
    """
    path = find_pyproject(start)
    if path is None:
        return DEFAULTS
    data = read_toml(path)
    settings = replace(DEFAULTS, source=path, out=path.parent / DEFAULTS.out)
    table = data.get("tool", {}).get("callscale") if isinstance(data.get("tool"), dict) else None
    if not isinstance(table, dict):
        return settings
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"[tool.callscale] in {path}: unknown key {unknown[0]!r}; known: {', '.join(sorted(KEYS))}")
    try:
        changes = _table_changes(table, path)
    except ConfigError as exc:  # name the file: which pyproject.toml of a monorepo holds the bad value
        text = str(exc)
        if text.startswith("[tool.callscale] ") and not text.startswith(f"[tool.callscale] in "):
            text = f"[tool.callscale] in {path}: " + text[len("[tool.callscale] "):]
        raise ConfigError(text) from None
    result = replace(settings, **changes)
    try:
        check_rules(result.lengths, result.reference_length, result.projection_factor)
    except ConfigError as exc:
        raise ConfigError(f"[tool.callscale] in {path}: {exc}") from None
    return result


def _table_changes(table: dict, path: Path) -> dict[str, Any]:
    """The validated settings of a ``[tool.callscale]`` table (``path``: its file); raises :class:`ConfigError`."""
    changes: dict[str, Any] = {}
    for key in RANGES:
        if key == "jobs" and key in table:
            changes[key] = check_jobs(table[key])
        elif key in table:
            if key in ("threshold", "projection_factor", "request_factor", "timeout") and isinstance(table[key], str):
                raise ConfigError(f"[tool.callscale] {key} must be a number, got {table[key]!r}")
            value = check(key, table[key])
            changes[key] = float(value) if RANGES[key][0] == "float" else value
    for key, meter in (("lengths", "time"), ("instruction_lengths", "instructions")):
        if key in table:
            changes[key] = check_lengths(table[key], meter, f"[tool.callscale] {key}")
    if "chunking" in table:
        from callscale.workloads.chunking import parse_chunking

        if not isinstance(table["chunking"], str):
            raise ConfigError(f"[tool.callscale] chunking must be a string, got {table['chunking']!r}")
        try:
            parse_chunking(table["chunking"])
        except ValueError as exc:
            raise ConfigError(f"[tool.callscale] chunking: {exc}") from None
        changes["chunking"] = table["chunking"]
    if "workloads" in table:
        changes["workloads"] = _names(table["workloads"], "workloads")
    if "parsers" in table:
        changes["parsers"] = _names(table["parsers"], "parsers")
    if "out" in table:
        if not isinstance(table["out"], str):
            raise ConfigError(f"[tool.callscale] out must be a path string, got {table['out']!r}")
        changes["out"] = path.parent / table["out"]
    return changes


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error: ``callscale scale: error: ...`` on stderr, exit status 2 (the rule every
    command line of the package follows, as ``[tool.callscale]`` does)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")
