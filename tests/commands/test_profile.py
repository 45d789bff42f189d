"""callscale profile: a py-spy flame graph whose hottest frames are the parser's."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscale import cli, profile
from support import HELPERS, ROOT


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
    # py-spy names a frame by its qualified name from Python 3.11 on (co_qualname), by the function's before
    method = "ToolParser.parse_streaming_increment" if sys.version_info >= (3, 11) else "parse_streaming_increment "
    in_parser = sum(float(p) for t, p in frames if t.startswith(method))
    streaming = sum(float(p) for t, p in frames if t.startswith("_stream "))
    # of the streaming loop's samples (the child's imports and set-up, a share that moves with the load,
    # left out), the parser's method holds most: the flame graph shows the parser, not the harness
    assert streaming > 0 and in_parser / streaming > 0.75, \
        f"parse_streaming_increment holds only {in_parser}% of samples, the stream loop {streaming}%"


# ------------------------------------------------------------ the watchdog bounds CPU time (fair under load)
def _watched(body: str, cpu: float, wall: float) -> "subprocess.CompletedProcess":
    code = f"import time; from callscale._child import _watchdog; _watchdog({cpu}, {wall}, every=0.02)\n{body}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


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
    monkeypatch.syspath_prepend(str(HELPERS))
    monkeypatch.chdir(HELPERS)
    status = cli.main(["profile", "--parser", "hanging_parser:Hangs", "--workload-format", "deepseek_v31",
                       "--workload", "write_file", "--length", "1k", "--seconds", "0.2", "-o",
                       str(tmp_path / "x.svg")])
    err = capsys.readouterr().err
    assert status == 1, err
    assert "hanging_parser:Hangs did not finish write_file at 1024 characters within 5.4 s of CPU time (a hang?)" in err


# ------------------------------------------------------------ profile --against: the differential flame graph
def test_flamediff_matches_frames_without_line_numbers_and_reads_shares():
    from callscale import flamediff

    base = flamediff.parse("main (m.py:1);parse (p.py:10) 60\nmain (m.py:1);other (o.py:3) 40\n")
    head = flamediff.parse("main (m.py:1);parse (p.py:12) 90\nmain (m.py:1);parse (p.py:12);rescan (p.py:40) 810\n"
                           "main (m.py:1);other (o.py:3) 100\nnot a stack line\n")
    assert set(head) == {"main (m.py);parse (p.py)", "main (m.py);parse (p.py);rescan (p.py)", "main (m.py);other (o.py)"}
    grown = {f.name: round(100 * f.change, 1) for f in flamediff.frames(base, head)}
    assert grown == {"rescan (p.py)": 81.0, "parse (p.py)": 30.0, "main (m.py)": 0.0, "other (o.py)": -30.0}
    assert [f.name for f in flamediff.frames(base, head)][0] == "rescan (p.py)"


LOOP = "<module> (callscale/_child.py:1);profile (callscale/_child.py:502);_stream (callscale/_child.py:107)"


def test_the_flame_graph_starts_at_the_streaming_loop_and_folds_the_rest():
    from callscale import flamediff

    base = flamediff.parse(f"<module> (callscale/_child.py:1);<module> (importlib:3) 300\n"
                           f"{LOOP};ToolParser.parse_streaming_increment (scanner.py:9) 600\n"
                           f"{LOOP};ToolParser.parse_streaming_increment (scanner.py:9);P._reparse (p.py:4) 100\n")
    head = flamediff.parse(f"<module> (callscale/_child.py:1);<module> (importlib:3) 200\n"
                           f"{LOOP};ToolParser.parse_streaming_increment (scanner.py:9) 300\n"
                           f"{LOOP};ToolParser.parse_streaming_increment (scanner.py:9);P._reparse (p.py:4) 500\n")
    cut = flamediff.from_streaming(head)
    assert cut == {flamediff.OUTSIDE: 200, "_stream (callscale/_child.py);ToolParser.parse_streaming_increment "
                   "(scanner.py)": 300, "_stream (callscale/_child.py);ToolParser.parse_streaming_increment "
                   "(scanner.py);P._reparse (p.py)": 500}
    assert flamediff.from_streaming({"a;b": 3}) == {"a;b": 3}  # no streaming loop: as it is
    # P._reparse: 10% -> 50% of the samples; parse_streaming_increment 70% -> 80%
    assert flamediff.headline(base, head) == ("P._reparse +40.0 points (10.0% -> 50.0%); "
                                              "ToolParser.parse_streaming_increment +10.0 points (70.0% -> 80.0%)")


def test_the_differential_svg_puts_the_grown_frames_at_the_top_and_says_so(tmp_path):
    from callscale import flamediff

    base = flamediff.parse(f"{LOOP};parse (p.py:1) 90\n{LOOP};parse (p.py:1);rescan (p.py:2) 10\n<module> (x.py:1) 100")
    head = flamediff.parse(f"{LOOP};parse (p.py:1) 50\n{LOOP};parse (p.py:1);rescan (p.py:2) 50\n<module> (x.py:1) 100")
    svg = flamediff.svg(base, head, tmp_path / "d.svg", "team on write_file").read_text()
    assert '<text id="title" x="600.0" y="20" text-anchor="middle" font-size="15">team on write_file: rescan ' \
           '+20.0 points (5.0% -&gt; 25.0%)</text>' in svg
    boxes = {t: int(y) for t, y in re.findall(r"<title>(.*?) \(base .*?</title><rect x=\"[\d.]+\" y=\"(\d+)\"", svg)}
    # hanging from the top: the root, the loop, the parser, the grown frame, all within the first 140 pixels
    assert boxes["all"] < boxes["_stream (callscale/_child.py)"] < boxes["parse (p.py)"] < boxes["rescan (p.py)"] < 140
    assert boxes[flamediff.OUTSIDE] == boxes["_stream (callscale/_child.py)"]  # one frame beside the loop
    assert "<module> (x.py)" not in svg


def _team_repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD~1 holds a linear DeepSeek V3.1 parser and HEAD the quadratic one."""
    repo = tmp_path / "team"
    repo.mkdir()

    def git(*args):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                       env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t"})

    git("init", "-q", "-b", "main")
    (repo / "team_parser.py").write_text("from callscale.parsers.deepseek import DeepSeekV31Parser as Parser\n")
    git("add", "-A")
    git("commit", "-qm", "linear")
    quadratic = (HELPERS / "quadratic_parser.py").read_text()
    (repo / "team_parser.py").write_text(quadratic + "\nParser = QuadraticParser\n")
    git("commit", "-qam", "rescan the buffer")
    return repo


@pytest.mark.skipif(shutil.which("py-spy") is None, reason="py-spy is not installed (pip install -e '.[bench]')")
def test_profile_against_a_commit_draws_the_frames_the_change_added(tmp_path, monkeypatch, capsys):
    repo = _team_repo(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.syspath_prepend(str(repo))
    status = cli.main(["profile", "--parser", "team_parser:Parser", "--workload-format", "deepseek_v31",
                       "--workload", "write_file", "--length", "8k", "--seconds", "1", "--against", "HEAD~1",
                       "-o", str(tmp_path / "out" / "q.svg")])
    out = capsys.readouterr().out
    assert status == 0, out
    table = out.split("grew most (head against HEAD~1):\n", 1)[1].splitlines()
    assert table[0].split() == ["frame", "base", "head", "points"]
    top = table[2]
    # the quadratic parser's own frames grew most (named by their class from Python 3.11 on: co_qualname)
    assert top.startswith("QuadraticParser.") if sys.version_info >= (3, 11) else "(team_parser.py)" in top, out
    assert float(top.split()[-1]) > 30
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["q.base.folded", "q.diff.folded", "q.diff.svg", "q.folded"]
    svg = (tmp_path / "out" / "q.diff.svg").read_text()
    reparse = re.findall(r"<title>(?:QuadraticParser\.)?_reparse \(team_parser\.py\) \(base 0\.0%, head ([\d.]+)%, "
                         r"\+([\d.]+) points\)</title><rect [^>]*fill=\"rgb\(250,(\d+),", svg)
    # (finish's own _reparse may be sampled too, a thin frame beside it: the widest is the one that grew)
    widest = max(reparse, key=lambda r: float(r[0])) if reparse else None
    assert widest and float(widest[0]) > 30 and int(widest[2]) < 150  # drawn in deep red
    diff = (tmp_path / "out" / "q.diff.folded").read_text().splitlines()
    assert all(len(line.rsplit(" ", 2)) == 3 for line in diff)
    # the worktree of HEAD~1 is gone
    assert "callscale-base-" not in subprocess.run(["git", "worktree", "list"], capture_output=True, text=True).stdout


def test_profile_against_what_is_neither_a_file_nor_a_commit_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # not a git repository
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["profile", "--parser", "deepseek_v31", "--workload", "write_file", "--length", "1k",
                  "--seconds", "0.2", "--against", "nope", "-o", str(tmp_path / "x.svg")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2
    assert len(err) == 1 and "--against nope: neither a collapsed-stack file nor a commit" in err[0], err


def test_profile_format_is_the_deprecated_spelling_of_output_format(tmp_path, capsys):
    status = cli.main(["profile", "--parser", "deepseek_v31", "--workload", "write_file", "--length", "1k",
                       "--format", "raw", "--seconds", "0.3", "-o", str(tmp_path / "x.folded")])
    err = capsys.readouterr().err
    assert "--format is deprecated here" in err and "use --output-format" in err
    if status == 0:  # py-spy could attach
        assert "parse_streaming_increment" in (tmp_path / "x.folded").read_text()
