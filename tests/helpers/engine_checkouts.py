"""Throw-away repositories in the layouts of the engines' own repositories (tests only; no engine code).

Each engine's package root imports torch and a compiled module that does not
exist here (TensorRT-LLM's ``tensorrt_llm.bindings``, vLLM's ``vllm._C``,
SGLang's ``sglang.srt._C`` through its runtime), its registry of tool parsers
(``tool_parser/__init__.py``, ``tool_parsers/__init__.py``,
``function_call/__init__.py``) imports every parser and a module that is not
there, its logger and protocol modules import the engine, as the engines'
do. The parser modules are written here, in each engine's shape (base class,
protocol imports, logger), around callscale's own DeepSeek V3.1 parser:

- ``linear``: streams by the reference parser (one pass); the early versions
  drop a content piece holding ``<`` (read as the start of a token): the
  fault the ``fix`` commit removes;
- ``quadratic``: the same, plus a search of the whole buffer by a pattern on
  every increment (the rescanning engines have shipped: O(n) per increment).

:data:`HISTORY` is the commits every repository gets, c1 first.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: (message, variant, class name, helper imported from utils) per commit, c1..c8.
HISTORY = [
    ("c1 DeepSeek V3.1 parser", "linear", "DeepSeekV31Parser", "reference_parser"),
    ("c2 docstring", "linear", "DeepSeekV31Parser", "reference_parser"),
    ("c3 helper renamed in half: does not import", "linear", "DeepSeekV31Parser", "reference_parser_v2"),
    ("c4 class renamed", "linear", "DeepSeekV31ToolParser", "reference_parser"),
    ("c5 class name back", "linear", "DeepSeekV31Parser", "reference_parser"),
    ("c6 rewrite: match the whole buffer on every increment", "quadratic", "DeepSeekV31Parser", "reference_parser"),
    ("c7 docstring", "quadratic", "DeepSeekV31Parser", "reference_parser"),
    ("c8 fix: one pass again, content holding '<' kept", "fixed", "DeepSeekV31Parser", "reference_parser"),
]
QUADRATIC = 5  # index of c6 in HISTORY

#: What the rescanning variant does on every increment (a pattern over the whole buffer, greedy up to the
#: separator: it walks the buffer to its end and back).
RESCAN = '''        self._buffer += {delta}
        found = re.search(r"<｜tool▁call▁begin｜>(.*)<｜tool▁sep｜>(.*?)(<｜tool▁call▁end｜>|$)", self._buffer, re.S)
        self._seen = found.group(1) if found else None
'''
#: The one-pass variants keep no buffer of their own (``self._buffer += delta`` copies the buffer on every
#: increment: an attribute is not concatenated in place, so that alone grows as n**2 at 8k).
ONE_PASS = '''        pass
'''
KEEP = {"linear": 'text if "<" not in text else ""', "quadratic": 'text if "<" not in text else ""', "fixed": "text"}

UTILS = '''"""Helpers of the tool parsers."""


def reference_parser():
    """A streaming DeepSeek V3.1 parser (callscale's, standing in for the engine's own logic)."""
    from callscale.parsers.deepseek import DeepSeekV31Parser

    return DeepSeekV31Parser()
'''

#: The engines' result types (``StreamingParseResult``, ``ToolCallItem``), here callscale's own.
CORE_TYPES = '''"""The results of the tool parsers."""
from callscale.parsers.results import StreamingParseResult, ToolCallItem  # noqa
'''

# ------------------------------------------------------------------------ TensorRT-LLM
TRTLLM_FILES = {
    "tensorrt_llm/__init__.py": "import torch\n\nimport tensorrt_llm._bootstrap  # noqa\nfrom tensorrt_llm.bindings "
                                "import executor  # noqa\nfrom ._common import default_net  # noqa\n",
    "tensorrt_llm/logger.py": "from tensorrt_llm.bindings import Logger as _Logger\n\nlogger = _Logger()\n",
    "tensorrt_llm/serve/__init__.py": "from .openai_server import OpenAIServer  # noqa\n",
    "tensorrt_llm/serve/openai_protocol.py": "import torch\n\nfrom ..llmapi import SamplingParams  # noqa\n",
    "tensorrt_llm/serve/tool_parser/__init__.py": "from .deepseekv31_parser import DeepSeekV31Parser  # noqa\n"
                                                  "from .tool_parser_factory import ToolParserFactory  # noqa\n",
    "tensorrt_llm/serve/tool_parser/utils.py": UTILS,
    "tensorrt_llm/serve/tool_parser/core_types.py": CORE_TYPES,
    "tensorrt_llm/serve/tool_parser/base_tool_parser.py": '''"""The base of the tool parsers: a buffer and the tools' indices."""
from typing import Dict, List

from tensorrt_llm.logger import logger

from ..openai_protocol import ChatCompletionToolsParam as Tool
from .core_types import StreamingParseResult


class BaseToolParser:
    def __init__(self):
        self._buffer = ""

    def _get_tool_indices(self, tools: List[Tool]) -> Dict[str, int]:
        return {tool.function.name: i for i, tool in enumerate(tools)}

    def parse_streaming_increment(self, new_text: str, tools: List[Tool]) -> StreamingParseResult:
        logger.debug("not implemented")
        return StreamingParseResult()
''',
}
#: TensorRT-LLM's parsers and SGLang's detectors: one shape (TensorRT-LLM's was ported from SGLang's), their
#: imports and base class differ; SGLang's has ``finish``.
DETECTOR_PARSER = '''"""DeepSeek V3.1 tool calls{note}."""
import re
from typing import List

{imports}
from .utils import {helper}


def _convert(result) -> StreamingParseResult:
    text = result.normal_text
    return StreamingParseResult(normal_text={keep}, calls=[
        ToolCallItem(tool_index=c.tool_index, name=c.name, parameters=c.parameters) for c in result.calls])


class {cls}({base_class}):
    def __init__(self):
        super().__init__()
        self._stream = {helper}()

    def has_tool_call(self, text: str) -> bool:
        return "<｜tool▁calls▁begin｜>" in text

    def detect_and_parse(self, text: str, tools: List[Tool]) -> StreamingParseResult:
        return _convert({helper}().detect_and_parse(text, tools))

    def parse_streaming_increment(self, new_text: str, tools: List[Tool]) -> StreamingParseResult:
{body}        return _convert(self._stream.parse_streaming_increment(new_text, tools))
{finish}'''
TRTLLM_PARSER = DETECTOR_PARSER.replace("{imports}", """from tensorrt_llm.logger import logger  # noqa
from tensorrt_llm.serve.openai_protocol import ChatCompletionToolsParam as Tool
from tensorrt_llm.serve.tool_parser.base_tool_parser import BaseToolParser
from tensorrt_llm.serve.tool_parser.core_types import StreamingParseResult, ToolCallItem
""").replace("{base_class}", "BaseToolParser").replace("{finish}", "")

# ------------------------------------------------------------------------ vLLM
VLLM_PROTOCOL = "vllm/entrypoints/openai/protocol.py"
VLLM_FILES = {
    "vllm/__init__.py": "import torch\n\nimport vllm._C  # noqa\nfrom vllm.engine.llm_engine import LLMEngine  # noqa\n",
    "vllm/envs.py": "import torch\n\nVLLM_LOGGING_LEVEL = 'INFO'\n",
    "vllm/logger.py": "import vllm.envs as envs\nfrom vllm._C import log_config  # noqa\n\n\ndef init_logger(name):\n"
                      "    return None\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/openai/__init__.py": "",
    VLLM_PROTOCOL: "import torch\n\nfrom vllm.sampling_params import SamplingParams  # noqa\n",
}
VLLM_BASE = '''"""The base of the tool parsers."""
from vllm.entrypoints.openai.protocol import ChatCompletionRequest, DeltaMessage, ExtractedToolCallInformation
from vllm.logger import init_logger

logger = init_logger(__name__)


class ToolParser:
    def __init__(self, tokenizer):
        self.model_tokenizer = tokenizer
        self.prev_tool_call_arr = []
        self.streamed_args_for_tool = []
'''
VLLM_PARSER = '''"""DeepSeek V3.1 tool calls{note}."""
import re

from vllm.entrypoints.openai.protocol import (ChatCompletionRequest, DeltaFunctionCall, DeltaMessage, DeltaToolCall,
                                              ExtractedToolCallInformation, FunctionCall, ToolCall)
from vllm.logger import init_logger
from {base}.abstract_tool_parser import ToolParser
from {base}.utils import {helper}

logger = init_logger(__name__)


def _message(result):
    text = result.normal_text
    content = {keep}
    calls = [DeltaToolCall(index=c.tool_index, type="function",
                           function=DeltaFunctionCall(name=c.name, arguments=c.parameters).model_dump(exclude_none=True))
             for c in result.calls]
    if not content and not calls:
        return None
    return DeltaMessage(content=content or None, tool_calls=calls)


class {cls}(ToolParser):
    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self._stream = {helper}()
        self._buffer = ""

    def extract_tool_calls(self, model_output: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation:
        result = {helper}().detect_and_parse(model_output, request.tools or [])
        calls = [ToolCall(type="function", function=FunctionCall(name=c.name, arguments=c.parameters))
                 for c in result.calls]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls,
                                            content=result.normal_text or None)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, previous_token_ids,
                                     current_token_ids, delta_token_ids, request):
{body}        return _message(self._stream.parse_streaming_increment(delta_text, request.tools or []))
'''

# ------------------------------------------------------------------------ SGLang
SGLANG_FILES = {
    "python/sglang/__init__.py": "import torch\n\nfrom sglang.srt._C import version  # noqa\n"
                                 "from sglang.lang.api import Engine  # noqa\n",
    "python/sglang/srt/__init__.py": "",
    "python/sglang/srt/entrypoints/__init__.py": "",
    "python/sglang/srt/entrypoints/openai/__init__.py": "",
    "python/sglang/srt/entrypoints/openai/protocol.py": "import torch\n\nfrom sglang.srt.sampling.sampling_params "
                                                        "import SamplingParams  # noqa\n",
    "python/sglang/srt/function_call/__init__.py": "from .deepseekv31_detector import DeepSeekV31Detector  # noqa\n"
                                                   "from .function_call_parser import FunctionCallParser  # noqa\n",
    "python/sglang/srt/function_call/utils.py": UTILS,
    "python/sglang/srt/function_call/core_types.py": CORE_TYPES,
    "python/sglang/srt/function_call/base_format_detector.py": '''"""The base of the detectors."""
import logging
from typing import List

from sglang.srt.entrypoints.openai.protocol import Tool

from .core_types import StreamingParseResult

logger = logging.getLogger(__name__)


class BaseFormatDetector:
    def __init__(self):
        self._buffer = ""

    def finish(self, tools: List[Tool]) -> StreamingParseResult:
        return StreamingParseResult()
''',
}
SGLANG_PARSER = DETECTOR_PARSER.replace("{imports}", """from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
""").replace("{base_class}", "BaseFormatDetector").replace("{finish}", """
    def finish(self, tools: List[Tool]) -> StreamingParseResult:
        return _convert(self._stream.finish(tools))
""")

#: engine -> (fixed files, the parser's path, its source template, the class's module with {cls} to fill,
#: the delta's name in the parser's streaming method). vLLM twice: its parsers moved in 0.1x.
LAYOUTS = {
    "trtllm": (TRTLLM_FILES, "tensorrt_llm/serve/tool_parser/deepseekv31_parser.py", TRTLLM_PARSER,
               "tensorrt_llm.serve.tool_parser.deepseekv31_parser:{cls}", "new_text"),
    "vllm": ({**VLLM_FILES, "vllm/tool_parsers/__init__.py": "from .deepseekv31_tool_parser import *  # noqa\n"
              "from .registry import ToolParserManager  # noqa\n", "vllm/tool_parsers/abstract_tool_parser.py":
              VLLM_BASE, "vllm/tool_parsers/utils.py": UTILS},
             "vllm/tool_parsers/deepseekv31_tool_parser.py", VLLM_PARSER,
             "vllm.tool_parsers.deepseekv31_tool_parser:{cls}", "delta_text"),
    "vllm_entrypoints": ({**VLLM_FILES, "vllm/entrypoints/openai/tool_parsers/__init__.py":
                          "from .deepseekv31_tool_parser import *  # noqa\nfrom .registry import Manager  # noqa\n",
                          "vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py": VLLM_BASE,
                          "vllm/entrypoints/openai/tool_parsers/utils.py": UTILS},
                         "vllm/entrypoints/openai/tool_parsers/deepseekv31_tool_parser.py", VLLM_PARSER,
                         "vllm.entrypoints.openai.tool_parsers.deepseekv31_tool_parser:{cls}", "delta_text"),
    "sglang": (SGLANG_FILES, "python/sglang/srt/function_call/deepseekv31_detector.py", SGLANG_PARSER,
               "sglang.srt.function_call.deepseekv31_detector:{cls}", "new_text"),
}


def spec(layout: str, cls: str = "DeepSeekV31Parser") -> str:
    """The ``module:Class`` of the layout's parser (vLLM's and SGLang's classes have their engines' names)."""
    name = {"vllm": "DeepSeekV31ToolParser", "vllm_entrypoints": "DeepSeekV31ToolParser",
            "sglang": "DeepSeekV31Detector"}.get(layout, "DeepSeekV31Parser")
    return LAYOUTS[layout][3].format(cls=name if cls == "DeepSeekV31Parser" else name + "Renamed")


def parser_source(layout: str, variant: str, cls: str, helper: str, note: str = "") -> str:
    files, path, template, target, delta = LAYOUTS[layout]
    name = spec(layout, cls).rpartition(":")[2]
    body = (RESCAN if variant == "quadratic" else ONE_PASS).format(delta=delta)
    base = ".".join(Path(path).parent.parts)
    return template.format(note=note, helper=helper, cls=name, keep=KEEP[variant], body=body, base=base)


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make(repo: Path, layout: str, history: list | None = None) -> list[str]:
    """A repository in ``repo`` with the commits of ``history`` (default :data:`HISTORY`) in the layout of
    ``layout`` (a key of :data:`LAYOUTS`); returns the commit hashes, c1 first. One commit a minute, so asv
    orders them by date."""
    files, path, *_ = LAYOUTS[layout]
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    hashes = []
    for i, (message, variant, cls, helper) in enumerate(history or HISTORY):
        (repo / path).write_text(parser_source(layout, variant, cls, helper, f" ({message})"), encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", message, f"--date=2026-01-01T00:{i:02d}:00Z")
        hashes.append(git(repo, "rev-parse", "HEAD"))
    return hashes
