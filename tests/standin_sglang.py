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

from typing import List, Optional

from pydantic import BaseModel, Field

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
