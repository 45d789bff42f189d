"""A team's own workloads (``--workload module:function``, ``--workload file:PATH``): scaling a recorded
output, the expected result our parser reads, bad specs (one line, exit 2), and each entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscale import testing
from callscale.cli import main
from callscale.workloads import catalog, team
from callscale.workloads.chunking import chunk
from support import HELPERS, ROOT

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def recorded(tmp_path: Path, fmt: str = "deepseek_v31", workload: str = "write_file", length: int = 1024,
             deltas: str | None = "tokens:4", name: str = "outputs.jsonl", extra: dict | None = None) -> Path:
    """A ``file:`` workload of one record: the catalog's case as an engine would log it."""
    case = catalog.make(workload, fmt, length)
    line = {"text": case.text, **(extra or {})}
    if deltas is not None:
        line["deltas"] = case.deltas(deltas)
    path = tmp_path / name
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def in_tests(monkeypatch):
    monkeypatch.chdir(HELPERS)  # team_workloads.py importable, as the current directory is
    monkeypatch.syspath_prepend(str(HELPERS))


# ------------------------------------------------------------------------------------------ file:PATH

@pytest.mark.parametrize("fmt", ["deepseek_v31", "qwen3_coder", "llama4_pythonic", "gpt_oss", "kimi_k3", "gemma4"])
def test_a_recorded_output_is_scaled_by_growing_its_longest_value(tmp_path, fmt):
    path = recorded(tmp_path, fmt, deltas=None)
    original = catalog.make("write_file", fmt, 1024)
    value = original.calls[0].arguments["content"]
    for length in (2048, 8192, 32768):
        case = catalog.make(f"file:{path}", fmt, length)
        assert abs(len(case.text) - length) <= 16, (length, len(case.text))
        (call,) = case.calls
        assert call.name == "write_file" and call.arguments["path"] == original.calls[0].arguments["path"]
        grown = call.arguments["content"]
        # the value's own text repeated: the same characters, the same kind
        assert grown.startswith(value) and grown[len(value):].startswith(value[:200])
        assert len(grown) > length * 0.8
        assert case.content == original.content


def test_recorded_deltas_are_scaled_with_the_value_and_streamed_whatever_the_chunking(tmp_path):
    path = recorded(tmp_path, deltas="tokens:3")
    small = catalog.make(f"file:{path}", "deepseek_v31", 1024)
    large = catalog.make(f"file:{path}", "deepseek_v31", 8192)
    assert "".join(large.deltas("whole")) == large.text
    sizes = {len(d) for d in large.deltas("whole")}
    assert max(sizes) <= 3 + 20  # the special tokens stay whole; no delta of the whole text
    assert len(large.deltas("whole")) > 7 * len(small.deltas("whole"))
    assert large.deltas("tokens:4") == large.deltas("whole")  # the record's own deltas


def test_the_expected_result_is_what_our_parser_reads_so_wrong_output_works(tmp_path, in_tests):
    from callscale import verify

    path = recorded(tmp_path)
    case = catalog.make(f"file:{path}", "deepseek_v31", 4096)
    assert verify.verify_stream(lambda: __import__("callscale.parsers", fromlist=["get"]).get("deepseek_v31")(),
                                case) is None
    import faulty_parsers

    wrong = verify.verify_stream(faulty_parsers.LosesTailWithEndToken, case)
    assert wrong is not None and wrong.startswith("lost arguments")


def test_several_records_are_several_workloads(tmp_path):
    a = catalog.make("write_file", "qwen3", 1024).text
    b = catalog.make("parallel_calls", "qwen3", 1024).text
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps({"text": a}) + "\n\n" + json.dumps({"text": b}) + "\n", encoding="utf-8")
    assert team.expand(f"file:{path}") == [f"file:{path}#1", f"file:{path}#2"]
    second = catalog.make(f"file:{path}#2", "qwen3", 2048)
    assert len(second.calls) >= 5  # parallel_calls: the longest value grew, the calls stayed
    with pytest.raises(team.TeamWorkloadError, match="holds 2 records"):
        catalog.make(f"file:{path}", "qwen3", 2048)


def test_a_line_separator_inside_a_text_is_text_not_a_line_end(tmp_path):
    case = catalog.make("write_file", "deepseek_v31", 1024)
    middle = len(case.text) // 2
    text = case.text[:middle] + "x\u2028y" + case.text[middle:]  # inside the content value (raw JSON)
    path = tmp_path / "sep.jsonl"
    path.write_text(json.dumps({"text": text}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert len(team.load_file(str(path))) == 1
    assert "\u2028" in catalog.make(f"file:{path}", "deepseek_v31", 4096).calls[0].arguments["content"]


# ------------------------------------------------------------------------------------------ module:function

def test_a_generator_of_text_gets_the_expected_result_of_our_parser(in_tests):
    case = catalog.make("team_workloads:config_file", "qwen3_coder", 2048, seed=1)
    assert case.workload == "team_workloads:config_file" and case.seed == 1
    (call,) = case.calls
    assert call.name == "write_file" and len(call.arguments["content"]) == 2048
    assert case.content == "Saving the config."
    assert case.deltas("tokens:4")[0] == case.text[:4]


def test_a_generator_may_return_a_whole_case(in_tests):
    case = catalog.make("team_workloads:as_case", "glm47", 1024)
    assert case.workload == "team_workloads:as_case"
    assert case.calls == catalog.make("write_file", "glm47", 1024).calls


# ------------------------------------------------------------------------------------------ bad specs

@pytest.mark.parametrize("spec, says", [
    ("file:/no/such/file.jsonl", "cannot read it"),
    ("no_such_module:gen", "cannot import no_such_module"),
    ("team_workloads:missing", "has no attribute missing"),
    ("team_workloads:raises", "raised on deepseek_v31 at 1024: ValueError: no such template"),
    ("team_workloads:not_text", "a record is a JSON object"),
])
@pytest.mark.parametrize("command", ["gate", "check"])
def test_a_bad_spec_is_one_line_and_exit_2_before_measuring(capsys, in_tests, spec, says, command):
    extra = ["--lengths", "1k,2k,4k"] if command == "gate" else ["--lengths", "1k"]
    status, out, err = run_main(capsys, command, "--parser", "deepseek_v31", "--workload", spec, *extra)
    assert status == 2, (out, err)
    assert says in err and len(err.strip().splitlines()) == 1  # one line
    assert out == ""


@pytest.mark.parametrize("line, says", [
    ("not json", "line 1: not JSON"),
    (json.dumps({"deltas": ["a"]}), '"text" must be a non-empty string'),
    (json.dumps({"text": "abc", "deltas": ["ab"]}), '"deltas" do not join to "text"'),
    (json.dumps({"text": "abc", "tools": "x"}), '"tools" must be a list of objects'),
])
def test_a_bad_file_is_one_line_and_exit_2(capsys, tmp_path, line, says):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    status, out, err = run_main(capsys, "scale", "--parser", "deepseek_v31", "--workload", f"file:{path}",
                                "--lengths", "1k,2k,4k", "--out", str(tmp_path))
    assert status == 2 and says in err and out == ""


def test_a_record_longer_than_the_shortest_length_is_exit_2(capsys, tmp_path):
    path = recorded(tmp_path, workload="many_short_calls", length=8192, deltas=None)
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--workload", f"file:{path}",
                                "--lengths", "1k,2k,4k")
    assert status == 2 and "more than the length 1024" in err


# ------------------------------------------------------------------------------------------ entry points

def test_check_takes_both_and_streams_the_recorded_deltas_as_the_case_own(capsys, tmp_path, in_tests):
    path = recorded(tmp_path, deltas="tokens-random:3:9")
    status, out, err = run_main(capsys, "check", "--parser", "deepseek_v31", "--no-faults", "--lengths", "1k,2k",
                                "--workload", f"file:{path},team_workloads:config_file", "--chunkings", "whole,tokens:2")
    assert status == 0, out
    row = out.splitlines()[1].split()
    # 4 texts x (whole, tokens:2, detect_and_parse) + the recorded deltas of the 2 file cases
    assert row[:4] == ["deepseek_v31", "4", "14", "0"]


def test_check_fails_a_faulty_parser_on_a_recorded_output(capsys, tmp_path, in_tests):
    path = recorded(tmp_path)
    status, out, err = run_main(capsys, "check", "--parser", "faulty_parsers:LosesTailWithEndToken",
                                "--workload-format", "deepseek_v31", "--no-faults", "--lengths", "1k",
                                "--workload", f"file:{path}", "--chunkings", "whole", "--show", "1")
    assert status == 1 and "lost arguments" in out


def test_assert_chunking_invariant_takes_a_generator_function_and_a_file(tmp_path, in_tests):
    import team_workloads

    path = recorded(tmp_path)
    result = testing.assert_chunking_invariant("deepseek_v31", workloads=[team_workloads.config_file, f"file:{path}"],
                                               faults=False, chunkings=["whole", "tokens:3"])
    assert result.items == 2 and result.passed


def test_the_testing_api_names_a_bad_spec(in_tests):
    with pytest.raises(ValueError, match="cannot import no_such_module"):
        testing.assert_chunking_invariant("deepseek_v31", workloads=["no_such_module:gen"])


def test_init_writes_the_file_path_absolute_and_rejects_a_bad_spec(capsys, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "engine.py").write_text("from callscale.parsers import get\nParser = get('deepseek_v31')\n")
    recorded(repo, name="out.jsonl")
    status, out, err = run_main(capsys, "init", "--dir", str(repo), "--parser", "engine:Parser", "--format",
                                "deepseek_v31", "--workload", "write_file,file:out.jsonl")
    assert status == 0, err
    settings = json.loads((repo / "callscale_benchmarks" / "callscale.json").read_text())
    assert settings["workloads"] == ["write_file", f"file:{repo / 'out.jsonl'}"]
    status, out, err = run_main(capsys, "init", "--dir", str(repo), "--parser", "engine:Parser", "--format",
                                "deepseek_v31", "--workload", "file:missing.jsonl", "--force")
    assert status == 2 and "cannot read it" in err


def test_profile_default_output_names_a_team_workload_safely():
    from callscale.profile import default_output

    out = default_output("deepseek_v31", "file:/tmp/x/outputs.jsonl#2", 4096)
    assert out.name == "deepseek_v31-outputs.jsonl-2-4096.svg" and out.parent.name == "flame"


@pytest.mark.slow  # gate and scale by time on a file and a generator (~20-40 s on a loaded machine)
def test_gate_and_scale_take_both_by_time(capsys, tmp_path, in_tests):
    path = recorded(tmp_path)
    status, out, err = run_main(capsys, "gate", "--parser", "deepseek_v31", "--no-progress", "--repeats", "1",
                                "--workload", f"file:{path},team_workloads:config_file", "--lengths", "4k,16k,64k")
    assert status == 0, out
    assert f"file:{path}" in out and "team_workloads:config_file" in out
    status, out, err = run_main(capsys, "scale", "--parser", "deepseek_v31", "--no-progress", "--repeats", "1",
                                "--workload", f"file:{path}", "--lengths", "4k,8k,16k", "--out", str(tmp_path / "o"))
    assert status == 0 and (tmp_path / "o" / "scaling.csv").read_text().count(f"file:{path}") == 6  # 3 lengths x (parser, null floor)


@needs_valgrind
@pytest.mark.slow  # three workloads under the instruction meter to 32k (~30-60 s)
def test_the_exact_gate_takes_both_and_fails_the_braille_fixture_only_where_the_record_holds_braille(
        capsys, tmp_path, in_tests):
    plain = recorded(tmp_path, name="plain.jsonl")
    case = catalog.make("write_file", "deepseek_v31", 1024)
    braille = tmp_path / "braille.jsonl"
    text = case.text.replace("    ", "  \u2812 ", 8)
    braille.write_text(json.dumps({"text": text}, ensure_ascii=False) + "\n", encoding="utf-8")
    status, out, err = run_main(capsys, "gate", "--meter", "instructions", "--no-progress", "--wide", "--parser",
                                "braille_parser:BrailleRereads", "--workload-format", "deepseek_v31",
                                "--workload", f"file:{plain},file:{braille},team_workloads:config_file",
                                "--lengths", "2k,8k,32k", "--jobs", "1")
    assert status == 1, out
    fails = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert len(fails) == 1 and f"file:{braille}" in fails[0], out


@needs_valgrind
@pytest.mark.slow
def test_assert_linear_takes_a_file_workload(tmp_path):
    path = recorded(tmp_path)
    run = testing.assert_linear("deepseek_v31", workloads=[f"file:{path}"], lengths=[2048, 8192, 32768])
    assert [row.workload for row in run.rows] == [f"file:{path}"]


@pytest.mark.slow  # asv's benchmark module measures a file workload as the init template does (~30 s)
@needs_valgrind
def test_the_asv_template_measures_a_file_workload(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "engine.py").write_text("from callscale.parsers import get\nParser = get('deepseek_v31')\n")
    recorded(repo, name="out.jsonl")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(repo)])}
    subprocess.run([sys.executable, "-m", "callscale", "init", "--dir", str(repo), "--parser", "engine:Parser",
                    "--format", "deepseek_v31", "--workload", "file:out.jsonl", "--lengths", "1k,2k,4k"],
                   check=True, cwd=repo, env=env, capture_output=True)
    code = ("import sys; sys.path.insert(0, 'callscale_benchmarks'); import callscale_series as s; "
            "r = s._measure_all(); print(r['errors'], {k[1]: v['verdict'] for k, v in r['rows'].items()})")
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{{}} {{'file:{repo / 'out.jsonl'}': 'ok'}}"


@pytest.mark.slow  # py-spy samples a second of streaming (~5-10 s)
def test_profile_takes_a_file_workload(capsys, tmp_path):
    if shutil.which("py-spy") is None:
        pytest.skip("py-spy is not installed")
    path = recorded(tmp_path)
    out_file = tmp_path / "flame.svg"
    status, out, err = run_main(capsys, "profile", "--parser", "deepseek_v31", "--workload", f"file:{path}",
                                "--length", "16k", "--seconds", "1", "-o", str(out_file))
    if status == 2 and "py-spy" in err:
        pytest.skip(err.strip())
    assert status == 0, err
    assert f"file:{path}, 16384 characters" in out_file.read_text(encoding="utf-8")
