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

The tokenizer is a stand-in (:class:`SpecialTokenizer`): its vocabulary is
the format's special tokens (``callscale.workloads.render.get(fmt).special_tokens``),
each one id; any other run of text in a delta is one more id. vLLM parsers
look their markers up in ``get_vocab()`` and test ids in the token-id lists,
which this reproduces; they do not read the ids of plain text.
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
    """A tokenizer stand-in whose vocabulary is a format's special tokens.

    ``get_vocab()`` -> ``{token: id}``; ``encode(text)`` -> ids, one per
    special token and one (:data:`TEXT_ID`) per run of other text;
    ``decode(ids)`` inverts it for special tokens. Cost of ``encode``: linear
    in the text.
    """

    def __init__(self, special_tokens: Sequence[str]) -> None:
        tokens = list(dict.fromkeys(t for t in special_tokens if t))
        self.vocab = {t: FIRST_SPECIAL_ID + i for i, t in enumerate(tokens)}
        self._by_id = {i: t for t, i in self.vocab.items()}
        ordered = sorted(tokens, key=len, reverse=True)
        self._split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")").split if ordered else None
        self.all_special_tokens = tokens
        self.all_special_ids = list(self.vocab.values())
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
                request = to_model(self.request_model, {
                    "model": "callscale", "messages": [{"role": "user", "content": "callscale"}],
                    "tools": list(tools) or None if tools else None,
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
        delta_ids = self.tokenizer.encode(delta)
        if self._engine_based:
            previous_text, previous_ids, current_text, current_ids = "", [], delta, delta_ids
        else:
            previous_text, previous_ids = self.previous_text, self.previous_token_ids
            current_text, current_ids = previous_text + delta, previous_ids + delta_ids
        message = self.inner.extract_tool_calls_streaming(previous_text, current_text, delta, previous_ids,
                                                          current_ids, delta_ids, request)
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
    from callscale.workloads import render

    from . import AdapterError

    if not callable(getattr(cls, "extract_tool_calls_streaming", None)):
        raise AdapterError(f"{getattr(cls, '__name__', cls)!s} has no extract_tool_calls_streaming(): "
                           "not a vllm tool parser")
    attrs = {
        "engine_class": cls,
        "tool_model": find_class(cls, ("ChatCompletionToolsParam",), PROTOCOL_MODULES),
        "request_model": find_class(cls, ("ChatCompletionRequest",), PROTOCOL_MODULES),
        "tokenizer": SpecialTokenizer(render.get(fmt).special_tokens),
        "takes_tools": _takes_tools(cls),
        "__doc__": f"{cls.__module__}.{cls.__name__} (vllm) in callscale's contract.",
    }
    return type(f"vllm:{cls.__name__}", (VllmAdapter,), attrs)
