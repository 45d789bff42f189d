"""Adapters that let ``--parser`` name a serving engine's own tool-parser class.

Three engine protocols are spoken (one module each):

- :mod:`.trtllm`: TensorRT-LLM's ``BaseToolParser`` (``tensorrt_llm.serve.tool_parser``);
- :mod:`.sglang`: SGLang's ``BaseFormatDetector`` (``sglang.srt.function_call``);
- :mod:`.vllm`: vLLM's ``ToolParser`` (``vllm.tool_parsers``), driven as vLLM's
  serving layer drives it.

An adapter turns the engine's class into a factory of parsers that speak
callscale's contract (``parse_streaming_increment(delta, tools)``,
``finish(tools)``, ``detect_and_parse(text, tools)``; DESIGN.md). Which
adapter applies is read from the class: its top-level package
(``tensorrt_llm``, ``sglang``, ``vllm``), else its methods
(``extract_tool_calls_streaming``: vLLM; ``parse_streaming_increment``
without ``finish``: TensorRT-LLM); a prefix ``trtllm:``, ``sglang:`` or
``vllm:`` before ``module.path:Class`` forces one.

:data:`KNOWN_CLASSES` maps the engines' public parser classes to the format
whose workloads fit them, so ``--workload-format`` can be left out for them.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable

__all__ = ["ENGINES", "PREFIXES", "KNOWN_CLASSES", "split_prefix", "known_format", "engine_of", "adapt",
           "AdapterError"]

#: Engine name -> (top-level package, the pip distribution that provides it).
ENGINES: dict[str, tuple[str, str]] = {
    "trtllm": ("tensorrt_llm", "tensorrt-llm"),
    "sglang": ("sglang", "sglang"),
    "vllm": ("vllm", "vllm"),
}
PREFIXES = tuple(f"{name}:" for name in ENGINES)

_T = "tensorrt_llm.serve.tool_parser."
_S = "sglang.srt.function_call."
_V = "vllm.tool_parsers."

#: ``module:Class`` of an engine's public parser -> callscale format. The
#: class names are the engines' registries: TensorRT-LLM's
#: ``tool_parser_factory.py``, SGLang's ``function_call_parser.py`` (0.5.23),
#: vLLM's ``tool_parsers/__init__.py`` (0.33.0).
KNOWN_CLASSES: dict[str, str] = {
    f"{_T}deepseekv3_parser:DeepSeekV3Parser": "deepseek_v3",
    f"{_T}deepseekv31_parser:DeepSeekV31Parser": "deepseek_v31",
    f"{_T}deepseekv32_parser:DeepSeekV32Parser": "deepseek_v32",
    f"{_T}qwen3_tool_parser:Qwen3ToolParser": "qwen3",
    f"{_T}qwen3_coder_parser:Qwen3CoderToolParser": "qwen3_coder",
    f"{_T}kimi_k2_tool_parser:KimiK2ToolParser": "kimi_k2",
    f"{_S}deepseekv3_detector:DeepSeekV3Detector": "deepseek_v3",
    f"{_S}deepseekv31_detector:DeepSeekV31Detector": "deepseek_v31",
    f"{_S}deepseekv32_detector:DeepSeekV32Detector": "deepseek_v32",
    f"{_S}deepseekv4_detector:DeepSeekV4Detector": "deepseek_v4",
    f"{_S}deepseekv41_detector:DeepSeekV41Detector": "deepseek_v41",
    f"{_S}qwen25_detector:Qwen25Detector": "qwen3",
    f"{_S}qwen3_coder_detector:Qwen3CoderDetector": "qwen3_coder",
    f"{_S}glm4_moe_detector:Glm4MoeDetector": "glm45",
    f"{_S}glm47_moe_detector:Glm47MoeDetector": "glm47",
    f"{_S}kimik2_detector:KimiK2Detector": "kimi_k2",
    f"{_S}minimax_m2:MinimaxM2Detector": "minimax_m2",
    f"{_S}gemma4_detector:Gemma4Detector": "gemma4",
    f"{_V}deepseekv3_tool_parser:DeepSeekV3ToolParser": "deepseek_v3",
    f"{_V}deepseekv31_tool_parser:DeepSeekV31ToolParser": "deepseek_v31",
    f"{_V}deepseekv32_engine_tool_parser:DeepSeekV32EngineToolParser": "deepseek_v32",
    f"{_V}deepseekv4_engine_tool_parser:DeepSeekV4EngineToolParser": "deepseek_v4",
    f"{_V}deepseekv41_engine_tool_parser:DeepSeekV41EngineToolParser": "deepseek_v41",
    f"{_V}hermes_tool_parser:Hermes2ProToolParser": "qwen3",
    f"{_V}qwen3_engine_tool_parser:Qwen3EngineToolParser": "qwen3_coder",
    f"{_V}glm47_moe_tool_parser:Glm47MoeModelToolParser": "glm47",
    f"{_V}kimi_k2_tool_parser:KimiK2ToolParser": "kimi_k2",
    f"{_V}minimax_m2_tool_parser:MinimaxM2ToolParser": "minimax_m2",
}


class AdapterError(ValueError):
    """An engine class that no adapter can drive, or an engine that is not installed (one-line message)."""


def split_prefix(target: str) -> tuple[str | None, str]:
    """``"vllm:pkg.mod:Cls"`` -> ``("vllm", "pkg.mod:Cls")``; no prefix -> ``(None, target)``."""
    for name in ENGINES:
        if target.startswith(f"{name}:") and target.count(":") >= 2:
            return name, target[len(name) + 1:]
    return None, target


def known_format(target: str) -> str | None:
    """The format of an engine's known class (``module:Class``, with or without a prefix), else ``None``."""
    return KNOWN_CLASSES.get(split_prefix(target)[1])


def engine_missing(module_name: str) -> str | None:
    """A one-line hint when ``module_name`` belongs to an engine that is not installed, else ``None``."""
    root = module_name.split(".")[0]
    for name, (package, dist) in ENGINES.items():
        if root == package and importlib.util.find_spec(package) is None:
            return f"the {name} engine is not installed (pip install {dist}, or put its parser modules on PYTHONPATH)"
    return None


def engine_of(cls: Any) -> str | None:
    """Which engine protocol ``cls`` speaks, or ``None`` for callscale's own contract.

    From the top-level package of the class or of a base class, else from its
    methods: ``extract_tool_calls_streaming`` (a ``ToolParser``) or ``parse_delta`` (a ``Parser``) is vLLM's; ``parse_streaming_increment``
    without ``finish`` is TensorRT-LLM's (SGLang's detectors have ``finish``
    since 0.5, so by methods alone they speak callscale's contract).
    """
    for klass in getattr(cls, "__mro__", (cls,)):
        root = (getattr(klass, "__module__", "") or "").split(".")[0]
        for name, (package, _) in ENGINES.items():
            if root == package:
                return name
    if callable(getattr(cls, "extract_tool_calls_streaming", None)) or callable(getattr(cls, "parse_delta", None)):
        return "vllm"
    if callable(getattr(cls, "parse_streaming_increment", None)) and not callable(getattr(cls, "finish", None)):
        return "trtllm"
    return None


def adapt(cls: Any, engine: str, fmt: str) -> Callable[[], Any]:
    """A zero-argument factory of callscale-protocol parsers around the engine class ``cls``.

    ``engine``: a key of :data:`ENGINES`; ``fmt``: the callscale format
    (the vLLM adapter builds its tokenizer stand-in from that format's
    special tokens). Raises :class:`AdapterError` when ``cls`` lacks the
    engine's methods.
    """
    from . import sglang, trtllm, vllm

    module = {"trtllm": trtllm, "sglang": sglang, "vllm": vllm}[engine]
    return module.factory(cls, fmt)
