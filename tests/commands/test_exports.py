"""--export bmf:PATH: the measured figures as Bencher Metric Format JSON (callscale.exports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callscale.cli import main
from support import HELPERS

RUN = HELPERS / "data" / "gate-one-failing.csv"
QUAD = "quadratic_parser:QuadraticParser"

#: Bencher's published JSON schema of BMF (https://bencher.dev/bmf.json).
SCHEMA = {"type": "object", "patternProperties": {".+": {"type": "object", "patternProperties": {".+": {
    "type": "object", "properties": {"value": {"type": "number"}, "lower_value": {"type": "number"},
                                     "upper_value": {"type": "number"}}, "required": ["value"]}}}}}


def _main(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_bmf_holds_each_count_and_each_pairs_fit(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert _main(["gate", "--from", str(RUN), "--export", f"bmf:{tmp_path / 'bmf.json'}"]) == 1  # the quadratic fails
    doc = json.loads((tmp_path / "bmf.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)
    assert doc["deepseek_v31/write_file/4k"] == {"instructions": {"value": 14295279.0}}
    assert doc[f"{QUAD}/write_file/1k"] == {"instructions": {"value": 75214898.0}}
    assert round(doc[f"{QUAD}/write_file"]["scaling-exponent"]["value"], 2) == 1.88
    assert round(doc[f"{QUAD}/write_file"]["steepest-exponent"]["value"], 2) == 1.90
    assert round(doc[f"{QUAD}/write_file"]["projection-ratio"]["value"], 1) == 54.4
    assert not any(k.startswith("null/") for k in doc)  # the floor is not a benchmark
    assert len(doc) == 2 * 3 + 2


def test_the_time_meter_exports_latency_in_nanoseconds(tmp_path, monkeypatch):
    monkeypatch.chdir(HELPERS)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert _main(["scale", "--parser", "deepseek_v31", "--workload", "write_file", "--lengths", "1k,2k,4k",
                  "--repeats", "1", "--no-progress", "--out", str(tmp_path / "res"),
                  "--export", f"bmf:{tmp_path / 'bmf.json'}"]) == 0
    doc = json.loads((tmp_path / "bmf.json").read_text())
    import pandas as pd

    rows = pd.read_csv(tmp_path / "res" / "scaling.csv", keep_default_na=False, na_values=[""])
    one = rows[(rows["parser"] == "deepseek_v31") & (rows["length"] == 2048)].iloc[0]
    assert doc["deepseek_v31/write_file/2k"]["latency"]["value"] == pytest.approx(one["seconds"] * 1e9)


@pytest.mark.parametrize("spec", ["csv:x.csv", "bmf", "bmf:"])
def test_a_bad_export_is_one_line_exit_2_before_measuring(spec, capsys):
    assert _main(["gate", "--from", str(RUN), "--export", spec]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "expected FORMAT:PATH with FORMAT one of bmf (Bencher Metric Format JSON)" in err[0]
