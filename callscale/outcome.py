"""What a client ends up with from a parser's results, and how two such outcomes differ.

An :class:`Outcome` is the concatenated content and the assembled calls ``(name, arguments)``, where ``arguments``
is the parsed JSON object, or ``None`` when the assembled arguments are not a strict-JSON object (a call the parser
abandoned, or wrote with ``NaN``). :func:`stream` drives a parser through deltas and assembles its results,
:func:`whole` reads ``detect_and_parse``; results need ``normal_text`` and ``calls``, call items ``tool_index``,
``name`` and ``parameters`` (attributes or dict keys; :func:`result_shape` states the shape, and a result of another
shape is a :class:`ResultShapeError` whose one line names the field and the type it got). :func:`differences`
compares two outcomes and classifies each difference by kind (:data:`KINDS`).

It depends on the parsers' JSON reader alone, so the workload generators (a team's records checked by our parser)
and the checker (:mod:`callscale.check`) both build on it.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from callscale.parsers.jsonscan import strict_loads
from callscale.streaming import field_of

__all__ = ["ProtocolError", "ResultShapeError", "result_shape", "StreamedCall", "Outcome", "assemble", "stream",
           "whole", "Difference", "differences", "compare", "outcome_of", "KINDS"]


class ProtocolError(AssertionError):
    """A streamed result broke the contract (a name sent twice, an index out of order, ...)."""


class ResultShapeError(ProtocolError):
    """A result of the wrong shape; the message names the field and the type it got (:func:`result_shape`)."""


_ITEM = ("a call item (tool_index: int, name: str | None, parameters: str, as attributes or dict keys: "
         "callscale.parsers.base.ToolCallItem)")


def _type(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def result_shape(result: Any, streaming: bool = True) -> str | None:
    """``None`` when ``result`` has the shape the checker reads, else one line naming the field and its type.

    The shape (README "Plug in your parser: the contract"): ``None`` (nothing), or an object or
    dict with ``normal_text`` (``str``/``None``) and ``calls`` (a list of call
    items: ``tool_index`` an ``int``, read only when ``streaming``; ``name`` a
    ``str`` or ``None``; ``parameters`` a ``str``, a dict or ``None``), optionally
    ``reasoning_text`` (``str``/``None``). :class:`callscale.parsers.base.StreamingParseResult`
    and :class:`callscale.parsers.base.ToolCallItem` are such classes.
    """
    if result is None:
        return None
    if not isinstance(result, dict) and not (hasattr(result, "normal_text") or hasattr(result, "calls")):
        return (f"result is {_type(result)}, not a result with normal_text and calls "
                f"(callscale.parsers.base.StreamingParseResult)")
    for key in ("normal_text", "reasoning_text"):
        value = field_of(result, key)
        if value is not None and not isinstance(value, str):
            return f"result.{key} is {_type(value)}, not str"
    calls = field_of(result, "calls")
    if calls is None:
        return None
    if not isinstance(calls, (list, tuple)):
        return f"result.calls is {_type(calls)}, not a list of call items"
    for i, item in enumerate(calls):
        where = f"result.calls[{i}]"
        if isinstance(item, (tuple, list, str, bytes, int, float)) or item is None:
            return f"{where} is {_type(item)}, not {_ITEM}"
        if not isinstance(item, dict) and not any(hasattr(item, k) for k in ("tool_index", "name", "parameters")):
            return f"{where} is {_type(item)} with none of tool_index, name, parameters: not {_ITEM}"
        if streaming:
            index = field_of(item, "tool_index")
            if not isinstance(index, int) or isinstance(index, bool):
                return f"{where}.tool_index is {_type(index)}, not int"
        name = field_of(item, "name")
        if name is not None and not isinstance(name, str):
            return f"{where}.name is {_type(name)}, not str or None"
        params = field_of(item, "parameters")
        if params is not None and not isinstance(params, (str, dict)):
            return f"{where}.parameters is {_type(params)}, not str (the arguments JSON text)"
    return None


def _shaped(result: Any, streaming: bool) -> Any:
    problem = result_shape(result, streaming)
    if problem is not None:
        raise ResultShapeError(problem)
    return result


@dataclass
class StreamedCall:
    """One call as a client assembles it: the name and the arguments JSON text."""

    name: str | None
    arguments_text: str = ""

    def arguments(self) -> Any:
        """The arguments as a JSON object (dict), or ``None`` when they are not one.

        Strict JSON (RFC 8259): ``NaN``, ``Infinity`` and ``-Infinity``, which
        Python's ``json`` reads by default, make the arguments malformed.
        """
        try:
            value = strict_loads(self.arguments_text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than json can read
            return None
        return value if isinstance(value, dict) else None


@dataclass
class Outcome:
    """What a client gets: ``content`` (characters), ``calls`` in index order, and
    ``reasoning`` (the concatenated ``reasoning_text``; empty for formats without it)."""

    content: str = ""
    calls: list[StreamedCall] = field(default_factory=list)
    reasoning: str = ""

    def complete_calls(self) -> list[tuple[str | None, dict]]:
        """``(name, arguments)`` of the calls whose arguments are a JSON object."""
        out = []
        for call in self.calls:
            args = call.arguments()
            if args is not None:
                out.append((call.name, args))
        return out


def assemble(results: Iterable[Any], strict: bool = True) -> Outcome:
    """Assemble a sequence of parser results into an :class:`Outcome`.

    With ``strict``, raises :class:`ProtocolError` when a name is sent twice
    for one index, when a new index skips a number, or when arguments arrive
    for an index that has no name yet.
    """
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, StreamedCall] = {}
    pieces: dict[int, list[str]] = {}
    for result in results:
        if strict:
            _shaped(result, streaming=True)
        content.append(field_of(result, "normal_text", "") or "")
        reasoning.append(field_of(result, "reasoning_text", "") or "")
        for item in field_of(result, "calls", None) or ():
            index = field_of(item, "tool_index")
            name = field_of(item, "name")
            params = _parameters(item)
            if index not in calls:
                if strict and index != len(calls):
                    raise ProtocolError(f"tool_index {index} after {len(calls)} calls: indices must be 0, 1, 2, ...")
                if strict and name is None:
                    raise ProtocolError(f"arguments for tool_index {index} before its name")
                calls[index] = StreamedCall(name)
                pieces[index] = []
            elif name is not None:
                if strict:
                    raise ProtocolError(f"name sent twice for tool_index {index}: {calls[index].name!r}, {name!r}")
            pieces[index].append(params)
    for index, call in calls.items():
        call.arguments_text = "".join(pieces[index])
    return Outcome("".join(content), [calls[i] for i in sorted(calls)], "".join(reasoning))


def _parameters(item: Any) -> str:
    params = field_of(item, "parameters", "") or ""
    if not isinstance(params, str):  # some parsers send a dict
        params = json.dumps(params, ensure_ascii=False)
    return params


def stream(parser: Any, deltas: Sequence[str], tools: Sequence[Any] = (), strict: bool = True) -> Outcome:
    """Stream ``deltas`` through ``parser`` (fresh), call ``finish`` twice, assemble.

    A second ``finish`` that returns anything is a :class:`ProtocolError`
    (with ``strict``); parsers without ``finish`` are streamed without it.
    """
    tools = list(tools)
    results = [parser.parse_streaming_increment(delta, tools) for delta in deltas]
    fin = getattr(parser, "finish", None)
    if fin is not None:
        results.append(fin(tools))
        again = fin(tools)
        if strict and (field_of(again, "normal_text") or field_of(again, "calls")):
            raise ProtocolError(f"a second finish() returned {again!r}")
    return assemble(results, strict=strict)


def whole(parser: Any, text: str, tools: Sequence[Any] = ()) -> Outcome:
    """``detect_and_parse`` of the whole text, as an :class:`Outcome`.

    Each call item is one whole call, in order; ``tool_index`` is not read
    (the streaming rule "indices 0, 1, 2" does not apply here: TensorRT-LLM
    leaves -1, SGLang gives the tool's position in the request's tool list).
    An item without a name continues the call before it.
    """
    result = _shaped(parser.detect_and_parse(text, list(tools)), streaming=False)
    calls: list[StreamedCall] = []
    for item in field_of(result, "calls", None) or ():
        name, params = field_of(item, "name"), _parameters(item)
        if name is None and calls:
            calls[-1].arguments_text += params
        else:
            calls.append(StreamedCall(name, params))
    return Outcome(field_of(result, "normal_text", "") or "", calls, field_of(result, "reasoning_text", "") or "")


#: The kinds of difference :func:`differences` reports, in the order ``callscale check`` lists them,
#: each with what it means.
KINDS: dict[str, str] = {
    "exception": "the parser raised",
    "timeout": "the parser took longer than the case's time limit",
    "protocol": "the stream broke the protocol: an index out of order, a name sent twice, "
                "arguments before the name, output from a second finish()",
    "dropped call": "an expected call is missing",
    "duplicated call": "a call arrives twice",
    "extra call": "a call that was not expected (not a duplicate)",
    "wrong order": "the expected calls in another order",
    "wrong name": "a call in the expected place has another name",
    "lost arguments": "a call's arguments miss keys or characters, or never form a JSON object",
    "non-strict JSON": "a call's arguments hold NaN or Infinity, which strict JSON does not allow: the call is malformed",
    "wrong arguments": "a call's arguments differ otherwise (another value or type)",
    "abandoned call": "a call started (its name sent) in well-formed output and never completed",
    "markup in content": "content holds text the expected content does not (markup or call text)",
    "content lost": "content misses text of the expected content",
    "content differs": "content both misses expected text and holds other text",
    "whitespace": "content differs only in whitespace inside it (outer whitespace follows the case's strip rule)",
    "reasoning differs": "the reasoning text (``reasoning_text``) differs",
}


@dataclass(frozen=True)
class Difference:
    """One difference between two outcomes: ``kind`` (a key of :data:`KINDS`) and a sentence."""

    kind: str
    detail: str


def differences(got: Outcome, want: Outcome, strip_content: bool = False,
                abandoned_ok: bool = True) -> list[Difference]:
    """How ``got`` differs from ``want``, classified by kind (empty when they agree).

    Content must be equal (after stripping outer whitespace when
    ``strip_content``), reasoning equal. Complete calls are matched in order by name
    (:class:`difflib.SequenceMatcher`); matched calls must have the same
    arguments (JSON values: a boolean is not a number, ``5`` equals ``5.0``).
    A call of ``want`` with no complete counterpart is ``lost arguments``
    (or ``non-strict JSON``) when ``got`` has an abandoned call of that name
    left, else ``dropped call``. Abandoned calls left over in ``got`` are
    ``abandoned call`` unless ``abandoned_ok``; abandoned calls of ``want``
    are not compared.
    """
    out = _content_differences(got.content, want.content, strip_content)
    if got.reasoning != want.reasoning:
        out.append(Difference("reasoning differs", _where(got.reasoning, want.reasoning, "reasoning")))
    gc, wc = got.complete_calls(), want.complete_calls()
    spare = [c for c in got.calls if c.arguments() is None]  # abandoned: name sent, no JSON object
    aligned = list(_align(gc, wc))
    extra = [gi for gi, wi in aligned if wi is None]
    moved = {}  # a call of want that got has elsewhere: want index -> got index
    for wi in (wi for gi, wi in aligned if gi is None):
        gi = next((g for g in extra if g not in moved.values() and gc[g][0] == wc[wi][0]
                   and _same(gc[g][1], wc[wi][1])), None)
        if gi is not None:
            moved[wi] = gi
    for gi, wi in aligned:
        if gi is not None and wi is not None:
            (gn, ga), (wn, wa) = gc[gi], wc[wi]
            if gn != wn:
                out.append(Difference("wrong name", f"call {wi}: name {gn!r} != {wn!r}"))
            elif not _same(ga, wa):
                kind = "lost arguments" if _within(ga, wa) else "wrong arguments"
                out.append(Difference(kind, f"call {wi} {wn!r}: {_where(ga, wa)}"))
        elif gi is not None:
            if gi in moved.values():
                continue
            name, args = gc[gi]
            twin = any(n == name and _same(a, args) for i, (n, a) in enumerate(gc) if i != gi)
            out.append(Difference("duplicated call" if twin else "extra call",
                                  f"call {name!r} {_json(args)} not expected"))
        elif wi in moved:
            out.append(Difference("wrong order", f"call {wi} {wc[wi][0]!r} arrived as call {moved[wi]}"))
        else:
            name, args = wc[wi]
            stub = next((c for c in spare if c.name == name), None)
            if stub is None:
                out.append(Difference("dropped call", f"call {wi} {name!r} {_json(args)} missing"))
                continue
            spare.remove(stub)
            kind = "non-strict JSON" if _lax_object(stub.arguments_text) else "lost arguments"
            out.append(Difference(kind, f"call {wi} {name!r}: arguments {_short(stub.arguments_text)} "
                                        f"are no JSON object; expected {_json(args)}"))
    if not abandoned_ok:
        out += [Difference("abandoned call", f"call {c.name!r} abandoned after {_short(c.arguments_text)}")
                for c in spare]
    return out


def _align(got: list[tuple], want: list[tuple]) -> Iterable[tuple[int | None, int | None]]:
    """Pair the calls of ``got`` and ``want`` in order: equal calls first, then, between them,
    calls of the same name, then the rest position by position; ``None`` where a call has no pair."""
    def key(call: tuple) -> tuple[str | None, str]:
        return call[0], json.dumps(call[1], sort_keys=True)

    def pairs(g: list, w: list, g_at: int, w_at: int, level: int) -> Iterable[tuple[int | None, int | None]]:
        keys = (key, lambda call: call[0])[level]
        matcher = difflib.SequenceMatcher(None, [keys(c) for c in g], [keys(c) for c in w], autojunk=False)
        for op, g0, g1, w0, w1 in matcher.get_opcodes():
            if op == "equal" or (op == "replace" and level == 1):
                n = min(g1 - g0, w1 - w0)
                yield from ((g_at + g0 + i, w_at + w0 + i) for i in range(n))
                yield from ((g_at + i, None) for i in range(g0 + n, g1))
                yield from ((None, w_at + i) for i in range(w0 + n, w1))
            elif level == 0:
                yield from pairs(g[g0:g1], w[w0:w1], g_at + g0, w_at + w0, 1)
            else:
                yield from ((g_at + i, None) for i in range(g0, g1))
                yield from ((None, w_at + i) for i in range(w0, w1))

    return pairs(got, want, 0, 0, 0)


def compare(streamed: Outcome, expected: Outcome, strip_content: bool = False) -> list[str]:
    """Differences between two outcomes, as sentences (empty when they agree); see :func:`differences`.

    Abandoned calls (arguments not a JSON object) with no expected
    counterpart are left out of the comparison.
    """
    return [f"{d.kind}: {d.detail}" for d in differences(streamed, expected, strip_content)]


def _content_differences(a: str, b: str, strip: bool) -> list[Difference]:
    if strip:
        a, b = a.strip(), b.strip()
    if a == b:
        return []
    detail = _where(a, b, "content")
    if "".join(a.split()) == "".join(b.split()):
        return [Difference("whitespace", detail)]
    if _subsequence(b, a):
        return [Difference("markup in content", detail)]
    if _subsequence(a, b):
        return [Difference("content lost", detail)]
    return [Difference("content differs", detail)]


def _subsequence(short: str, long: str) -> bool:
    """Whether ``short`` is ``long`` with characters left out (linear)."""
    rest = iter(long)
    return all(ch in rest for ch in short)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: same JSON types (a boolean is not a number), numbers by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _where(a: Any, b: Any, path: str = "arguments") -> str:
    """Where two JSON values first differ, as a sentence: the path, and both sides from there."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in b:
            if key not in a:
                return f"{path}[{key!r}] missing (expected {_json(b[key])})"
        for key in a:
            if key not in b:
                return f"{path}[{key!r}] not expected ({_json(a[key])})"
        key = next(k for k in b if not _same(a[k], b[k]))
        return _where(a[key], b[key], f"{path}[{key!r}]")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        i = next(i for i, (x, y) in enumerate(zip(a, b)) if not _same(x, y))
        return _where(a[i], b[i], f"{path}[{i}]")
    if isinstance(a, str) and isinstance(b, str):
        i = len(os.path.commonprefix([a, b]))
        start = max(0, i - 20)
        return (f"{path} differs at character {i} of {len(b)}: {a[start:i + 40]!r} != {b[start:i + 40]!r}"
                f" ({len(a)} characters, expected {len(b)})")
    return f"{path}: {_json(a)} != {_json(b)}"


def _json(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:]


def _within(a: Any, b: Any) -> bool:
    """Whether ``a`` is ``b`` with parts left out: keys of an object, characters of a string."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() <= b.keys() and all(_within(a[k], b[k]) for k in a)
    if isinstance(a, str) and isinstance(b, str):
        return _subsequence(a, b)
    return _same(a, b)


def _lax_object(text: str) -> bool:
    """Whether Python's lax ``json`` (which reads NaN and Infinity) takes ``text`` for an object."""
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:]


def outcome_of(content: str, calls: Iterable[tuple[str, dict]], reasoning: str = "") -> Outcome:
    """An :class:`Outcome` from expected values: ``calls`` as ``(name, arguments dict)``."""
    return Outcome(content, [StreamedCall(n, json.dumps(a, ensure_ascii=False)) for n, a in calls], reasoning)


# ---------------------------------------------------------------------------- the check run
