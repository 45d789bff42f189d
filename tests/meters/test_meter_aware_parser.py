"""A parser written to detect its harness can pass one meter; the other fails it. tests/helpers/valgrind_aware_parser.py
looks for valgrind and rereads its buffer on every delta only where it is absent: the instruction gate counts the
built-in parser's work and passes it, the time gate (default lengths, repeats and second look; .ci/run's own step on
it: tests/meters/test_harness_untouched.py) runs it natively and fails it. docs/gate.md: what each meter sees."""

from __future__ import annotations

import subprocess

import pytest
from support import gate_in_helpers

PARSER = ["--parser", "valgrind_aware_parser:Parser", "--workload-format", "deepseek_v31", "--workload",
          "write_file", "--no-progress"]


def gate(*argv: str) -> subprocess.CompletedProcess:
    return gate_in_helpers(*PARSER, *argv)


def test_natively_it_finds_no_valgrind():
    import valgrind_aware_parser

    assert valgrind_aware_parser.UNDER_VALGRIND is False
    parser = valgrind_aware_parser.Parser()
    parser.parse_streaming_increment("<" * 128)
    assert parser.rereads == 2  # it did look at its buffer again


@pytest.mark.slow
def test_the_time_gate_fails_it_as_ci_runs_it():
    proc = gate()
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "FAIL valgrind_aware_parser:Parser on write_file" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("gate failed: 1 of 1 parser x workload pairs")


@pytest.mark.slow
def test_the_instruction_gate_alone_passes_it():
    # what docs/gate.md says one meter cannot see: under callgrind it does the built-in parser's work only
    proc = gate("--meter", "instructions", "--lengths", "4k,16k,64k")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert proc.stdout.rstrip().splitlines()[-1].startswith("gate passed: 1 parser x workload pair")
