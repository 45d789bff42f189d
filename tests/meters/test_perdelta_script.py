"""scripts/perdelta.py: instructions a delta per parser and workload, the others' median row, a dated record."""

import csv
import runpy
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "perdelta.py"


def _run(monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *argv])
    with pytest.raises(SystemExit) as ended:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    return ended.value.code


def test_the_others_median_row_and_the_record(monkeypatch, tmp_path, capsys):
    out, rows = tmp_path / "record.md", tmp_path / "rows.csv"
    assert _run(monkeypatch, "--length", "1k", "--parser", "qwen3", "--parser", "mistral", "--parser", "sarashina",
                "--new", "sarashina", "--csv", str(rows), "--out", str(out)) == 0
    per = {(r["parser"], r["workload"]): int(r["per_delta"]) for r in csv.DictReader(rows.open())}
    assert len(per) == 9 and all(v > 1000 for v in per.values())
    table = capsys.readouterr().out
    median = [line for line in table.splitlines() if line.startswith("| **median of the others**")]
    cells = [c.strip() for c in median[0].strip("|").split("|")[1:]]
    for cell, workload in zip(cells, ("write_file", "many_short_calls", "repeated_opener")):
        want = (per[("qwen3", workload)] + per[("mistral", workload)]) / 2  # (the median of two: their mean)
        assert cell == f"{want / 1000:.2f}k"
    against = [line for line in table.splitlines() if line.startswith("| sarashina against it")][0]
    want = per[("sarashina", "write_file")] / ((per[("qwen3", "write_file")] + per[("mistral", "write_file")]) / 2) - 1
    assert against.split("|")[2].strip() == f"{want:+.1%}"
    record = out.read_text()
    assert record.startswith("# Instructions a delta, 3 parsers, 1k characters, tokens:4\n")
    assert "python scripts/perdelta.py --length 1k --parser qwen3" in record and table.strip() in record


def test_a_new_parser_not_measured_is_refused_before_measuring(monkeypatch, capsys):
    assert _run(monkeypatch, "--parser", "qwen3", "--new", "sarashina") == 2
    assert "--new names parsers not measured: sarashina" in capsys.readouterr().err
