"""Every figure that enters a verdict passes one check (callscale.compare.check_rows), so a file cannot
turn a verdict into a pass: ``gate --from``, both files of ``compare`` and ``--baseline`` refuse a row
that repeats, a missing, non-finite, zero, negative or absurd figure with one line and exit status 2;
``callscale history`` refuses such figures in asv's result files the same way.

tests/helpers/data/gate-one-failing.csv is a real run: deepseek_v31 (linear) and tests/helpers/quadratic_parser.py on
write_file at 1k, 2k, 4k under the instruction meter; the quadratic parser's rows are file lines 4, 7, 10.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from support import run_main, HELPERS

RUN = HELPERS / "data" / "gate-one-failing.csv"

SPOILS = [
    ("empty", "", "no figure (seconds is empty) and no error"),
    ("nan", "nan", "figure nan is not a positive finite number"),
    ("inf", "inf", "figure inf is not a positive finite number"),
    ("zero", "0", "figure 0 is not a positive finite number"),
    ("negative", "-1", "figure -1 is not a positive finite number"),
    ("absurd", "1e308", "figure 1e+308 is above any measurement (1e+15 under the instructions meter)"),
]


def frame() -> pd.DataFrame:
    return pd.read_csv(RUN, keep_default_na=False, dtype=str)


def spoiled(tmp_path: Path, value: str, line: int = 10) -> Path:
    """The run with the figure of file ``line`` (the header is line 1) set to ``value`` (as written)."""
    df = frame()
    df.loc[line - 2, "seconds"] = value
    path = tmp_path / "new.csv"
    df.to_csv(path, index=False)
    return path


def doubled(tmp_path: Path) -> Path:
    """Every row twice; the copies of the quadratic parser's rows hold a linear parser's figures."""
    df = frame()
    copy = df.copy()
    quad = copy["parser"] != "deepseek_v31"
    copy.loc[quad & (copy["floor"] == "False"), "seconds"] = copy.loc[copy["parser"] == "deepseek_v31", "seconds"].values
    path = tmp_path / "new.csv"
    pd.concat([df, copy]).to_csv(path, index=False)
    return path


def refused(capsys, *argv: str) -> str:
    status, out, err = run_main(capsys, *argv)
    assert status == 2, (status, out, err)
    assert out == "" and len(err.splitlines()) == 1, (out, err)
    assert "Traceback" not in err
    return err


def test_the_sound_run_still_fails_its_quadratic_parser(capsys):
    status, out, _ = run_main(capsys, "gate", "--from", str(RUN))
    assert status == 1 and "gate failed:" in out


@pytest.mark.parametrize("name, value, words", SPOILS, ids=[s[0] for s in SPOILS])
def test_gate_from_refuses_a_figure_that_is_no_measurement(capsys, tmp_path, name, value, words):
    # before: 1e308 was an OverflowError traceback, nan a TypeError traceback
    err = refused(capsys, "gate", "--from", str(spoiled(tmp_path, value)))
    assert err.startswith("callscale gate: error: --from: ")
    assert "new.csv line 10 (quadratic_parser:QuadraticParser on write_file at 4k): " + words in err


def test_gate_from_refuses_a_repeated_row(capsys, tmp_path):
    # before: each row twice read the quadratic pair as "steepest nan ... ok" and "gate passed", exit 0
    err = refused(capsys, "gate", "--from", str(doubled(tmp_path)))
    assert "new.csv line 11 (null on write_file at 1k): repeats line 2 (one row per parser, format, workload and " \
           "length)" in err


@pytest.mark.parametrize("name, value, words", SPOILS, ids=[s[0] for s in SPOILS])
def test_compare_refuses_such_a_figure_in_the_new_file(capsys, tmp_path, name, value, words):
    # before: -1 or 0 seconds in the new file read "ok", exit 0
    err = refused(capsys, "compare", str(RUN), str(spoiled(tmp_path, value)))
    assert "new.csv line 10 (quadratic_parser:QuadraticParser on write_file at 4k): " + words in err


@pytest.mark.parametrize("name, value, words", SPOILS, ids=[s[0] for s in SPOILS])
def test_compare_refuses_such_a_figure_in_the_base_file(capsys, tmp_path, name, value, words):
    err = refused(capsys, "compare", str(spoiled(tmp_path, value)), str(RUN))
    assert "new.csv line 10 (quadratic_parser:QuadraticParser on write_file at 4k): " + words in err


def test_compare_refuses_a_repeated_row_in_the_new_file(capsys, tmp_path):
    # before: with each row twice the last one won: the quadratic parser's copies passed, exit 0
    err = refused(capsys, "compare", str(RUN), str(doubled(tmp_path)))
    assert "repeats line 2" in err


def test_a_failed_row_without_a_figure_is_a_result_not_a_refusal(capsys, tmp_path):
    df = frame()
    df.loc[8, "seconds"] = ""
    df.loc[8, "error"] = "timeout after 5 s"
    path = tmp_path / "new.csv"
    df.to_csv(path, index=False)
    status, out, err = run_main(capsys, "gate", "--from", str(path))
    assert status == 1 and "gate failed:" in out and err == ""


# ------------------------------------------------------------------ history: asv's result files
def asv_results(tmp_path: Path, figures: list) -> Path:
    """One asv result file per commit; ``figures[i]``: the counts at 1k, 2k, 4k of commit i."""
    root = tmp_path / "asv"
    (root / "box").mkdir(parents=True)
    bench = "benchmarks.InstructionCount.track_instructions"
    params = [["'deepseek_v31'"], ["'write_file'"], ["1024", "2048", "4096"]]
    for i, values in enumerate(figures):
        commit = f"{i + 1:02d}" * 20
        doc = {"commit_hash": commit, "date": 1_700_000_000_000 + i * 60_000, "env_name": "py",
               "result_columns": ["result", "params"], "results": {bench: [values, params]}}
        (root / "box" / f"{commit[:8]}-py.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


@pytest.mark.parametrize("value, words", [
    (0, "figure 0 is not a positive finite number"),
    (-5, "figure -5 is not a positive finite number"),
    (float("inf"), "figure inf is not a positive finite number"),
    (1e308, "figure 1e+308 is above any measurement (1e+15 instructions)"),
])
def test_history_refuses_a_figure_that_is_no_count(capsys, tmp_path, value, words):
    # before: the page was written (a zero count, an infinite or absurd one fitted as figures), exit 0;
    # a NaN is asv's own "skipped" (as None is "failed"): not a figure, left out of the fit
    root = asv_results(tmp_path, [[1000, 2000, 4000], [1000, 2000, value]])
    status, out, err = run_main(capsys, "history", "--results", str(root), "--out", str(tmp_path / "page"))
    assert status == 2 and len(err.splitlines()) == 1, (status, out, err)
    assert words in err and "02020202-py.json" in err
    assert not (tmp_path / "page" / "index.html").exists()


def test_history_refuses_a_figure_given_twice(capsys, tmp_path):
    root = asv_results(tmp_path, [[1000, 2000, 4000]])
    path = next((root / "box").glob("*.json"))
    doc = json.loads(path.read_text())
    doc["results"]["benchmarks.InstructionCount.track_instructions"] = [[1000, 2000, 4000, 16000],
                                                                          [["'deepseek_v31'"], ["'write_file'"],
                                                                           ["1024", "2048", "4096", "4096"]]]
    path.write_text(json.dumps(doc))
    status, out, err = run_main(capsys, "history", "--results", str(root), "--out", str(tmp_path / "page"))
    assert status == 2 and len(err.splitlines()) == 1, (status, out, err)
    assert "given twice" in err
