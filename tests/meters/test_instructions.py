"""The instruction meter: exact, repeatable counts that separate linear from quadratic.

Runs children under valgrind (skipped where valgrind is missing; .ci/run
installs it). Lengths are small: counts do not drift, so 1k-8k suffice.
"""

import shutil
from pathlib import Path

import pytest

from callscale import cli, instructions
from callscale.fit import exponent
from support import HELPERS

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")

LENGTHS = [1024, 2048, 4096, 8192]


@pytest.fixture
def importable_tests(monkeypatch):
    """Children import the quadratic fixture as quadratic_parser:QuadraticParser from tests/."""
    monkeypatch.chdir(HELPERS)
    monkeypatch.setenv("PYTHONPATH", str(HELPERS))


@pytest.fixture(scope="module")
def ours():
    return instructions.count_instructions("deepseek_v31", "deepseek_v31", "write_file", LENGTHS, "tokens:4")


def test_counts_repeat_exactly(ours):
    again = instructions.count_instructions("deepseek_v31", "deepseek_v31", "write_file", LENGTHS, "tokens:4")
    assert again == ours
    assert 0 < ours[1024] < ours[2048] < ours[4096] < ours[8192]


@pytest.mark.slow  # a callgrind run of the quadratic parser (~20 s): the slow set
def test_quadratic_parser_is_above_1_7_and_ours_below_1_1(importable_tests, ours):
    quad = instructions.count_instructions("quadratic_parser:QuadraticParser", "deepseek_v31", "write_file",
                                           LENGTHS, "tokens:4")
    assert exponent(LENGTHS, [quad[n] for n in LENGTHS]) > 1.7
    assert exponent(LENGTHS, [ours[n] for n in LENGTHS]) < 1.1


@pytest.mark.slow  # a callgrind run of the quadratic parser (~20 s): the slow set
def test_gate_with_the_instruction_meter_fails_the_quadratic_parser(importable_tests, capsys):
    status = cli.main(["gate", "--meter", "instructions", "--wide", "--parser", "quadratic_parser:QuadraticParser",
                       "--format", "deepseek_v31", "--workload", "write_file", "--no-progress",
                       "--lengths", "1k,2k,4k,8k"])  # at the default 4k-64k its 16k stream alone is 13e9 instructions
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL quadratic_parser:QuadraticParser on write_file (step+projection): steepest step" in out
    assert "1k instr" in out and "meter: instructions" in out


def test_missing_valgrind_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["gate", "--meter", "instructions", "--parser", "deepseek_v3"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "apt-get install valgrind" in err[0]


def test_interpreter_is_an_elf_binary():
    with open(instructions.interpreter(), "rb") as fh:
        assert fh.read(4) == b"\x7fELF"
