"""The differential checker: stream a text under a chunking, compare with the whole-text parse.

Works with any parser that speaks the protocol (ours or a user's): results
need ``normal_text`` and ``calls``, call items ``tool_index``, ``name`` and
``parameters`` (attributes or dict keys).

An :class:`Outcome` is what a client would end up with: the concatenated
content and the assembled calls ``(name, arguments)``, where ``arguments``
is the parsed JSON object, or ``None`` when the assembled arguments are not
a JSON object (a call the parser abandoned).

:func:`run_check` is the differential checker behind ``callscale check``:
every item (a shared fault case, or a workload case) streamed under many
chunkings through fresh parsers, compared with the expected outcome and with
``detect_and_parse`` of the whole text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

__all__ = ["Outcome", "StreamedCall", "stream", "whole", "assemble", "compare", "outcome_of", "ProtocolError",
           "CheckItem", "CheckResult", "run_check", "fault_items", "workload_items", "MALFORMED_WORKLOADS"]


class ProtocolError(AssertionError):
    """A streamed result broke the contract (a name sent twice, an index out of order, ...)."""


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


@dataclass
class StreamedCall:
    """One call as a client assembles it: the name and the arguments JSON text."""

    name: str | None
    arguments_text: str = ""

    def arguments(self) -> Any:
        """The arguments as a JSON object (dict), or ``None`` when they are not one."""
        try:
            value = json.loads(self.arguments_text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than json can read
            return None
        return value if isinstance(value, dict) else None


@dataclass
class Outcome:
    """What a client gets: ``content`` (characters) and ``calls`` in index order."""

    content: str = ""
    calls: list[StreamedCall] = field(default_factory=list)
    reasoning: str = ""  # the concatenated ``reasoning_text`` (empty for formats without it)

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
        content.append(_get(result, "normal_text", "") or "")
        reasoning.append(_get(result, "reasoning_text", "") or "")
        for item in _get(result, "calls", None) or ():
            index = _get(item, "tool_index")
            name = _get(item, "name")
            params = _get(item, "parameters", "") or ""
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
            if not isinstance(params, str):  # some parsers send a dict
                params = json.dumps(params, ensure_ascii=False)
            pieces[index].append(params)
    for index, call in calls.items():
        call.arguments_text = "".join(pieces[index])
    return Outcome("".join(content), [calls[i] for i in sorted(calls)], "".join(reasoning))


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
        if strict and (_get(again, "normal_text") or _get(again, "calls")):
            raise ProtocolError(f"a second finish() returned {again!r}")
    return assemble(results, strict=strict)


def whole(parser: Any, text: str, tools: Sequence[Any] = ()) -> Outcome:
    """``detect_and_parse`` of the whole text, as an :class:`Outcome`."""
    return assemble([parser.detect_and_parse(text, list(tools))], strict=True)


def compare(streamed: Outcome, expected: Outcome, strip_content: bool = False) -> list[str]:
    """Differences between two outcomes, as sentences (empty when they agree).

    Content must be equal (after stripping outer whitespace when
    ``strip_content``), reasoning equal; complete calls must agree in order, name and
    arguments (as JSON). Abandoned calls (arguments not a JSON object) are
    left out of the comparison.
    """
    problems = []
    a, b = streamed.content, expected.content
    if strip_content:
        a, b = a.strip(), b.strip()
    if a != b:
        problems.append(f"content differs: {_short(a)} != {_short(b)}")
    if streamed.reasoning != expected.reasoning:
        problems.append(f"reasoning differs: {_short(streamed.reasoning)} != {_short(expected.reasoning)}")
    got, want = streamed.complete_calls(), expected.complete_calls()
    if len(got) != len(want):
        problems.append(f"{len(got)} calls != {len(want)}: {_short(got)} vs {_short(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            problems.append(f"call {i} differs: {_short(g)} != {_short(w)}")
    return problems


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:]


def outcome_of(content: str, calls: Iterable[tuple[str, dict]], reasoning: str = "") -> Outcome:
    """An :class:`Outcome` from expected values: ``calls`` as ``(name, arguments dict)``."""
    return Outcome(content, [StreamedCall(n, json.dumps(a, ensure_ascii=False)) for n, a in calls], reasoning)


# ---------------------------------------------------------------------------- the check run
@dataclass
class CheckItem:
    """One text to check: ``label`` (a fault case id or ``workload@length``), the text, the tools,
    the expected :class:`Outcome` (or ``None``: only streamed == whole is checked), the split that
    triggered a known fault (``own_deltas``), whether content is compared after stripping outer
    whitespace, whether the text is well-formed (then no call may be abandoned), and the special
    tokens a ``tokens:K`` chunking keeps whole."""

    label: str
    text: str
    tools: list = field(default_factory=list)
    expected: Outcome | None = None
    own_deltas: list[str] | None = None
    strip_content: bool = True
    well_formed: bool = True
    special_tokens: tuple[str, ...] = ()


@dataclass
class CheckResult:
    """What :func:`run_check` found for one parser: ``streams`` run and the ``failures``
    as ``(label, chunking, problem)``."""

    parser: str
    items: int = 0
    streams: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def run_check(name: str, factory: Callable[[], Any], items: Iterable[CheckItem],
              chunkings: Sequence[str]) -> CheckResult:
    """Stream every item under every chunking through fresh parsers; compare with the expected
    outcome and with ``detect_and_parse`` of the whole text (when the parser has it).

    Never raises for a parser's fault: an exception or a protocol break is a failure.
    """
    from workloads.chunking import chunk

    result = CheckResult(name)
    for item in items:
        result.items += 1
        whole_outcome = None
        if hasattr(factory(), "detect_and_parse"):
            try:
                whole_outcome = whole(factory(), item.text, item.tools)
            except Exception as exc:
                result.failures.append((item.label, "detect_and_parse", f"{type(exc).__name__}: {exc}"))
            if whole_outcome is not None and item.expected is not None:
                for problem in compare(whole_outcome, item.expected, strip_content=item.strip_content):
                    result.failures.append((item.label, "detect_and_parse", problem))
        splits = [(spec, None) for spec in chunkings]
        if item.own_deltas is not None:
            splits.append(("own deltas", item.own_deltas))
        for spec, deltas in splits:
            result.streams += 1
            try:
                if deltas is None:
                    deltas = chunk(item.text, spec, item.special_tokens)
                got = stream(factory(), deltas, item.tools, strict=True)
            except Exception as exc:
                result.failures.append((item.label, spec, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
                continue
            problems = []
            if item.expected is not None:
                problems += compare(got, item.expected, strip_content=item.strip_content)
                if item.well_formed and not problems and len(got.calls) != len(item.expected.calls):
                    problems.append(f"{len(got.calls) - len(item.expected.calls)} abandoned call(s) "
                                    f"in well-formed output")
            if whole_outcome is not None:
                problems += [f"streamed vs detect_and_parse: {p}" for p in
                             compare(got, whole_outcome, strip_content=False)]
            result.failures.extend((item.label, spec, p) for p in problems)
    return result


def fault_items(fmt: str) -> list[CheckItem]:
    """The shared fault cases of format ``fmt`` as check items, each with its own ``tools`` (default ``[]``)."""
    from workloads import faults

    items = []
    for case in faults.load(fmt):
        exp = case["expected"]
        items.append(CheckItem(
            label=case["id"], text=case["text"], tools=list(case["tools"]),
            expected=outcome_of(exp["content"], [(c["name"], c["arguments"]) for c in exp["calls"]]),
            own_deltas=list(case["deltas"]), strip_content=not case.get("strict_content", False),
        ))
    return items


#: Workloads whose output is not well-formed (a call may be abandoned there).
MALFORMED_WORKLOADS = ("unclosed_call", "repeated_opener")


def workload_items(fmt: str, workloads: Sequence[str], lengths: Sequence[int], seed: int = 0) -> list[CheckItem]:
    """Cases of the catalog's workloads in format ``fmt`` as check items."""
    from workloads import catalog

    items = []
    for workload in workloads:
        for length in lengths:
            case = catalog.make(workload, fmt, length, seed)
            items.append(CheckItem(
                label=f"{workload}@{length}", text=case.text, tools=list(case.tools),
                expected=outcome_of(case.content, [(c.name, dict(c.arguments)) for c in case.calls]),
                well_formed=workload not in MALFORMED_WORKLOADS, special_tokens=tuple(case.special_tokens),
            ))
    return items
