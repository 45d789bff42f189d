"""The ``callscale`` command: option errors (one line, exit 2), gate exit codes, scale's outputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscale import parsers
from callscale.cli import COMMANDS, build_parser, main
from support import HELPERS

QUADRATIC = "quadratic_parser:QuadraticParser"
SMALL = ["--lengths", "1k,2k,4k", "--repeats", "1", "--workload", "write_file"]


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:  # argparse errors exit through SystemExit
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def needs_catalog():
    return pytest.importorskip("callscale.workloads.catalog", reason="the workload catalog is not there yet")


def needs(parser: str):
    catalog = needs_catalog()
    if parser not in parsers.names() or parser not in catalog.formats():
        pytest.skip(f"{parser} (parser and renderer) is not registered yet")


@pytest.mark.parametrize("argv, says", [
    (["scale", "--parser", "no_such_parser"], "unknown parser 'no_such_parser'"),
    (["gate", "--workload", "no_such_workload"], "unknown workload 'no_such_workload'"),
    (["scale", "--lengths", "4k,0,16k"], "bad length '0'"),
    (["scale", "--lengths", "4k,abc,16k"], "bad length 'abc'"),
    (["scale", "--lengths", "-4k,8k,16k"], "--lengths"),
    (["gate", "--lengths", "4k,16k"], "at least 3 distinct lengths"),
    (["gate", "--lengths", "4k,16k,4k"], "at least 3 distinct lengths"),
    (["scale", "--chunking", "tokens:0"], "bad chunking"),
    (["check", "--timeout", "inf"], "--timeout: must be a finite number (seconds one case may take), got 'inf'"),
    (["profile", "--parser", "qwen3", "--workload", "write_file", "--length", "1k", "-o", "/proc/x/y.svg"],
     "-o: cannot write to /proc/x"),
    (["gate", "--timeout", "1e9"], "--timeout: must be more than 0 and at most 86400 (seconds one case may take), got '1e9'"),
    (["scale", "--timeout", "nan"], "--timeout: must be a finite number (seconds one case may take), got 'nan'"),
    (["scale", "--chunking", "bytes:4"], "bad chunking"),
    (["scale", "--repeats", "0"], "--repeats"),
    (["gate", "--threshold", "-1"], "--threshold"),
    (["scale", "--parser", QUADRATIC], "needs --workload-format"),
    (["scale", "--parser", QUADRATIC, "--workload-format", "no_such_format"], "unknown format"),
    (["scale", "--parser", "no_such_module_xyz:Parser", "--workload-format", "deepseek_v31"], "cannot import"),
    (["scale", "--workload-format", "deepseek_v31"], "--workload-format applies to module.path:ClassOrFactory"),
    (["scale", "--no-such-option"], "unrecognized arguments"),
    (["scale", "--length", "4k"], "unrecognized arguments: --length 4k"),  # no prefix of --lengths
    (["gate", "--thresh", "2"], "unrecognized arguments: --thresh 2"),
    (["check", "--parser", "qwen3", "--against", "no-such-rev"], "--against no-such-rev: no commit of the git "
                                                                  "repository at "),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
def test_bad_options_exit_2_with_one_line(capsys, argv, says):
    if "--workload" in argv or QUADRATIC in argv or "no_such_module_xyz:Parser" in argv:
        needs("deepseek_v31")
    status, out, err = run_main(capsys, *argv)
    assert status == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("callscale") and ": error: " in lines[0] and says in lines[0], lines[0]


def test_every_command_has_a_line_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert re.search(rf"^    {name} +\S", out, re.M), (name, out)


def test_hunt_takes_no_progress():
    args = build_parser().parse_args(["hunt", "--parser", "qwen3", "--no-progress"])
    assert args.progress is False


def test_gate_passes_a_linear_parser(capsys):
    needs("deepseek_v31")
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--no-progress", *SMALL,
                                "--lengths", "4k,16k,64k", "--repeats", "3")
    # the default gate's span: from 16k, the projection to 256k magnifies 8% of noise into 3x
    assert status == 0, out
    assert out.rstrip().splitlines()[-1] == ("gate passed: 1 parser x workload pair, every step exponent <= 1.3 "
                                             "and every projection at 256k <= 3x the linear one")
    assert "requests: every one within 1000x the floor's" in out
    assert "deepseek_v31" in out and "null (median floor)" in out


@pytest.mark.slow  # the quadratic parser by time at 4k-64k (~10-26 s): the slow set
def test_gate_fails_the_quadratic_parser_and_names_it(capsys):
    needs("deepseek_v31")
    status, out, err = run_main(capsys, "gate", "--parser", f"deepseek_v31,{QUADRATIC}", "--format", "deepseek_v31",
                                "--workload", "write_file", "--lengths", "4k,8k,16k", "--repeats", "3",
                                "--threshold", "1.4", "--wide")
    assert status == 1, out
    offenders = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert len(offenders) == 1, out
    line = offenders[0]
    assert line.startswith(f"FAIL {QUADRATIC} on write_file (step+projection): steepest step ")
    steepest = float(line.split("steepest step ")[1].split()[0])
    exponent = float(line.split("(exponent ")[1].split(")")[0])
    assert steepest >= exponent > 1.6 and f"{steepest:.2f} > 1.4;" in line
    assert "4k: " in line and "8k: " in line and "16k: " in line and line.endswith(" s")
    assert out.rstrip().splitlines()[-1] == ("gate failed: 1 of 2 parser x workload pairs broke a rule (step <= 1.4, "
                                             "projection <= 3x linear), timed out or raised")


def test_a_parser_that_raises_fails_the_gate_and_the_run_goes_on(capsys, tmp_path, monkeypatch):
    needs("deepseek_v31")
    (tmp_path / "raising_parser.py").write_text(
        "class Raising:\n"
        "    def parse_streaming_increment(self, delta, tools=None):\n"
        "        raise ZeroDivisionError('no parsing today')\n"
        "    def finish(self, tools=None):\n"
        "        return None\n"
    )
    monkeypatch.chdir(tmp_path)  # a user's module in the current directory is importable
    status, out, err = run_main(capsys, "gate", "--parser", "raising_parser:Raising,deepseek_v31",
                                "--format", "deepseek_v31", *SMALL)
    assert status == 1
    assert "FAIL raising_parser:Raising on write_file (error): no exponent (ZeroDivisionError: no parsing today)" in out
    assert "error: raising_parser:Raising on write_file at 1k, 2k, 4k: ZeroDivisionError: no parsing today" in out
    # the other parser was still measured
    row = next(line for line in out.splitlines() if line.startswith("deepseek_v31 "))
    assert row.split()[-1] in ("ok", "FAIL")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_default_rows_on_one_parser_fit_120_columns(tmp_path):
    # the default rows, the longest workload name among them (structure@mixed+alternate:1/50/1/50/512), the
    # null floor's name: the compact table and its notes within 120 columns (counted: the same rows every run)
    needs("qwen3")
    proc = subprocess.run(
        [sys.executable, "-m", "callscale", "scale", "--parser", "qwen3", "--meter", "instructions", "--lengths",
         "1k,2k,4k", "--no-progress", "--out", str(tmp_path / "res")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[-2:] == ["rule", "verdict"]
    assert any("structure@mixed+alternate:1/50/1/50/512" in line for line in lines)
    assert max(len(line) for line in lines if not line.startswith("wrote ")) <= 120, "\n".join(lines)


def test_scale_prints_the_table_and_writes_csv_and_png(tmp_path):
    needs("deepseek_v31")
    env = dict(os.environ, PYTHONPATH=str(HELPERS) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "callscale", "scale", "--parser", "deepseek_v31", *SMALL,
         "--out", str(tmp_path / "res")],
        capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # the compact table: what decides the verdict, within 120 columns
    assert lines[0].split() == ["parser", "workload", "exponent", "steepest", "x", "linear", "@256k", "x", "floor",
                                "rule", "verdict"]
    assert max(len(line) for line in lines[:-1]) <= 120, proc.stdout  # the last: the files written, by path
    assert any(line.startswith("deepseek_v31 ") and line.split()[1] == "write_file" for line in lines)
    assert (tmp_path / "res" / "scaling.csv").stat().st_size > 0
    assert (tmp_path / "res" / "scaling-fits.csv").stat().st_size > 0
    assert (tmp_path / "res" / "scaling.png").read_bytes()[:4] == b"\x89PNG"
    assert lines[-1].startswith("wrote ")


def test_format_as_the_workload_format_still_works_with_one_deprecation_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["scale", "--parser", QUADRATIC, "--format", "qwen3", "--parser", "x:Y", "--format", "no_such_format"])
    err = capsys.readouterr().err.splitlines()
    assert exit_info.value.code == 2
    assert err[0] == ("callscale scale: --format is deprecated as the workload's format (profile's --output-format "
                      "is the output's); use --workload-format")
    assert len(err) == 2 and "no_such_format" in err[1]  # said once, then the option is read as before
    assert "is no output style (table, wide, json, csv, markdown) and no workload format" in err[1]
