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

from typing import Any

from tensorrt_llm.serve.tool_parser.base_tool_parser import BaseToolParser
from tensorrt_llm.serve.tool_parser.core_types import StreamingParseResult, ToolCallItem
from tensorrt_llm.serve.tool_parser.tool_parser_factory import ToolParserFactory

from callscale.serve._calls import DetectorGlue, StreamedCalls, register_formats

__all__ = ["CallscaleToolParser", "PARSERS", "register"]


class CallscaleToolParser(DetectorGlue, BaseToolParser):
    """A TensorRT-LLM ``BaseToolParser`` around callscale's parser of :attr:`format`; ``finish(tools)``
    releases what the parser still holds, for a server that calls it (TensorRT-LLM itself does not)."""

    result_type = StreamingParseResult
    item_type = ToolCallItem

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._calls = StreamedCalls(dict_arguments=True)
        BaseToolParser.__init__(self)
        self._glue_init()


def register() -> dict[str, type]:
    """One subclass per format in ``ToolParserFactory.parsers`` under ``callscale_<format>``; ``{name: class}``."""
    return register_formats(CallscaleToolParser, __name__, "ToolParser", "a TensorRT-LLM tool parser",
                            lambda fmt: {}, ToolParserFactory.parsers.__setitem__)


#: ``callscale_<format>`` -> its class (registered at import); the classes are also module attributes.
PARSERS: dict[str, type] = register()
globals().update({cls.__name__: cls for cls in PARSERS.values()})
