"""The result contract: what ``check`` reads, and the one line a result of another shape gets."""

from __future__ import annotations

import pytest

from callscale import check
from callscale.parsers import get
from callscale.parsers.base import StreamingParseResult, ToolCallItem

TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


class Reshaped:
    """qwen3 (ours) with each result passed through ``reshape``."""

    reshape = staticmethod(lambda r: r)

    def __init__(self):
        self._p = get("qwen3")()

    def parse_streaming_increment(self, delta, tools=None):
        return self.reshape(self._p.parse_streaming_increment(delta, tools))

    def finish(self, tools=None):
        return self.reshape(self._p.finish(tools))

    def detect_and_parse(self, text, tools=None):
        return self.reshape(self._p.detect_and_parse(text, tools))


def with_calls(convert):
    def reshape(result):
        result.calls = [convert(c) for c in result.calls]
        return result
    return type("R", (Reshaped,), {"reshape": staticmethod(reshape)})


def test_the_importable_result_classes_are_the_contract():
    result = StreamingParseResult("hi", [ToolCallItem(0, "f", "{}")])
    assert check.result_shape(result) is None
    assert check.result_shape({"normal_text": "hi", "calls": [{"tool_index": 0, "name": "f", "parameters": "{}"}]}) is None
    assert check.result_shape(None) is None  # nothing


@pytest.mark.parametrize("convert, line", [
    (lambda c: (c.tool_index, c.name, c.parameters),
     "result.calls[0] is tuple (0, 'get_weather', '{\"city\": \"Oslo\"}'), not a call item (tool_index: int, name: str | None, "
     "parameters: str, as attributes or dict keys: callscale.parsers.base.ToolCallItem)"),
    (lambda c: {"index": c.tool_index, "name": c.name, "parameters": c.parameters},
     "result.calls[0].tool_index is NoneType None, not int"),
    (lambda c: ToolCallItem(str(c.tool_index), c.name, c.parameters), "result.calls[0].tool_index is str '0', not int"),
    (lambda c: ToolCallItem(c.tool_index, c.name, 7), "result.calls[0].parameters is int 7, not str (the arguments JSON text)"),
])
def test_a_result_of_the_wrong_shape_is_one_line_naming_the_field_and_its_type(convert, line):
    parser = with_calls(convert)()
    with pytest.raises(check.ResultShapeError) as exc:
        check.stream(parser, [TEXT[:20], TEXT[20:]], TOOLS)
    assert str(exc.value) == line


def test_whole_does_not_read_tool_index_but_reads_the_rest():
    parser = with_calls(lambda c: {"name": c.name, "parameters": c.parameters})()
    assert check.whole(parser, TEXT, TOOLS).complete_calls() == [("get_weather", {"city": "Oslo"})]
    parser = with_calls(lambda c: (c.name, c.parameters))()
    with pytest.raises(check.ResultShapeError, match=r"^result.calls\[0\] is tuple \('get_weather', "):
        check.whole(parser, TEXT, TOOLS)


def test_a_result_that_is_no_result_names_its_type():
    bare = type("Bare", (Reshaped,), {"reshape": staticmethod(lambda r: (r.normal_text, r.calls))})()
    with pytest.raises(check.ResultShapeError, match=r"^result is tuple .*not a result with normal_text and calls"):
        check.stream(bare, [TEXT], TOOLS)
    with pytest.raises(check.ResultShapeError, match=r"^result.normal_text is int 5, not str$"):
        check.assemble([StreamingParseResult("", []), StreamingParseResult(5, [])])


def test_run_check_reports_the_shape_as_a_protocol_failure_with_that_line():
    parser = with_calls(lambda c: (c.tool_index, c.name, c.parameters))
    item = check.CheckItem("one", TEXT, TOOLS, check.outcome_of("", [("get_weather", {"city": "Oslo"})]))
    result = check.run_check("tuples", parser, [item], ["whole", "tokens:3"])
    assert result.streams == 3 and len(result.failures) == 3
    assert {d.kind for f in result.failures for d in f.differences} == {"protocol"}
    assert all(f.differences[0].detail.startswith("ResultShapeError: result.calls[0] is tuple (0, 'get_weather'")
               for f in result.failures)


@pytest.mark.parametrize("name", ["qwen3", "llama4_pythonic", "mistral"])
def test_each_increment_owns_its_lists_so_a_kept_result_never_changes(name):
    """A client keeps every result: a later increment must not add to an earlier result's ``calls``.

    The per-delta path (``ToolParser.parse_streaming_increment``) hands the parser's pending list to the result and
    starts a new one; an increment with no calls gets a list of its own, not the parser's.
    """
    from callscale.workloads import catalog

    case = catalog.make("many_short_calls", name, 600)
    parser = get(name)()
    kept = []
    for delta in case.deltas("char"):
        result = parser.parse_streaming_increment(delta, case.tools)
        kept.append((result, list(result.calls), result.normal_text))
    for result, calls, text in kept:
        assert result.calls == calls and result.normal_text == text
    assert sum(len(calls) for _, calls, _ in kept) > 10  # (many calls streamed: the check above had work)
