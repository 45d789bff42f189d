"""A stand-in for a TensorRT-LLM tool parser (tests only): the protocol as TensorRT-LLM defines it.

TensorRT-LLM (``tensorrt_llm/serve/tool_parser/base_tool_parser.py``,
``core_types.py``, ``openai_protocol.py``): ``BaseToolParser()`` takes no
arguments; ``detect_and_parse(text, tools)`` and
``parse_streaming_increment(new_text, tools)`` take ``List[Tool]`` where
``Tool`` is ``ChatCompletionToolsParam`` (pydantic; the parser reads
``tool.function.name``) and return a pydantic ``StreamingParseResult``
(``normal_text``, ``calls: List[ToolCallItem(tool_index, name,
parameters)]``). There is no ``finish``. The parsing itself is our
``qwen3`` parser's, so only the protocol differs.
"""

import sys
from typing import Any, Dict, List, Literal, Optional

from pydantic import BaseModel

from standins import install_as
from callscale import parsers


class FunctionDefinition(BaseModel):
    name: str
    description: Optional[str] = None
    parameters: Optional[Dict[str, Any]] = None


class ChatCompletionToolsParam(BaseModel):
    type: Literal["function"] = "function"
    function: FunctionDefinition


Tool = ChatCompletionToolsParam


class ToolCallItem(BaseModel):
    tool_index: int
    name: Optional[str] = None
    parameters: str


class StreamingParseResult(BaseModel):
    normal_text: str = ""
    calls: List[ToolCallItem] = []


def _convert(result) -> StreamingParseResult:
    return StreamingParseResult(normal_text=result.normal_text, calls=[
        ToolCallItem(tool_index=c.tool_index, name=c.name, parameters=c.parameters) for c in result.calls])


def _check_tools(tools: List[Tool]) -> List[str]:
    return [tool.function.name for tool in tools]  # AttributeError on OpenAI dicts, as in TensorRT-LLM


class StandinQwen3Parser:
    """Qwen3 (Hermes JSON) in TensorRT-LLM's protocol, without ``finish``."""

    def __init__(self):
        self._inner = parsers.get("qwen3")()
        self.prev_tool_call_arr: List[Dict] = []
        self.current_tool_id = -1
        self.streamed_args_for_tool: List[str] = []

    def detect_and_parse(self, text: str, tools: List[Tool]) -> StreamingParseResult:
        _check_tools(tools)
        return _convert(self._inner.detect_and_parse(text, tools))

    def parse_streaming_increment(self, new_text: str, tools: List[Tool]) -> StreamingParseResult:
        _check_tools(tools)
        return _convert(self._inner.parse_streaming_increment(new_text, tools))


class BaseToolParser:
    """TensorRT-LLM's base tool parser (no ``finish``)."""

    def __init__(self):
        self._buffer = ""
        self.prev_tool_call_arr: List[Dict] = []
        self.current_tool_id: int = -1
        self.current_tool_name_sent: bool = False
        self.streamed_args_for_tool: List[str] = []

    def supports_structural_tag(self) -> bool:
        return True


class ToolParserFactory:
    parsers: Dict[str, type] = {}

    @staticmethod
    def create_tool_parser(tool_parser: str):
        return ToolParserFactory.parsers[tool_parser.lower()]()


MODULES = ("tensorrt_llm", "tensorrt_llm.serve", "tensorrt_llm.serve.tool_parser",
           "tensorrt_llm.serve.tool_parser.base_tool_parser", "tensorrt_llm.serve.tool_parser.core_types",
           "tensorrt_llm.serve.tool_parser.tool_parser_factory")


def install(monkeypatch) -> None:
    """Put this stand-in in ``sys.modules`` under TensorRT-LLM's module names, with an empty registry."""
    monkeypatch.setattr(ToolParserFactory, "parsers", {})
    install_as(monkeypatch, __name__, MODULES, ("callscale.serve.trtllm",))
