"""``callscale hunt``: the search's classes and mutations, its budget, bad options, and (slow) that it finds,
unaided, the Braille fixture's quadratic term (tests/helpers/braille_parser.py), whose trigger no workload and no
content kind writes."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from callscale import hunt, verify
from callscale.cli import main
from callscale.config import DEFAULTS
from callscale.parsers import get
from callscale.workloads import catalog
from callscale.workloads.team import MAX_DEPTH, TeamWorkloadError
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


def test_the_survey_reaches_bidi_controls_combining_marks_every_axis_and_every_delivery():
    survey = hunt.survey("deepseek_v31")
    inserted = {ch for c in survey for ch in c.inserted}
    assert set(hunt.BIDI) <= inserted and {unicodedata.category(ch) for ch in hunt.BIDI} == {"Cf"}
    assert {"\u0301", "\u0308", "\u030a"} <= inserted  # the marks of the decomposed words (Mn)
    assert {c.axis for c in survey} == set(hunt.AXES)
    assert {c.delivery for c in survey} >= set(hunt.SURVEY_DELIVERIES) | {"tokens:4"}
    assert {f"fixed:{k}" for k in (16, 64, 256, 1024, 4096)} <= {c.delivery for c in survey}
    assert {c.family for c in survey} == {"write_file", "literal_closing_tags"}
    from callscale.workloads import content

    said = " ".join(s for c in survey for s in c.steps)
    assert all(f"content kind {k}" in said for k in content.names() if k != content.DEFAULT_KIND)


def test_every_survey_candidate_is_a_valid_output_in_every_format_or_says_why():
    from callscale import parsers

    for fmt in parsers.names():
        usable = 0
        for c in hunt.survey(fmt):
            try:
                small, large = (c.case(fmt, n, "hunted") for n in hunt.LENGTHS)
            except TeamWorkloadError:
                continue
            usable += 1
            assert "".join(large.recorded) == large.text and abs(len(large.text) - 4096) <= 256, (fmt, c.describe())
            assert "".join(small.recorded) == small.text and abs(len(small.text) - 1024) <= 256, (fmt, c.describe())
        assert usable >= len(hunt.survey(fmt)) - 2, fmt


@pytest.mark.parametrize("fmt", ["deepseek_v31", "qwen3_coder", "llama3_json", "glm47"])
def test_a_structure_input_grows_along_its_axis_not_by_repeating_a_value(fmt):
    from callscale.workloads.team import depth

    base = hunt.seeds(fmt)[0]

    def measure(axis, case):
        args = [json.dumps(c.arguments) for c in case.calls]
        if axis in ("calls", "between"):
            return len(case.calls)
        if axis == "keys":
            return len(case.calls[0].arguments)
        if axis == "items":
            return len(case.calls[0].arguments["items"])
        if axis == "depth":
            return depth(args[0])
        return len(case.tools)

    for axis in hunt.AXES[1:]:
        c = dataclasses.replace(base, axis=axis)
        small, large = (measure(axis, c.case(fmt, n, "hunted")) for n in (1024, 4096))
        assert 3.0 <= large / small <= 5.0, (axis, small, large)
        assert small >= 6, (axis, small)
    deep = dataclasses.replace(base, axis="depth").case(fmt, 65536, "hunted")  # within what callscale compares
    assert depth(json.dumps(deep.calls[0].arguments)) <= MAX_DEPTH and len(deep.text) > 60000


def test_deliveries_alternate_and_repeat_recorded_patterns():
    text = "".join(chr(0x41 + i % 26) for i in range(1000))
    assert [len(d) for d in hunt.deliver(text, "alternating:1,50")[:4]] == [1, 50, 1, 50]
    assert [len(d) for d in hunt.deliver(text, "pattern:flush")][:26] == [1] * 24 + [380, 1]
    for spec in ("alternating:1,50", "pattern:speculative", "fixed:256", "tokens:4"):
        assert "".join(hunt.deliver(text, spec)) == text
    assert [len(d) for d in hunt.deliver(text, "fixed:256")] == [256, 256, 256, 232]


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
    made = hunt.mutants(parent, "glm47", rng, 300)
    said = " ".join(m.steps[-1] for m in made)
    for kind in ("kept ", "more of its inserted", "characters of ", "fragments of", "delivered ", "a slice repeated",
                 "grown along ", "delivered alternating:", "delivered pattern:", "delivered fixed:"):
        assert kind in said, kind
    assert {m.axis for m in made} == set(hunt.AXES)
    assert all(m.origin.startswith("mutant: ") for m in made)


def _fake_clock(monkeypatch, batch_seconds, confirm_seconds=5.0):
    """The hunt under a fake clock: a batch of k inputs takes ``batch_seconds(k)``, the gate's row
    ``confirm_seconds``; returns the clock and the batches measured (their candidates)."""
    clock = [0.0]
    batches = []
    monkeypatch.setattr(hunt.time, "monotonic", lambda: clock[0])

    def measure(spec_name, fmt, batch, folder, number, timeout, jobs):
        clock[0] += batch_seconds(len(batch))
        batches.append(batch)
        return [hunt.Measured(c, 1.0 + 0.001 * i, (1, 4)) for i, c in enumerate(batch)]

    class Run:
        passed = True

    def confirm(*args, **kwargs):
        clock[0] += confirm_seconds
        assert kwargs["timeout"] >= 10
        return Run()

    from callscale import matrix

    monkeypatch.setattr(hunt, "_measure", measure)
    monkeypatch.setattr(matrix, "run", confirm)
    return clock, batches


@pytest.mark.parametrize("per_input", [1.0, 3.0, 6.0])
def test_the_search_ends_within_the_budget_and_surveys_before_it_mutates(monkeypatch, per_input):
    """Batches cost 6 s plus ``per_input`` an input (the prior pace is 6 + 3 k) and the gate's row what it costs
    at that pace; the hunt learns the pace from the first batch and ends within 10% of the budget (and uses
    more than 60% of it unless it ran out of inputs); the survey comes whole before any mutant."""
    from callscale import plugins

    confirm = 6.0 + 0.6 * per_input * (sum(DEFAULTS.instruction_lengths) + 1024) / hunt.INPUT_CHARS  # as measured
    for budget in (hunt.MIN_BUDGET, 180.0, hunt.DEFAULT_BUDGET, 600.0):
        clock, batches = _fake_clock(monkeypatch, lambda k: 6.0 + per_input * k, confirm)
        clock[0] = 0.0
        found = hunt.hunt(plugins.resolve("qwen3", None), budget=budget)
        assert found.rounds == len(batches) >= 1 and found.seconds <= 1.1 * budget, (budget, found.seconds)
        origins = [c.origin.startswith("survey: ") for batch in batches for c in batch]
        assert origins == sorted(origins, reverse=True)  # every survey input before the first mutant
        if budget >= hunt.DEFAULT_BUDGET and per_input <= 3.0:
            assert found.survey_size == sum(origins) and not found.cut, budget
            assert len(origins) > sum(origins)  # and mutants after it
        assert sum(n for _, n in found.cut) == found.survey_size - sum(origins)
        assert found.seconds >= 0.6 * budget or not found.cut and len(origins) == sum(origins)


def test_a_steep_input_keeps_time_for_its_costlier_gate_row(monkeypatch):
    """Once an input grows steeply (exponent 1.45), the gate's row on it costs several times a linear one's
    (its counts at 64k are far larger): the search keeps that time, and the whole hunt still ends within the
    budget when the row costs what the pace projects."""
    from callscale import matrix, plugins

    clock = [0.0]
    monkeypatch.setattr(hunt.time, "monotonic", lambda: clock[0])
    pace = hunt.Pace(cautious=False)

    def measure(spec_name, fmt, batch, folder, number, timeout, jobs):
        clock[0] += pace.batch(len(batch))
        return [hunt.Measured(c, 1.45 if number == 1 and i == 0 else 1.02, (1, 4)) for i, c in enumerate(batch)]

    class Run:
        passed = False

    def confirm(*args, **kwargs):
        clock[0] += 0.9 * pace.confirm(DEFAULTS.instruction_lengths, 1.45)
        return Run()

    monkeypatch.setattr(hunt, "_measure", measure)
    monkeypatch.setattr(matrix, "run", confirm)
    assert pace.confirm(DEFAULTS.instruction_lengths, 1.45) > 3 * pace.confirm(DEFAULTS.instruction_lengths, 1.02)
    found = hunt.hunt(plugins.resolve("qwen3", None), budget=hunt.DEFAULT_BUDGET)
    assert found.failed and found.worst.growth == 1.45 and found.seconds <= hunt.DEFAULT_BUDGET
    assert found.cut and found.rounds == 2  # the survey cut short to measure the steep input at the gate's lengths


def test_a_budget_too_small_for_the_whole_survey_says_what_it_cuts():
    held, cut = hunt.planned_cut("qwen3", hunt.MIN_BUDGET)
    assert 1 <= held < len(hunt.survey("qwen3")) and cut and "literal closing tags" in cut[-1]
    assert hunt.planned_cut("qwen3", hunt.DEFAULT_BUDGET) == (len(hunt.survey("qwen3")), [])


def test_the_report_counts_what_was_measured(monkeypatch):
    from callscale import plugins

    clock, batches = _fake_clock(monkeypatch, lambda k: 6.0 + 3.0 * k)
    found = hunt.hunt(plugins.resolve("qwen3", None), budget=240.0)
    lines = hunt.summary(found)
    measured = [c for batch in batches for c in batch]
    survey = [c for c in measured if c.origin.startswith("survey: ")]
    assert lines[0].startswith(f"survey: {len(survey)} of {found.survey_size} inputs in {found.survey_rounds} batches")
    assert lines[1].startswith(f"mutants: {len(measured) - len(survey)} inputs")
    for axis in hunt.AXES:
        n = sum(1 for c in measured if c.axis == axis)
        assert (f"{axis} {n} (" in lines[2]) == (n > 0), axis
    by_step = lines[3]
    assert f"survey: structure axes (calls, keys, depth, items, between, tools) 6" in by_step
    assert "tried: content kinds" not in " ".join(lines)


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
    (["--budget", "30"], "--budget: 30 s holds less than a first batch of the survey"),
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
@pytest.mark.slow  # the search itself: 480 s of budget (the survey, then mutants that name the block)
def test_hunt_finds_the_braille_term_unaided_and_saves_a_workload_the_gate_fails(capsys, tmp_path, in_tests):
    saved = tmp_path / "worst.jsonl"
    status, out, err = run_main(capsys, "hunt", "--parser", "braille_parser:BrailleRereads", "--workload-format",
                                "deepseek_v31", "--budget", "480", "--save", str(saved))
    assert status == 1, out + err
    # the gate's row on the steepest input: a value input as the saved file: workload, an input of another axis
    # (Braille between the calls, say) as a workload grown along that axis, saved a record per gate length
    (workload,) = re.findall(r"^FAIL braille_parser:BrailleRereads on (\S+) ", out, re.MULTILINE)
    records = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    assert records and all("".join(r["deltas"]) == r["text"] for r in records)
    assert all(BRAILLE.search(r["text"]) for r in records), records[0]["text"][:500]
    if not workload.startswith("file:"):
        assert workload.startswith("hunted_") and len(records) == len(DEFAULTS.instruction_lengths), out
        return
    assert len(records) == 1
    status, out, err = run_main(capsys, "gate", "--meter", "instructions", "--no-progress", "--parser",
                                "braille_parser:BrailleRereads", "--workload-format", "deepseek_v31",
                                "--workload", f"file:{saved}", "--lengths", "2k,8k,32k", "--timeout", "120")
    assert status == 1 and "FAIL braille_parser:BrailleRereads" in out


HIDDEN_TERMS = ["RereadsOnBidi", "RereadsOnDecomposed", "RereadsOnAlternation", "RereadsOnBundles", "GrowsWithKeys",
                "GrowsWithDepth", "GrowsWithItems", "JoinsEarlierCalls", "ScansEveryTool"]
_HUNTED = re.compile(r"^hunted \S+ \(\S+\) for (\d+) s of a (\d+) s budget", re.MULTILINE)


@needs_valgrind
@pytest.mark.slow  # each takes its default budget, 300 s of wall
@pytest.mark.parametrize("name", HIDDEN_TERMS)
def test_hunt_finds_each_hidden_term_with_its_default_budget(capsys, tmp_path, in_tests, name):
    status, out, err = run_main(capsys, "hunt", "--parser", f"hidden_terms:{name}", "--workload-format",
                                "deepseek_v31", "--no-progress", "--save", str(tmp_path / "worst.jsonl"))
    assert status == 1 and f"FAIL hidden_terms:{name} on " in out, out + err
    took, budget = map(int, _HUNTED.search(out).groups())
    assert budget == hunt.DEFAULT_BUDGET and took <= 1.1 * budget, out


@needs_valgrind
@pytest.mark.slow  # each takes its default budget, 300 s of wall
@pytest.mark.parametrize("name", ["deepseek_v31", "qwen3_coder", "llama3_json"])
def test_hunt_finds_nothing_on_a_built_in_parser(capsys, name):
    status, out, err = run_main(capsys, "hunt", "--parser", name, "--no-progress")
    assert status == 0 and f"hunt: no input found on which {name} fails the gate's rules" in out, out + err
    took, budget = map(int, _HUNTED.search(out).groups())
    assert took <= 1.1 * budget and re.search(r"^survey: (\d+) of \1 inputs", out, re.MULTILINE), out


@needs_valgrind
def test_a_budget_short_of_the_survey_says_so_in_one_line_at_the_start(capsys, monkeypatch):
    from callscale.commands import hunt as command

    seen = {}

    def fake(spec, budget, *args, **kwargs):
        seen["said"] = capsys.readouterr().err  # what was said before the search started
        return hunt.Hunt(spec.name, spec.format, survey_size=len(hunt.survey(spec.format)))

    monkeypatch.setattr(command, "hunt", fake)
    status, out, err = run_main(capsys, "hunt", "--parser", "qwen3", "--budget", "100", "--no-progress")
    held, cut = hunt.planned_cut("qwen3", 100.0)
    (line,) = seen["said"].splitlines()
    assert line == f"hunt: a 100 s budget holds about {held} inputs of the survey: cut {'; '.join(cut)}"
    assert status == 1 and "no input could be measured" in out and f"survey: 0 of {len(hunt.survey('qwen3'))} inputs" in out
    status, out, err = run_main(capsys, "hunt", "--parser", "qwen3", "--no-progress")
    assert seen["said"] == ""  # the default budget holds the whole survey
