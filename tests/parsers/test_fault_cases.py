"""The shared streaming fault cases, each with its own deltas and under every chunking.

Each case was distilled from a fault a public serving stack shipped; the fault
is a kind, not one split, so every case also runs whole, per character and
under seeded random splits (tests/helpers/support.py: CHUNKINGS) and as a detokenizer
splits it (tokens:1, tokens:3: a special token is never split).
"""

import pytest

from callscale import parsers
from callscale.workloads import render
from support import CHUNKINGS, KNOWN_FAILING, assert_parses, load_cases, stream_outcome

CASES = load_cases()

def _marks(case):
    if case["id"] in KNOWN_FAILING:
        return [pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[case["id"]])]
    return []


def _expected(case):
    exp = case["expected"]
    return exp["content"], [(c["name"], c["arguments"]) for c in exp["calls"]]


def test_every_reported_case_names_its_thread():
    reported = [c for c in CASES if "source" in c]
    assert len(reported) >= 26
    for case in reported:
        assert case["source"].startswith("https://github.com/"), case["id"]
    assert len({c["id"] for c in CASES}) == len(CASES)  # ids are unique


def _need(parser_name):
    if parser_name not in parsers.names():
        pytest.skip(f"parser {parser_name} is not built yet")


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"], marks=_marks(c)) for c in CASES])
def test_fault_case(case):
    _need(case["parser"])
    assert "".join(case["deltas"]) == case["text"]
    content, calls = _expected(case)
    assert_parses(
        case["parser"], case["text"], content, calls, tools=case["tools"], chunkings=CHUNKINGS + ["tokens:1", "tokens:3"],
        deltas=case["deltas"], strip_content=not case.get("strict_content", False),
        special_tokens=render.get(case["parser"]).special_tokens, reasoning=case["expected"].get("reasoning", ""),
        broken=case.get("broken", False),
    )


INCREMENTAL = [c for c in CASES if c.get("check") == "incremental_args"]


@pytest.mark.parametrize("case", INCREMENTAL, ids=[c["id"] for c in INCREMENTAL])
def test_arguments_stream_before_the_call_closes(case):
    """Argument text reaches the client while the value is still arriving."""
    _need(case["parser"])
    from callscale import check

    parser = parsers.get(case["parser"])()
    deltas = case["deltas"]
    final_len = len(stream_outcome(case["parser"], deltas).calls[0].arguments_text)
    results = []
    fed = 0
    for delta in deltas:
        results.append(parser.parse_streaming_increment(delta, []))
        fed += len(delta)
        if fed >= 0.75 * len(case["text"]):
            break
    early = check.assemble(results)
    assert early.calls, "no call started after three quarters of the text"
    assert len(early.calls[0].arguments_text) >= final_len / 2, (
        f"only {len(early.calls[0].arguments_text)} of {final_len} argument characters streamed "
        "after three quarters of the text"
    )
