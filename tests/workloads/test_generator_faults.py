"""A team's workload generator (``--workload module:function``) runs in a child process of its own, under
``--timeout``, its output captured: one that exits, hangs, returns more than 4x the length asked, or lives in the
module of the parser under test is one line and exit status 2 before anything is measured or written, and what
one prints never reaches the table. tests/helpers/bad_generators.py holds them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from callscale.workloads import team
from support import run_main, HELPERS


@pytest.fixture
def in_tests(monkeypatch):
    monkeypatch.chdir(HELPERS)


@pytest.mark.parametrize("name, says", [
    ("exits", "the generator called sys.exit(0)"),
    ("exits_hard", "the generator's process ended (exit status 0) without returning an output"),
    ("too_long", "the generator returned 5120 characters for 1024 (more than 4x the length asked)"),
])
@pytest.mark.parametrize("command", ["gate", "check"])
def test_a_generator_that_misbehaves_is_one_line_and_nothing_written(capsys, in_tests, tmp_path, name, says,
                                                                     command):
    # before: sys.exit(0) made gate and check exit 0 with nothing measured; 5x the length ran on
    extra = ["--lengths", "1k,2k,4k", "--out", str(tmp_path / "out")] if command == "gate" else ["--lengths", "1k"]
    status, out, err = run_main(capsys, command, "--parser", "deepseek_v31", "--workload", f"bad_generators:{name}",
                                *extra)
    assert status == 2, (status, out, err)
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert f"workload 'bad_generators:{name}' on deepseek_v31 at 1024: {says}" in err
    assert not (tmp_path / "out" / "scaling.csv").exists()


def test_a_generator_that_hangs_is_stopped_after_the_timeout(capsys, in_tests):
    # before: the gate hung (--timeout did not apply to the generator)
    started = time.monotonic()
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--workload", "bad_generators:hangs",
                                "--lengths", "1k,2k,4k", "--timeout", "2")
    assert status == 2 and len(err.strip().splitlines()) == 1, (out, err)
    assert "workload 'bad_generators:hangs' on deepseek_v31 at 1024: the generator did not return within 2 s" in err
    assert time.monotonic() - started < 60


def test_a_generator_in_the_parsers_module_is_refused(capsys, in_tests):
    # before: making its cases imported the plug-in parser's module into the harness
    status, out, err = run_main(capsys, "gate", "--parser", "bad_generators:Parser", "--workload-format",
                                "deepseek_v31", "--workload", "bad_generators:beside_parser", "--lengths", "1k,2k,4k")
    assert status == 2 and len(err.strip().splitlines()) == 1, (out, err)
    assert "the generator lives in the module of the parser under test (bad_generators)" in err


def test_what_a_generator_prints_stays_out_of_the_table(capsys, in_tests):
    # before: its lines came above the table
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--workload", "bad_generators:prints",
                                "--meter", "instructions", "--lengths", "1k,2k,4k", "--no-progress")
    assert status == 0, (out, err)
    assert "PRINTED" not in out and "PRINTED" not in err
    assert out.splitlines()[0].startswith("parser ")


# ------------------------------------------------------------------ recorded outputs: depth and size
def deep_file(tmp_path: Path, levels: int) -> Path:
    """A ``file:`` workload: one DeepSeek V3.1 ``write_file`` call whose ``content`` nests ``levels`` lists deep."""
    import sys

    from callscale.workloads import render
    from callscale.workloads.team import Record, write_file

    nested: object = "x"
    for _ in range(levels):
        nested = [nested]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * levels + 1000))  # the fixture's own json.dumps recurses
    try:
        text = render.get("deepseek_v31").render([render.Call("write_file", {"path": "a", "content": nested})],
                                                 "Saving.")
        path = tmp_path / f"deep{levels}.jsonl"
        write_file(str(path), [Record(text)])
    finally:
        sys.setrecursionlimit(limit)
    return path


@pytest.mark.parametrize("levels", [400, 5000])
@pytest.mark.parametrize("command", ["gate", "check"])
def test_a_recorded_output_nested_too_deep_is_one_line(capsys, tmp_path, levels, command):
    # before: a RecursionError traceback in callscale's own tool typing and comparison (check blamed the parser)
    path = deep_file(tmp_path, levels)
    extra = ["--lengths", "1k,2k,4k"] if command == "gate" else ["--lengths", "1k"]
    status, out, err = run_main(capsys, command, "--parser", "deepseek_v31", "--workload", f"file:{path}", *extra)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, (status, out, err)
    assert f"the calls' arguments nest {levels + 1} deep, more than the {team.MAX_DEPTH} callscale compares" in err


def test_a_recorded_output_within_the_depth_is_checked(capsys, tmp_path):
    path = deep_file(tmp_path, team.MAX_DEPTH - 1)  # the deepest a record may be (the arguments one level more)
    status, out, err = run_main(capsys, "check", "--parser", "deepseek_v31", "--workload", f"file:{path}",
                                "--lengths", "4k")
    assert status == 0 and out.rstrip().endswith("all agree"), (out, err)


def test_a_file_of_recorded_outputs_over_the_size_limit_is_one_line(capsys, tmp_path, monkeypatch):
    from callscale.workloads import team

    path = deep_file(tmp_path, 3)
    monkeypatch.setattr(team, "MAX_FILE_BYTES", 100)  # the real limit is 64 MiB
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--workload", f"file:{path}",
                                "--lengths", "1k,2k,4k")
    assert status == 2 and len(err.strip().splitlines()) == 1, (status, out, err)
    assert f"file:{path}: {path.stat().st_size} bytes, more than the 100 a file of recorded outputs may hold" in err
