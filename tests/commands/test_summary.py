"""The Markdown summary of gate and compare (callscale.summary): verdict first, failing rows first, the reason
and the command that reproduces it, written to --summary, OUT/summary.md and $GITHUB_STEP_SUMMARY.

tests/helpers/data/gate-one-failing.csv is a real run (`callscale gate --meter instructions --lengths 1k,2k,4k` of
deepseek_v31 and tests/helpers/quadratic_parser.py on write_file): one linear and one quadratic parser.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from callscale import summary
from callscale.cli import main
from support import HELPERS

RUN = HELPERS / "data" / "gate-one-failing.csv"
QUAD = "quadratic_parser:QuadraticParser"


def _main(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_gate_summary_puts_the_verdict_and_the_failing_row_first_with_its_reproducer(tmp_path, capsys):
    path = tmp_path / "s.md"
    assert _main(["gate", "--from", str(RUN), "--summary", str(path)]) == 1
    text = path.read_text()
    lines = text.splitlines()
    assert lines[0] == "### callscale gate: FAILED (1 of 2 parser x workload pairs)"
    rows = [line for line in lines if line.startswith("| `")]
    assert [r.split(" | ")[0] for r in rows] == [f"| `{QUAD}`", "| `deepseek_v31`"]
    assert rows[0].split(" | ")[2:6] == ["**FAIL** (step+projection)", "1.88 (step 1.90)", "839,459,819 instr",
                                         "770,147"]  # 839459819 instructions / 1090 deltas
    assert rows[1].split(" | ")[2:5] == ["ok", "1.01 (step 1.02)", "14,295,279 instr"]
    assert f"- `{QUAD}` on write_file (step+projection): steepest step 1.90 > 1.3" in text
    assert (f"  reproduce: `callscale gate --parser {QUAD} --workload-format deepseek_v31 --workload write_file "
            "--lengths 1k,2k,4k --chunking tokens:4 --meter instructions`") in lines
    assert "http" not in text
    assert f"wrote {path}" in capsys.readouterr().out


def test_gate_summary_against_a_baseline_marks_the_pair_that_got_worse(tmp_path):
    base = pd.read_csv(RUN, keep_default_na=False, na_values=[""])
    linear = base["parser"] == "deepseek_v31"
    base.loc[linear, "seconds"] = (base.loc[linear, "seconds"] / 1.1).round()  # the change made it 10% dearer
    base.to_csv(tmp_path / "base.csv", index=False)
    assert _main(["gate", "--from", str(RUN), "--baseline", str(tmp_path / "base.csv"),
                  "--summary", str(tmp_path / "s.md")]) == 1
    text = (tmp_path / "s.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `deepseek_v31`"))
    cells = row.strip("| ").split(" | ")
    assert cells[2] == "**WORSE**"
    assert cells[6] == "**WORSE** x1.100 @4k, exp +0.00"
    assert "- `deepseek_v31` on write_file: against the baseline: x1.1 at 1k (> 1.05)" in text


def test_a_passing_run_says_so_and_appends_to_the_step_summary(tmp_path, monkeypatch):
    df = pd.read_csv(RUN, keep_default_na=False, na_values=[""])
    df[df["parser"] != QUAD].to_csv(tmp_path / "ok.csv", index=False)
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert _main(["gate", "--from", str(tmp_path / "ok.csv")]) == 0
    text = step.read_text()
    assert text.startswith("earlier step\n### callscale gate: passed (1 parser x workload pair)\n")
    assert "#### Failing pairs" not in text


def test_compare_summary_lists_the_worse_pair_first(tmp_path):
    base = pd.read_csv(RUN, keep_default_na=False, na_values=[""])
    quad = base["parser"] == QUAD
    base.loc[quad, "seconds"] = (base.loc[quad, "seconds"] / 2).round()
    base.to_csv(tmp_path / "base.csv", index=False)
    assert _main(["compare", str(tmp_path / "base.csv"), str(RUN), "--summary", str(tmp_path / "c.md")]) == 1
    lines = (tmp_path / "c.md").read_text().splitlines()
    assert lines[0] == "### callscale compare: WORSE (1 of 2 parser x workload pairs)"
    rows = [line for line in lines if line.startswith("| `")]
    assert rows[0].startswith(f"| `{QUAD}` | write_file | **WORSE** | 1.88 -> 1.88 | x2.000 | x2.000 | x2.000 |")
    assert rows[1].startswith("| `deepseek_v31` | write_file | ok |")


def test_the_passing_rows_are_cut_after_max_passing(tmp_path, monkeypatch):
    monkeypatch.setattr(summary, "MAX_PASSING", 0)
    assert _main(["gate", "--from", str(RUN), "--summary", str(tmp_path / "s.md")]) == 1
    text = (tmp_path / "s.md").read_text()
    assert "| `deepseek_v31`" not in text
    assert "... and 1 more passing pairs (scaling-fits.csv holds every row)" in text


# ------------------------------------------------------------ what gate prints: compact, --wide, --format
def test_gate_prints_the_compact_table_by_default_and_the_wide_one_on_request(capsys):
    assert _main(["gate", "--from", str(RUN)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["parser", "workload", "exponent", "steepest"] and max(map(len, out)) <= 120
    assert out[2].startswith(f"{QUAD} ") and out[2].split()[-2:] == ["step+projection", "FAIL"]  # failing first
    assert _main(["gate", "--from", str(RUN), "--wide"]) == 1
    wide = capsys.readouterr().out.splitlines()
    assert wide[0].split()[2:4] == ["1k", "instr"] and "839,459,819" in "\n".join(wide)


@pytest.mark.parametrize("style", ["json", "csv", "markdown"])
def test_gate_format_puts_the_run_alone_on_stdout_and_the_verdict_on_stderr(capsys, style):
    import csv
    import io
    import json

    assert _main(["gate", "--from", str(RUN), "--format", style]) == 1
    captured = capsys.readouterr()
    assert "gate failed: 1 of 2 parser x workload pairs" in captured.err and "gate failed" not in captured.out
    if style == "json":
        pairs = {p["parser"]: p for p in json.loads(captured.out)["pairs"]}
        assert pairs[QUAD]["verdict"] == "FAIL" and pairs["deepseek_v31"]["verdict"] == "ok"
        with open(RUN, newline="") as f:  # the figure at each length, as the file holds it (a number)
            measured = {r["length"]: float(r["seconds"]) for r in csv.DictReader(f) if r["parser"] == QUAD}
        assert pairs[QUAD]["figures"] == measured and len(measured) >= 3
    elif style == "csv":
        rows = list(csv.DictReader(io.StringIO(captured.out)))
        assert {r["parser"]: r["verdict"] for r in rows} == {"null": "floor", "deepseek_v31": "ok", QUAD: "FAIL"}
    else:
        lines = captured.out.splitlines()
        assert lines[0].startswith("| parser |") and lines[2].startswith(f"| {QUAD} |")
        assert lines[-1] == "2 parser x workload pairs (2 parsers x 1 workload): 1 ok, 1 FAIL"
