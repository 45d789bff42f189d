"""A base file that would silently weaken the regression check is refused (one line, exit 2).

`callscale compare BASE NEW` and `--baseline CSV` (scale / gate) used to pass a base whose figures
were empty, zero, negative or not finite (no ratio can be taken, so no length could be worse),
whose rows had failed, repeated a row, or shared no parser, workload and length with the run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from callscale import compare
from callscale.cli import main

LENGTHS = (1024, 2048, 4096, 8192)


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def rows(parser: str = "p", workload: str = "write_file", lengths=LENGTHS, meter: str = "instructions",
         scale: float = 100.0) -> list[dict]:
    """A floor row and a parser row per length, linear figures; the parser's rows are lines 3, 5, 7, 9."""
    out = []
    for n in lengths:
        for name in ("null", parser):
            out.append({"parser": name, "floor": name == "null", "format": "deepseek_v31", "workload": workload,
                        "length": n, "chars": n, "meter": meter,
                        "seconds": (1.0 if name == "null" else scale) * n / 1024, "error": ""})
    return out


def write(path: Path, records: list[dict]) -> Path:
    pd.DataFrame(records).to_csv(path, index=False)
    return path


def spoiled(tmp_path: Path, column: str, value, at: int = 3) -> Path:
    """The base with ``column`` of file line ``at`` (the header is line 1) set to ``value``."""
    records = rows()
    records[at - 2][column] = value
    return write(tmp_path / "base.csv", records)


def refused(capsys, base: Path, new: Path) -> str:
    status, out, err = run_main(capsys, "compare", str(base), str(new))
    assert status == 2, (status, out, err)
    assert out == "" and len(err.splitlines()) == 1, err
    return err


@pytest.fixture
def new(tmp_path: Path) -> Path:
    return write(tmp_path / "new.csv", rows(scale=101.0))


def test_a_sound_base_still_compares(capsys, tmp_path, new):
    base = write(tmp_path / "base.csv", rows())
    status, out, err = run_main(capsys, "compare", str(base), str(new))
    assert status == 0 and out.rstrip().splitlines()[-1].startswith("compare passed: 1 parser x workload pair")


@pytest.mark.parametrize("value, words", [
    ("", "no figure (seconds is empty)"),
    (0, "figure 0 is not a positive finite number"),
    (-100, "figure -100 is not a positive finite number"),
    ("inf", "figure inf is not a positive finite number"),
    ("nan", "is not a positive finite number"),
])
def test_a_base_figure_that_is_no_positive_number_is_refused(capsys, tmp_path, new, value, words):
    # on main an empty, zero, negative or non-finite base figure gave no ratio: that length could not be worse
    err = refused(capsys, spoiled(tmp_path, "seconds", value), new)
    assert f"base.csv line 3 (p on write_file at 1k): " in err and words in err


def test_a_base_row_that_failed_is_refused(capsys, tmp_path, new):
    base = spoiled(tmp_path, "error", "timeout after 5 s", at=7)
    err = refused(capsys, base, new)
    assert "base.csv line 7 (p on write_file at 4k): the base run failed there (timeout after 5 s)" in err


def test_a_repeated_base_row_is_refused(capsys, tmp_path, new):
    records = rows()
    records.append(dict(records[3], seconds=999.0))  # p at 2k again (line 5), as line 10
    err = refused(capsys, write(tmp_path / "base.csv", records), new)
    assert "base.csv line 10 (p on write_file at 2k): repeats line 5" in err


def test_a_base_at_other_lengths_is_refused(capsys, tmp_path):
    base = write(tmp_path / "base.csv", rows())
    new = write(tmp_path / "new.csv", rows(lengths=(16384, 32768, 65536), scale=500.0))
    err = refused(capsys, base, new)
    assert "base.csv shares no parser, workload and length with this run (p on write_file at 16k, 32k, 64k)" in err


def test_check_base_names_the_first_offending_row():
    df = pd.DataFrame(rows())
    df.loc[4, "seconds"] = 0.0  # line 6 (null at 4k): the floor rows are figures too
    df.loc[7, "seconds"] = -1.0
    df.attrs["path"] = "b.csv"
    with pytest.raises(compare.CompareError, match=r"^b\.csv line 6 \(null on write_file at 4k\): figure 0 is "):
        compare.check_base(df)


# ------------------------------------------------------------------ --baseline: refused before measuring
def gate(capsys, monkeypatch, base: Path, *more: str) -> str:
    from callscale import matrix

    monkeypatch.setattr(matrix, "run", lambda *a, **k: pytest.fail("measured before checking --baseline"))
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--workload", "write_file",
                                "--lengths", "1k,2k,4k", "--no-progress", "--baseline", str(base), *more)
    assert status == 2 and out == "", (status, out, err)
    assert len(err.splitlines()) == 1 and err.startswith("callscale gate: error: --baseline: "), err
    return err


@pytest.mark.parametrize("what, base_rows", [
    ("parser", dict(parser="deepseek_v3")),
    ("workload", dict(parser="deepseek_v31", workload="many_short_calls")),
    ("lengths", dict(parser="deepseek_v31", lengths=(8192, 16384, 32768))),
])
def test_gate_refuses_a_baseline_that_shares_nothing_with_the_run(capsys, monkeypatch, tmp_path, what, base_rows):
    # on main: measured, then "cannot compare" and exit 1 (parser, workload), or a pass (lengths)
    base = write(tmp_path / "base.csv", rows(meter="time", **base_rows))
    err = gate(capsys, monkeypatch, base)
    assert "base.csv shares no parser, workload and length with this run (deepseek_v31 on write_file at 1k, 2k, 4k)" \
        in err


def test_gate_refuses_a_baseline_with_a_zero_figure_before_measuring(capsys, monkeypatch, tmp_path):
    records = rows(parser="deepseek_v31", meter="time")
    records[3]["seconds"] = 0
    err = gate(capsys, monkeypatch, write(tmp_path / "base.csv", records))
    assert "base.csv line 5 (deepseek_v31 on write_file at 2k): figure 0 is not a positive finite number" in err
