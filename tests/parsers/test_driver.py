"""The base driver (callscale/parsers/README.md: the state table and the waiting rule)."""

from __future__ import annotations

import logging

import pytest

from callscale.parsers.base import ToolParser
from callscale.parsers.scanner import markers

_OPEN = markers("<")
_CLOSE = markers(">")


class _Tags(ToolParser):
    """Content, then ``<name>`` tags read as calls with no arguments; counts the runs of state ``tag``."""

    name = "driver_test"

    def __init__(self) -> None:
        super().__init__()
        self.tag_runs: list[tuple[str, bool]] = []  # (unread text when run, final)
        self._tag: list[str] = []

    def _s_content(self, final: bool) -> bool:
        text, marker = self.scanner.find(_OPEN, final)
        self._emit_content(text)
        if marker is None:
            return False
        self._state = "tag"
        return True  # even with nothing unread: the driver decides whether to run "tag" now

    def _s_tag(self, final: bool) -> bool:
        self.tag_runs.append((self.scanner.rest(), final))
        text, marker = self.scanner.find(_CLOSE, final)
        self._tag.append(text)
        if marker is None:
            if final:
                self._emit_content("<" + "".join(self._tag))
            return False
        self._begin_call("".join(self._tag))
        self._tag = []
        self._emit_arguments("{}")
        self._end_call()
        self._state = "content"
        return True


def test_an_increment_runs_the_next_state_only_while_text_is_unread():
    p = _Tags()
    first = p.parse_streaming_increment("Hi <")
    assert first.normal_text == "Hi "
    assert p.tag_runs == []  # "<" ended the delta: state tag would find nothing, so it did not run
    second = p.parse_streaming_increment("f>")
    assert p.tag_runs == [("f>", False)]
    assert [(c.tool_index, c.name, c.parameters) for c in second.calls] == [(0, "f", "{}")]


def test_at_the_end_of_the_output_the_next_state_runs_with_nothing_unread():
    p = _Tags()
    p.parse_streaming_increment("Hi <")
    last = p.finish()
    assert p.tag_runs == [("", True)]
    assert last.normal_text == "<"


class _Crashes(ToolParser):
    """A state that raises on ``!`` (a parser bug)."""

    name = "driver_crash_test"

    def _s_content(self, final: bool) -> bool:
        if "!" in self.scanner.rest():
            raise IndexError("a bug")
        self._emit_content(self.scanner.take_all())
        return False


@pytest.mark.parser_failure_expected
def test_a_parser_bug_is_logged_where_the_tests_guard_listens(caplog):
    # tests/conftest.py fails any test during which the base class caught a parser's exception; it
    # listens to the package's logger, so that must be where the base class logs (it listened to
    # "parsers" after the package move, and caught nothing)
    import callscale.parsers

    PARSER_LOGGER = callscale.parsers.__name__
    with caplog.at_level(logging.ERROR, logger=PARSER_LOGGER):
        got = _Crashes().parse_streaming_increment("Hi!")
    assert got.normal_text == "Hi!"  # (the unread text passed on as content)
    bugs = [r for r in caplog.records if r.name.startswith(PARSER_LOGGER) and r.levelno >= logging.ERROR]
    assert len(bugs) == 1 and "driver_crash_test parser failed" in bugs[0].getMessage()
