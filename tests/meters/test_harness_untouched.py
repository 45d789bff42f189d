"""The harness cannot be changed by what it measures: a parser that rewrites callscale's own files while it is
measured fails the gate, scale and check (one closing ``gate failed:`` / ``scale failed:`` / ``check failed:`` line,
exit status 3), and ``.ci/run`` fails a gate step
that exits 0 without its ``gate passed:`` line or during which the package's files changed.

Each test runs a copy of the package in its own folder (tests/helpers/tampering_parser.py tampers only with the copy
named by ``CALLSCALE_TEST_TAMPER``); the worktree's files are never written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscale import integrity
from support import HELPERS, ROOT

GATE = ["gate", "--parser", "tampering_parser:Parser", "--workload-format", "deepseek_v31", "--workload",
        "write_file", "--lengths", "4k,8k,16k", "--repeats", "1", "--no-progress"]
EXIT_FIRST = "import sys; sys.exit(0)\n"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A folder holding a copy of the package (``callscale/``) and the tampering fixture."""
    shutil.copytree(ROOT / "callscale", tmp_path / "callscale", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(HELPERS / "tampering_parser.py", tmp_path)
    return tmp_path


def environ(copy: Path, tamper: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLSCALE_")}
    env["PYTHONPATH"] = str(copy)
    if tamper:
        env["CALLSCALE_TEST_TAMPER"] = str(copy / "callscale")
    return env


def test_snapshot_sees_a_changed_an_added_and_a_removed_file(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(name)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.pyc").write_bytes(b"x")
    before = integrity.snapshot(tmp_path)
    assert sorted(before) == ["a.py", "b.py"]
    (tmp_path / "a.py").write_text("changed")
    (tmp_path / "b.py").unlink()
    (tmp_path / "c.py").write_text("new")
    (tmp_path / "__pycache__" / "a.pyc").write_bytes(b"y")  # compiled files are the interpreter's, not ours
    assert integrity.changes(before, integrity.snapshot(tmp_path)) == ["a.py", "-b.py", "+c.py"]


SCALE = ["scale", "--parser", "tampering_parser:Parser", "--workload-format", "deepseek_v31", "--workload", "write_file",
         "--lengths", "1k,2k,4k", "--repeats", "1", "--no-progress", "--out", "results"]
CHECK = ["check", "--parser", "tampering_parser:Parser", "--workload-format", "deepseek_v31", "--workload", "write_file",
         "--lengths", "1k", "--chunkings", "whole,tokens:7", "--no-faults", "--no-progress"]


@pytest.mark.parametrize("argv, measured", [(GATE, "gate passed:"), (SCALE, "null (median floor)"), (CHECK, "all agree")],
                         ids=["gate", "scale", "check"])
def test_a_parser_that_rewrites_callscale_fails_the_command(copy, argv, measured):
    # before: the gate measured the parser, printed "gate passed: 1 parser x workload pair" and exited 0,
    # and __main__.py began with sys.exit(0): the next gate exited 0 printing nothing; scale wrote its figures
    # and check said "all agree", both exit 0
    proc = subprocess.run([sys.executable, "-m", "callscale", *argv], cwd=copy, env=environ(copy),
                          capture_output=True, text=True, timeout=600)
    assert (copy / "callscale" / "__main__.py").read_text().startswith(EXIT_FIRST)  # the fixture did tamper
    assert proc.returncode == integrity.TAMPERED, (proc.stdout, proc.stderr)
    last = proc.stdout.rstrip().splitlines()[-1]
    assert last.startswith(f"{argv[0]} failed: callscale's own files changed during the run (__main__.py in {copy}")
    assert measured in proc.stdout  # the command itself went through: only the check of its files fails it
    assert not (ROOT / "callscale" / "__main__.py").read_text().startswith(EXIT_FIRST)


def gate_steps() -> str:
    """The functions .ci/run defines for its gate steps (between its ``gate steps`` marks)."""
    text = (ROOT / ".ci" / "run").read_text()
    found = re.search(r"# gate steps: begin.*?\n(.*?)# gate steps: end", text, re.S)
    assert found, ".ci/run has no gate steps block"
    return found.group(1)


def ci_gate(copy: Path, before: str = "", tamper: bool = False, gate: list[str] = GATE) -> list[str]:
    """Run .ci/run's ``gate_step`` on the copy with ``gate``'s arguments; the ``failed`` entries it left (the
    gate's own output in ``gate.out`` of the copy)."""
    script = (f"set -euo pipefail\nPY={sys.executable}\nfailed=()\n{gate_steps()}\n{before}\n"
              f"gate_step gate {' '.join(gate[1:])} >gate.out\n"
              'printf "%s\\n" "${failed[@]+"${failed[@]}"}"\n')
    proc = subprocess.run(["bash", "-c", script], cwd=copy, env=environ(copy, tamper), capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


def test_ci_fails_a_gate_that_exits_0_without_its_verdict(copy):
    # the state a tampering run left: the gate exits 0 and prints nothing (before: .ci/run passed it)
    main = copy / "callscale" / "__main__.py"
    main.write_text(EXIT_FIRST + main.read_text())
    assert ci_gate(copy) == ["gate (exit 0 without its closing 'gate passed:' line)"]


def test_ci_fails_a_gate_step_during_which_the_package_changed(copy):
    assert ci_gate(copy, tamper=True) == ["gate (callscale's own files changed during it)", "gate (exit 3)"]


def test_ci_passes_a_sound_gate(copy):
    assert ci_gate(copy) == []


@pytest.mark.slow
def test_ci_fails_the_valgrind_aware_parser_by_time(copy):
    # tests/helpers/valgrind_aware_parser.py passes the instruction gate (it rereads its buffer only where valgrind
    # is absent); .ci/run's time gate step, with the gate's defaults (lengths, repeats, second look), must fail
    # the run on it (before: the step's exit 1 was turned into a warning and CI passed)
    shutil.copy(HELPERS / "valgrind_aware_parser.py", copy)
    gate = ["gate", "--parser", "valgrind_aware_parser:Parser", "--workload-format", "deepseek_v31", "--workload",
            "write_file", "--no-progress"]
    assert ci_gate(copy, gate=gate) == ["gate (exit 1)"]
    out = (copy / "gate.out").read_text()
    assert "FAIL valgrind_aware_parser:Parser on write_file" in out
    assert out.rstrip().splitlines()[-1].startswith("gate failed: 1 of 1 parser x workload pairs")
