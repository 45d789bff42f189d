"""callscale's parsers as SGLang detectors: ``callscale_<format>`` for every format.

SGLang has no plugin flag; its ``--tool-call-parser`` choices are read from
``FunctionCallParser.ToolCallParserEnum`` once ``function_call_parser`` is
imported (``sglang/srt/server_args.py``, ``_tool_call_parser_choices``).
Importing this module adds one :class:`CallscaleDetector` subclass per
format there, so a launch script of one more line serves them::

    import callscale.serve.sglang  # noqa: F401  (registers callscale_<format>)
    from sglang.launch_server import ...   # as before, with --tool-call-parser callscale_qwen3_coder

(``python -m callscale.serve sglang --path`` prints a file that does the
import, for tools that take a file.)

The contract, as SGLang 0.5.23 uses it (``base_format_detector.py``,
``function_call_parser.py``, ``serving_chat.py``):

- ``__init__()`` takes no argument; ``detect_and_parse(text, tools)``,
  ``parse_streaming_increment(new_text, tools)`` and ``finish(tools)`` take
  SGLang's ``Tool`` list and return its ``StreamingParseResult``
  (``normal_text``, ``calls``: ``ToolCallItem(tool_index, name,
  parameters)``; a call's first item carries its name alone, with
  ``parameters=""``, as SGLang's own detectors send it, and SGLang gives it
  an id); the arguments parsed in one result are one item (for
  ``llama4_pythonic``, ``gpt_oss`` and ``kimi_k3``, :data:`WHOLE_CALL_ITEMS`,
  name and arguments in one item, as SGLang's detectors of them send whole
  calls);
- ``detect_and_parse`` returns one item per call (name and whole arguments);
- ``has_tool_call(text)``: True when callscale's parser finds a call or
  markup in ``text`` (a cut call's markup included), so SGLang takes the
  parser's content rather than the raw text;
- end of stream: SGLang calls ``finish`` (0.5) and then compares
  ``prev_tool_call_arr`` with ``streamed_args_for_tool`` for the last call;
  both are built from the pieces sent (arguments decoded to a dict when
  they are a complete JSON object, as SGLang's detectors keep them), so
  nothing is sent twice;
- ``structure_info`` / structural tags: not supported (``NotImplementedError``
  "... not supported"; ``supports_structural_tag()`` is False, so SGLang
  constrains ``tool_choice="required"`` with its JSON-array path);
- reasoning: left to SGLang's reasoning parser. Text callscale's parser
  reads as the format's reasoning (gpt-oss ``analysis``, Mistral
  ``[THINK]``) has no field in SGLang's result and is not sent.
"""

from __future__ import annotations

from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.function_call.function_call_parser import FunctionCallParser

from callscale.serve import engine_name
from callscale.serve._calls import DetectorGlue, StreamedCalls, register_formats

__all__ = ["CallscaleDetector", "DETECTORS", "WHOLE_CALL_ITEMS", "register"]


class CallscaleDetector(DetectorGlue, BaseFormatDetector):
    """An SGLang ``BaseFormatDetector`` around callscale's parser of :attr:`format` (see the module docstring)."""

    result_type = StreamingParseResult
    item_type = ToolCallItem

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._calls = StreamedCalls(dict_arguments=True)
        BaseFormatDetector.__init__(self)
        self._glue_init()

    def build_ebnf(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{engine_name(self.format)}: EBNF grammars are not supported by callscale's parsers")


#: Formats whose SGLang detector sends a call's name and arguments in one item (``PythonicDetector``,
#: ``GptOssDetector`` and ``KimiK3Detector`` read whole calls); callscale's detectors for them do the same
#: when a call's name and arguments arrive in one chunk.
WHOLE_CALL_ITEMS = frozenset({"llama4_pythonic", "gpt_oss", "kimi_k3"})


def register() -> dict[str, type]:
    """One subclass per callscale format, added to SGLang's ``FunctionCallParser.ToolCallParserEnum``
    under ``callscale_<format>``; returns ``{name: class}``. Idempotent."""
    return register_formats(CallscaleDetector, __name__, "Detector", "an SGLang detector",
                            lambda fmt: {"name_alone": fmt not in WHOLE_CALL_ITEMS},
                            FunctionCallParser.ToolCallParserEnum.__setitem__)


#: ``callscale_<format>`` -> its class (registered at import); the classes are also module attributes.
DETECTORS: dict[str, type] = register()
globals().update({cls.__name__: cls for cls in DETECTORS.values()})
