"""A stand-in for an SGLang detector (tests only): the protocol as SGLang 0.5 defines it.

SGLang (``sglang/srt/function_call/base_format_detector.py``,
``core_types.py``, ``sglang/srt/entrypoints/openai/protocol.py``):
``BaseFormatDetector()`` takes no arguments; ``detect_and_parse(text,
tools)``, ``parse_streaming_increment(new_text, tools)`` and
``finish(tools)`` take ``List[Tool]`` (pydantic ``Tool(type, function:
Function(name, description, parameters, strict))``) and return a pydantic
``StreamingParseResult``. The parsing is our ``kimi_k2`` parser's. Having
``finish``, it is not told from callscale's own contract by its methods: the
``sglang:`` prefix selects the adapter.
"""

import json
import sys
from typing import Dict, List, Optional

from pydantic import BaseModel, Field

from standins import install_as
from callscale import parsers


class Function(BaseModel):
    description: Optional[str] = Field(default=None)
    name: str
    parameters: Optional[object] = None
    strict: Optional[bool] = None


class Tool(BaseModel):
    type: str = Field(default="function")
    function: Function


class ToolCallItem(BaseModel):
    tool_index: int
    name: Optional[str] = None
    parameters: str
    tool_call_id: Optional[str] = None


class StreamingParseResult(BaseModel):
    normal_text: str = ""
    calls: List[ToolCallItem] = []


def _convert(result, tools: List[Tool]) -> StreamingParseResult:
    names = {tool.function.name for tool in tools}  # AttributeError on OpenAI dicts, as in SGLang
    del names
    return StreamingParseResult(normal_text=result.normal_text, calls=[
        ToolCallItem(tool_index=c.tool_index, name=c.name, parameters=c.parameters) for c in result.calls])


class StandinKimiK2Detector:
    """Kimi K2 in SGLang's protocol."""

    def __init__(self):
        self._inner = parsers.get("kimi_k2")()

    def detect_and_parse(self, text: str, tools: List[Tool]) -> StreamingParseResult:
        return _convert(self._inner.detect_and_parse(text, tools), tools)

    def parse_streaming_increment(self, new_text: str, tools: List[Tool]) -> StreamingParseResult:
        return _convert(self._inner.parse_streaming_increment(new_text, tools), tools)

    def finish(self, tools: List[Tool]) -> StreamingParseResult:
        return _convert(self._inner.finish(tools), tools)


class StructureInfo:
    def __init__(self, begin: str, end: str, trigger: str):
        self.begin, self.end, self.trigger = begin, end, trigger


class BaseFormatDetector:
    """SGLang's base detector, as far as the serving layer and ``FunctionCallParser`` use it."""

    def __init__(self):
        self._buffer = ""
        self.prev_tool_call_arr: List[Dict] = []
        self.current_tool_id: int = -1
        self.current_tool_name_sent: bool = False
        self.streamed_args_for_tool: List[str] = []
        self.bot_token = ""
        self.eot_token = ""

    def finish(self, tools: List[Tool]) -> StreamingParseResult:
        return StreamingParseResult()

    def supports_structural_tag(self) -> bool:
        return True

    def structure_info(self):
        raise NotImplementedError()


class FunctionCallParser:
    """SGLang's ``FunctionCallParser``: the registry and the three calls ``serving_chat`` makes."""

    ToolCallParserEnum: Dict[str, type] = {}

    def __init__(self, tools: List[Tool], tool_call_parser: str):
        self.tools = tools
        self.detector = self.ToolCallParserEnum[tool_call_parser]()

    def parse_non_stream(self, full_text: str):
        has = self.detector.has_tool_call(full_text)
        result = self.detector.detect_and_parse(full_text, self.tools)
        if result.calls or has:
            return result.normal_text, result.calls
        return full_text, []

    def parse_stream_chunk(self, chunk_text: str):
        result = self.detector.parse_streaming_increment(chunk_text, self.tools)
        return result.normal_text, result.calls

    def parse_stream_end(self):
        result = self.detector.finish(self.tools)
        return result.normal_text, result.calls


def unstreamed_tool_args(detector) -> str:
    """SGLang's ``serving_chat._check_for_unstreamed_tool_args``: the last call's parsed arguments
    (``prev_tool_call_arr``, a dict is ``json.dumps``-ed) past what was streamed; ``""`` when none."""
    if not detector.prev_tool_call_arr or not detector.streamed_args_for_tool:
        return ""
    index = len(detector.prev_tool_call_arr) - 1
    expected = detector.prev_tool_call_arr[index].get("arguments", {})
    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    actual = detector.streamed_args_for_tool[index]
    return expected[len(actual):] if expected.startswith(actual) else ""


MODULES = ("sglang", "sglang.srt", "sglang.srt.function_call", "sglang.srt.function_call.base_format_detector",
           "sglang.srt.function_call.core_types", "sglang.srt.function_call.function_call_parser")


def install(monkeypatch) -> None:
    """Put this stand-in in ``sys.modules`` under SGLang's module names, with an empty registry."""
    monkeypatch.setattr(FunctionCallParser, "ToolCallParserEnum", {})
    install_as(monkeypatch, __name__, MODULES, ("callscale.serve.sglang",))
