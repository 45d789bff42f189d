"""The differential checker: stream a text under a chunking, compare with the expected result.

Works with any parser that speaks the protocol (ours or a user's): results
need ``normal_text`` and ``calls``, call items ``tool_index``, ``name`` and
``parameters`` (attributes or dict keys); :func:`result_shape` states the
shape, and a result of another shape is a :class:`ResultShapeError` whose one
line names the field and the type it got.

The outcome model (:class:`Outcome`, :func:`stream`, :func:`differences`, ...) is :mod:`callscale.outcome`,
re-exported here. An :class:`Outcome` is what a client would end up with: the concatenated
content and the assembled calls ``(name, arguments)``, where ``arguments``
is the parsed JSON object, or ``None`` when the assembled arguments are not
a strict-JSON object (a call the parser abandoned, or wrote with ``NaN``).
:func:`differences` compares two outcomes and classifies each difference by
kind (:data:`KINDS`).

:func:`run_check` is the differential checker behind ``callscale check``:
every item (a shared fault case, or a workload case) streamed under many
chunkings through fresh parsers and parsed whole with ``detect_and_parse``,
each compared with the expected outcome; a failing stream is one
:class:`Failure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .outcome import (KINDS, Difference, Outcome, ProtocolError, ResultShapeError, StreamedCall, assemble, compare,
                      differences, outcome_of, result_shape, stream, whole)

__all__ = ["Outcome", "StreamedCall", "stream", "whole", "assemble", "compare", "differences", "Difference", "KINDS",
           "outcome_of", "ProtocolError", "ResultShapeError", "result_shape", "CheckItem", "CheckResult", "Failure", "run_check", "fault_items",
           "workload_items", "MALFORMED_WORKLOADS", "run_bounded", "report"]


@dataclass
class CheckItem:
    """One text to check: ``label`` (a fault case id or ``workload@length``), the text, the tools,
    the expected :class:`Outcome` (or ``None``: only streamed == whole is checked), the split that
    triggered a known fault (``own_deltas``), whether content is compared after stripping outer
    whitespace, whether the text is well-formed (then no call may be abandoned), and the special
    tokens the ``tokens`` chunkings keep whole."""

    label: str
    text: str
    tools: list = field(default_factory=list)
    expected: Outcome | None = None
    own_deltas: list[str] | None = None
    strip_content: bool = True
    well_formed: bool = True
    special_tokens: tuple[str, ...] = ()
    format: str | None = None  # whose tokenizer the ``model`` chunkings use


@dataclass
class Failure:
    """One failing stream: the item's ``label`` and ``text``, the ``chunking`` (a spec,
    ``own deltas`` or ``detect_and_parse``), the number of ``deltas``, and its ``differences``."""

    label: str
    chunking: str
    text: str
    deltas: int
    differences: list[Difference]

    @property
    def kinds(self) -> list[str]:
        """The kinds of its differences, each once, in :data:`KINDS` order."""
        found = {d.kind for d in self.differences}
        return [k for k in KINDS if k in found]


@dataclass
class CheckResult:
    """What :func:`run_check` found for one parser: ``items`` (texts), ``streams`` run (each
    chunking of each text, its own deltas, and ``detect_and_parse``) and the ``failures``, one
    :class:`Failure` per failing stream."""

    parser: str
    items: int = 0
    streams: int = 0
    failures: list[Failure] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def by_kind(self) -> dict[str, tuple[int, Failure]]:
        """For each kind found (in :data:`KINDS` order): the number of failing streams with it
        and the smallest of them (shortest text, then fewest deltas, then first found)."""
        found: dict[str, tuple[int, Failure]] = {}
        for failure in self.failures:
            for kind in failure.kinds:
                count, smallest = found.get(kind, (0, failure))
                if (len(failure.text), failure.deltas) < (len(smallest.text), smallest.deltas):
                    smallest = failure
                found[kind] = (count + 1, smallest)
        return {k: found[k] for k in KINDS if k in found}


def _raised(exc: BaseException) -> Difference:
    kind = "protocol" if isinstance(exc, ProtocolError) else "timeout" if isinstance(exc, TimeoutError) else "exception"
    return Difference(kind, f"{type(exc).__name__}: {' '.join(str(exc).split())}")


def run_check(name: str, factory: Callable[[], Any], items: Iterable[CheckItem],
              chunkings: Sequence[str]) -> CheckResult:
    """Stream every item under every chunking through fresh parsers and compare each outcome with
    the item's expected one; parse the whole text with ``detect_and_parse`` (when the parser has
    it) and compare that too. An item without an expected outcome is compared with the whole
    parse. Content follows the item's strip rule; an abandoned call fails only in well-formed
    output.

    Never raises for a parser's fault: an exception or a protocol break is a failure.
    """
    from callscale.workloads.chunking import chunk

    result = CheckResult(name)

    def record(item: CheckItem, spec: str, deltas: int, found: list[Difference]) -> None:
        if found:
            result.failures.append(Failure(item.label, spec, item.text, deltas, found))

    for item in items:
        result.items += 1
        whole_outcome = None
        if hasattr(factory(), "detect_and_parse"):
            result.streams += 1
            try:
                whole_outcome = whole(factory(), item.text, item.tools)
                found = [] if item.expected is None else differences(
                    whole_outcome, item.expected, item.strip_content, abandoned_ok=not item.well_formed)
            except Exception as exc:
                found = [_raised(exc)]
            record(item, "detect_and_parse", 1, found)
        reference = item.expected if item.expected is not None else whole_outcome
        splits: list[tuple[str, list[str] | None]] = [(spec, None) for spec in chunkings]
        if item.own_deltas is not None:
            splits.append(("own deltas", item.own_deltas))
        for spec, deltas in splits:
            result.streams += 1
            try:
                if deltas is None:
                    deltas = chunk(item.text, spec, item.special_tokens, item.format)
                got = stream(factory(), deltas, item.tools, strict=True)
            except Exception as exc:
                record(item, spec, len(deltas or ()), [_raised(exc)])
                continue
            if reference is not None:
                record(item, spec, len(deltas), differences(got, reference, item.strip_content,
                                                            abandoned_ok=not item.well_formed))
    return result


def fault_items(fmt: str) -> list[CheckItem]:
    """The shared fault cases of format ``fmt`` as check items.

    A case keeps its own ``tools``; a case without them gets the tool list a
    request would declare for its expected calls (:func:`callscale.workloads.catalog.tools_for`:
    a JSON schema typed by the values, which the schema-typed formats need).
    The format's special tokens (its renderer's) are kept whole by the
    ``tokens`` chunkings.
    """
    from callscale.workloads import catalog, faults, render

    try:
        special_tokens = tuple(render.get(fmt).special_tokens)
    except KeyError:
        special_tokens = ()
    items = []
    for case in faults.load(fmt):
        exp = case["expected"]
        calls = [(c["name"], c["arguments"]) for c in exp["calls"]]
        tools = list(case["tools"]) or catalog.tools_for([render.Call(n, a) for n, a in calls])
        items.append(CheckItem(
            label=case["id"], text=case["text"], tools=tools,
            expected=outcome_of(exp["content"], calls, exp.get("reasoning", "")),
            own_deltas=list(case["deltas"]), strip_content=not case.get("strict_content", False),
            special_tokens=special_tokens, format=fmt, well_formed=not case.get("broken", False),
        ))
    return items


#: Workloads whose output is not well-formed (a call may be abandoned there).
MALFORMED_WORKLOADS = ("unclosed_call", "repeated_opener")


def workload_items(fmt: str, workloads: Sequence[str], lengths: Sequence[int], seed: int = 0) -> list[CheckItem]:
    """Cases of the catalog's workloads in format ``fmt`` as check items."""
    from callscale.workloads import catalog

    items = []
    for workload in workloads:
        for length in lengths:
            case = catalog.make(workload, fmt, length, seed)
            items.append(CheckItem(
                label=f"{workload}@{length}", text=case.text, tools=list(case.tools),
                expected=outcome_of(case.content, [(c.name, dict(c.arguments)) for c in case.calls]),
                well_formed=catalog.base_name(workload) not in MALFORMED_WORKLOADS and getattr(case, "well_formed", True),
                special_tokens=tuple(case.special_tokens), format=fmt,
                own_deltas=list(case.recorded) if getattr(case, "recorded", None) is not None else None,
            ))
    return items


# ---------------------------------------------------------------------------- callscale check
def run_bounded(specs: Sequence[Any], texts: Sequence[Sequence[CheckItem]], chunkings: Sequence[str],
                timeout: float | None, progress: bool | None, memory_limit: int | None = None) -> list[CheckResult]:
    """:func:`run_check` per parser and text in a worker of that parser's own
    (:class:`callscale.bounded.Workers`), ``timeout`` seconds per text; ``texts[i]``: the items of
    ``specs[i]`` (a :class:`callscale.plugins.ParserSpec`). One :class:`CheckResult` per spec.

    A text that overruns is a ``timeout`` failure and the parser's remaining
    texts are skipped (listed as one more failure); a worker that dies under a text is an
    ``exception`` failure of that text; the next parser goes on. A subject that streams elsewhere checks its own texts
    (:meth:`callscale.adapters.protocol.Subject.check_items`). Ctrl-C raises
    ``KeyboardInterrupt("PARSER on LABEL")``, every worker stopped.
    """
    from tqdm import tqdm

    from .adapters.protocol import subject_of
    from .bounded import Workers

    def handler_for(i: int) -> Callable[[int], CheckResult]:
        def one(j: int) -> CheckResult:
            return run_check(specs[i].name, specs[i].factory, [texts[i][j]], chunkings)
        return one

    results = []
    with tqdm(total=sum(map(len, texts)), unit="text", leave=False, dynamic_ncols=True,
              disable=None if progress is None else not progress) as bar, \
            Workers(handler_for, timeout, memory_limit) as workers:
        for i, spec in enumerate(specs):
            checked = subject_of(spec.factory).check_items(spec, texts[i], timeout, bar)
            if checked is not None:  # a subject streamed elsewhere checks its own texts (adapters/protocol.py)
                results.append(checked)
                continue
            results.append(_check_one(i, spec, texts[i], workers, bar))
            workers.retire(i)  # one worker per parser: its faults are its own
    return results


def _check_one(i: int, spec: Any, items: Sequence[CheckItem], workers: Any, bar: Any) -> CheckResult:
    """One parser's texts in its worker (``workers.call(i, j)`` runs text ``j``)."""
    total = CheckResult(spec.name)
    if spec.broken is not None:  # its child died or hung while loading it
        total.items += len(items)
        total.failures.append(Failure(items[0].label if items else "-", "-", "", 0,
                                      [Difference("exception", spec.broken)]))
        bar.update(len(items))
        return total
    for j, item in enumerate(items):
        bar.set_postfix_str(f"{spec.name} on {item.label}")
        try:
            answer = workers.call(i, j)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"{spec.name} on {item.label}") from None
        if answer.timed_out:
            total.items += 1
            rest = len(items) - j - 1
            more = f"; {rest} more texts not run" if rest else ""
            total.failures.append(Failure(item.label, "-", item.text, 0, [Difference("timeout", f"{answer.error}{more}")]))
            bar.update(rest + 1)
            break
        if not answer.ok:  # the worker died under this text
            total.items += 1
            total.failures.append(Failure(item.label, "-", item.text, 0, [Difference("exception", answer.error)]))
        else:
            part = answer.value
            total.items += part.items
            total.streams += part.streams
            total.failures += part.failures
        bar.update(1)
    return total


def report(results: Sequence[CheckResult], chunkings: Sequence[str], show: int = 20,
           tokenizers: str | None = None) -> list[str]:
    """The ``check`` report's lines: the table, one ``FAIL`` line per failing stream (at most ``show``),
    then per parser and kind the number of failing streams and the smallest failing case;
    ``tokenizers``: what cut the ``model`` chunkings' deltas, per format (a line before the summary)."""
    from .tables import render

    rows = [[r.parser, str(r.items), str(r.streams), str(len(r.failures)),
             "timeout" if "timeout" in r.by_kind() else "ok" if r.passed else "FAIL",
             ", ".join(f"{kind} {count}" for kind, (count, _) in r.by_kind().items())] for r in results]
    lines = render(["parser", "texts", "streams", "failing", "verdict", "kinds (failing streams)"], rows,
                   right={1, 2, 3}, rule=False).splitlines()
    every = [(r.parser, f) for r in results for f in r.failures]
    if every:
        lines.append("")
    for parser, f in every[:show]:
        lines.append(f"FAIL {parser} {f.label} under {f.chunking}: "
                     + "; ".join(f"{d.kind}: {d.detail}" for d in f.differences))
    if len(every) > show:
        lines.append(f"... {len(every) - show} more failing streams (--show N prints more)")
    summary = [(r.parser, kind, count, f) for r in results for kind, (count, f) in r.by_kind().items()]
    if summary:
        lines += ["", "by kind, with the smallest failing case (text and chunking):"]
    for parser, kind, count, f in summary:
        text = f.text if len(f.text) <= 300 else f.text[:150] + " ... " + f.text[-150:]
        lines.append(f"{parser}: {kind}: {count} failing stream{'s' if count != 1 else ''}; smallest: {f.label} "
                     f"under {f.chunking} ({len(f.text)} characters, {f.deltas} delta{'s' if f.deltas != 1 else ''}): "
                     f"{text!r}")
    failing = sum(len(r.failures) for r in results)
    streams = sum(r.streams for r in results)
    if tokenizers:
        lines += ["", f"model chunkings' tokenizers: {tokenizers}"]
    lines += ["", f"checked {streams} streams of {sum(r.items for r in results)} texts under {len(chunkings)} "
                  f"chunkings (+ each fault case's own deltas and detect_and_parse): "
                  f"{'all agree' if not failing else f'{failing} failing streams'}"]
    return lines
