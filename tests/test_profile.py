"""callscale profile: a py-spy flame graph whose hottest frames are the parser's."""

import re
import shutil

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
