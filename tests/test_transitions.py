"""Every built-in format's transition table (issue 28: it opens the format's module, as h11 writes its rules,
and the class names it as ``transitions``) stays true: its states are the parser class's own ``_s_<state>``
steps (and base's content and broken states), every next state it names is one, and every state a parser
enters while streaming the headline workloads is in it."""

import pytest

from callscale import parsers
from callscale.parsers import jsonscan
from callscale.workloads import catalog

#: A state of base.ToolParser a table need not name (reasoning, for a format whose model writes none inline).
_BASE_ONLY = {"think"}


def _own_states(cls) -> set[str]:
    """The ``_s_<state>`` steps the format's modules define (not base.py's)."""
    own = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("callscale.parsers.") and klass.__module__ != "callscale.parsers.base":
            own |= {attr[3:] for attr in vars(klass) if attr.startswith("_s_")}
    return own


def _formats() -> list[str]:
    """The registered names, one a class (an alias shares its format's class)."""
    seen, out = set(), []
    for name in parsers.names():
        cls = parsers.get(name)
        if cls not in seen:
            seen.add(cls)
            out.append(name)
    return out


@pytest.mark.parametrize("name", _formats())
def test_the_table_names_the_classes_states_and_no_other(name):
    cls = parsers.get(name)
    table = cls.transitions
    assert table, f"{cls.__name__} has no transition table"
    states = set(cls._states)
    assert _own_states(cls) - _BASE_ONLY <= set(table), "a state of the class is missing from its table"
    assert set(table) <= states, f"the table names states the class has not: {set(table) - states}"
    assert "content" in table
    for state, reads in table.items():
        assert reads, state
        for nxt in reads.values():
            for one in nxt.split(" / "):
                assert one in states, (state, nxt)


@pytest.mark.parametrize("name", _formats())
def test_a_parser_enters_only_states_of_its_table(name):
    cls = parsers.get(name)
    seen: set[str] = set()
    for workload in ("write_file", "many_short_calls", "repeated_opener", "unclosed_call"):
        case = catalog.make(workload, name, 2048)
        parser = cls()
        states = parser._driver
        assert states is not None  # run by the base driver
        parser._driver = {k: (lambda fn, k: lambda p, final: (seen.add(k), fn(p, final))[1])(fn, k)
                          for k, fn in states.items()}
        for delta in case.deltas("tokens:4"):
            parser.parse_streaming_increment(delta, case.tools)
        parser.finish(case.tools)
    assert {"content"} < seen <= set(cls.transitions), seen - set(cls.transitions)


def test_the_json_call_readers_table_names_its_states():
    own = {attr[3:] for attr in vars(jsonscan.JsonCallReader) if attr.startswith("_s_")}
    assert set(jsonscan.JSON_CALL_TRANSITIONS) == own | {"json"}  # "json": the format's state, _read_object
    for reads in jsonscan.JSON_CALL_TRANSITIONS.values():
        for nxt in reads.values():
            assert nxt in jsonscan.JSON_CALL_TRANSITIONS or nxt == "format"
