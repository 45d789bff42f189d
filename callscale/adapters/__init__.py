"""Adapters that let ``--parser`` name a serving engine's own tool-parser class.

Every subject of measurement speaks one protocol, :class:`callscale.adapters.protocol.Subject` (make a
streamer, count, time, check, profile, and what it cannot do). Three engines' Python classes are driven in this
process (one module each):

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

import importlib
import importlib.util
from typing import Any, Callable

__all__ = ["ENGINES", "PREFIXES", "KNOWN_CLASSES", "UNRELEASED", "ALSO_FORMATS", "NO_FORMAT_CLASSES", "split_prefix", "known_format",
           "engine_of", "adapt", "PREFIXED", "prefixed", "runs_elsewhere",
           "ENGINE_PARSERS", "BUILT_HARNESSES", "BUILT_HARNESSES_SHORT", "AdapterError", "Subject",
           "subject_of"]

from .protocol import ENGINES, AdapterError, Subject, subject_of  # noqa: F401  (the protocol; re-exported)
PREFIXES = tuple(f"{name}:" for name in ENGINES)

_T = "tensorrt_llm.serve.tool_parser."
_S = "sglang.srt.function_call."
_V = "vllm.tool_parsers."

#: ``module:Class`` of an engine's public parser -> callscale format. The
#: class names are the engines' registries: TensorRT-LLM's
#: ``tool_parser_factory.py``, SGLang's ``function_call_parser.py`` (0.5.23),
#: vLLM's ``tool_parsers/__init__.py`` and ``parser/parser_manager.py`` (0.34.0); every class
#: registered there is here, in :data:`ALSO_FORMATS` or in :data:`NO_FORMAT_CLASSES`
#: (tests/helpers/engine_registries.py holds the registries as written down, and a test checks).
KNOWN_CLASSES: dict[str, str] = {
    f"{_T}deepseekv3_parser:DeepSeekV3Parser": "deepseek_v3",
    f"{_T}deepseekv31_parser:DeepSeekV31Parser": "deepseek_v31",
    f"{_T}deepseekv32_parser:DeepSeekV32Parser": "deepseek_v32",
    f"{_T}qwen3_tool_parser:Qwen3ToolParser": "qwen3",
    f"{_T}qwen3_coder_parser:Qwen3CoderToolParser": "qwen3_coder",
    f"{_T}kimi_k2_tool_parser:KimiK2ToolParser": "kimi_k2",
    f"{_T}deepseekv4_parser:DeepSeekV4Parser": "deepseek_v4",
    f"{_T}glm4_parser:Glm4ToolParser": "glm45",
    f"{_T}minimax_m2_parser:MiniMaxM2ToolParser": "minimax_m2",
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
    f"{_S}hermes_detector:HermesDetector": "qwen3",
    f"{_S}gpt_oss_detector:GptOssDetector": "gpt_oss",
    f"{_S}mistral_detector:MistralDetector": "mistral",
    f"{_S}llama32_detector:Llama32Detector": "llama3_json",
    f"{_S}pythonic_detector:PythonicDetector": "llama4_pythonic",
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
    f"{_V}gemma4_engine_tool_parser:Gemma4EngineToolParser": "gemma4",
    f"{_V}mistral_tool_parser:MistralToolParser": "mistral",
    # vLLM 0.34 serves llama3_json and llama4_json with an engine-based parser (Llama3JsonToolParser is gone)
    f"{_V}llama_json_engine_tool_parser:LlamaJsonEngineToolParser": "llama3_json",
    f"{_V}llama4_pythonic_tool_parser:Llama4PythonicToolParser": "llama4_pythonic",
    f"{_V}pythonic_tool_parser:PythonicToolParser": "llama4_pythonic",
    f"{_V}gptoss_tool_parser:GptOssToolParser": "gpt_oss",  # a stub that raises (0.33, 0.34): use HarmonyParser
    "vllm.parser.harmony:HarmonyParser": "gpt_oss",  # vLLM's Parser protocol (parser/parser_manager.py)
    # the frontier formats (TensorRT-LLM, SGLang 0.5.23, vLLM 0.33.0)
    f"{_T}kimi_k3_tool_parser:KimiK3ToolParser": "kimi_k3",
    f"{_T}minimax_m3_parser:MiniMaxM3ToolParser": "minimax_m3",
    f"{_S}kimik3_detector:KimiK3Detector": "kimi_k3",
    f"{_S}minimax_m3:MinimaxM3Detector": "minimax_m3",
    f"{_V}kimi_k3_tool_parser:KimiK3ToolParser": "kimi_k3",
    "vllm.parser.kimi_k3:KimiK3Parser": "kimi_k3",  # vLLM's Parser protocol (parser/parser_manager.py)
    # Inkling (SGLang 0.5.23, vLLM 0.34); Poolside V1 is glm47's text (alias poolside_v1)
    f"{_S}inkling_detector:InklingDetector": "inkling",
    f"{_V}inkling_tool_parser:InklingEngineToolParser": "inkling",
    f"{_S}poolside_v1_detector:PoolsideV1Detector": "glm47",
    f"{_V}poolside_v1_tool_parser:PoolsideV1ToolParser": "glm47",
    f"{_V}minimax_m3_tool_parser:MinimaxM3ToolParser": "minimax_m3",
    # Cohere Command (vLLM's classes are shims over the cohere_melody package) and Hunyuan V4
    f"{_S}cohere_command4_detector:CohereCommand4Detector": "cohere_command",
    f"{_V}cohere_command_tool_parser:CohereCommand3ToolParser": "cohere_command",
    f"{_V}cohere_command_tool_parser:CohereCommand4ToolParser": "cohere_command",
    "vllm.parser.cohere_command:CohereCommandParser": "cohere_command",  # vLLM's Parser protocol
    f"{_V}hy_v4_tool_parser:HYV4ToolParser": "hy_v4",
    # Step-3 (SGLang 0.5.23, vLLM 0.34); Step-3.5 is Qwen3-Coder's text (alias step3p5, docs/formats.md)
    f"{_S}step3_detector:Step3Detector": "step3",
    f"{_V}step3_tool_parser:Step3ToolParser": "step3",
    f"{_V}step3p5_tool_parser:Step3p5ToolParser": "qwen3_coder",
    # MiniCPM5 (SGLang 0.5.23, vLLM 0.34); BerryLM: in neither pinned release (docs/formats.md)
    f"{_S}minicpm5_detector:MiniCPM5Detector": "minicpm5",
    f"{_V}minicpm5xml_tool_parser:MiniCPM5XMLToolParser": "minicpm5",
    # Solar Open 2: vLLM main after 0.34.0 only (UNRELEASED)
    f"{_V}solar_open2_tool_parser:SolarOpen2ToolParser": "solar_open2",
    # Muse Glimmer (SGLang 0.5.23, vLLM 0.34; docs/formats.md)
    f"{_S}muse_glimmer_detector:MuseGlimmerDetector": "muse_glimmer",
    f"{_V}muse_glimmer_tool_parser:MuseGlimmerToolParser": "muse_glimmer",
}

#: Known classes in no release of their engine that callscale pins -> where they are (what to check out or
#: install to measure them); ``callscale parsers --engines`` says so on their rows.
UNRELEASED: dict[str, str] = {
    f"{_V}solar_open2_tool_parser:SolarOpen2ToolParser":
        "vLLM main after 0.34.0 (not in 0.34.0): load it from a checkout, MODULE:CLASS@FOLDER (docs/engines.md)",
}

#: Known classes that an engine also registers for another callscale format (same output syntax).
ALSO_FORMATS: dict[str, tuple[str, ...]] = {
    f"{_V}glm47_moe_tool_parser:Glm47MoeModelToolParser": ("glm45",),
}

#: The engines' registered classes for formats callscale does not write (no workloads: name
#: ``--workload-format`` to measure them on another format's text). Same sources as above.
NO_FORMAT_CLASSES: frozenset[str] = frozenset(
    [_S + n for n in (
        "apertus2509_detector:Apertus2509Detector", "beam_detector:BeamDetector",
        "dots_detector:DotsToolDetector",
        "gigachat3_detector:GigaChat3Detector", "gigachat35_detector:GigaChat35Detector",
        "hunyuan_detector:HunyuanDetector", "internlm_detector:InternlmDetector",
        "iquest_q1_detector:IQuestQ1Detector", "k2_v3_detector:K2V3Detector", "lfm2_detector:Lfm2Detector", "ling3_detector:Ling3Detector", "mimo_detector:MiMoDetector",
        "spark25_detector:Spark25Detector", "trinity_detector:TrinityDetector")]
    + ["sglang.srt.parser.response_template:ResponseTemplateToolDetector"]
    + [_V + n for n in (
        "apertus_tool_parser:ApertusToolParser", "beam_tool_parser:BeamToolParser",
        "dots_tool_parser:DotsToolParser", "ernie45_tool_parser:Ernie45ToolParser",
        "functiongemma_tool_parser:FunctionGemmaToolParser", "gigachat3_tool_parser:GigaChat3ToolParser",
        "granite4_tool_parser:Granite4ToolParser", "granite_20b_fc_tool_parser:Granite20bFCToolParser",
        "granite_engine_tool_parser:GraniteEngineToolParser", "hunyuan_a13b_tool_parser:HunyuanA13BToolParser",
        "hy_v3_tool_parser:HYV3ToolParser",
        "internlm2_tool_parser:Internlm2ToolParser",
        "jamba_tool_parser:JambaToolParser", "k2_horizon_tool_parser:K2HorizonToolParser",
        "lfm2_tool_parser:Lfm2ToolParser", "ling3_tool_parser:Ling3ToolParser",
        "longcat_tool_parser:LongcatFlashToolParser", "mimo_tool_parser:MiMoToolParser",
        "muse_tool_parser:MuseToolParser",
        "olmo3_tool_parser:Olmo3PythonicToolParser", "phi4mini_tool_parser:Phi4MiniJsonToolParser",
        "plamo3_engine_tool_parser:Plamo3EngineToolParser", "response_template_tool_parser:ResponseTemplateToolParser",
        "seed_oss_engine_tool_parser:SeedOssEngineToolParser",
        "step5_tool_parser:Step5ToolParser", "xlam_tool_parser:xLAMToolParser",
        # new in vLLM 0.34
        "granite_toolcall_parser:GraniteToolCallToolParser", "ripple_engine_tool_parser:RippleEngineToolParser",
        "zaya_engine_tool_parser:ZayaEngineToolParser")]
    + ["vllm.parser.minicpmv:MiniCPMVUnifiedParser", "vllm.parser.abstract_parser:DelegatingParser"]
)


def split_prefix(target: str) -> tuple[str | None, str]:
    """``"vllm:pkg.mod:Cls"`` -> ``("vllm", "pkg.mod:Cls")``; no prefix -> ``(None, target)``."""
    for name in ENGINES:
        if target.startswith(f"{name}:") and target.count(":") >= 2:
            return name, target[len(name) + 1:]
    return None, target


def known_format(target: str) -> str | None:
    """The format of an engine's known class (``module:Class``, with or without a prefix or a checkout's
    ``@WHERE``), else ``None``."""
    return KNOWN_CLASSES.get(split_prefix(target)[1].partition("@")[0])


#: Selection prefix -> the adapter module whose ``subject(selection, fmt, check_format)`` gives ``(format,
#: subject)`` for it: SMG's gateway (``smg:NAME``) and llama.cpp's harness (``llamacpp:TEMPLATE``).
PREFIXED: dict[str, str] = {"smg:": "callscale.adapters.smg_gateway", "llamacpp:": "callscale.adapters.llamacpp"}


def prefixed(selection: str) -> Any:
    """The adapter module of :data:`PREFIXED` whose prefix ``selection`` starts with, else ``None``."""
    for prefix, module in PREFIXED.items():
        if selection.startswith(prefix):
            return importlib.import_module(module)
    return None


#: What :func:`callscale.adapters.listing.engine_rows` lists, in words (``callscale parsers --help``).
ENGINE_PARSERS = ("the engines' known parser classes, SMG's tool parsers (smg:NAME) and llama.cpp's chat templates "
                  "(with what to install or build where one cannot run yet)")


#: Engines whose harness ``callscale engines build NAME`` builds -> (the adapter module, what it builds in words).
#: The module offers ``built()``, ``library_path()``, ``missing_tools()``, ``build(jobs=)`` (raising a
#: ``RuntimeError``), ``SOURCE`` and ``INSTALL``.
BUILT_HARNESSES: dict[str, tuple[str, str]] = {
    "llamacpp": ("callscale.adapters.llamacpp",
                 "llama.cpp's common library and our harness, from the llama-cpp-python sdist (docs/engines.md)"),
}
#: The harnesses in a few words (``callscale --help``).
BUILT_HARNESSES_SHORT = "llamacpp: llama.cpp from the llama-cpp-python sdist"


def runs_elsewhere(target: str) -> str | None:
    """``"TARGET runs inside ..."`` when the selection ``target`` names a subject that makes no parser object in
    this process (``smg:NAME``: SMG's router), else ``None``; read from the name alone (nothing is imported)."""
    from .smg import PREFIX

    return f"{target} runs inside SMG's router" if target.startswith(PREFIX) else None


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
