"""Every built-in format's transition table (it opens the format's module, as h11 writes its rules, and the
class names it as ``transitions``) stays true: its states are the parser class's own ``_s_<state>`` steps (and
base's content and broken states), every next state it names is one, every state a parser enters while streaming
the headline workloads is in it, and every transition a parser makes on the catalog's workloads, the fault cases
and seeded random splits is one the table names."""

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


#: The deliveries every text is streamed under: whole, one token, four tokens, one character, and seeded random
#: splits (the fuzz seeds), with each fault case's own deltas besides.
_DELIVERIES = ("whole", "tokens:1", "tokens:4", "char", "random:0:8", "random:1:8", "random:2:8", "random:3:8")


def _recording(cls, seen: set):
    """``cls`` with its state recorded: each change ``(state, next state)`` made while streaming goes to ``seen``
    (the state set while the parser is built is not a transition)."""

    class Recording(cls):
        @property
        def _state(self):
            return self.__dict__["_recorded_state"]

        @_state.setter
        def _state(self, value):
            old = self.__dict__.get("_recorded_state")
            if self.__dict__.get("_recording") and old != value:
                seen.add((old, value))
            self.__dict__["_recorded_state"] = value

    return Recording


def _table_pairs(table) -> set:
    return {(state, one) for state, reads in table.items() for nxt in reads.values() for one in nxt.split(" / ")}


@pytest.mark.parametrize("name", _formats())
def test_every_transition_taken_is_in_the_table(name):
    """Every workload of the catalog (1k characters), every fault case (with its own deltas too), under
    :data:`_DELIVERIES`: each state change the parser makes is a (state, next state) its table names."""
    from callscale import check
    from callscale.workloads.chunking import chunk

    cls = parsers.get(name)
    seen: set = set()
    recording = _recording(cls, seen)
    items = check.fault_items(name) + check.workload_items(name, catalog.names(), [1024])
    for item in items:
        deliveries = [chunk(item.text, spec, item.special_tokens) for spec in _DELIVERIES]
        for deltas in deliveries + ([item.own_deltas] if item.own_deltas else []):
            parser = recording()
            parser.__dict__["_recording"] = True
            for delta in deltas:
                parser.parse_streaming_increment(delta, item.tools)
            parser.finish(item.tools)
    assert len(seen) >= 4  # the states were recorded
    missing = sorted(seen - _table_pairs(cls.transitions))
    assert missing == [], f"{cls.__name__} moves {missing}, which its table does not name"
