"""callscale's parsers as vLLM tool parsers: ``callscale_<format>`` for every format.

Importing this module (vLLM does it for ``--tool-parser-plugin``, given the
file ``python -m callscale.serve vllm --path`` prints or the module name
``callscale.serve.vllm``) registers one :class:`CallscaleToolParser`
subclass per callscale format with ``ToolParserManager.register_module``::

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin "$(python -m callscale.serve vllm --path)" \\
        --tool-call-parser callscale_qwen3_coder

The contract, as vLLM 0.33/0.34 use it (``vllm/parser/abstract_parser.py``,
``DelegatingParser``; ``vllm/tool_parsers/abstract_tool_parser.py``):

- ``__init__(tokenizer, tools=None)``: the tokenizer is not read (callscale's
  parsers read text); ``tools`` as vLLM passes them
  (``ChatCompletionToolsParam``), read for argument types;
- ``extract_tool_calls_streaming(...)`` reads ``delta_text`` alone
  (``engine_based_streaming = True``: vLLM then gives the delta as the
  current text and keeps no previous text, so the serving layer's per-delta
  cost is flat too) and returns a ``DeltaMessage`` or ``None``: ``content``,
  ``reasoning`` (the format's reasoning where callscale's parser marks it:
  gpt-oss ``analysis``, Mistral ``[THINK]``), ``tool_calls`` as
  ``DeltaToolCall(index, id, type="function", function=DeltaFunctionCall(name,
  arguments))`` on a call's first piece (id from vLLM's ``make_tool_call_id``)
  and ``DeltaToolCall(index, function=DeltaFunctionCall(arguments=...))``
  after, one per call and delta; Kimi K2's ids are ``functions.<name>:<n>``
  (vLLM's ``kimi_k2`` id type, ``n`` counting the conversation's calls), as
  its chat template reads them back;
- end of stream: vLLM appends ``get_remaining_unstreamed_args()`` (the last
  call's ``prev_tool_call_arr`` arguments minus ``streamed_args_for_tool``)
  to the last delta's last call, then calls ``finish_streaming()`` (an
  engine-based parser's flush) and merges its message. callscale's parsers
  stream every argument piece they parse, so both lists are the pieces sent
  (``""`` remains) and ``finish_streaming`` returns what the parser's
  ``finish()`` releases (held text, a call closed by the end of the output);
- ``extract_tool_calls(model_output, request)`` -> ``ExtractedToolCallInformation``
  (``tools_called``, ``tool_calls`` with ids, ``content``; ``None`` when empty),
  parsed by a fresh parser: the same calls as streaming;
- ``adjust_request``: vLLM's own (structured JSON output for
  ``tool_choice="required"`` or a named tool), then ``skip_special_tokens =
  False`` when the format's markers are special tokens of the model
  (:data:`callscale.tokenizers.MODEL_SPECIAL`, end of sentence aside) and the
  request has tools, so the markers reach the parser.

A parser never raises on model output (callscale's contract); the text is
never re-read: the cost per delta is flat at any length (docs/serving.md has
the figures).
"""

from __future__ import annotations

import uuid
from typing import Any, Sequence

from vllm.tool_parsers import ToolParser, ToolParserManager

try:  # vLLM 0.2x and later
    from vllm.entrypoints.generate.base.protocol import (DeltaMessage,
                                                         ExtractedToolCallInformation, FunctionCall, ToolCall)
except ImportError:  # older layout
    from vllm.entrypoints.openai.protocol import (DeltaMessage,  # type: ignore
                                                  ExtractedToolCallInformation, FunctionCall, ToolCall)
try:
    from vllm.renderers.chat_utils import make_tool_call_id
except ImportError:
    def make_tool_call_id(id_type: str = "random", func_name: Any = None, idx: Any = None) -> str:
        if id_type == "kimi_k2":
            return f"functions.{func_name}:{idx}"
        return f"chatcmpl-tool-{uuid.uuid4().hex}"

from callscale import parsers
from callscale.serve._calls import CallRecord, StreamedCalls, merged, register_formats, whole_calls

__all__ = ["CallscaleToolParser", "PARSERS", "register", "keeps_special_tokens", "history_tool_calls"]

#: Formats whose chat template reads call ids back in the model's own spelling (vLLM's ``tool_call_id_type``).
ID_TYPES = {"kimi_k2": "kimi_k2"}


def history_tool_calls(request: Any) -> int:
    """The tool calls of the assistant messages in ``request.messages`` (vLLM's ``count_history_tool_calls``)."""
    count = 0
    for message in getattr(request, "messages", None) or ():
        get = message.get if isinstance(message, dict) else (lambda k, m=message: getattr(m, k, None))
        if get("role") == "assistant":
            count += len(get("tool_calls") or ())
    return count


def keeps_special_tokens(fmt: str) -> bool:
    """True when ``fmt``'s markers are special tokens of the model (end of sentence aside): vLLM must
    then detokenize with ``skip_special_tokens=False`` for the parser to see them."""
    from callscale import tokenizers
    from callscale.parsers.deepseek import EOS

    special = set(tokenizers.MODEL_SPECIAL.get(fmt, ()))
    special.discard(EOS)
    return bool(special)


class CallscaleToolParser(CallRecord, ToolParser):
    """A vLLM ``ToolParser`` around callscale's parser of :attr:`format` (see the module docstring)."""

    #: the callscale format (set per registered subclass)
    format: str = ""
    #: the request keeps special tokens (``adjust_request``) when it has tools
    keep_special_tokens: bool = False
    #: vLLM hands the delta alone and calls ``finish_streaming()`` at the end of the stream
    engine_based_streaming = True
    #: how call ids are spelled: ``"random"`` (``chatcmpl-tool-<uuid>``) or ``"kimi_k2"``
    #: (``functions.<name>:<n>``, ``n`` counting the calls of the conversation, as Kimi K2 writes them)
    id_type: str = "random"

    def __init__(self, tokenizer: Any, tools: list | None = None, *args: Any, **kwargs: Any) -> None:
        self._calls = StreamedCalls()
        self._ids: list[str] = []
        super().__init__(tokenizer, tools)
        self._parser = parsers.get(self.format)()
        self._tools: Sequence[Any] = self.tools
        self._finished = False
        self._request: Any = None
        self._history: int | None = None  # calls before this turn (id_type "kimi_k2"), read from the first request

    def _call_id(self, name: str | None, index: int, request: Any) -> str:
        if self.id_type == "random":
            return make_tool_call_id()
        if self._history is None:
            self._history = history_tool_calls(request)
        return make_tool_call_id(self.id_type, name, self._history + index)

    def adjust_request(self, request: Any) -> Any:
        """vLLM's own adjustment (structured JSON output) for ``tool_choice`` ``"required"`` or a named
        tool, which is all it changes (for ``"auto"`` / ``"none"`` it reads ``parallel_tool_calls``
        and returns the request as it is); then the special tokens kept where the format needs them."""
        if getattr(request, "tool_choice", None) not in ("auto", "none", None):
            request = super().adjust_request(request)
        if self.keep_special_tokens and getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none":
            request.skip_special_tokens = False
        return request

    def _message(self, result: Any, request: Any = None) -> Any:
        """``result`` (callscale's ``StreamingParseResult``) as a vLLM ``DeltaMessage``; ``None`` when empty.

        One validated ``DeltaMessage`` a delta, its tool calls given as dicts (pydantic validates the
        nested models in one call: measured 7.4 us against 9.9 us for three models built one by
        one, and ``model_construct`` was slower still); only the fields with a value are set, as
        vLLM's own parsers set them (the serving layer dumps the set fields).
        """
        fields: dict[str, Any] = {}
        if result.calls:
            calls = []
            record = self._calls
            for index, name, arguments in merged(result.calls):
                if record.add(index, name, arguments):
                    call_id = self._call_id(name, index, request)
                    self._ids.append(call_id)
                    self.current_tool_id = index
                    self.current_tool_name_sent = True
                    calls.append({"index": index, "id": call_id, "type": "function",
                                  "function": {"name": name, "arguments": arguments}})
                else:
                    calls.append({"index": index, "function": {"arguments": arguments}})
            fields["tool_calls"] = calls
        if result.normal_text:
            fields["content"] = result.normal_text
        reasoning = getattr(result, "reasoning_text", "")
        if reasoning:
            fields["reasoning"] = reasoning
        return DeltaMessage(**fields) if fields else None

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Any:
        tools = getattr(request, "tools", None) or self.tools
        self._tools = tools
        self._request = request
        return self._message(self._parser.parse_streaming_increment(delta_text, tools), request)

    def finish_streaming(self) -> Any:
        """The end of the stream (vLLM calls it once, after the last delta): what the parser still held."""
        if self._finished:
            return None
        self._finished = True
        return self._message(self._parser.finish(self._tools), self._request)

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        tools = getattr(request, "tools", None) or self.tools
        result = parsers.get(self.format)().detect_and_parse(model_output, tools)
        base = history_tool_calls(request) if self.id_type != "random" else 0
        calls = [ToolCall(id=make_tool_call_id(self.id_type, name, base + i), type="function",
                          function=FunctionCall(name=name or "", arguments=args))
                 for i, (name, args) in enumerate(whole_calls(result.calls))]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls,
                                            content=result.normal_text or None)


def register() -> dict[str, type]:
    """One subclass per callscale format, registered in vLLM's ``ToolParserManager`` under
    ``callscale_<format>``; returns ``{name: class}``. Idempotent (re-registering replaces)."""
    return register_formats(
        CallscaleToolParser, __name__, "ToolParser", "a vLLM tool parser",
        lambda fmt: {"keep_special_tokens": keeps_special_tokens(fmt), "id_type": ID_TYPES.get(fmt, "random")},
        lambda name, cls: ToolParserManager.register_module(name=name, module=cls))


#: ``callscale_<format>`` -> its class (registered at import); the classes are also module attributes.
PARSERS: dict[str, type] = register()
globals().update({cls.__name__: cls for cls in PARSERS.values()})
