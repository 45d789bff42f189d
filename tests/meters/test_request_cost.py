"""The per-request cost: a fresh parser made and given its first delta, judged against the floor's.

tests/helpers/vocabulary_parser.py compiles a pattern over 100,000 special tokens in its constructor (what
vLLM's Mistral parser did on every request): linear in the length of a call, so only the per-request rule
fails it, under both meters; every built-in parser passes it. docs/gate.md, "The per-request rule"."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from callscale import compare, config, fit, parsers
from callscale.measure import request_cost
from callscale.plugins import resolve
from callscale.streaming import NullParser
from callscale.workloads import make
from support import ROOT, gate_in_helpers

PARSER = ["--parser", "vocabulary_parser:VocabularyParser", "--parser", "qwen3", "--workload-format", "qwen3",
          "--workload", "write_file", "--no-progress"]


def gate(*argv: str) -> subprocess.CompletedProcess:
    return gate_in_helpers(*PARSER, *argv)


def test_the_rule_fails_a_request_over_the_factor_and_keeps_the_cost_verdict():
    linear = fit.fit([4096, 16384, 65536], [1.0, 4.0, 16.0], threshold=1.3)
    assert fit.judge_request(linear, 9_000.0, 2.0, 1000.0).verdict == fit.FAIL
    assert linear.rule == "request" and linear.request_ratio == 4500.0
    assert "4,500x the floor's > 1000x" in fit.request_words(linear)
    steep = fit.fit([4096, 16384, 65536], [1.0, 16.0, 256.0], threshold=1.3)
    assert fit.judge_request(steep, 9_000.0, 2.0, 1000.0).rule == "step+projection+request"
    fine = fit.fit([4096, 16384, 65536], [1.0, 4.0, 16.0], threshold=1.3)
    assert fit.judge_request(fine, 1_000.0, 2.0, 1000.0).verdict == fit.OK and fine.request_ratio == 500.0
    unmeasured = fit.fit([4096, 16384, 65536], [1.0, 4.0, 16.0], threshold=1.3)
    assert fit.judge_request(unmeasured, None, 2.0, 1000.0).request_ratio is None


def test_every_built_in_parser_passes_natively_with_room():
    factor = config.DEFAULTS.request_factor
    worst = {}
    for name in parsers.names():
        fmt = resolve(name).format
        deltas = make("write_file", fmt, 1024).deltas("tokens:4")
        floor = request_cost(NullParser, deltas, [])
        worst[name] = request_cost(parsers.get(name), deltas, []) / floor
    assert max(worst.values()) < factor / 5, sorted(worst.items(), key=lambda kv: -kv[1])[:3]
    assert min(worst.values()) > 1.5  # a parser's constructor does more than the floor's


def test_the_factor_is_a_validated_setting(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.callscale]\nrequest_factor = 250\n")
    assert config.load(tmp_path).request_factor == 250.0
    assert config.DEFAULTS.request_factor == 1000.0
    for bad, words in (("0.5", "request_factor must be more than 1 and at most 1e+09"),
                       ('"lots"', "request_factor must be a number")):
        (tmp_path / "pyproject.toml").write_text(f"[tool.callscale]\nrequest_factor = {bad}\n")
        with pytest.raises(config.ConfigError, match=re.escape(words)):
            config.load(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.callscale]\nrequest_factor = -3\n")
    proc = subprocess.run([sys.executable, "-m", "callscale", "gate", "--parser", "qwen3"], cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "request_factor" in proc.stderr


def _csv(path, request):
    rows = [{"parser": p, "floor": p == "null", "format": "qwen3", "workload": "write_file", "length": n,
             "chars": n, "meter": "instructions", "seconds": 1e6 * n / 1024, "error": "",
             "request": (request if p == "qwen3" else 1745) if n == 1024 else ""}
            for p in ("null", "qwen3") for n in (1024, 2048, 4096)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return compare.load(path)


def test_compare_fails_a_request_that_grew_and_reads_files_without_the_column(tmp_path):
    base = _csv(tmp_path / "base.csv", 31538)
    assert compare.compare(base, _csv(tmp_path / "same.csv", 31538)).worse == []
    worse = compare.compare(base, _csv(tmp_path / "new.csv", 40000)).worse
    assert [p.parser for p in worse] == ["qwen3"] and worse[0].reasons == ["a request x1.27 at 1k (> 1.05)"]
    old = pd.read_csv(tmp_path / "base.csv").drop(columns=["request"])
    old.to_csv(tmp_path / "old.csv", index=False)
    assert compare.compare(compare.load(tmp_path / "old.csv"), _csv(tmp_path / "new2.csv", 40000)).worse == []


@pytest.mark.slow  # the fixture's pattern over 100k tokens, per request, natively (~30 s)
def test_the_time_gate_fails_the_vocabulary_parser_by_its_request_alone():
    proc = gate("--meter", "time", "--lengths", "4k,16k,64k")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    fails = [line for line in proc.stdout.splitlines() if line.startswith("FAIL ")]
    assert len(fails) == 1 and fails[0].startswith("FAIL vocabulary_parser:VocabularyParser on write_file (request): "
                                                   "a request (a fresh parser and its first delta) costs"), fails
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert ["qwen3", "request", "-", "-", "-"] == next(l for l in lines if l[:2] == ["qwen3", "request"])[:5]


@pytest.mark.slow  # the fixture under callgrind: its constructor's pattern, counted (~1-3 min of CPU)
def test_the_instruction_gate_fails_the_vocabulary_parser_by_its_request_alone():
    proc = gate("--meter", "instructions", "--lengths", "1k,2k,4k")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    fails = [line for line in proc.stdout.splitlines() if line.startswith("FAIL ")]
    assert len(fails) == 1 and fails[0].startswith("FAIL vocabulary_parser:VocabularyParser on write_file (request): "), fails
    ours = next(line.split() for line in proc.stdout.splitlines() if line.split()[:2] == ["qwen3", "request"])
    assert ours[-1] == "ok" and float(ours[-3]) < 100  # qwen3: 18x the floor's (31,538 instructions)


def _from(capsys, *argv: str) -> tuple[int, str]:
    """``callscale gate --from ARGV`` in this process (the settings of the current directory's pyproject.toml)."""
    from callscale import cli

    status = cli.main(["gate", "--from", *argv])
    return status, capsys.readouterr().out


def _request_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("FAIL ", "requests: "))]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_request_factor_option_judges_the_run_and_its_merge_over_the_settings(tmp_path, monkeypatch, capsys):
    # qwen3's request: 16-23x the floor's under callgrind, by Python version (its rows pass the cost rules at 1k, 2k, 4k)
    (tmp_path / "pyproject.toml").write_text("[tool.callscale]\nrequest_factor = 100\n")
    proc = subprocess.run([sys.executable, "-m", "callscale", "gate", "--parser", "qwen3", "--workload", "write_file",
                           "--meter", "instructions", "--lengths", "1k,2k,4k", "--no-progress", "--request-factor", "2",
                           "--out", "run"], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    fails = _request_lines(proc.stdout)
    said = re.match(r"FAIL qwen3 on write_file \(request\): a request \(a fresh parser and its first delta\) "
                    r"costs ([0-9.]+)x the floor's > 2x", fails[0])
    assert said is not None and 4 < float(said[1]) < 100, fails
    ratio = said[1]
    assert fails[1:] == ["requests: 0 of 1 within 2x the floor's (one request: a fresh parser and its first delta; "
                         "rule request)"], fails
    fits = pd.read_csv(tmp_path / "run" / "scaling-fits.csv")
    assert list(fits.loc[fits["parser"] == "qwen3", "request_factor"]) == [2.0]
    assert list(fits.loc[fits["parser"] == "qwen3", "rule"]) == ["request"]

    shard = str(tmp_path / "run" / "scaling.csv")
    monkeypatch.chdir(tmp_path)  # [tool.callscale] request_factor = 100: the merged row passes
    status, out = _from(capsys, shard)
    assert status == 0 and _request_lines(out) == [
        "requests: every one within 100x the floor's (one request: a fresh parser and its first delta; rule request)"]
    status, out = _from(capsys, shard, "--request-factor", "2")  # the option over [tool.callscale]
    assert status == 1 and _request_lines(out) == fails, out
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pyproject.toml").write_text("[tool.callscale]\n")
    monkeypatch.chdir(bare)  # neither: the default, 1000
    status, out = _from(capsys, shard)
    assert status == 0 and "requests: every one within 1000x the floor's" in out, out
    half = float(ratio) / 2  # (below the measured ratio, whatever its rounding)
    status, out = _from(capsys, shard, "--request-factor", f"{half:g}")
    assert status == 1 and f"costs {ratio}x the floor's > {half:g}x" in out, out
