"""SGLang's Rust model gateway (SMG, PyPI ``smg``): ``--parser smg:<name>``.

SMG's tool parsers (its ``tool_parser`` crate: ``QwenXmlParser``,
``DeepSeekDsmlParser``, ...) are compiled into the wheel's one extension,
``smg.smg_rs`` (an abi3 ``.so`` that keeps its symbols: ``nm`` lists
``tool_parser::parsers::<module>::<Parser>::parse_incremental`` for each).
What that extension gives Python (smg 1.13.0, ``dir(smg.smg_rs)``): the
``Router`` (``start()``, which blocks serving HTTP), the engine servicers
(``SglangGrpcServer``, ``VllmGrpcServer``, ``TokenSpeedGrpcServer``), the
config types and ``get_available_tool_call_parsers()``; no class or function
takes text and returns calls. Its parsers run only inside the gRPC router's
streaming path (a request in, token ids from a worker, detokenized deltas
through ``parse_incremental``, SSE out).

So ``--parser smg:<name>`` resolves the name and says what stops the gate
(:func:`unavailable`, exit 2): the engine missing (install
``callscale[smg]``), a name the wheel does not list, or, with both right,
that the gate's parser contract (one call a delta, in the measuring process)
has no SMG entry. The parsers are measured through the gateway itself by
:mod:`callscale.adapters.smg_gateway`: a stand-in SGLang scheduler on
loopback streams a workload's token ids to the router, and callgrind's
``--toggle-collect`` on the parsers' ``parse_incremental``
(:data:`TOGGLE_COLLECT`) counts their own instructions.
"""

from __future__ import annotations

import importlib.util

__all__ = ["PREFIX", "INSTALL", "FORMATS", "TOGGLE_COLLECT", "installed", "parser_names", "unavailable"]

PREFIX = "smg:"
#: What to install for the ``smg:`` parsers.
INSTALL = "pip install 'callscale[smg]'"

#: SMG's tool-parser names (``get_available_tool_call_parsers()``, smg 1.13.0) -> the callscale
#: format whose workloads they read (the names SMG registers for the same output syntax).
FORMATS: dict[str, str] = {
    "qwen": "qwen3", "qwen2.5": "qwen3", "qwen3": "qwen3",
    "qwen_xml": "qwen3_coder", "qwen_coder": "qwen3_coder",
    "deepseek": "deepseek_v3", "deepseek31": "deepseek_v31", "deepseek32": "deepseek_v32",
    "deepseek_v4": "deepseek_v4", "deepseek_v41": "deepseek_v41", "deepseek_v4.1": "deepseek_v41",
    "glm45_moe": "glm45", "glm47_moe": "glm47", "kimik2": "kimi_k2", "kimi_k3": "kimi_k3",
    "minimax_m2": "minimax_m2", "minimax_m3": "minimax_m3", "gemma4": "gemma4", "mistral": "mistral",
    "llama": "llama3_json", "pythonic": "llama4_pythonic",
}

#: callgrind's ``--toggle-collect`` pattern for the parsers' own work: every ``parse_incremental``
#: of the crate (the async bodies are closures ``...parse_incremental0``, matched by the ``*``).
TOGGLE_COLLECT = "*tool_parser*parse_incremental*"  # smg_gateway passes the same pattern


def installed() -> bool:
    """True where ``smg`` (with its ``smg_rs`` extension) can be imported."""
    return importlib.util.find_spec("smg") is not None


def parser_names() -> list[str]:
    """The tool-parser names the installed wheel lists (``[]`` without smg or where it cannot load)."""
    if not installed():
        return []
    try:
        from smg.smg_rs import get_available_tool_call_parsers
    except Exception:
        return []
    return sorted(get_available_tool_call_parsers())


def unavailable(selection: str) -> str:
    """The one-line reason ``selection`` (``smg:<name>``) cannot be measured here (see the module docstring).

    Never empty while the wheel exposes no parser entry to Python; the
    command line prints it and exits 2.
    """
    name = selection[len(PREFIX):] if selection.startswith(PREFIX) else selection
    if not installed():
        return f"parser {selection!r}: the smg engine is not installed ({INSTALL})"
    names = parser_names()
    if names and name not in names:
        return f"parser {selection!r}: smg has no tool parser {name!r}; it lists {', '.join(names)}"
    return (f"parser {selection!r}: smg exposes no tool-parser entry to Python, so the gate cannot drive it delta "
            f"by delta; measure it through the gateway: python -m callscale.adapters.smg_gateway {name} "
            "(docs/engines.md 'SMG')")
