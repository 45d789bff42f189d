"""The run owns its processes and its output (adversarial rows): a detached process a plug-in starts
does not outlive the gate; two gates on one --out do not lose a run without a word; --timeout under the
instruction meter counts CPU time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import HELPERS, ROOT


def _callscale(*argv: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{HELPERS}", **(env or {})}
    return subprocess.run([sys.executable, "-m", "callscale", *argv], cwd=HELPERS, env=full, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("meter", [[], ["--meter", "instructions"]])
def test_a_detached_process_of_a_plugin_does_not_outlive_the_gate(tmp_path, meter):
    if meter and subprocess.run(["which", "valgrind"], capture_output=True).returncode:
        pytest.skip("valgrind is not installed")
    out = tmp_path / "out"
    out.mkdir()
    target = out / "scaling-fits.csv"
    proc = _callscale("gate", "--parser", "rogue_detached:Parser,deepseek_v31", "--workload-format", "deepseek_v31",
                      "--workload", "write_file", "--lengths", "1k,2k,4k", "--repeats", "1", "--no-progress",
                      "--out", str(out), *meter,
                      env={"CALLSCALE_TEST_DETACHED": str(target), "CALLSCALE_TEST_DETACHED_WAIT": "60"})
    assert proc.returncode in (0, 1) and "wrote " in proc.stdout, proc.stdout + proc.stderr  # by time: noisy at 1k
    pid = int(Path(f"{target}.pid").read_text())  # the detached process did start
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), f"the detached process {pid} outlived the gate"
    time.sleep(1.5)  # had it lived, it would have appended 0.5 s after summary.md
    assert "written,after,the,gate" not in target.read_text()


def test_a_second_gate_on_the_same_out_refuses_with_one_line_exit_2(tmp_path):
    from callscale import report

    out = tmp_path / "out"
    held = report.lock_out(out)  # the first run, measuring
    try:
        proc = _callscale("gate", "--parser", "deepseek_v31", "--workload", "write_file", "--lengths", "1k,2k,4k",
                          "--meter", "instructions", "--no-progress", "--out", str(out), timeout=120)
        scale = _callscale("scale", "--parser", "deepseek_v31", "--workload", "write_file", "--lengths", "1k,2k,4k",
                           "--repeats", "1", "--no-progress", "--out", str(out), timeout=120)
    finally:
        os.close(held)
    for second in (proc, scale):
        assert second.returncode == 2, second.stdout + second.stderr
        assert second.stderr.count("\n") == 1 and (
            f"--out: {out} is being written by another callscale run; wait for it to end or give another --out"
            in second.stderr), second.stderr
    assert list(out.iterdir()) == []  # nothing measured, nothing written, no lock file left
    os.close(report.lock_out(out))  # free again once the first run ended


def test_the_instruction_meters_timeout_counts_cpu_time_not_wall_time(tmp_path):
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode:
        pytest.skip("valgrind is not installed")
    # 4 s asleep (off the CPU, as under load) in a case with --timeout 2: a CPU-time budget lets it finish
    proc = _callscale("gate", "--parser", "sleepy_parser:Parser", "--workload-format", "deepseek_v31",
                      "--workload", "write_file", "--lengths", "512,1k,2k", "--meter", "instructions", "--timeout", "2",
                      "--jobs", "1", "--no-progress", env={"CALLSCALE_TEST_SLEEP": "4"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "timeout" not in proc.stdout.split("figures:")[0]
    row = next(line for line in proc.stdout.splitlines() if line.startswith("sleepy_parser:Parser"))
    assert row.split()[-1] == "ok"
    # past the wall ceiling (WALL_CEILING x --timeout) it is a timeout still
    proc = _callscale("gate", "--parser", "sleepy_parser:Parser", "--workload-format", "deepseek_v31",
                      "--workload", "write_file", "--lengths", "512,1k,2k", "--meter", "instructions", "--timeout", "0.5",
                      "--jobs", "1", "--no-progress", env={"CALLSCALE_TEST_SLEEP": "8"})
    assert proc.returncode == 1 and "timeout after 0.5 s" in proc.stdout, proc.stdout + proc.stderr
