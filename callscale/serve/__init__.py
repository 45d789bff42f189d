"""callscale's parsers served by the engines: one tool-parser name per format and engine.

Each engine module registers every callscale format (:func:`formats`) in
that engine's own registry under :func:`engine_name` (``callscale_<format>``):

- :mod:`callscale.serve.vllm`: a vLLM ``ToolParser`` subclass per format,
  registered with ``ToolParserManager.register_module`` when the module is
  imported; vLLM imports it through ``--tool-parser-plugin`` (the file
  :func:`plugin_path` names, or the module name ``callscale.serve.vllm``);
- :mod:`callscale.serve.sglang`: a ``BaseFormatDetector`` subclass per format,
  added to ``FunctionCallParser.ToolCallParserEnum`` (SGLang reads its
  ``--tool-call-parser`` choices from there once that module is imported);
- :mod:`callscale.serve.trtllm`: a ``BaseToolParser`` subclass per format,
  added to ``ToolParserFactory.parsers``.

This package itself imports no engine: ``python -m callscale.serve --list``
and ``python -m callscale.serve vllm --path`` work where none is installed.
The engine modules import their engine at import time (they are loaded only
inside it). docs/serving.md says what each one changes and does not support.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ENGINES", "PREFIX", "formats", "engine_name", "names", "plugin_path", "format_of"]

#: Engine -> (module of this package, how the engine loads it).
ENGINES: dict[str, tuple[str, str]] = {
    "vllm": ("callscale.serve.vllm", "--tool-parser-plugin FILE --tool-call-parser NAME --enable-auto-tool-choice"),
    "sglang": ("callscale.serve.sglang", "import callscale.serve.sglang before SGLang reads its arguments; --tool-call-parser NAME"),
    "trtllm": ("callscale.serve.trtllm", "import callscale.serve.trtllm before the server starts; --tool_parser NAME"),
}

#: The prefix of every name callscale registers in an engine.
PREFIX = "callscale_"

_HERE = Path(__file__).resolve().parent

#: The files ``--path`` prints: a file an engine imports by path. vLLM imports a plugin file as a
#: module named after the file's stem, so the file must not be called ``vllm.py``.
PLUGIN_FILES: dict[str, str] = {
    "vllm": "callscale_vllm.py",
    "sglang": "callscale_sglang.py",
    "trtllm": "callscale_trtllm.py",
}


def formats() -> list[str]:
    """callscale's registered format names, sorted (``callscale.parsers.names()``)."""
    from callscale import parsers

    return parsers.names()


def engine_name(fmt: str) -> str:
    """The name ``fmt`` is registered under in every engine: ``callscale_<fmt>``."""
    return PREFIX + fmt


def format_of(name: str) -> str:
    """The callscale format of a registered name (``callscale_qwen3`` -> ``qwen3``); ``ValueError`` otherwise."""
    if not name.startswith(PREFIX) or name[len(PREFIX):] not in formats():
        raise ValueError(f"{name!r} is not a callscale parser name; known: {', '.join(names())}")
    return name[len(PREFIX):]


def names(engine: str | None = None) -> list[str]:
    """The names registered in ``engine`` (every engine registers the same set); ``ValueError`` for an unknown engine."""
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    return [engine_name(f) for f in formats()]


def plugin_path(engine: str) -> Path:
    """The file an engine imports to register every format (vLLM: ``--tool-parser-plugin``)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    return _HERE / PLUGIN_FILES[engine]
