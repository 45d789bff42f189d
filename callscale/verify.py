"""Did the parser parse the workload? A cost counts only from a parser that did.

Before and apart from its cost, each case a parser is measured on is
streamed once more through a fresh parser of it (same deltas, untimed), and
what a client would get (content, the calls' names and arguments as JSON
values, their count; :func:`callscale.check.assemble`) is compared with what
the case's renderer wrote (:class:`callscale.workloads.case.Case`'s
``content`` and ``calls``). The rules are ``callscale check``'s
(:func:`callscale.check.differences`): content compared after stripping
outer whitespace, arguments as JSON values, an abandoned call allowed only
in the malformed workloads (:data:`callscale.check.MALFORMED_WORKLOADS`).

A parser that gets a case wrong has the row verdict :data:`WRONG_OUTPUT`,
with the first difference as its reason (one line); the gate fails on it
unless ``--cost-only`` says to judge the cost alone (the table still says
``wrong output``). A DeepSeek parser fed Qwen text, or one that recognises
no call at all, is caught here, however linear its cost.

The comparison's answer is one short string (or ``None``), so a child
process that streams the case (a worker, the callgrind child) sends only
that back.

    >>> from callscale import verify
    >>> verify.verify_stream(parser_factory, case, "tokens:4")   # None, or e.g.
    'dropped call: call 0 'write_file' {"path": ...} missing (1 calls expected, 0 streamed)'
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

__all__ = ["WRONG_OUTPUT", "expected", "first_difference", "verify_stream", "summary"]

WRONG_OUTPUT = "wrong output"
"""The row verdict of a parser whose streamed result differs from the case's."""

_LIMIT = 300
"""Longest difference text returned (characters); longer ones are cut in the middle."""


def expected(case: Any) -> Any:
    """The :class:`callscale.check.Outcome` the case's renderer wrote: its content and calls."""
    from .check import outcome_of

    return outcome_of(case.content, [(c.name, dict(c.arguments)) for c in case.calls])


def summary(outcome: Any) -> dict:
    """A plain dict of an outcome, for printing or sending: ``content`` (characters), ``calls`` as
    ``[name, arguments JSON text]`` pairs, and ``count`` (number of calls)."""
    return {"content": outcome.content, "calls": [[c.name, c.arguments_text] for c in outcome.calls],
            "count": len(outcome.calls)}


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LIMIT else text[: _LIMIT // 2] + " ... " + text[-_LIMIT // 2:]


def first_difference(got: Any, case: Any) -> str | None:
    """``None`` when ``got`` (an :class:`callscale.check.Outcome`, or a :func:`summary` dict) is what
    ``case`` expects; else the first difference in one line, ``"KIND: detail"`` (kinds of
    :data:`callscale.check.KINDS`), with the counts of calls when they differ."""
    from .check import MALFORMED_WORKLOADS, Outcome, StreamedCall, differences
    from .workloads.catalog import base_name

    if isinstance(got, dict):
        got = Outcome(got.get("content", ""), [StreamedCall(n, a) for n, a in got.get("calls", [])])
    want = expected(case)
    found = differences(got, want, strip_content=True,
                        abandoned_ok=base_name(getattr(case, "workload", "")) in MALFORMED_WORKLOADS
                        or not getattr(case, "well_formed", True))
    if not found:
        return None
    first = found[0]
    counts = ""
    if len(got.calls) != len(want.calls):
        counts = f" ({len(want.calls)} calls expected, {len(got.calls)} streamed)"
    more = f"; {len(found) - 1} more difference{'s' if len(found) > 2 else ''}" if len(found) > 1 else ""
    return _one_line(f"{first.kind}: {first.detail}{counts}{more}")


def verify_stream(factory: Callable[[], Any], case: Any, chunking: str = "tokens:4",
                  deltas: Sequence[str] | None = None) -> str | None:
    """Stream ``case`` (its ``deltas(chunking)``, or ``deltas``) through a fresh ``factory()``, then
    ``finish``; :func:`first_difference` of the outcome. Never raises for the parser's fault: an
    exception or a protocol break (an index out of order, a name sent twice) is the difference
    (``exception: Type: message``, ``protocol: ...``)."""
    from .check import ProtocolError, stream

    if deltas is None:
        deltas = case.deltas(chunking)
    try:
        got = stream(factory(), deltas, list(case.tools), strict=True)
    except ProtocolError as exc:
        return _one_line(f"protocol: {exc}")
    except MemoryError:
        raise
    except Exception as exc:
        return _one_line(f"exception: {type(exc).__name__}: {exc}")
    return first_difference(got, case)
