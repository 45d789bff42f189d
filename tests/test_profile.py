"""callscale profile: a py-spy flame graph whose hottest frames are the parser's."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscale import cli, profile


def test_missing_py_spy_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(profile, "find_py_spy", lambda: None)  # neither on PATH nor next to the interpreter
    status = cli.main(["profile", "--parser", "deepseek_v3", "--workload", "write_file", "--length", "1k",
                       "-o", str(tmp_path / "x.svg")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and "pip install py-spy" in err[0]


@pytest.mark.parametrize("argv", [
    ["--parser", "nope", "--workload", "write_file", "--length", "1k"],
    ["--parser", "deepseek_v3", "--workload", "nope", "--length", "1k"],
    ["--parser", "deepseek_v3", "--workload", "write_file", "--length", "0"],
    ["--parser", "deepseek_v3", "--workload", "write_file", "--length", "1k", "--format", "png"],
])
def test_bad_options_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["profile", *argv])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_default_output_path():
    assert str(profile.default_output("deepseek_v32", "write_file", 65536)) == \
        "results/flame/deepseek_v32-write_file-65536.svg"
    assert str(profile.default_output("pkg.mod:P", "write_file", 1024, "speedscope")).endswith(
        "pkg.mod-P-write_file-1024.speedscope.json")


@pytest.mark.skipif(shutil.which("py-spy") is None, reason="py-spy is not installed (pip install -e '.[bench]')")
def test_flame_graph_hottest_frames_are_in_the_parser(tmp_path):
    out = tmp_path / "flame.svg"
    status = cli.main(["profile", "--parser", "deepseek_v32", "--workload", "write_file", "--length", "16k",
                       "--seconds", "1.5", "-o", str(out)])
    assert status == 0
    svg = out.read_text()
    # A frame title appears once per distinct stack it is on: add them all up.
    frames = re.findall(r"<title>(.*?) \([\d,]+ samples?, ([\d.]+)%\)</title>", svg)
    in_parser = sum(float(p) for t, p in frames if t.startswith("ToolParser.parse_streaming_increment"))
    assert in_parser > 60, f"parse_streaming_increment holds only {in_parser}% of samples"


# ------------------------------------------------------------ the watchdog bounds CPU time (fair under load)
def _watched(body: str, cpu: float, wall: float) -> "subprocess.CompletedProcess":
    code = f"import time; from callscale._child import _watchdog; _watchdog({cpu}, {wall}, every=0.02)\n{body}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent)))


def test_the_watchdog_stops_a_spinning_case_by_its_cpu_time():
    proc = _watched("while True: pass", cpu=0.3, wall=50)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip() == "callscale-child: the case did not finish within 0.3 s of CPU time"


def test_the_watchdog_does_not_count_wall_time_a_loaded_machine_takes_from_the_case():
    # 1.5 wall seconds of sleeping (as a process waiting for a core does) use no CPU time: not a hang
    proc = _watched("time.sleep(1.5); print('finished')", cpu=0.3, wall=50)
    assert (proc.returncode, proc.stdout.strip()) == (0, "finished"), proc.stderr


def test_the_watchdog_stops_a_case_that_waits_for_ever_at_its_wall_ceiling():
    proc = _watched("time.sleep(50)", cpu=5, wall=0.5)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip() == "callscale-child: the case did not finish within 0.5 s of wall time"


@pytest.mark.slow  # waits out the profile watchdog (~12-30 s): the slow set
@pytest.mark.skipif(shutil.which("py-spy") is None, reason="py-spy is not installed (pip install -e '.[bench]')")
def test_a_hanging_parser_is_reported_as_a_hang(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    monkeypatch.chdir(Path(__file__).parent)
    status = cli.main(["profile", "--parser", "hanging_parser:Hangs", "--workload-format", "deepseek_v31",
                       "--workload", "write_file", "--length", "1k", "--seconds", "0.2", "-o",
                       str(tmp_path / "x.svg")])
    err = capsys.readouterr().err
    assert status == 1, err
    assert "hanging_parser:Hangs did not finish write_file at 1024 characters within 5.4 s of CPU time (a hang?)" in err
