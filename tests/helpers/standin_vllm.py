"""A stand-in for a vLLM tool parser (tests only): the protocol as vLLM 0.33 defines it.

vLLM 0.33 (``vllm/tool_parsers/abstract_tool_parser.py``,
``vllm/entrypoints/generate/base/protocol.py``,
``vllm/entrypoints/openai/chat_completion/protocol.py``):
``ToolParser(tokenizer, tools=None)`` keeps ``prev_tool_call_arr``,
``streamed_args_for_tool`` and has ``get_remaining_unstreamed_args()``;
``extract_tool_calls_streaming(previous_text, current_text, delta_text,
previous_token_ids, current_token_ids, delta_token_ids, request) ->
DeltaMessage | None``; ``extract_tool_calls(model_output, request) ->
ExtractedToolCallInformation``. An engine-based parser
(``engine_based_streaming = True``) gets each delta alone and is flushed
with ``finish_streaming()``.

:class:`StandinQwen3CoderToolParser` parses with our ``qwen3_coder``
parser and, like many vLLM parsers, never streams a call's closing ``}``
until the next call starts: the last call's ``}`` reaches the client only
through the serving layer's end-of-stream back-fill. It also looks its
markers up in the tokenizer's vocabulary (``RuntimeError`` when missing, as
vLLM parsers do) and checks the delta's token ids against the delta text.

:class:`StandinHarmonyParser` speaks vLLM's newer ``Parser`` protocol
(``parse_delta(delta_text, delta_token_ids, request, finished=)``), through
which vLLM 0.33 serves gpt-oss (``vllm.parser.harmony:HarmonyParser``).
"""

import sys
from typing import Any, Literal

from pydantic import BaseModel, Field

from standins import install_as
from callscale import parsers
from callscale.parsers.qwen import SPECIAL_TOKENS


class FunctionDefinition(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ChatCompletionToolsParam(BaseModel):
    type: Literal["function"] = "function"
    function: FunctionDefinition


class ChatCompletionRequest(BaseModel):
    model: str | None = None
    messages: list[dict[str, Any]]
    tools: list[ChatCompletionToolsParam] | None = None
    tool_choice: str | None = "none"
    skip_special_tokens: bool = True


class DeltaFunctionCall(BaseModel):
    name: str | None = None
    arguments: str | None = None


class DeltaToolCall(BaseModel):
    id: str | None = None
    type: Literal["function"] | None = None
    index: int
    function: DeltaFunctionCall | None = None


class DeltaMessage(BaseModel):
    role: str | None = None
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[DeltaToolCall] = Field(default_factory=list)


class FunctionCall(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str = "call_0"
    type: Literal["function"] = "function"
    function: FunctionCall


class ExtractedToolCallInformation(BaseModel):
    tools_called: bool
    tool_calls: list[ToolCall]
    content: str | None = None


class ToolParser:
    """vLLM's base class, as far as the serving layer uses it."""

    engine_based_streaming: bool = False

    def __init__(self, tokenizer, tools: list | None = None):
        self.prev_tool_call_arr: list[dict] = []
        self.current_tool_id: int = -1
        self.current_tool_name_sent: bool = False
        self.streamed_args_for_tool: list[str] = []
        self.model_tokenizer = tokenizer
        self.tools = [t for t in tools or [] if isinstance(t, ChatCompletionToolsParam)]

    @property
    def vocab(self) -> dict[str, int]:
        return self.model_tokenizer.get_vocab()

    def adjust_request(self, request):
        return request

    def get_remaining_unstreamed_args(self) -> str:
        if not self.prev_tool_call_arr:
            return ""
        index = len(self.prev_tool_call_arr) - 1
        expected = self.prev_tool_call_arr[index].get("arguments", "")
        actual = self.streamed_args_for_tool[index] if index < len(self.streamed_args_for_tool) else ""
        return expected[len(actual):] if expected.startswith(actual) else ""


class StandinQwen3CoderToolParser(ToolParser):
    """Qwen3-Coder XML in vLLM's protocol; the last call's ``}`` needs the back-fill."""

    engine_based_streaming = True

    def __init__(self, tokenizer, tools: list | None = None):
        super().__init__(tokenizer, tools)
        self.token_ids = {}
        for token in SPECIAL_TOKENS:
            if self.vocab.get(token) is None:
                raise RuntimeError(f"could not locate the {token} token in the tokenizer")
            self.token_ids[self.vocab[token]] = token
        self._inner = parsers.get("qwen3_coder")()
        self._full: list[str] = []  # each call's argument text as parsed so far

    def _message(self, result) -> DeltaMessage | None:
        calls: list[DeltaToolCall] = []
        for item in result.calls:
            index = item.tool_index
            if index >= len(self._full):  # a new call: the previous one's withheld "}" goes first
                if self._full:
                    prev = len(self._full) - 1
                    rest = self._full[prev][len(self.streamed_args_for_tool[prev]):]
                    if rest:
                        calls.append(DeltaToolCall(index=prev, function=DeltaFunctionCall(arguments=rest)))
                        self.streamed_args_for_tool[prev] += rest
                self._full.append("")
                self.streamed_args_for_tool.append("")
                self.prev_tool_call_arr.append({"name": item.name, "arguments": ""})
                self.current_tool_id = index
                calls.append(DeltaToolCall(index=index, id=f"call_{index}", type="function",
                                           function=DeltaFunctionCall(name=item.name, arguments="")))
            self._full[index] += item.parameters
            self.prev_tool_call_arr[index]["arguments"] = self._full[index]
            sendable = self._full[index][:-1] if self._full[index].endswith("}") else self._full[index]
            piece = sendable[len(self.streamed_args_for_tool[index]):]
            if piece:
                calls.append(DeltaToolCall(index=index, function=DeltaFunctionCall(arguments=piece)))
                self.streamed_args_for_tool[index] += piece
        if not calls and self._full:  # keep the last call in every message, as vLLM parsers do
            calls.append(DeltaToolCall(index=len(self._full) - 1, function=DeltaFunctionCall(arguments="")))
        if not calls and not result.normal_text:
            return None
        return DeltaMessage(content=result.normal_text or None, tool_calls=calls)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, previous_token_ids,
                                     current_token_ids, delta_token_ids, request) -> DeltaMessage | None:
        assert previous_text == "" and current_text == delta_text  # engine-based: the delta alone
        for token_id in delta_token_ids:
            if token_id in self.token_ids:
                assert self.token_ids[token_id] in delta_text
        assert all(isinstance(t, ChatCompletionToolsParam) for t in request.tools or [])
        return self._message(self._inner.parse_streaming_increment(delta_text, request.tools or []))

    def finish_streaming(self) -> DeltaMessage | None:
        return self._message(self._inner.finish([]))

    def extract_tool_calls(self, model_output: str, request) -> ExtractedToolCallInformation:
        result = self._inner.detect_and_parse(model_output, request.tools or [])
        calls = [ToolCall(id=f"call_{c.tool_index}", function=FunctionCall(name=c.name, arguments=c.parameters))
                 for c in result.calls]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls,
                                            content=result.normal_text or None)


class Parser:
    """vLLM 0.33's ``Parser`` protocol (``vllm/parser/abstract_parser.py``), as far as the serving layer uses it."""

    tool_parser_cls = None
    reasoning_parser_cls = None

    def __init__(self, tokenizer, tools: list | None = None, *args, **kwargs):
        self.model_tokenizer = tokenizer
        self.tools = tools


class StandinHarmonyParser(Parser):
    """gpt-oss (harmony) in vLLM's ``Parser`` protocol, parsed by our ``gpt_oss`` parser.

    Like vLLM's ``HarmonyParser`` it reads the delta's token ids: a delta whose ids are not its text's
    is an error (``AssertionError``), and only the call with ``finished=True`` flushes; it records
    each ``finished`` flag in ``finished_flags``.
    """

    def __init__(self, tokenizer, tools: list | None = None, *args, **kwargs):
        super().__init__(tokenizer, tools)
        self._inner = parsers.get("gpt_oss")()
        self.finished_flags: list[bool] = []
        self._seen = 0

    def _message(self, result) -> DeltaMessage | None:
        calls = []
        for item in result.calls:
            fn = DeltaFunctionCall(name=item.name, arguments=item.parameters)
            calls.append(DeltaToolCall(index=item.tool_index, function=fn))
        if not calls and not result.normal_text and not result.reasoning_text:
            return None
        return DeltaMessage(content=result.normal_text or None, reasoning=result.reasoning_text or None,
                            tool_calls=calls)

    def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids=None, *, finished: bool):
        assert list(delta_token_ids) == self.model_tokenizer.encode(delta_text)  # the ids are the delta's
        self.finished_flags.append(finished)
        result = self._inner.parse_streaming_increment(delta_text, request.tools or [])
        if finished:
            last = self._inner.finish(request.tools or [])
            result.normal_text += last.normal_text
            result.reasoning_text += last.reasoning_text
            result.calls += last.calls
        return self._message(result)

    def parse(self, model_output, request, enable_auto_tools=False, model_output_token_ids=()):
        result = self._inner.detect_and_parse(model_output, request.tools or [])
        calls = [FunctionCall(name=c.name, arguments=c.parameters) for c in result.calls]
        return result.reasoning_text or None, result.normal_text or None, calls


class ToolParserManager:
    """vLLM's registry of tool parsers (``register_module(name=, module=)`` registers at once)."""

    tool_parsers: dict[str, type] = {}

    @classmethod
    def register_module(cls, name=None, force: bool = True, module=None):
        assert module is not None and issubclass(module, ToolParser), "module must be subclass of ToolParser"
        for n in [name] if isinstance(name, str) else name:
            cls.tool_parsers[n] = module
        return module

    @classmethod
    def get_tool_parser(cls, name: str) -> type:
        return cls.tool_parsers[name]


#: The module names vLLM's ToolParser, registry and protocol live at (vLLM 0.33/0.34), for :func:`install`.
MODULES = ("vllm", "vllm.tool_parsers", "vllm.entrypoints", "vllm.entrypoints.generate",
           "vllm.entrypoints.generate.base", "vllm.entrypoints.generate.base.protocol")


def install(monkeypatch) -> None:
    """Put this stand-in in ``sys.modules`` under vLLM's module names (``vllm.tool_parsers``, the protocol),
    with an empty registry, so ``import callscale.serve.vllm`` runs as inside vLLM."""
    monkeypatch.setattr(ToolParserManager, "tool_parsers", {})
    install_as(monkeypatch, __name__, MODULES, ("callscale.serve.vllm", "callscale_vllm"))


def serve_stream(parser, deltas, request, tokenizer=None):
    """vLLM 0.33's serving layer around an engine-based tool parser (``DelegatingParser.parse_delta``
    without a reasoning parser): each delta alone; on the last, the last call of its message gets
    ``get_remaining_unstreamed_args()`` appended, then ``finish_streaming()``'s message is merged.
    Returns the messages as the client receives them (``None`` dropped)."""
    out = []
    for i, delta in enumerate(deltas):
        ids = tokenizer.encode(delta) if tokenizer is not None else []
        message = parser.extract_tool_calls_streaming("", delta, delta, [], ids, ids, request)
        if i == len(deltas) - 1:
            if message and message.tool_calls and message.tool_calls[-1].function:
                fn = message.tool_calls[-1].function
                fn.arguments = (fn.arguments or "") + parser.get_remaining_unstreamed_args()
            flush = parser.finish_streaming()
            if flush is not None:
                if message is None:
                    message = flush
                else:
                    message.content = (message.content or "") + (flush.content or "") or None
                    message.tool_calls = (message.tool_calls or []) + flush.tool_calls
        if message is not None:
            out.append(message)
    return out
