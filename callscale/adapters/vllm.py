"""vLLM's tool parsers (``vllm.tool_parsers``), driven as vLLM's serving layer drives them.

The protocol (vLLM 0.33 ``vllm/tool_parsers/abstract_tool_parser.py``):
``ToolParser(tokenizer, tools=None)`` (before 0.2x: ``ToolParser(tokenizer)``;
the engine-based parsers take ``model_config=`` and keywords too), then per
delta ``extract_tool_calls_streaming(previous_text, current_text,
delta_text, previous_token_ids, current_token_ids, delta_token_ids, request)
-> DeltaMessage | None`` and for a whole text ``extract_tool_calls(text,
request) -> ExtractedToolCallInformation``. The request is vLLM's
``ChatCompletionRequest`` carrying the tools (``ChatCompletionToolsParam``).

What the serving layer does around a parser and this adapter does too
(vLLM 0.33 ``vllm/parser/abstract_parser.py``, ``Parser.parse_delta``,
without a reasoning parser, ``tool_choice="auto"``):

- previous and current text and token ids: ``current = previous + delta``
  (lists concatenated anew each delta, as vLLM's ``StreamState.advance``
  does; the cost is the serving layer's and is measured with the parser);
  a parser with ``engine_based_streaming`` gets the delta alone as current
  text and previous text ``""``, as vLLM gives it;
- a ``DeltaMessage`` of ``None`` sends nothing; ``content`` is content;
  each ``DeltaToolCall`` is a piece of call ``index`` (its function's
  ``name`` and ``arguments``);
- end of stream (``finalize_generation``): the message of the last delta
  gets the last call's parsed-but-unstreamed arguments appended
  (``get_remaining_unstreamed_args()``; only when that message carries a
  tool call with a function, as in vLLM), then an engine-based parser's
  ``finish_streaming()`` is merged in. callscale learns which delta was the
  last only at ``finish``, so the adapter returns each delta's message one
  increment late and the last one from ``finish``.

The tokenizer (:func:`tokenizer_for`) is the format's real one where
:mod:`callscale.tokenizers` has it installed (ids, vocabulary and special
set the model's); else a stand-in (:class:`SpecialTokenizer`) whose
vocabulary is the format's tokens (``callscale.workloads.render.get(fmt).special_tokens``),
each one id, any other run of text in a delta one more id, and whose
special set (``all_special_tokens``) is only the tokens the model's
tokenizer marks special (:data:`callscale.tokenizers.MODEL_SPECIAL`: vLLM's
engine-based parsers drop special tokens that are not their terminals).
Token ids are taken before measuring: a delta of the ``model`` chunkings
carries its ids (:class:`callscale.tokenizers.Piece`), as vLLM's serving
layer receives them from the engine; a delta of another chunking is encoded
on arrival (the tokenizer's cost is then measured with the parser).

vLLM's ``Parser`` protocol (``vllm/parser/abstract_parser.py``: a class with
``parse_delta(delta_text, delta_token_ids, request, finished=)`` and
``parse(text, request, enable_auto_tools=, model_output_token_ids=)``), which
vLLM 0.33 serves gpt-oss through (``vllm.parser.harmony:HarmonyParser``), is
spoken by :class:`VllmParserAdapter`: each delta is handed over one
increment late, so the last goes with ``finished=True`` at ``finish``; its
``reasoning`` is callscale's reasoning. A ``Parser`` class without its
``tool_parser_cls`` gets the classes vLLM's ``ParserManager`` composes it
with (:data:`PARSER_PARTS`).
"""

from __future__ import annotations

import inspect
import json
import re
from types import SimpleNamespace
from typing import Any, Callable, Sequence

from ._tools import ToolConverter, find_class, to_model

PROTOCOL_MODULES = (
    "vllm.entrypoints.openai.chat_completion.protocol",  # 0.2x and later
    "vllm.entrypoints.openai.protocol",                   # before
)

#: Id of a run of plain text in a delta; special tokens get :data:`FIRST_SPECIAL_ID` and up.
TEXT_ID = 1
FIRST_SPECIAL_ID = 100_000


class SpecialTokenizer:
    """A tokenizer stand-in whose vocabulary is a format's tokens; ``special``: those the model marks special.

    ``get_vocab()`` -> ``{token: id}``; ``encode(text)`` -> ids, one per
    special token and one (:data:`TEXT_ID`) per run of other text;
    ``decode(ids)`` inverts it for special tokens. Cost of ``encode``: linear
    in the text.
    """

    name = "stand-in"

    def __init__(self, special_tokens: Sequence[str], special: Sequence[str] | None = None) -> None:
        tokens = list(dict.fromkeys(t for t in special_tokens if t))
        self.vocab = {t: FIRST_SPECIAL_ID + i for i, t in enumerate(tokens)}
        self._by_id = {i: t for t, i in self.vocab.items()}
        ordered = sorted(tokens, key=len, reverse=True)
        self._split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")").split if ordered else None
        marked = tokens if special is None else [t for t in tokens if t in set(special)]
        self.all_special_tokens = marked
        self.all_special_ids = [self.vocab[t] for t in marked]
        self.eos_token, self.eos_token_id = None, None

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab) + 2

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        if not text:
            return []
        if self._split is None:
            return [TEXT_ID]
        vocab = self.vocab
        return [vocab.get(piece, TEXT_ID) for piece in self._split(text) if piece]

    def decode(self, ids: Sequence[int], **_: Any) -> str:
        return "".join(self._by_id.get(i, "") for i in ids)

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self.vocab.get(tokens)
        return [self.vocab.get(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any:
        if isinstance(ids, int):
            return self._by_id.get(ids, "")
        return [self._by_id.get(i, "") for i in ids]

    def tokenize(self, text: str, **_: Any) -> list[str]:
        return [self._by_id.get(i, "") for i in self.encode(text)]


class RealTokenizer:
    """A :class:`callscale.tokenizers.ModelTokenizer` with the methods vLLM's parsers call on a
    Hugging Face tokenizer (``get_vocab``, ``encode``, ``decode``, ``convert_tokens_to_ids``,
    ``convert_ids_to_tokens``, ``tokenize``, ``all_special_tokens``, ``all_special_ids``).

    ``all_special_tokens`` is what transformers reports for the same files
    (:attr:`callscale.tokenizers.ModelTokenizer.all_special_tokens`); ``decode(ids,
    skip_special_tokens=True)`` drops every token the vocabulary flags special, as
    transformers' fast tokenizer does."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name
        # as transformers reports them for the same files (vLLM loads through transformers): DeepSeek's
        # tokenizer.json flags 1,230 added tokens special, transformers lists 2
        self.all_special_tokens = model.all_special_tokens
        self.all_special_ids = [model.added[t] for t in self.all_special_tokens if t in model.added]
        self._by_id = {i: t for t, i in model.added.items()}
        self.eos_token, self.eos_token_id = None, None

    @property
    def vocab(self) -> dict[str, int]:
        return self.model.vocab

    def get_vocab(self) -> dict[str, int]:
        """The vocabulary, the same dict each call (as vLLM's cached tokenizer returns it; do not change it)."""
        return self.model.vocab

    def __len__(self) -> int:
        return self.model.vocab_size

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        return self.model.encode(text) if text else []

    def decode(self, ids: Any, skip_special_tokens: bool = False, **_: Any) -> str:
        ids = [ids] if isinstance(ids, int) else list(ids)
        if skip_special_tokens:
            special = self.model.special_ids
            ids = [i for i in ids if i not in special]
        return self.model.decode(ids)

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self.model.added.get(tokens, self.model.vocab.get(tokens))
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any:
        if isinstance(ids, int):
            return self._by_id.get(ids) or self.model.token_string(ids)
        return [self.convert_ids_to_tokens(i) for i in ids]

    def tokenize(self, text: str, **_: Any) -> list[str]:
        return self.convert_ids_to_tokens(self.encode(text))


def tokenizer_for(fmt: str) -> Any:
    """The tokenizer vLLM's parsers get for ``fmt``: the real one where installed, else the stand-in
    (see the module docstring); ``.name`` says which."""
    from callscale import tokenizers
    from callscale.workloads import render

    model = tokenizers.get(fmt)
    if model is not None:
        return RealTokenizer(model)
    return SpecialTokenizer(render.get(fmt).special_tokens, tokenizers.MODEL_SPECIAL.get(fmt))


def delta_ids(tokenizer: Any, delta: str) -> list[int]:
    """The token ids of ``delta``: those it carries (a ``model`` chunking's :class:`~callscale.tokenizers.Piece`,
    when ``tokenizer`` is the real one), else ``tokenizer.encode(delta)``."""
    ids = getattr(delta, "token_ids", None)
    if ids is not None and isinstance(tokenizer, RealTokenizer):
        return list(ids)
    return tokenizer.encode(delta)


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _result(content: Any, calls: list) -> Any:
    from callscale.parsers.base import StreamingParseResult

    return StreamingParseResult(normal_text=content or "", calls=calls)


def delta_result(message: Any) -> Any:
    """A vLLM ``DeltaMessage`` (or ``None``) as callscale's ``StreamingParseResult``."""
    from callscale.parsers.base import ToolCallItem

    if message is None:
        return _result("", [])
    calls = []
    for tc in _field(message, "tool_calls") or ():
        fn = _field(tc, "function")
        calls.append(ToolCallItem(tool_index=_field(tc, "index"), name=_field(fn, "name") if fn is not None else None,
                                  parameters=(_field(fn, "arguments") if fn is not None else None) or ""))
    return _result(_field(message, "content"), calls)


def remaining_arguments(parser: Any) -> str:
    """The last call's parsed arguments not yet streamed, as vLLM's serving layer back-fills them.

    The parser's ``get_remaining_unstreamed_args()`` where it has one (vLLM
    0.2x and later); before that vLLM's ``serving_chat`` computed the same
    from ``prev_tool_call_arr`` and ``streamed_args_for_tool``.
    """
    method = getattr(parser, "get_remaining_unstreamed_args", None)
    if callable(method):
        return method() or ""
    calls = getattr(parser, "prev_tool_call_arr", None) or []
    if not calls:
        return ""
    index = len(calls) - 1
    args = calls[index].get("arguments", {})
    expected = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    streamed = getattr(parser, "streamed_args_for_tool", None) or []
    actual = streamed[index] if index < len(streamed) else ""
    return expected[len(actual):] if expected.startswith(actual) else ""


class VllmAdapter:
    """One stream of a vLLM tool parser, in callscale's contract (see the module docstring)."""

    engine_class: Any = None
    tool_model: Any = None
    request_model: Any = None
    tokenizer: SpecialTokenizer | None = None
    takes_tools: bool = True

    def __init__(self) -> None:
        self.inner: Any = None
        self._tools = ToolConverter(self.tool_model)
        self._request: Any = None
        self._request_source: Any = None
        self.previous_text = ""
        self.previous_token_ids: list[int] = []
        self._held: Any = None
        self._engine_based = False
        self._finished = False

    def _setup(self, tools: Sequence[Any] | None) -> Any:
        """The request for ``tools`` (made once per list) and, on first use, the parser built with them."""
        if self._request is not None and tools is self._request_source:
            return self._request
        request = None
        if self.request_model is not None:
            try:
                # the tools as ChatCompletionToolsParam, as pydantic makes them: a stand-in request of a checkout
                # (callscale.checkout.Record) keeps what it is given, and vLLM's find_tool_properties reads only
                # the tools that are instances of that class (a plain record is no tool to it: no schema types)
                request = to_model(self.request_model, {
                    "model": "callscale", "messages": [{"role": "user", "content": "callscale"}],
                    "tools": self._tools(tools) or None if tools else None,
                    "tool_choice": "auto",
                })
            except Exception:
                request = None
        if request is None:
            request = SimpleNamespace(tools=self._tools(tools) or None, tool_choice="auto", parallel_tool_calls=True,
                                      include_reasoning=True, skip_special_tokens=True, messages=[],
                                      structured_outputs=None, response_format=None)
        self._request, self._request_source = request, tools
        if self.inner is None:
            engine_tools = list(request.tools or [])
            self.inner = self.engine_class(self.tokenizer, engine_tools) if self.takes_tools \
                else self.engine_class(self.tokenizer)
            if hasattr(self.inner, "skip_reasoning_parsing"):  # vLLM does so with no reasoning parser
                self.inner.skip_reasoning_parsing = True
            self._engine_based = bool(getattr(self.inner, "engine_based_streaming", False))
        return request

    def parse_streaming_increment(self, delta: str, tools: Sequence[Any]) -> Any:
        request = self._setup(tools)
        ids = delta_ids(self.tokenizer, delta)
        if self._engine_based:
            previous_text, previous_ids, current_text, current_ids = "", [], delta, ids
        else:
            previous_text, previous_ids = self.previous_text, self.previous_token_ids
            current_text, current_ids = previous_text + delta, previous_ids + ids
        message = self.inner.extract_tool_calls_streaming(previous_text, current_text, str(delta), previous_ids,
                                                          current_ids, ids, request)
        if not self._engine_based:
            self.previous_text, self.previous_token_ids = current_text, current_ids
        held, self._held = self._held, message
        return delta_result(held)

    def finish(self, tools: Sequence[Any]) -> Any:
        """The last delta's message with vLLM's end-of-stream back-fill and flush (see the module docstring)."""
        if self.inner is None or self._finished:  # vLLM finalizes a stream once
            return _result("", [])
        self._finished = True
        message, self._held = self._held, None
        calls = _field(message, "tool_calls") if message is not None else None
        if calls and _field(calls[-1], "function") is not None:
            fn = _field(calls[-1], "function")
            arguments = (_field(fn, "arguments") or "") + remaining_arguments(self.inner)
            if isinstance(fn, dict):
                fn["arguments"] = arguments
            else:
                fn.arguments = arguments
        flush = getattr(self.inner, "finish_streaming", None)
        if self._engine_based and callable(flush):
            extra = flush()
            if extra is not None:
                if message is None:
                    message = extra
                else:
                    first, second = delta_result(message), delta_result(extra)
                    first.normal_text += second.normal_text
                    first.calls += second.calls
                    return first
        return delta_result(message)

    def detect_and_parse(self, text: str, tools: Sequence[Any]) -> Any:
        """``extract_tool_calls(text, request)`` as callscale's result (content ``""`` where vLLM gives ``None``)."""
        from callscale.parsers.base import ToolCallItem

        request = self._setup(tools)
        info = self.inner.extract_tool_calls(text, request)
        calls = [ToolCallItem(tool_index=i, name=_field(_field(tc, "function"), "name"),
                              parameters=_field(_field(tc, "function"), "arguments") or "")
                 for i, tc in enumerate(_field(info, "tool_calls") or [])]
        return _result(_field(info, "content"), calls)


#: ``module:Class`` of a vLLM ``Parser`` -> the (tool parser, reasoning parser) classes vLLM's
#: ``ParserManager`` composes it with (vLLM 0.33 ``parser/parser_manager.py``: gpt-oss is served with
#: ``--tool-call-parser openai --reasoning-parser openai_gptoss``).
PARSER_PARTS: dict[str, tuple[str, str | None]] = {
    "vllm.parser.harmony:HarmonyParser": ("vllm.tool_parsers.gptoss_tool_parser:GptOssToolParser",
                                          "vllm.reasoning.gptoss_reasoning_parser:GptOssReasoningParser"),
}


def _load(target: str) -> Any:
    import importlib

    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


class VllmParserAdapter(VllmAdapter):
    """One stream of a vLLM ``Parser`` (``parse_delta``), in callscale's contract (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: tuple[str, list[int]] | None = None

    def _setup(self, tools: Sequence[Any] | None) -> Any:
        if self._request is not None and tools is self._request_source:
            return self._request
        built = self.inner is None
        if built:
            self.inner = object()  # the base class builds a ToolParser; ours is built below
        request = super()._setup(tools)
        if built:
            self.inner = self.engine_class(self.tokenizer, list(request.tools or []))
        return request

    def _send(self, delta: str, ids: list[int], request: Any, finished: bool) -> Any:
        message = self.inner.parse_delta(delta, ids, request, finished=finished)
        result = delta_result(message)
        reasoning = _field(message, "reasoning") if message is not None else None
        if reasoning:
            result.reasoning_text = reasoning
        return result

    def parse_streaming_increment(self, delta: str, tools: Sequence[Any]) -> Any:
        request = self._setup(tools)
        pending, self._pending = self._pending, (str(delta), delta_ids(self.tokenizer, delta))
        if pending is None:
            return _result("", [])
        return self._send(*pending, request, False)

    def finish(self, tools: Sequence[Any]) -> Any:
        if self.inner is None or self._finished:
            return _result("", [])
        self._finished = True
        pending, self._pending = self._pending, None
        return self._send(*(pending or ("", [])), self._request, True)

    def detect_and_parse(self, text: str, tools: Sequence[Any]) -> Any:
        from callscale.parsers.base import ToolCallItem

        request = self._setup(tools)
        reasoning, content, calls = self.inner.parse(text, request, enable_auto_tools=True,
                                                     model_output_token_ids=self.tokenizer.encode(text))
        items = [ToolCallItem(tool_index=i, name=_field(c, "name"), parameters=_field(c, "arguments") or "")
                 for i, c in enumerate(calls or [])]
        result = _result(content, items)
        result.reasoning_text = reasoning or ""
        return result


def _parser_class(cls: Any) -> Any:
    """``cls`` with the tool and reasoning parser classes vLLM composes it with, where it lacks them."""
    parts = PARSER_PARTS.get(f"{cls.__module__}:{cls.__name__}")
    if parts is None or getattr(cls, "tool_parser_cls", None) is not None:
        return cls
    tool, reasoning = parts
    attrs = {"tool_parser_cls": _load(tool)}
    if reasoning is not None:
        attrs["reasoning_parser_cls"] = _load(reasoning)
    return type(cls.__name__, (cls,), attrs)


def _takes_tools(cls: Any) -> bool:
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def factory(cls: Any, fmt: str) -> Callable[[], Any]:
    """A factory of callscale-protocol parsers around the vLLM tool-parser class ``cls``.

    Raises :class:`~callscale.adapters.AdapterError` when ``cls`` lacks
    ``extract_tool_calls_streaming``.
    """
    from .protocol import AdapterError

    # a Parser (vLLM's DelegatingParser also has extract_tool_calls_streaming, which its serving layer
    # does not call: parse_delta is what it drives)
    is_parser = callable(getattr(cls, "parse_delta", None))
    if not is_parser and not callable(getattr(cls, "extract_tool_calls_streaming", None)):
        raise AdapterError(f"{getattr(cls, '__name__', cls)!s} has no extract_tool_calls_streaming() or parse_delta(): "
                           "not a vllm tool parser")
    if is_parser:
        engine_class = _parser_class(cls)
        return type(f"vllm:{cls.__name__}", (VllmParserAdapter,), {
            "engine_class": engine_class,
            "tool_model": find_class(cls, ("ChatCompletionToolsParam",), PROTOCOL_MODULES),
            "request_model": find_class(cls, ("ChatCompletionRequest",), PROTOCOL_MODULES),
            "tokenizer": tokenizer_for(fmt),
            "__doc__": f"{cls.__module__}.{cls.__name__} (vllm Parser) in callscale's contract.",
        })
    attrs = {
        "engine_class": cls,
        "tool_model": find_class(cls, ("ChatCompletionToolsParam",), PROTOCOL_MODULES),
        "request_model": find_class(cls, ("ChatCompletionRequest",), PROTOCOL_MODULES),
        "tokenizer": tokenizer_for(fmt),
        "takes_tools": _takes_tools(cls),
        "__doc__": f"{cls.__module__}.{cls.__name__} (vllm) in callscale's contract.",
    }
    return type(f"vllm:{cls.__name__}", (VllmAdapter,), attrs)
