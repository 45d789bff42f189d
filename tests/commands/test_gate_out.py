"""What ``gate --out DIR`` writes (the CSVs, the PNG, environment.json, summary.md) and the exit status it keeps.

One time gate of a linear parser (deepseek_v31) and a quadratic one (tests/helpers/quadratic_parser.py) on
write_file, run once for the module and read by each test. 4k-16k at 3 repeats: at 1k a linear parser's whole
stream takes 0.3 ms, which a loaded machine's noise can bend past the projection rule (the summary's "1 of 2"
needs the linear pair to pass); the quadratic one fails either way.
"""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest

from callscale.cli import main
from support import HELPERS

QUAD = "quadratic_parser:QuadraticParser"
LENGTHS = (4096, 8192, 16384)


@pytest.fixture(scope="module")
def gate_out(tmp_path_factory):
    """(exit status, what the gate printed, its --out folder)."""
    out = tmp_path_factory.mktemp("gate-out") / "res"
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(printed):
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        mp.chdir(HELPERS)  # quadratic_parser.py is importable from here
        try:
            status = main(["gate", "--parser", f"deepseek_v31,{QUAD}", "--workload-format", "deepseek_v31",
                           "--workload", "write_file", "--lengths", ",".join(f"{n // 1024}k" for n in LENGTHS),
                           "--repeats", "3", "--no-progress", "--out", str(out)])
        except SystemExit as exc:
            status = exc.code
    return status, printed.getvalue(), out


def test_gate_out_writes_the_csvs_and_png_of_scale_and_keeps_its_exit_code(gate_out):
    status, out, res = gate_out
    assert status == 1, out
    assert any(line.startswith(f"FAIL {QUAD} on write_file") for line in out.splitlines())
    written = sorted(p.name for p in res.iterdir())
    assert written == ["environment.json", "scaling-fits.csv", "scaling.csv", "scaling.png", "summary.md"]
    fits = pd.read_csv(res / "scaling-fits.csv", keep_default_na=False).set_index("parser")
    assert fits.loc[QUAD, "verdict"] == "FAIL"
    assert "deepseek_v31" in fits.index
    rows = pd.read_csv(res / "scaling.csv", keep_default_na=False, na_values=[""])
    assert set(rows["length"]) == set(LENGTHS)
    assert (res / "scaling.png").read_bytes()[:4] == b"\x89PNG"


def test_gate_out_writes_summary_md(gate_out):
    status, out, res = gate_out
    assert status == 1, out
    text = (res / "summary.md").read_text()
    assert text.startswith("### callscale gate: FAILED (1 of 2 parser x workload pairs)"), text
    assert f"reproduce: `callscale gate --parser {QUAD} --workload-format deepseek_v31" in text


def test_gate_out_writes_environment_json(gate_out):
    status, out, res = gate_out
    assert status == 1, out
    env = json.loads((res / "environment.json").read_text())
    assert env["python"].startswith("CPython 3.")
    assert f"parser:{QUAD}" in env  # a plain module: no distribution provides it
    assert env[f"parser:{QUAD}"] is None
