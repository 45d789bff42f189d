"""``callscale hunt``: the search's classes and mutations, its budget, bad options, and (slow) that it finds,
unaided, the Braille fixture's quadratic term (tests/helpers/braille_parser.py), whose trigger no workload and no
content kind writes."""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from callscale import hunt, verify
from callscale.cli import main
from callscale.parsers import get
from callscale.workloads import catalog
from callscale.workloads.team import TeamWorkloadError, scale_record
from support import HELPERS

BRAILLE = re.compile("[\u2800-\u28ff]")
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def in_tests(monkeypatch):
    monkeypatch.chdir(HELPERS)
    monkeypatch.syspath_prepend(str(HELPERS))


def test_the_survey_holds_a_character_of_every_category_and_every_range():
    by_cat, by_range = hunt._classes()
    assert {"Lu", "Ll", "Lo", "Mn", "Nd", "Sm", "So", "Zs", "Zl", "Cc", "Cf"} <= set(by_cat)
    assert not {"Cs", "Co", "Cn"} & set(by_cat)
    inserted = {ch for c in hunt.survey("deepseek_v31") for ch in c.inserted}
    assert {unicodedata.category(ch) for ch in inserted} == set(by_cat)
    assert {ord(ch) >> 8 for ch in inserted} == set(by_range)
    assert any(BRAILLE.match(ch) for ch in inserted)  # the fixture's block among them, found by no name


def test_every_survey_candidate_is_a_valid_output_in_every_format_or_says_why():
    from callscale import parsers

    for fmt in parsers.names():
        usable = 0
        for c in hunt.survey(fmt):
            try:
                record = c.record(fmt)
                grown = scale_record(record, fmt, 4096)
            except TeamWorkloadError:
                continue
            usable += 1
            assert "".join(record.deltas) == record.text and abs(len(grown.text) - 4096) <= 16
        assert usable >= len(hunt.survey(fmt)) - 2, fmt


def test_no_workload_or_content_kind_writes_the_fixture_trigger():
    for workload in catalog.names():
        for length in (1024, 65536):
            assert not BRAILLE.search(catalog.make(workload, "deepseek_v31", length).text), workload
    try:
        from callscale.workloads import content
    except ImportError:
        return
    for kind in content.names():
        assert not BRAILLE.search(content.text(kind, 65536, 0, "deepseek_v31")), kind


def test_the_fixture_parses_every_workload_right():
    import braille_parser  # noqa: F401  (tests/ is on the path under pytest's rootdir conftest)

    for workload in catalog.names():
        case = catalog.make(workload, "deepseek_v31", 2048)
        assert verify.verify_stream(braille_parser.BrailleRereads, case) is None, workload
    case = catalog.make("write_file", "deepseek_v31", 2048)
    text = case.text.replace("    ", "  \u2812 ", 4)
    parser = braille_parser.BrailleRereads()
    reference = get("deepseek_v31")()
    assert [parser.parse_streaming_increment(text[i:i + 4], []) for i in range(0, len(text), 4)] == \
        [reference.parse_streaming_increment(text[i:i + 4], []) for i in range(0, len(text), 4)]


def test_halves_split_the_inserted_characters_and_drop_the_others():
    import random

    base = hunt.seeds("qwen3")[0]
    chars = ["\u2801", "\u00e9", "\u4e00", "\u2211"]
    c = base.with_value(hunt._spread(base.value, chars, random.Random(0)), "four", chars)
    a, b = hunt.halves(c, random.Random(1))
    assert set(a.inserted) | set(b.inserted) == set(chars) and not set(a.inserted) & set(b.inserted)
    for half in (a, b):
        for ch in chars:
            assert (ch in half.value) == (ch in half.inserted)
            if ch in half.inserted:
                assert half.value.count(ch) == 5  # the one it had, and four more


def test_mutants_cover_the_mutation_kinds():
    import random

    rng = random.Random(3)
    parent = hunt.survey("glm47")[5]
    steps = [m.steps[-1] for m in hunt.mutants(parent, "glm47", rng, 200)]
    said = " ".join(steps)
    for kind in ("kept ", "more of its inserted", "characters of ", "fragments of", "delivered ", "a slice repeated"):
        assert kind in said, kind


def test_the_search_stops_within_the_budget_plus_one_measurement(monkeypatch):
    """A fake clock: each round takes 7 s, the confirming run 5 s; the rounds stop when the next would end
    past the budget less the reserve for the confirming run."""
    clock = [0.0]
    monkeypatch.setattr(hunt.time, "monotonic", lambda: clock[0])

    def measure(spec_name, fmt, batch, folder, number, timeout, jobs):
        clock[0] += 7.0
        return [hunt.Measured(c, 1.0 + 0.001 * i, (1, 4)) for i, c in enumerate(batch)]

    class Run:
        passed = True

    def confirm(*args, **kwargs):
        clock[0] += 5.0
        assert kwargs["timeout"] >= 10
        return Run()

    from callscale import matrix, plugins

    monkeypatch.setattr(hunt, "_measure", measure)
    monkeypatch.setattr(matrix, "run", confirm)
    for budget in (30.0, 60.0, 180.0):
        clock[0] = 0.0
        found = hunt.hunt(plugins.resolve("qwen3", None), budget=budget)
        reserve = min(60.0, max(10.0, budget / 4))
        assert found.rounds >= 1 and 7.0 * found.rounds <= budget - reserve + 7.0
        assert found.seconds <= budget + 7.0
        assert not found.failed


def test_the_search_ends_when_no_input_could_be_measured(monkeypatch):
    """Every input refused (a count error, no growth): once the survey is spent there is nothing to mutate, and
    the search ends, not spinning on empty rounds until the budget."""
    clock = [0.0]
    monkeypatch.setattr(hunt.time, "monotonic", lambda: clock[0])
    batches = []

    def measure(spec_name, fmt, batch, folder, number, timeout, jobs):
        batches.append(len(batch))
        clock[0] += 0.001
        return [hunt.Measured(c, None, error="refused") for c in batch]

    from callscale import plugins

    monkeypatch.setattr(hunt, "_measure", measure)
    found = hunt.hunt(plugins.resolve("qwen3", None), budget=600.0)
    assert found.worst is None and len(found.measured) == len(hunt.survey("qwen3", 0))
    assert found.rounds == len(batches) == -(-len(found.measured) // hunt.BATCH) and 0 not in batches


@pytest.mark.parametrize("argv, says", [
    (["--budget", "0"], "--budget: must be more than 0"),
    (["--budget", "soon"], "--budget: not a number of seconds"),
    (["--parser", "qwen3"], "name one parser"),
    (["--lengths", "1k,2k"], "at least 3"),
    (["--save", "{tmp}/a-file/worst.jsonl"], "--save"),
])
def test_bad_options_are_one_line_and_exit_2(capsys, tmp_path, argv, says):
    (tmp_path / "a-file").write_text("not a folder")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    status, out, err = run_main(capsys, "hunt", "--parser", "deepseek_v31", *argv)
    assert status == 2 and says in err and out == ""


@needs_valgrind
@pytest.mark.slow  # the search itself: 150 s of budget, about 3 min of wall on a loaded 2-core machine
def test_hunt_finds_the_braille_term_unaided_and_saves_a_workload_the_gate_fails(capsys, tmp_path, in_tests):
    saved = tmp_path / "worst.jsonl"
    status, out, err = run_main(capsys, "hunt", "--parser", "braille_parser:BrailleRereads", "--workload-format",
                                "deepseek_v31", "--budget", "150", "--save", str(saved))
    assert status == 1, out + err
    assert "FAIL braille_parser:BrailleRereads on file:" in out
    (record,) = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    assert BRAILLE.search(record["text"]) and "".join(record["deltas"]) == record["text"]
    status, out, err = run_main(capsys, "gate", "--meter", "instructions", "--no-progress", "--parser",
                                "braille_parser:BrailleRereads", "--workload-format", "deepseek_v31",
                                "--workload", f"file:{saved}", "--lengths", "2k,8k,32k", "--timeout", "120")
    assert status == 1 and "FAIL braille_parser:BrailleRereads" in out
