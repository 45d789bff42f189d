"""Each format module's transition table (issue 28: it opens the module, as h11 writes its rules) stays true:
its states are the parser class's own ``_s_<state>`` steps, every next state it names is one, and every
state a parser enters while streaming real workloads is in it."""

import pytest

from callscale import parsers
from callscale.parsers import gemma, minimax, minimax_m3, mistral
from callscale.workloads import catalog

TABLES = {
    "gemma4": gemma.GEMMA4_TRANSITIONS,
    "minimax_m2": minimax.MINIMAX_M2_TRANSITIONS,
    "minimax_m3": {**minimax.BLOCK_TRANSITIONS, **minimax_m3.MINIMAX_M3_TRANSITIONS},
    "mistral": mistral.MISTRAL_TRANSITIONS,
}


def _own_states(cls) -> set[str]:
    """The states the format's modules define (not the base's)."""
    own = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("callscale.parsers.") and klass.__module__ != "callscale.parsers.base":
            own |= {attr[3:] for attr in vars(klass) if attr.startswith("_s_")}
    return own


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_table_names_the_classes_states(name):
    cls = parsers.get(name)
    table = TABLES[name]
    assert _own_states(cls) <= set(table), "a state of the class is missing from its table"
    assert set(table) <= set(cls._states), "the table names a state the class has not"
    for state, reads in table.items():
        assert reads, state
        for nxt in reads.values():
            for one in nxt.split(" / "):
                assert one in cls._states, (state, nxt)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_parser_enters_only_states_of_its_table(name):
    cls = parsers.get(name)
    seen: set[str] = set()
    for workload in ("write_file", "many_short_calls", "repeated_opener"):
        case = catalog.make(workload, name, 2048)
        parser = cls()
        states = parser._driver
        assert states is not None  # run by the base driver
        parser._driver = {k: (lambda fn, k: lambda p, final: (seen.add(k), fn(p, final))[1])(fn, k)
                          for k, fn in states.items()}
        for delta in case.deltas("tokens:4"):
            parser.parse_streaming_increment(delta, case.tools)
        parser.finish(case.tools)
    assert {"content"} < seen <= set(TABLES[name])
