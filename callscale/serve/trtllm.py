"""callscale's parsers as TensorRT-LLM tool parsers: ``callscale_<format>`` for every format.

TensorRT-LLM reads ``--tool_parser NAME`` from ``ToolParserFactory.parsers``
(``tensorrt_llm/serve/tool_parser/tool_parser_factory.py``, a dict of
``BaseToolParser`` classes, names lower case). It has no plugin flag:
importing this module in the launch script (one line, before the server
starts) adds one :class:`CallscaleToolParser` subclass per format there.

The contract (``base_tool_parser.py``): ``__init__()`` with no argument;
``detect_and_parse(text, tools)`` and ``parse_streaming_increment(new_text,
tools)`` return TensorRT-LLM's ``StreamingParseResult`` (``normal_text``,
``calls``: ``ToolCallItem(tool_index, name, parameters)``); ``has_tool_call``;
``structure_info``: not supported (``NotImplementedError``).

**What TensorRT-LLM does not support**: an end of stream. Its parsers have
no ``finish``, so text callscale's parser still holds when the output ends
(a possible partial marker, whitespace after a call, a call whose end only
the end of the output confirms: Mistral's and Llama 3 JSON's last ``}``) is
not sent in streaming; ``detect_and_parse`` (non-streaming) has all of it.
:meth:`CallscaleToolParser.finish` is there for a server that calls it.
"""

from __future__ import annotations

from typing import Any, List

from tensorrt_llm.serve.tool_parser.base_tool_parser import BaseToolParser
from tensorrt_llm.serve.tool_parser.core_types import StreamingParseResult, ToolCallItem
from tensorrt_llm.serve.tool_parser.tool_parser_factory import ToolParserFactory

from callscale import parsers
from callscale.serve import engine_name, formats
from callscale.serve._calls import StreamedCalls, merged, whole_calls

__all__ = ["CallscaleToolParser", "PARSERS", "register"]


class CallscaleToolParser(BaseToolParser):
    """A TensorRT-LLM ``BaseToolParser`` around callscale's parser of :attr:`format`."""

    format: str = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._calls = StreamedCalls(dict_arguments=True)
        super().__init__()
        self._parser = parsers.get(self.format)()

    @property
    def prev_tool_call_arr(self) -> list:
        return self._calls.records()

    @prev_tool_call_arr.setter
    def prev_tool_call_arr(self, value: list) -> None:
        if not value:
            self._calls.clear()

    @property
    def streamed_args_for_tool(self) -> list:
        return self._calls.streamed()

    @streamed_args_for_tool.setter
    def streamed_args_for_tool(self, value: list) -> None:
        if not value:
            self._calls.clear()

    def _result(self, result: Any) -> StreamingParseResult:
        calls = []
        for index, name, arguments in merged(result.calls):
            if self._calls.add(index, name, arguments):
                self.current_tool_id = index
                self.current_tool_name_sent = True
            calls.append(ToolCallItem(tool_index=index, name=name, parameters=arguments))
        return StreamingParseResult(normal_text=result.normal_text, calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: List[Any]) -> StreamingParseResult:
        return self._result(self._parser.parse_streaming_increment(new_text, tools))

    def finish(self, tools: List[Any]) -> StreamingParseResult:
        """What the parser still holds at the end of the output (TensorRT-LLM itself never calls it)."""
        return self._result(self._parser.finish(tools))

    def detect_and_parse(self, text: str, tools: List[Any]) -> StreamingParseResult:
        result = parsers.get(self.format)().detect_and_parse(text, tools)
        calls = [ToolCallItem(tool_index=i, name=name, parameters=arguments)
                 for i, (name, arguments) in enumerate(whole_calls(result.calls))]
        return StreamingParseResult(normal_text=result.normal_text, calls=calls)

    def has_tool_call(self, text: str) -> bool:
        result = parsers.get(self.format)().detect_and_parse(text, ())
        return bool(result.calls) or result.normal_text != text

    def supports_structural_tag(self) -> bool:
        return False

    def structure_info(self) -> Any:
        raise NotImplementedError(f"{engine_name(self.format)}: structural tags (constrained tool calls) are not "
                                  "supported by callscale's parsers")


def _class_name(fmt: str) -> str:
    return "Callscale" + "".join(part.capitalize() for part in fmt.split("_")) + "ToolParser"


def register() -> dict[str, type]:
    """One subclass per format in ``ToolParserFactory.parsers`` under ``callscale_<format>``; ``{name: class}``."""
    made = {}
    for fmt in formats():
        cls = type(_class_name(fmt), (CallscaleToolParser,), {
            "format": fmt, "__module__": __name__,
            "__doc__": f"callscale's {fmt} parser as a TensorRT-LLM tool parser ({engine_name(fmt)})."})
        ToolParserFactory.parsers[engine_name(fmt)] = cls
        made[engine_name(fmt)] = cls
    return made


#: ``callscale_<format>`` -> its class (registered at import); the classes are also module attributes.
PARSERS: dict[str, type] = register()
globals().update({cls.__name__: cls for cls in PARSERS.values()})
