"""callscale check --against: old versus new, stream by stream, in child processes."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from callscale import against, check, parsers
from callscale.workloads import render
from callscale.cli import main
from support import HELPERS


ENGINE = '''from callscale.parsers.deepseek import DeepSeekV31Parser


class EngineParser(DeepSeekV31Parser):
    """The team's parser."""
'''
PLANTED = ENGINE + '''
    def parse_streaming_increment(self, delta, tools=None):
        result = super().parse_streaming_increment(delta, tools)
        result.normal_text = result.normal_text.replace("  ", " ")  # the planted change: squeezes double spaces
        return result
'''


def test_generated_corpus_is_seeded_and_has_every_kind():
    first, again = against.generate("deepseek_v31", 3, 60), against.generate("deepseek_v31", 3, 60)
    assert [i.text for i in first] == [i.text for i in again]
    assert [i.text for i in against.generate("deepseek_v31", 4, 60)] != [i.text for i in first]
    kinds = Counter(i.label.split(":")[3] for i in first)
    assert kinds == {k: 10 for k in against.GENERATED_KINDS}
    several = [i for i in first if i.label.endswith("several calls")]
    assert all(i.text.count("<｜tool▁call▁begin｜>") >= 2 for i in several)


def test_identical_parsers_agree_on_every_stream(capsys, monkeypatch):
    monkeypatch.chdir(HELPERS)
    status = main(["check", "--parser", "deepseek_v31", "--against", "callscale.parsers.deepseek:DeepSeekV31Parser",
                   "--outputs", "60", "--seeds", "0,1"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "0 differences" in out and "streams per parser under 5 chunkings" in out


def test_a_changed_parser_is_found_with_the_kind_and_smallest_case(capsys, monkeypatch):
    monkeypatch.chdir(HELPERS)
    status = main(["check", "--parser", "faulty_parsers:LosesTailWithEndToken", "--format", "deepseek_v31",
                   "--against", "deepseek_v31", "--outputs", "60", "--seeds", "0", "--show", "0"])
    out = capsys.readouterr().out
    assert status == 1
    line = next(x for x in out.splitlines() if x.startswith("call delta: "))
    assert "smallest: gen:0:" in line and "outcomes: new read against old: lost arguments" in line
    assert "differing streams;" in out.splitlines()[-1]


def test_a_fix_reads_as_a_fix_the_expected_outcome_agreeing_with_new(capsys, monkeypatch):
    """The old side is the faulty parser, the new one the reference: differences name what each side gave, and
    on texts with an expected outcome (fault cases, workloads) the report says it agrees with new."""
    monkeypatch.chdir(HELPERS)
    status = main(["check", "--parser", "deepseek_v31", "--against", "faulty_parsers:LosesTailWithEndToken",
                   "--outputs", "30", "--seeds", "0", "--show", "1000"])
    out = capsys.readouterr().out
    assert status == 1
    judged = [x for x in out.splitlines() if x.startswith("DIFF ") and "; the expected outcome agrees with new (old " in x]
    assert judged, out
    assert all("old gave " in x and ", new gave " in x for x in judged)
    assert not any("agrees with old" in x for x in out.splitlines())
    summary = next(x for x in out.splitlines() if x.startswith("call delta: "))
    assert f"(the expected outcome agrees with new in {len([x for x in judged if ': call delta: ' in x])})" in summary
    generated = [x for x in out.splitlines() if x.startswith("DIFF gen:")]
    assert generated and all("no expected outcome for this text" in x for x in generated)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_against_a_commit_materialises_the_old_tree(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "engine"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "engine.py").write_text(ENGINE)
    _git(repo, "add", "engine.py")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "engine")
    (repo / "engine.py").write_text(PLANTED)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "squeeze")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(repo))])
    args = ["check", "--parser", "engine:EngineParser", "--format", "deepseek_v31", "--outputs", "60", "--seeds", "0",
            "--no-faults", "--workload", "write_file", "--show", "0"]
    assert main(args + ["--against", "HEAD~1"]) == 1
    out = capsys.readouterr().out
    assert "engine:EngineParser@HEAD~1 (old)" in out
    assert any(x.startswith("content: ") and "outcomes: new read against old: whitespace" in x for x in out.splitlines()), out
    assert main(args + ["--against", "HEAD:engine:EngineParser"]) == 0
    assert "0 differences" in capsys.readouterr().out
    assert not list(Path(against.tempfile.gettempdir()).glob("callscale-against-*"))


def test_a_parser_that_cannot_load_is_a_one_line_error(capsys, monkeypatch):
    monkeypatch.chdir(HELPERS)
    with pytest.raises(SystemExit) as info:
        main(["check", "--parser", "deepseek_v31", "--against", "no_such_module:Parser", "--outputs", "0"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot load the parser: PluginError: cannot import 'no_such_module'" in err



@pytest.mark.parametrize("fmt", render.names())
def test_generated_well_formed_outputs_hold_the_calls_the_reference_parser_reads(fmt):
    items = against.generate(fmt, 0, 30)

    def calls(kind):
        return [len(check.stream(parsers.get(fmt)(), [i.text], i.tools, strict=False).complete_calls())
                for i in items if i.label.endswith(kind)]

    assert calls(":well-formed") == [1] * 5
    assert len(calls(":several calls")) == 5 and min(calls(":several calls")) >= 2
