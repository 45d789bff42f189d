"""Content kinds, deliveries, and the default gate that covers them.

The fixtures (``tests/helpers/input_quadratic_parsers.py``) wrap the built-in
``deepseek_v31`` parser and add a quadratic term that only a content kind or
a delivery triggers; on the workloads the gate ran before content kinds
(ASCII source, four characters a delta) both gates passed them all. The
default gate (``[tool.callscale] workloads``: the headline workloads plus
``write_file@mixed+tokens:16`` and ``write_file@mixed+parts:16``) must fail each, and
still pass ``deepseek_v31`` beside them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from callscale import cli, config, fit as fitting, parsers
from callscale.verify import verify_stream
from callscale.workloads import catalog, chunking, content
from support import HELPERS

FIXTURES = ("RereadsOnCjk", "RereadsOnAstral", "RereadsOnTab", "RereadsOnEscape", "SlicesEachDelta")
"""Fixtures whose total cost is quadratic under one content kind or delivery of the default gate."""

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")


@pytest.fixture
def importable_tests(monkeypatch):
    """Children import the fixtures (module:Class) from tests/; the gate reads the project's pyproject.toml."""
    monkeypatch.chdir(HELPERS)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(HELPERS), os.environ.get("PYTHONPATH")) if p))


# ----------------------------------------------------------------- content kinds


@pytest.mark.parametrize("kind", content.names())
def test_every_kind_gives_exactly_n_characters_with_plain_edges(kind):
    for n in (1, 7, 100, 4096):
        text = content.text(kind, n, 3, "qwen3_coder")
        assert len(text) == n
        if kind != "code":  # code is the source as it was (write_file's text before kinds)
            assert text[0].isalnum() and text[-1].isalnum()
    assert content.text(kind, 500, 1, "glm45") == content.text(kind, 500, 1, "glm45")


def test_each_kind_holds_what_it_names():
    assert any("\u4e00" <= c <= "\u9fff" for c in content.text("cjk", 2000))
    assert any(ord(c) > 0xFFFF for c in content.text("emoji", 2000)) and "\u200d" in content.text("emoji", 2000)
    escapes = content.text("escapes", 2000)
    assert "\\u" in escapes and '"' in escapes and "\x00" in escapes and "\x1b" in escapes
    assert "\t" in content.text("whitespace", 2000) and "\r\n" in content.text("whitespace", 2000)
    assert "\n" not in content.text("json", 4000) and content.text("json", 4000).count("{") > 100
    mixed = content.text("mixed", 8192, 0, "deepseek_v31")
    assert any(ord(c) > 0xFFFF for c in mixed) and "\t" in mixed and "\\u" in mixed
    assert any("\u4e00" <= c <= "\u9fff" for c in mixed)


def test_markup_holds_other_formats_markers_but_not_the_formats_own_tokens():
    from callscale.parsers import deepseek, qwen

    markers = content.format_markers("deepseek_v31")
    assert qwen.TOOL_CALL_CLOSE in markers and qwen.PARAMETER_OPEN in markers
    assert not any(tok in m for m in markers for tok in deepseek.SPECIAL_TOKENS)
    assert any(deepseek.CALL_END.startswith(m) for m in markers)  # a prefix of its own token
    # a format whose parser keeps its closing tags in a value gets them
    assert qwen.PARAMETER_CLOSE in content.format_markers("qwen3_coder")
    assert len(content.format_markers()) > 60


@pytest.mark.parametrize("workload", catalog.KIND_WORKLOADS)
def test_every_parser_parses_every_kind(workload):
    """Each of our 18 parsers streams every kind of every workload right (tokens:4 and one delta)."""
    for kind in content.names():
        for name in parsers.names():
            case = catalog.make(f"{workload}@{kind}", name, 1024, seed=1)
            for split in ("tokens:4", "whole"):
                assert verify_stream(parsers.get(name), case, split) is None, (name, workload, kind, split)


def test_a_kind_name_is_checked_in_one_line():
    assert catalog.make("write_file@cjk", "qwen3", 1024).workload == "write_file@cjk"
    assert catalog.make("write_file@code", "qwen3", 1024).text == catalog.make("write_file", "qwen3", 1024).text
    for bad, words in (("write_file@klingon", "unknown content kind 'klingon'"),
                       ("repeated_opener@cjk", "carries no argument text"),
                       ("write_file+parts:0", "the size must be at least 1"),
                       ("write_file+sometimes", "bad chunking 'sometimes'")):
        with pytest.raises(KeyError) as info:
            catalog.make(bad, "qwen3", 1024)
        assert words in info.value.args[0] and "\n" not in info.value.args[0]


@pytest.mark.parametrize("bad", ["write_file@klingon", "long_content@cjk", "write_file@cjk+never"])
def test_the_command_line_rejects_a_bad_kind_or_delivery(bad, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["gate", "--parser", "qwen3", "--workload", bad, "--no-progress"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("callscale gate: error:") and bad.split("+")[0].split("@")[0] in err[-1]


def test_check_strict_agrees_on_the_mixed_kind(capsys):
    status = cli.main(["check", "--strict", "--workload", "write_file@mixed,many_short_calls@mixed,"
                       "parallel_calls@markup,unclosed_call@escapes", "--lengths", "1k"])
    out = capsys.readouterr().out
    assert status == 0, out[-2000:]


# ----------------------------------------------------------------- deliveries


def test_parts_splits_into_n_deltas_that_grow_with_the_text():
    case = catalog.make("write_file", "deepseek_v31", 16384)
    deltas = chunking.chunk(case.text, "parts:16", case.special_tokens)
    assert "".join(deltas) == case.text and len(deltas) == 16
    assert min(len(d) for d in deltas) > len(case.text) / 16 - 30
    assert not any(tok in d[:-1] and not d.endswith(tok) for d in deltas for tok in ())
    # a cut inside a special token moves to its end
    text = "ab" + "<｜tool▁sep｜>" + "cd"
    for n in range(1, 8):
        for d in chunking.chunk(text, f"parts:{n}", ["<｜tool▁sep｜>"]):
            assert d.count("<") == d.count(">")


def test_a_workload_fixes_its_delivery_whatever_the_run_asks():
    case = catalog.make("write_file@cjk+parts:16", "qwen3", 4096)
    assert case.delivery == "parts:16" and len(case.deltas("tokens:4")) == 16 and case.chunking("char") == "parts:16"
    assert catalog.base_name("unclosed_call@cjk+whole") == "unclosed_call"
    unclosed = catalog.make("unclosed_call@emoji+whole", "glm47", 1024)
    assert verify_stream(parsers.get("glm47"), unclosed) is None  # still a malformed workload


def test_the_default_gate_holds_a_kind_and_a_growing_delivery():
    assert config.DEFAULTS.workloads[:3] == catalog.HEADLINE
    assert "write_file@mixed+tokens:16" in config.DEFAULTS.workloads
    assert "write_file@mixed+parts:16" in config.DEFAULTS.workloads
    from callscale import testing

    assert testing.DEFAULT_WORKLOADS == config.DEFAULTS.workloads


# ----------------------------------------------------------------- the slowest increment


def test_the_slowest_increment_rule():
    ok = fitting.fit([4096, 16384, 65536], [1.0, 4.0, 16.0], 1.3)
    # flat slowest increment: passes
    fitting.judge_increments(ok, [4096, 16384, 65536], [0.1, 0.1, 0.12], [1.0, 4.0, 16.0], [1024, 4096, 16384])
    assert ok.verdict == fitting.OK and ok.increment_steepest < 0.5
    # grows with the length and stands far above the mean increment: fails
    bad = fitting.fit([4096, 16384, 65536], [1.0, 4.0, 16.0], 1.3)
    fitting.judge_increments(bad, [4096, 16384, 65536], [20.0, 80.0, 320.0], [1.0, 4.0, 16.0], [1024, 4096, 16384])
    assert bad.verdict == fitting.FAIL and bad.rule == "increment" and bad.increment_ratio == pytest.approx(327.68)
    assert bad.increment_steepest == pytest.approx(1.0)
    # grows, but a few times the mean (a buffer's realloc): passes
    spike = fitting.fit([4096, 16384, 65536], [1.0, 4.0, 16.0], 1.3)
    fitting.judge_increments(spike, [4096, 16384, 65536], [0.05, 0.2, 0.8], [1.0, 4.0, 16.0], [1024, 4096, 16384])
    assert spike.verdict == fitting.OK
    # rose from 4k to 16k, flat since, at 51x the mean (qwen3_coder on write_file@mixed, measured): passes
    flat = fitting.fit([4096, 16384, 65536], [0.000966, 0.00373, 0.0143], 1.3)
    fitting.judge_increments(flat, [4096, 16384, 65536], [0.0098, 0.0456, 0.0444], [0.000966, 0.00373, 0.0143],
                             [1062, 4134, 16422])
    assert flat.verdict == fitting.OK and flat.increment_ratio == pytest.approx(51, abs=1)



def test_increments_are_timed_with_the_collector_off_and_it_is_restored():
    # a collection runs at the same increment in every run (the allocations repeat), so the minimum over the
    # runs keeps its pause: timed with the collector off, a linear parser's slowest increment stays flat
    # (deepseek_v32 many_short_calls at 64k: 0.20-0.23 ms with it on, 0.014-0.019 ms off; the rule failed it)
    import gc

    from callscale import measure

    seen = []

    class Probe:
        def parse_streaming_increment(self, delta, tools=None):
            seen.append(gc.isenabled())

        def finish(self, tools=None):
            seen.append(gc.isenabled())
            raise RuntimeError("a parser's error propagates; the collector is restored all the same")

    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        measure._increment_times(Probe, ["a", "b", "c"], [])
    assert seen == [False] * 4 and gc.isenabled()


# ----------------------------------------------------------------- the default gates fail the fixtures


def _gate(meter: list[str], tmp_path, fixtures) -> "object":
    import pandas as pd

    args = ["gate", *meter, "--no-progress", "--out", str(tmp_path), "--parser", "deepseek_v31"]
    for name in fixtures:
        args += ["--parser", f"input_quadratic_parsers:{name}", "--format", "deepseek_v31"]
    status = cli.main(args)
    fits = pd.read_csv(tmp_path / "scaling-fits.csv", keep_default_na=False, na_values=[""])
    return status, fits


def _verdicts(fits) -> dict[str, set[str]]:
    """Parser -> the default workloads its rows failed."""
    failed: dict[str, set[str]] = {}
    for row in fits.to_dict("records"):
        name = row["parser"].split(":")[-1]
        failed.setdefault(name, set())
        if row["verdict"] != "ok":
            failed[name].add(row["workload"])
    return failed


@needs_valgrind
@pytest.mark.slow  # the default exact gate on 6 parsers: minutes under callgrind
def test_the_default_exact_gate_fails_each_fixture(importable_tests, tmp_path):
    status, fits = _gate(["--meter", "instructions", "--jobs", "2", "--timeout", "600"], tmp_path, FIXTURES)
    failed = _verdicts(fits)
    assert status == 1
    assert failed["deepseek_v31"] == set(), fits[fits["parser"] == "deepseek_v31"].to_dict("records")
    for name in ("RereadsOnCjk", "RereadsOnAstral", "RereadsOnTab", "RereadsOnEscape"):
        assert "write_file@mixed+tokens:16" in failed[name], (name, failed[name])
        assert not failed[name] & set(catalog.HEADLINE), (name, failed[name])  # the old rows passed it
    assert failed["SlicesEachDelta"] == {"write_file@mixed+parts:16"}


@pytest.mark.slow  # the default time gate on 7 parsers
def test_the_default_time_gate_fails_each_fixture(importable_tests, tmp_path):
    status, fits = _gate([], tmp_path, FIXTURES + ("SlowestGrows",))
    failed = _verdicts(fits)
    assert status == 1
    assert failed["deepseek_v31"] == set(), fits[fits["parser"] == "deepseek_v31"].to_dict("records")
    # Not RereadsOnAstral: its re-encode is a quadratic term at the clock's edge (docs/gate.md, the fixtures'
    # table): steepest 1.40-1.42 on the development machine, 1.29 (ok) in one CI run; the exact gate fails it.
    for name in ("RereadsOnCjk", "RereadsOnTab", "RereadsOnEscape"):
        assert "write_file@mixed+tokens:16" in failed[name], (name, failed[name])
    assert "write_file@mixed+parts:16" in failed["SlicesEachDelta"]
    slowest = fits[fits["parser"].str.endswith("SlowestGrows")]
    assert any("increment" in str(rule) for rule in slowest["rule"]), slowest.to_dict("records")


# ----------------------------------------------------------------- the non-streaming path (detect)


def test_detect_drives_detect_and_parse_once_and_streams_nothing():
    from callscale.workloads.chunking import chunk, drive

    calls = []

    class Recording:
        def parse_streaming_increment(self, delta, tools=None):
            calls.append(("increment", delta))

        def finish(self, tools=None):
            calls.append(("finish",))

        def detect_and_parse(self, text, tools=None):
            calls.append(("detect", text))
            return {"normal_text": text, "calls": []}

    assert chunk("abc def", "detect") == ["abc def"]
    assert drive(Recording, "tokens:4") is Recording  # any streaming chunking: the factory itself
    parser = drive(Recording, "detect")()
    assert parser.parse_streaming_increment("abc def", []) == {"normal_text": "abc def", "calls": []}
    assert parser.parse_streaming_increment("more", []) is None and parser.finish([]) is None
    assert calls == [("detect", "abc def")]


def test_a_detect_row_measures_the_non_streaming_path_and_checks_its_output():
    from callscale.measure import measure
    from callscale.workloads.catalog import get
    from input_quadratic_parsers import DetectRereads

    case = get("write_file+detect")("deepseek_v31", 2048)
    assert case.deltas("tokens:4") == [case.text]
    m = measure(DetectRereads, case, "tokens:4", repeats=1, latency=False, memory=False, verify=True)
    assert (m.chunking, m.deltas, m.error, m.wrong) == ("detect", 1, None, None)
    parser = DetectRereads()
    parser.detect_and_parse(case.text, list(case.tools))
    assert parser.rereads == -(-len(case.text) // 32)  # (its re-read ran, once every 32 characters)


@needs_valgrind
@pytest.mark.slow  # three callgrind children
def test_the_exact_gate_fails_a_quadratic_detect_and_parse_only_on_the_detect_row(importable_tests, tmp_path):
    status = cli.main(["gate", "--meter", "instructions", "--no-progress", "--out", str(tmp_path),
                       "--lengths", "2k,8k,32k", "--workload", "write_file+detect,write_file+whole",
                       "--parser", "input_quadratic_parsers:DetectRereads", "--workload-format", "deepseek_v31"])
    failed = _verdicts(__import__("pandas").read_csv(tmp_path / "scaling-fits.csv", keep_default_na=False,
                                                     na_values=[""]))
    assert status == 1
    assert failed["DetectRereads"] == {"write_file+detect"}

