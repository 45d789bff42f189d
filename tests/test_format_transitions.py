"""Each format module's transition table (issue 28: it opens the module, as h11 writes its rules) stays true:
a table (``Format.transitions`` of tests/formats.py) names exactly the class's own states, every next state it
names is one, and every state a parser enters while streaming the headline workloads is in it. And jsonscan's
reader states."""

import pytest

from callscale import parsers
from callscale.parsers import jsonscan
from callscale.workloads import catalog
from formats import FORMATS

TABLES = {name: row.transitions for name, row in FORMATS.items() if row.transitions is not None}


def test_the_tables_are_the_modules():
    from callscale.parsers import gemma, kimi_k3, mistral

    assert TABLES["gemma4"] is gemma.GEMMA4_TRANSITIONS and TABLES["mistral"] is mistral.MISTRAL_TRANSITIONS
    assert TABLES["kimi_k3"] is kimi_k3.KIMI_K3_TRANSITIONS
    assert {"deepseek_v3", "deepseek_v31", "kimi_k2", "gpt_oss", "minimax_m2", "minimax_m3", "qwen3"} <= set(TABLES)


def _own_states(cls) -> set[str]:
    """The states the format's own classes define (not base.ToolParser's)."""
    own = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("callscale.parsers.") and klass.__module__ != "callscale.parsers.base":
            own |= {attr[3:] for attr in vars(klass) if attr.startswith("_s_")}
    return own


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_table_names_the_classes_states(name):
    cls = parsers.get(name)
    table = TABLES[name]
    used = {state for state in _own_states(cls) if state in cls._states}
    assert used <= set(table), f"states of the class missing from its table: {sorted(used - set(table))}"
    assert set(table) <= set(cls._states), f"the table names states the class has not: {sorted(set(table) - set(cls._states))}"
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


def test_the_json_call_readers_table_names_its_states():
    own = {attr[3:] for attr in vars(jsonscan.JsonCallReader) if attr.startswith("_s_")}
    assert set(jsonscan.JSON_CALL_TRANSITIONS) == own | {"json"}  # "json": the format's state, _read_object
    for reads in jsonscan.JSON_CALL_TRANSITIONS.values():
        for nxt in reads.values():
            assert nxt in jsonscan.JSON_CALL_TRANSITIONS or nxt == "format"
